#!/usr/bin/env bash
# record --confirm: the second step arms debug registers on the first recording's top
# shared pair and the report says confirmed, with exact transfers. The first recording
# is a watch recording here (exact, so which line is shared does not depend on where
# samples land); the confirming run is on real traps. What is asserted holds for any
# schedule: the main thread reads both counters after join, so at least one transfer
# happens whatever the order. Prints "ok NAME" / "not ok NAME".
. "$(dirname "$0")/../lib/tap.sh"
B=examples/bin

if ! traps; then
	skip "confirm: the watch recording, --confirm on it and on the padded build (4 checks)"
else
"$H" record -c watch --watch stats.ops --watch stats.errors -o "$T/first.data" -- \
	$B/false_sharing 20000 >/dev/null 2>"$T/first.err" || nok "first recording" "$(cat "$T/first.err")"

"$H" record --confirm "$T/first.data" -o "$T/c.data" -- $B/false_sharing 20000 >/dev/null 2>"$T/c.err"
rc=$?
if [ "$rc" = 0 ] && grep -q "watching stats.ops (worker_stats.ops" "$T/c.err" &&
	grep -q "watching stats.errors (worker_stats.errors" "$T/c.err"; then
	ok "--confirm arms the top pair by member path"
else
	nok "--confirm arms the top pair by member path" "rc=$rc" "$(cat "$T/c.err")"
fi
"$H" report -i "$T/c.data" --json >"$T/c.json" 2>/dev/null
/usr/bin/python3 - "$T/c.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
def names(l): return {f['field'] for f in l['fields']}
top = [l for l in d['lines'] if {'worker_stats.ops', 'worker_stats.errors'} <= names(l)]
ok = (d['source'] == 'watch' and top and top[0]['verdict'] == 'false_sharing' and
      top[0].get('confirmed') is True and top[0]['transfers'] >= 1 and
      top[0]['evidence'].startswith('confirmed: %d transfer' % top[0]['pairs'][0]['events']))
print(("ok" if ok else "not ok") + " the confirming run: false sharing, confirmed with its exact transfers")
if not ok:
    print("    %s" % (top[0] if top else d['lines'][:1]))
PY

# The fixed build: the same members, found by name, now on different lines.
"$H" record --confirm "$T/first.data" -o "$T/p.data" -- $B/false_sharing_padded 20000 >/dev/null 2>"$T/p.err"
"$H" report -i "$T/p.data" --json >"$T/p.json" 2>/dev/null
/usr/bin/python3 - "$T/p.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
shared = [l for l in d['lines'] if l['verdict'] in ('false_sharing', 'true_sharing')]
fields = {f['field'] for l in d['lines'] for f in l['fields']}
ok = not shared and {'worker_stats.ops', 'worker_stats.errors'} <= fields and len(d['lines']) == 2
print(("ok" if ok else "not ok") + " the padded build: both fields watched, on two lines, nothing shared")
if not ok:
    print("    %s" % [(l['verdict'], sorted({f['field'] for f in l['fields']})) for l in d['lines']])
PY

"$H" record --confirm "$T/p.data" -o "$T/x.data" -- $B/false_sharing 1000 >/dev/null 2>"$T/x.err"
rc=$?
[ "$rc" = 2 ] && grep -q "nothing to confirm" "$T/x.err" && [ "$(wc -l <"$T/x.err")" = 1 ] &&
	ok "--confirm of a recording with no shared line: exit 2, one line" ||
	nok "--confirm of a recording with no shared line: exit 2, one line" "rc=$rc" "$(cat "$T/x.err")"
fi
"$H" record --confirm "$T/first.data" --watch stats.ops -o "$T/y.data" -- $B/false_sharing 1000 \
	>/dev/null 2>"$T/y.err"
rc=$?
[ "$rc" = 1 ] && grep -q "drop --watch" "$T/y.err" && ok "--confirm with --watch: usage, exit 1" ||
	nok "--confirm with --watch: usage, exit 1" "rc=$rc" "$(cat "$T/y.err")"
