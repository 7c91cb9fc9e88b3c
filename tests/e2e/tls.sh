#!/usr/bin/env bash
# Thread-local counters (examples/tls_counters): a live timer recording, with assertions
# that hold for any number of samples: no line ever holds two threads' copies, no TLS
# line gets a sharing verdict, and every TLS line is named "VAR (thread TID)" with that
# thread alone on it. Prints "ok NAME" / "not ok NAME".
. "$(dirname "$0")/../lib/tap.sh"

"$H" record -c timer -o "$T/tls.data" -- examples/bin/tls_counters 20000000 >/dev/null 2>"$T/rec.err" ||
	echo "    record failed: $(cat "$T/rec.err")"
"$H" report -i "$T/tls.data" --json >"$T/tls.json" 2>"$T/rep.err" ||
	echo "    report failed: $(cat "$T/rep.err")"
/usr/bin/python3 - "$T/tls.json" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print("not ok tls: report --json is valid JSON\n    %s" % e)
    sys.exit(0)
tls = [l for l in d['lines'] if any(f['field'] in ('nr_reads', 'nr_writes') for f in l['fields'])]
def one_thread(l): return len({(t['pid'], t['tid']) for t in l['threads']}) == 1
bad = [l for l in tls if not one_thread(l) or l['verdict'] not in ('private', 'read_only')]
print(("ok" if not bad else "not ok") + " tls: no line holds two threads' copies of a __thread counter")
for l in bad[:3]:
    print("    %s %s %s" % (l['object'], l['verdict'], [t['tid'] for t in l['threads']]))
named = all(l.get('tls_thread') == l['threads'][0]['tid'] and
            l['object'].endswith('(thread %d)' % l['threads'][0]['tid']) for l in tls)
print(("ok" if named else "not ok") + " tls: each TLS line is named VAR (thread TID) and carries tls_thread")
if not named:
    for l in tls[:3]:
        print("    %s tls_thread=%s" % (l['object'], l.get('tls_thread')))
PY
