#!/usr/bin/env bash
# hitmap compare end to end: 5 committed runs of the false-sharing example against 5 of its
# padded build (tests/data/rec, binaries found by build-id), asserted from --json
# (hitmap.compare/1); user metrics; bad input (mixed programs or builds on one side, no
# build-id, a pipe), where live recordings are enough: a refusal does not depend on where
# samples landed. Prints "ok NAME" / "not ok NAME".
#
# The runs are committed because the conflicts of a live run depend on whether the two
# threads ran at the same time: with another process on one CPU they often do not, and
# "significantly fewer conflicts in the padded build" then fails by luck.
. "$(dirname "$0")/../lib/tap.sh"
B=examples/bin
REC=tests/data/rec

rec() {	# OUT PROGRAM: one live timer recording of PROGRAM (for the refusals)
	"$H" record -c timer -o "$1" -- "$2" 1000000 >/dev/null 2>"$1.err" ||
		echo "    record of $2 failed: $(cat "$1.err")"
}

# check NAME PYTHON-EXPR: d is the comparison, m(name) a metric, lay(field) a layout row.
check() {
	local name=$1 expr=$2
	/usr/bin/python3 - "$T/cmp.json" "$expr" <<'PY' && echo "ok $name" || { echo "not ok $name"; /usr/bin/python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
for x in d['metrics'][:12]: print('   ', x['name'], x['a_values'], x['b_values'], x['p'], x['significant'])
print('    notes:', d['notes'])" "$T/cmp.json" 2>/dev/null || head -c 1500 "$T/cmp.json"; }
import json, sys
d = json.load(open(sys.argv[1]))
def m(name):
    return next((x for x in d['metrics'] if x['name'] == name), None)
def lay(field):
    return next((x for x in d['layout'] if x['field'] == field), None)
def kinds(row): return {f['kind'] for f in row['findings']} if row else set()
sys.exit(0 if eval('(' + sys.argv[2] + ')') else 1)
PY
}

for i in 1 2 3 4 5; do
	cp $REC/cmp_a$i.data "$T/a$i.data"
	cp $REC/cmp_b$i.data "$T/b$i.data"
	echo "throughput $((1000 + i * 7))" >"$T/a$i.data.metrics"	# the file beside a run
done

"$H" compare --buildid-dir $REC "$T"/a?.data -- "$T/b1.data:throughput=1500" "$T/b2.data:throughput=1490" \
	"$T/b3.data:throughput=1512" "$T/b4.data:throughput=1503" "$T/b5.data:throughput=1497" \
	--json >"$T/cmp.json" 2>"$T/cmp.err" || nok "compare ran" "$(cat "$T/cmp.err")"

check "schema hitmap.compare/1 with the contract keys" \
	"d['schema'] == 'hitmap.compare/1' and len(d['a']) == 5 and len(d['b']) == 5 and
	 all(set(x) >= {'name', 'a_mean', 'a_stddev_pct', 'b_mean', 'b_stddev_pct', 'change_pct',
	                'p', 'significant'} for x in d['metrics'])"
check "worker_stats.ops conflicts significantly lower in the padded build" \
	"m('worker_stats.ops conflicts')['significant'] and m('worker_stats.ops conflicts')['change_pct'] < 0
	 and m('worker_stats.ops conflicts')['p'] < 0.05"
check "fields matched by name across builds (both sides, every run)" \
	"m('worker_stats.ops samples')['presence'] == 'both' and m('worker_stats.ops samples')['a_n'] == 5
	 and m('worker_stats.ops samples')['b_n'] == 5 and all(v > 0 for v in m('worker_stats.ops samples')['a_values'] + m('worker_stats.ops samples')['b_values'])"
check "each side names its own build" \
	"d['a_build']['exe'].endswith('/false_sharing') and d['b_build']['exe'].endswith('/false_sharing_padded')
	 and d['a_build']['build_id'] != d['b_build']['build_id']"
check "the padded type spans two lines" \
	"m('worker_stats (type) lines touched')['a_mean'] == 1 and m('worker_stats (type) lines touched')['b_mean'] == 2"
check "user metric from FILE.metrics and FILE:NAME=VALUE" \
	"m('throughput')['a_n'] == 5 and m('throughput')['b_n'] == 5 and m('throughput')['significant']
	 and 45 < m('throughput')['change_pct'] < 50"
check "layout side: ops lost its neighbours, errors moved line, ranked by contention moved" \
	"'unshared' in kinds(lay('worker_stats.ops')) and 'line' in kinds(lay('worker_stats.errors'))
	 and lay('worker_stats.ops')['delta'] < 0 and d['layout'][0]['field'].startswith('worker_stats.')
	 and all(abs(d['layout'][i]['delta']) >= abs(d['layout'][i + 1]['delta']) for i in range(len(d['layout']) - 1))"
check "significant metrics lead the list" \
	"[x['significant'] for x in d['metrics']] == sorted((x['significant'] for x in d['metrics']), reverse=True)"

# The addresses really differ between the builds: the errors counter is 8 bytes after ops
# in A and a line away in B; what matched the runs was the name.
"$H" report -i "$T/a1.data" --buildid-dir $REC --json >"$T/ra.json" 2>/dev/null
"$H" report -i "$T/b1.data" --buildid-dir $REC --json >"$T/rb.json" 2>/dev/null
if /usr/bin/python3 - "$T/ra.json" "$T/rb.json" <<'PY'; then ok "same field, different addresses in the two builds"; else nok "same field, different addresses"; fi
import json, sys
def where(path):
    d = json.load(open(path))
    return {f['field']: int(l['addr'], 16) + f['offset'] for l in d['lines'] for f in l['fields']}
a, b = where(sys.argv[1]), where(sys.argv[2])
sys.exit(0 if (a['worker_stats.errors'] - a['worker_stats.ops'] == 8 and
               b['worker_stats.errors'] - b['worker_stats.ops'] == 64) else 1)
PY

"$H" compare --buildid-dir $REC "$T"/a?.data -- "$T"/b?.data --top 5 >"$T/cmp.txt" 2>&1
if grep -q '%change' "$T/cmp.txt" && grep -qE '^ +[0-9.]+ +± *[0-9]+% +-100\.0% .*\* +worker_stats\.ops conflicts' "$T/cmp.txt" &&
	grep -q '^layout: ' "$T/cmp.txt"; then
	ok "text table reads like the kernel test robot's, then the layout side"
else nok "text table" "$(head -20 "$T/cmp.txt")"; fi

"$H" compare --buildid-dir $REC "$T/a1.data" -- "$T/b1.data" --json >"$T/one.json" 2>&1
if /usr/bin/python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
x = next(x for x in d['metrics'] if x['name'] == 'worker_stats.ops samples')
sys.exit(0 if x['p'] is None and not x['significant'] and x['a_mean'] > 0 and any('no test' in n for n in d['notes']) else 1)" "$T/one.json"; then
	ok "one run per side: means, p n/a, and a note"
else nok "one run per side" "$(head -c 600 "$T/one.json")"; fi

# refuse(NAME, PATTERN, ARGS...): exit 2 and one line naming the problem.
refuse() {
	local name=$1 pat=$2
	shift 2
	"$H" compare --buildid-dir $REC "$@" >"$T/out" 2>"$T/err"
	local rc=$?
	if [ "$rc" -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "$pat" "$T/err" && [ ! -s "$T/out" ]; then
		ok "$name"
	else nok "$name" "exit $rc" "$(cat "$T/err")"; fi
}
refuse "runs of different programs on one side are refused" "different workloads" \
	"$T/a1.data" "$T/b2.data" -- "$T/b1.data"

# The same program, rebuilt (the padded source under the same name): another build.
mkdir -p "$T/rebuilt"
cc -O2 -g -pthread -DPADDED -o "$T/rebuilt/false_sharing" examples/false_sharing.c 2>/dev/null &&
	rec "$T/rebuilt.data" "$T/rebuilt/false_sharing"
refuse "runs of another build of the same program on one side are refused" \
	"recorded from another build of false_sharing.*one build per side" \
	"$T/a1.data" "$T/rebuilt.data" -- "$T/b1.data"

if command -v perf >/dev/null &&
	perf record -q --no-buildid -e cpu-clock -o "$T/nobid.data" -- $B/false_sharing 1000000 >/dev/null 2>&1; then
	refuse "a recording without build-ids is refused" "no build-id" "$T/nobid.data" -- "$T/b1.data"
fi

"$H" compare - -- "$T/b1.data" >/dev/null 2>"$T/err"
rc=$?
[ "$rc" -eq 1 ] && grep -q "not from a pipe" "$T/err" && ok "a pipe is refused" || nok "a pipe is refused" "exit $rc" "$(cat "$T/err")"
"$H" compare "$T/a1.data" >/dev/null 2>"$T/err"
[ $? -eq 1 ] && grep -q -- "-- B1.data" "$T/err" && ok "one side only is a usage error" || nok "one side only" "$(cat "$T/err")"
