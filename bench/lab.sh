#!/usr/bin/env bash
# bench/lab.sh [HITMAP]: report time and peak memory on the kernel lab's largest
# recording (`make lab` leaves them in build-lab/out/), with the -dbg vmlinux and the
# unpacked module debug files, against `perf report --stdio` on the same file with the
# same debug info. CPU seconds (user+sys), best of HM_BENCH_RUNS (default 3: the files
# are small). Exits 0 whatever the numbers; 0 with a note when there is no lab output.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
H=${1:-./hitmap}
RUNS=${HM_BENCH_RUNS:-3}
OUT=$ROOT/build-lab/out
LABROOT=$ROOT/build-lab/root
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

echo "bench/lab: report on the kernel lab's largest recording"
if [ ! -s "$OUT/uname" ] || ! ls "$OUT"/*.data >/dev/null 2>&1; then
	echo "bench/lab: no lab recordings in $OUT: run 'make lab' first (skipped)"
	exit 0
fi
REL=$(cat "$OUT/uname")
V=$(cd "$LABROOT" && pwd)/usr/lib/debug/boot/vmlinux-$REL
[ -f "$V" ] || { echo "bench/lab: $V missing: run 'make lab' first (skipped)"; exit 0; }
F=$(ls -S "$OUT"/*.data | grep -v '\.perf\.data$' | head -1)
command -v perf >/dev/null || { echo "bench/lab: perf missing: make deps" >&2; exit 2; }

. "$ROOT/bench/measure.sh"

n=$("$H" script -i "$F" 2>/dev/null | wc -l)
echo "file: $F ($(($(stat -c %s "$F") / 1024)) KB, $n samples, kernel $REL)"
cat "$V" "$F" >/dev/null	# page cache
read -r hs hk _ < <(measure "$H" report -i "$F" --vmlinux "$V" --sysroot "$LABROOT")
read -r js jk _ < <(measure "$H" report -i "$F" --vmlinux "$V" --sysroot "$LABROOT" --json)
read -r ps pk _ < <(measure perf report -i "$F" --stdio --vmlinux "$V")
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", (b > 0 ? a / b : 0) }'; }
printf '%-34s %9s %9s %13s\n' "tool" "CPU s" "peak MB" "vs perf report"
printf '%-34s %9s %9d %13s\n' "hitmap report" "$hs" $((hk / 1024)) "$(ratio "$hs" "$ps") time"
printf '%-34s %9s %9d %13s\n' "hitmap report --json" "$js" $((jk / 1024)) "$(ratio "$js" "$ps") time"
printf '%-34s %9s %9d %13s\n' "perf report --stdio" "$ps" $((pk / 1024)) "1.00x"
echo "(perf names functions from the vmlinux's ELF symbols; hitmap also reads its DWARF to"
echo " type the data addresses: on files this small that indexing is nearly all of its time)"
exit 0
