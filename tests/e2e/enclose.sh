#!/usr/bin/env bash
# Enclosing objects end to end, on the committed recording of examples/enclose_hist.c
# (tests/data/rec/enclose_hist.data and its binary, found by build-id): the histogram's
# counters are bumped through plain `int *`s into each thread's calloc'd thread_arg_t, and
# must be named from it (thread_arg_t.blue[k]), never as a bare `int`. The image's pixel
# values fix the answer: red and blue indices are even, green ones odd, all below 16
# (main fills it with (i * 7 + i / 3) & 15). Offsets are checked against pahole.
# Prints "ok NAME" / "not ok NAME".
. "$(dirname "$0")/../lib/tap.sh"
REC=tests/data/rec

"$H" report -i $REC/enclose_hist.data --buildid-dir $REC --json >"$T/r.json" 2>"$T/err" ||
	{ echo "not ok enclose_report"; sed 's/^/    /' "$T/err"; }
"$H" report -i $REC/enclose_hist.data --buildid-dir $REC --stats >"$T/stats.txt" 2>&1
# member offsets from pahole, the second opinion: "red 24", "green 1048", "blue 2072"
pahole -C thread_arg_t $REC/bin/enclose_hist 2>/dev/null |
	sed -n 's/.*[[:space:]]\([a-z]*\)\[256\];[[:space:]]*\/\*[[:space:]]*\([0-9]*\).*/\1 \2/p' >"$T/offs"
[ "$(wc -l <"$T/offs")" -eq 3 ] || echo "not ok enclose_pahole_offsets ($(cat "$T/offs"))"

check() {	# NAME PYTHON-EXPR over rows: (field, object, tid, obj_base, obj_offset, records)
	/usr/bin/python3 - "$T" "$2" <<'PY' && echo "ok $1" || echo "not ok $1"
import json, re, sys
t = sys.argv[1]
d = json.load(open(t + '/r.json'))
offs = {l.split()[0]: int(l.split()[1]) for l in open(t + '/offs')}
rows = [(f.get('field'), f.get('object'), th['tid'], int(f.get('obj_base') or '0', 16),
         f.get('obj_offset'), th['records'])
        for l in d['lines'] for f in l['fields'] for th in f['threads']]
counters = [r for r in rows if r[0] and re.match(r'thread_arg_t\.(red|green|blue)\[', r[0])]
def idx(f): return int(f[f.index('[') + 1:-1])
def colour(f): return f.split('.')[1].split('[')[0]
bases = {}
for r in counters:
    bases.setdefault(r[2], set()).add(r[3])
ok = eval(sys.argv[2])
if not ok:
    print('    rows:', rows[:12])
sys.exit(0 if ok else 1)
PY
}

check enclose_counters_named_from_struct "sum(r[5] for r in counters) > 1000 and {colour(r[0]) for r in counters} == {'red', 'green', 'blue'}"
check enclose_no_bare_int "not [r for r in rows if r[1] == 'int' or r[0] == 'int']"
check enclose_indices_from_image "counters and all(idx(r[0]) < 16 and idx(r[0]) % 2 == (colour(r[0]) == 'green') for r in counters)"
check enclose_offsets_match_pahole "counters and all(r[4] == offs[colour(r[0])] + 4 * idx(r[0]) for r in counters)"
# each thread's own calloc'd block: one base per thread, sizeof(thread_arg_t) apart
check enclose_one_object_per_thread "len(bases) == 2 and all(len(b) == 1 for b in bases.values()) and abs(min(bases[min(bases)]) - min(bases[max(bases)])) == 3104"
share=$(sed -n 's/^  to a member (type.field) *[0-9]* *\([0-9.]*\)%.*/\1/p' "$T/stats.txt")
if awk -v s="${share:-0}" 'BEGIN { exit !(s >= 95) }'; then
	echo "ok enclose_stats_share_named ($share%)"
else
	echo "not ok enclose_stats_share_named (${share:-none}%)"
	sed 's/^/    /' "$T/stats.txt" | tail -20
fi
