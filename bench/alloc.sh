#!/usr/bin/env bash
# What allocation tracking costs `hitmap record` (docs/alloc.md): wall time of
# `record -c timer` with and without the malloc-family probes, on an allocation-heavy
# workload (examples/alloc_churn: malloc, memset, free per request, one thread) and on a
# normal one (examples/alloc_array: two threads counting, one calloc). With the default
# budget, and with the budget lifted, which gives the cost of one probe hit (a trap).
#   usage: bench/alloc.sh [HITMAP]
#   HM_BENCH_ALLOC_RUNS=N  runs of each case; the median counts (default 3)
# Exits 0 whatever the numbers say; 2 only when a tool it needs is missing.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
HITMAP=./hitmap
for a in "$@"; do
	case $a in
	-h | --help) sed -n '2,9s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) HITMAP=$a ;;
	esac
done
RUNS=${HM_BENCH_ALLOC_RUNS:-3}
CHURN=$ROOT/examples/bin/alloc_churn
ARRAY=$ROOT/examples/bin/alloc_array
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
die() { echo "bench alloc: $*" >&2; exit 2; }
say() { echo "bench alloc: $*"; }
[ -x "$HITMAP" ] || die "$HITMAP: not built; run make first"
[ -x "$CHURN" ] && [ -x "$ARRAY" ] || make -s -C "$ROOT/examples" bin/alloc_churn bin/alloc_array \
	>/dev/null || die "cannot build the examples"
if [ "$(id -u)" != 0 ] || [ ! -r /sys/bus/event_source/devices/uprobe/type ]; then
	say "skipped: uprobes need root and the uprobe PMU"
	exit 0
fi
read -r load _ </proc/loadavg
say "load average $load on $(nproc) CPUs; $RUNS runs per case, median wall seconds"

# run NAME CMD...: one run's wall seconds to $tmp/NAME, its allocation events to NAME.ev
run() {
	local name=$1 t0 t1
	shift
	t0=${EPOCHREALTIME/,/.}
	"$@" >/dev/null 2>"$tmp/err" || echo "bench alloc: '$*' failed: $(head -2 "$tmp/err")" >&2
	t1=${EPOCHREALTIME/,/.}
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }' >>"$tmp/$name"
	sed -n 's/.*: \([0-9]*\) allocation events.*/\1/p' "$tmp/err" >>"$tmp/$name.ev"
}
median() { sort -g "$1" | awk '{ v[NR] = $1 } END { printf "%.3f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
events() { [ -s "$1.ev" ] && sort -g "$1.ev" | tail -1 || echo 0; }

bench() {	# LABEL WORKLOAD...
	local label=$1 bare none on off ev_on ev_off
	shift
	for _ in $(seq "$RUNS"); do
		run "$label.bare" "$@"
		run "$label.none" "$HITMAP" record -c timer --no-alloc -o "$tmp/x.data" -- "$@"
		run "$label.on" "$HITMAP" record -c timer -o "$tmp/x.data" -- "$@"
		run "$label.off" "$HITMAP" record -c timer --alloc-budget 1000000000 -o "$tmp/x.data" -- "$@"
	done
	bare=$(median "$tmp/$label.bare")
	none=$(median "$tmp/$label.none")
	on=$(median "$tmp/$label.on")
	off=$(median "$tmp/$label.off")
	ev_on=$(events "$tmp/$label.on")
	ev_off=$(events "$tmp/$label.off")
	printf '%-28s %8s %8s %8s %10s %12s %10s\n' "$label" "$bare" "$none" "$on" "$ev_on" "$off" "$ev_off"
	awk -v n="$none" -v o="$off" -v e="$ev_off" -v on="$on" -v label="$label" 'BEGIN {
		printf "  %s: record with tracking / without: %.2fx (default budget), %.2fx (no budget)",
			label, on / n, o / n
		if (e >= 10000 && o > n) printf "; %.2f us per probe hit", (o - n) / e * 1e6
		printf "\n" }'
}

printf '%-28s %8s %8s %8s %10s %12s %10s\n' "workload" "bare" "no-alloc" "alloc" "events" \
	"no-budget" "events"
bench "alloc_churn 200000" "$CHURN" 200000
bench "alloc_array 100000000" "$ARRAY" 100000000
say "the budget: $(grep -o 'HM_ALLOC_BUDGET [0-9]*' "$ROOT/collectors/alloc.h" | cut -d' ' -f2) \
allocation events, then the probes are removed for the rest of the run"
exit 0
