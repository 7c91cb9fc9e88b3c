#!/usr/bin/env bash
# bench/report.sh [HITMAP]: report throughput against perf on the same file, in one run.
# A timer recording of examples/bin/false_sharing (cpu-clock with user registers, the
# perf.data format perf reads), grown to N samples by build/bench/perfgrow, then timed:
# `hitmap report` (text, --json), `perf report --stdio`, `perf script`. Prints samples/s
# and peak RSS, ratios first (issue 18's targets: at least 1.0x perf report's samples/s,
# at least 5x perf script's, peak memory at most perf report's). CPU time (user+sys) is
# what is compared, so another job on the machine skews it less than wall time would.
#   HM_BENCH_REPORT_N=N   samples in the grown file (default 1000000)
#   HM_BENCH_RUNS=N       keep the fastest of N runs per tool (default 1)
# Exits 0 whatever the numbers; 2 when a tool is missing.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
H=${1:-./hitmap}
N=${HM_BENCH_REPORT_N:-1000000}
RUNS=${HM_BENCH_RUNS:-1}
GROW=$ROOT/build/bench/perfgrow
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

for t in perf /usr/bin/time; do
	command -v $t >/dev/null || { echo "bench/report: $t missing: make deps" >&2; exit 2; }
done
[ -x "$GROW" ] || { echo "bench/report: $GROW missing: make bench-tools" >&2; exit 2; }
"$H" record -c timer -o "$T/base.data" -- "$ROOT/examples/bin/false_sharing" 100000000 \
	>/dev/null 2>&1 || { echo "bench/report: hitmap record failed" >&2; exit 2; }
"$GROW" "$T/base.data" "$T/big.data" "$N" >/dev/null || exit 2

. "$ROOT/bench/measure.sh"
read -r hs hk < <(measure "$H" report -i "$T/big.data")
read -r js jk < <(measure "$H" report -i "$T/big.data" --json)
read -r ps pk < <(measure perf report -i "$T/big.data" --stdio)
read -r ss sk < <(measure perf script -i "$T/big.data")
awk -v n="$N" -v hs="$hs" -v hk="$hk" -v js="$js" -v jk="$jk" -v ps="$ps" -v pk="$pk" \
	-v ss="$ss" -v sk="$sk" 'BEGIN {
	printf "report throughput on %d samples (CPU seconds, peak RSS)\n", n
	printf "  hitmap report vs perf report --stdio: %.2fx samples/s, %.2fx memory  (target >= 1.0x, <= 1.0x)\n", ps / hs, hk / pk
	printf "  hitmap report --json vs perf report:  %.2fx samples/s\n", ps / js
	printf "  hitmap report vs perf script:         %.2fx samples/s  (target >= 5x)\n", ss / hs
	printf "  %-24s %8s %12s %10s\n", "tool", "CPU s", "samples/s", "peak MB"
	printf "  %-24s %8.2f %12.0f %10.1f\n", "hitmap report", hs, n / hs, hk / 1024
	printf "  %-24s %8.2f %12.0f %10.1f\n", "hitmap report --json", js, n / js, jk / 1024
	printf "  %-24s %8.2f %12.0f %10.1f\n", "perf report --stdio", ps, n / ps, pk / 1024
	printf "  %-24s %8.2f %12.0f %10.1f\n", "perf script", ss, n / ss, sk / 1024
}'
