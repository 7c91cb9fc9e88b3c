#!/usr/bin/env bash
# hitmap compare with interleaved controls (A1 .. -- B1 .. -- A2 ..): the drift between
# the A groups, B measured against the midpoint of the controls around it, and a change no
# larger than the drift never significant. The statistics are asserted on user metrics
# given per run (exact numbers, so the outcome follows from the arithmetic), the
# recording-derived metrics on the committed runs of tests/data/rec (false_sharing
# against its padded build). Prints "ok NAME" / "not ok NAME".
. "$(dirname "$0")/../lib/tap.sh"
REC=tests/data/rec

for i in 1 2 3 4 5; do
	cp $REC/cmp_a$i.data "$T/a$i.data"
	cp $REC/cmp_b$i.data "$T/b$i.data"
done
cp $REC/cmp_a1.data "$T/a6.data"

# check FILE NAME PYTHON-EXPR: d is the comparison, m(name) a metric.
check() {
	local f=$1 name=$2 expr=$3
	/usr/bin/python3 - "$f" "$expr" <<'PY' && ok "$name" || nok "$name" "$(head -c 600 "$f")"
import json, sys
d = json.load(open(sys.argv[1]))
def m(name):
    return next((x for x in d['metrics'] if x['name'] == name), None)
sys.exit(0 if eval('(' + sys.argv[2] + ')') else 1)
PY
}

# tput: A before 1000 (x3), A after 1030 (x3): a drift of 3%. B at 1040 is +2.5% on the
# pooled controls, which Welch's test calls significant (p ~0.01, beyond both stddevs),
# but the midpoint of the controls is 1015: +2.5% is within the 3% drift. B at 1100 is
# +8.4% against the midpoint: beyond the drift, so it stays significant.
run() {	# run OUT B-VALUE
	"$H" compare --buildid-dir $REC --json --no-layout \
		"$T/a1.data:tput=1000" "$T/a2.data:tput=1000" "$T/a3.data:tput=1000" -- \
		"$T/b1.data:tput=$2" "$T/b2.data:tput=$2" "$T/b3.data:tput=$2" -- \
		"$T/a4.data:tput=1030" "$T/a5.data:tput=1030" "$T/a6.data:tput=1030" \
		>"$1" 2>"$1.err" || nok "compare ran" "$(cat "$1.err")"
}
run "$T/small.json" 1040
run "$T/large.json" 1100
check "$T/small.json" "groups in time order: A 3+3 runs around B's 3" \
	"d['groups'] == {'a': [3, 3], 'b': [3]} and len(d['a']) == 6 and len(d['b']) == 3"
check "$T/small.json" "drift of the A controls: 3%" "abs(m('tput')['drift_pct'] - 3.0) < 1e-4"
check "$T/small.json" "B against the controls' midpoint (1015): +2.46%" \
	"abs(m('tput')['vs_controls_pct'] - 100 * 25 / 1015) < 1e-4"
check "$T/small.json" "a change within the drift is not significant (though p < 0.05)" \
	"m('tput')['p'] < 0.05 and not m('tput')['significant'] and m('tput')['within_drift']"
check "$T/large.json" "a change beyond the drift stays significant" \
	"m('tput')['significant'] and not m('tput')['within_drift'] and m('tput')['vs_controls_pct'] > 8"

# The recordings: the padded build's conflicts on worker_stats.ops fall far more than the
# unpadded runs drift between the two control groups.
"$H" compare --buildid-dir $REC --json "$T/a1.data" "$T/a2.data" -- "$T/b1.data" "$T/b2.data" \
	"$T/b3.data" -- "$T/a3.data" "$T/a4.data" >"$T/rec.json" 2>"$T/rec.err" ||
	nok "compare of recordings ran" "$(cat "$T/rec.err")"
check "$T/rec.json" "recorded conflicts: the padded build's drop is beyond the controls' drift" \
	"m('worker_stats.ops conflicts')['significant'] and
	 m('worker_stats.ops conflicts')['drift_pct'] < abs(m('worker_stats.ops conflicts')['vs_controls_pct'])"
"$H" compare --buildid-dir $REC "$T/a1.data" "$T/a2.data" -- "$T/b1.data" "$T/b2.data" \
	"$T/b3.data" -- "$T/a3.data" "$T/a4.data" >"$T/rec.txt" 2>&1
grep -q "^interleaved controls: 2 groups of A around 1 of B" "$T/rec.txt" &&
	grep -q " drift *vs ctl *metric$" "$T/rec.txt" &&
	ok "text: the interleaving is stated and the drift columns shown" ||
	nok "text: interleaving stated, drift columns" "$(head -8 "$T/rec.txt")"
"$H" compare --buildid-dir $REC "$T/a1.data" "$T/a2.data" -- "$T/b1.data" "$T/b2.data" \
	--json >"$T/plain.json" 2>&1
check "$T/plain.json" "two groups only: no drift fields (unchanged output)" \
	"'groups' not in d and all('drift_pct' not in x for x in d['metrics'])"

"$H" compare "$T/a1.data" -- -- "$T/b1.data" >/dev/null 2>"$T/err"
rc=$?
[ $rc -eq 1 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "group 2 of runs.*is empty" "$T/err" &&
	ok "an empty group is a usage error, one line" || nok "an empty group" "exit $rc" "$(cat "$T/err")"
