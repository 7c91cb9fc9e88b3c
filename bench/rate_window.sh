#!/usr/bin/env bash
# bench/rate_window.sh [HITMAP]: how the timer's conflict window (report --window) and
# its rate (record -F) move the verdicts, against watch as ground truth (docs/decode.md,
# "Choosing the rate and the window"). Watch verdicts of these programs are exact and do
# not depend on either knob: false_sharing, interleaved, array_threads, packed, short_run
# and confirm_rotate are false sharing (bench/verdicts.sh, record --confirm), true_sharing
# is true sharing, false_sharing_padded, read_mostly and xfs_like share no written line.
#   1. the window, on the committed recordings (4000 Hz, deterministic): per window, each
#      recording's top line as verdict/confidence/conflicts;
#   2. the rate, live (one run per cell, 2 vCPUs shared with other jobs): false_sharing
#      at 50,000,000 iterations (0.16 s, the short run) and 200,000,000, and its padded
#      build, per -F: verdict/confidence/records of the smaller side.
# Prints markdown; exits 0 whatever the numbers, 2 when hitmap is missing.
set -u
cd "$(dirname "$0")/.."
H=${1:-./hitmap}
R=tests/data/rec
[ -x "$H" ] || { echo "bench/rate_window.sh: build hitmap first (make)" >&2; exit 2; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
WINDOWS="10 25 50 100 250 1000"
RECS="false_sharing interleaved array_threads packed short_run confirm_rotate_spin true_sharing false_sharing_padded read_mostly xfs_like"

top() {	# JSON on stdin: the top line as "verdict/confidence/conflicts/min side"
	python3 -c '
import json, sys
d = json.load(sys.stdin)
l = d["lines"][0] if d["lines"] else {}
s = l.get("sides") or {}
side = min(s.get("a_records", 0), s.get("b_records", 0))
v = {"false_sharing": "FS", "true_sharing": "TS", "private": "priv", "read_only": "RO",
     "too_few_samples": "few"}.get(l.get("verdict"), l.get("verdict"))
c = (l.get("confidence") or "-")[:3]
print("%s %s, %d c, %d/side" % (v, c, l.get("conflicts", 0), side))'
}

echo "### Window (committed recordings, 4000 Hz)"
echo
printf '| recording |'; for w in $WINDOWS; do printf ' %s us |' "$w"; done; echo
printf '|---|'; for w in $WINDOWS; do printf -- '---|'; done; echo
for r in $RECS; do
	printf '| %s |' "$r"
	for w in $WINDOWS; do
		printf ' %s |' "$("$H" report -i $R/$r.data --buildid-dir $R --window "$w" --json \
			2>/dev/null | top)"
	done
	echo
done

echo
echo "### Rate (live, one run per cell)"
echo
RATES="500 1000 2000 4000 8000 16000"
printf '| program, iterations |'; for f in $RATES; do printf ' -F %s |' "$f"; done; echo
printf '|---|'; for f in $RATES; do printf -- '---|'; done; echo
for p in "false_sharing 50000000" "false_sharing 200000000" "false_sharing_padded 200000000"; do
	set -- $p
	printf '| %s, %s |' "$1" "$2"
	for f in $RATES; do
		"$H" record -c timer -F "$f" -o "$T/r.data" -- $R/bin/$1 "$2" >/dev/null 2>&1
		printf ' %s |' "$("$H" report -i "$T/r.data" --json 2>/dev/null | top)"
	done
	echo
done
