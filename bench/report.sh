#!/usr/bin/env bash
# bench/report.sh [HITMAP]: report throughput against perf on the same file, in one run.
# A timer recording of examples/bin/false_sharing (cpu-clock with user registers, the
# perf.data format perf reads), grown to N samples by build/bench/perfgrow, then timed:
# `hitmap report` (text, --json; and --jobs 1 and 3), `perf report --stdio`, `perf script`.
# Prints samples/s and peak RSS, ratios first (issue 18's targets: at least 1.0x perf
# report's samples/s, at least 5x perf script's, peak memory at most perf report's). Both
# wall time (what the user waits: with two CPUs hitmap resolves on one thread and
# tabulates on another, docs/report.md "Two cores") and CPU time (user+sys of all threads: the
# work, which another job on the machine skews less) are compared; perf report and perf
# script run on one thread. Then the per-sample cost of `compare` (the file against
# itself: 2N samples) and `whatif --pad` next to report's, and the fixed cost: report on
# the recording before it was grown.
#   HM_BENCH_REPORT_N=N   samples in the grown file (default 5000000, ~1 GB on disk)
#   HM_BENCH_RUNS=N       keep the fastest of N runs per tool (default 1)
# Exits 0 whatever the numbers; 2 when a tool is missing.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
H=${1:-./hitmap}
N=${HM_BENCH_REPORT_N:-5000000}
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
B=$(perf script -i "$T/base.data" -F tid 2>/dev/null | wc -l)

. "$ROOT/bench/measure.sh"
read -r hs hk hw < <(measure "$H" report -i "$T/big.data")
read -r os ok ow < <(measure "$H" report -i "$T/big.data" --jobs 1)
read -r ts tk tw < <(measure "$H" report -i "$T/big.data" --jobs 3)
read -r js jk jw < <(measure "$H" report -i "$T/big.data" --json)
read -r ps pk pw < <(measure perf report -i "$T/big.data" --stdio)
read -r ss sk sw < <(measure perf script -i "$T/big.data")
read -r cs ck cw < <(measure "$H" compare "$T/big.data" -- "$T/big.data")
read -r ws wk ww < <(measure "$H" whatif -i "$T/big.data" --pad worker_stats.errors=56)
read -r fs fk fw < <(measure "$H" report -i "$T/base.data")
awk -v n="$N" -v hs="$hs" -v hk="$hk" -v js="$js" -v jk="$jk" -v ps="$ps" -v pk="$pk" \
	-v ss="$ss" -v sk="$sk" -v hw="$hw" -v jw="$jw" -v pw="$pw" -v sw="$sw" \
	-v os="$os" -v ok="$ok" -v ow="$ow" -v nc="$(nproc)" \
	-v ts="$ts" -v tk="$tk" -v tw="$tw" \
	-v cs="$cs" -v ck="$ck" -v cw="$cw" -v ws="$ws" -v wk="$wk" -v ww="$ww" \
	-v fs="$fs" -v fk="$fk" -v fw="$fw" -v b="$B" 'BEGIN {
	printf "report throughput on %d samples (%d CPUs; best of runs; hitmap report: --jobs 2 where two CPUs are online)\n", n, nc
	printf "  wall (what the user waits): hitmap report vs perf report --stdio: %.2fx samples/s  (target >= 1.0x)\n", pw / hw
	printf "  wall: hitmap report vs perf script:                  %.2fx samples/s  (target >= 5x)\n", sw / hw
	printf "  wall: hitmap report --json vs perf report:           %.2fx samples/s\n", pw / jw
	printf "  CPU (all threads): hitmap report vs perf report:     %.2fx samples/s; --jobs 1: %.2fx\n", ps / hs, ps / os
	printf "  CPU: hitmap report vs perf script:                   %.2fx samples/s\n", ss / hs
	printf "  peak memory: hitmap report vs perf report:           %.2fx  (target <= 1.0x); --jobs 1: %.2fx\n", hk / pk, ok / pk
	printf "  %-30s %8s %8s %12s %12s %10s\n", "tool", "CPU s", "wall s", "samples/s", "(by wall)", "peak MB"
	row("hitmap report", hs, hw, n, hk)
	row("hitmap report --jobs 1", os, ow, n, ok)
	row("hitmap report --jobs 3", ts, tw, n, tk)
	row("hitmap report --json", js, jw, n, jk)
	row("perf report --stdio", ps, pw, n, pk)
	row("perf script", ss, sw, n, sk)
	row("hitmap compare (2 x N)", cs, cw, 2 * n, ck)
	row("hitmap whatif --pad", ws, ww, n, wk)
	printf "  fixed cost: hitmap report on the %d-sample recording before growing: %.2f CPU s, %.2f wall s\n", b, fs, fw
	printf "  per sample, fixed cost off (CPU ns): report %.0f (--jobs 1: %.0f), compare %.0f, whatif --pad %.0f\n",
		1e9 * (hs - fs) / n, 1e9 * (os - fs) / n, 1e9 * (cs - 2 * fs) / (2 * n), 1e9 * (ws - fs) / n
	printf "  per sample, fixed cost off (wall ns): report %.0f (--jobs 1: %.0f), compare %.0f, whatif --pad %.0f, perf report %.0f\n",
		1e9 * (hw - fw) / n, 1e9 * (ow - fw) / n, 1e9 * (cw - 2 * fw) / (2 * n),
		1e9 * (ww - fw) / n, 1e9 * pw / n
}
function row(name, c, w, k, kb) { printf "  %-30s %8.2f %8.2f %12.0f %12.0f %10.1f\n", name, c, w, k / c, k / w, kb / 1024 }'
