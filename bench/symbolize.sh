#!/usr/bin/env bash
# Symbolization throughput: a timer recording of the examples (globals, heap, stack, TLS,
# two threads), grown by bench/perfgrow to HM_BENCH_SYM_N samples, resolved twice by
# bench/symbench (cold caches, then warm); then the wall time and peak RSS of
# `hitmap report` on the grown file. Target: at least 1M samples/s warm on one core.
# See bench/README.md.
#   usage: bench/symbolize.sh [HITMAP]
#   HM_BENCH_SYM_N=N      samples in the grown recording (default 1000000)
#   HM_BENCH_SYM_ITERS=N  iterations of each example run in the recording (default 1e8)
# Exits 0 whatever the numbers say; 2 only when a tool it needs is missing.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
HITMAP=./hitmap
for a in "$@"; do
	case $a in
	-h | --help) sed -n '2,10s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) HITMAP=$a ;;
	esac
done
N=${HM_BENCH_SYM_N:-1000000}
ITERS=${HM_BENCH_SYM_ITERS:-100000000}
TOOLS=$ROOT/build/bench
EX=$ROOT/examples/bin
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

die() { echo "bench symbolize: $*" >&2; exit 2; }
say() { echo "bench symbolize: $*"; }
[ -x "$HITMAP" ] || die "$HITMAP: not built; run make first"
[ -x /usr/bin/time ] || die "/usr/bin/time missing: apt-get install time"
[ -x "$TOOLS/perfgrow" ] && [ -x "$TOOLS/symbench" ] || make -s -C "$ROOT" bench-tools >/dev/null ||
	die "cannot build $TOOLS/perfgrow and symbench: run make bench-tools"
[ -x "$EX/objects" ] && [ -x "$EX/false_sharing" ] ||
	make -s -C "$ROOT/examples" bin/objects bin/false_sharing >/dev/null ||
	die "cannot build $EX/objects and false_sharing: run make examples"
read -r load _ </proc/loadavg
awk -v l="$load" -v c="$(nproc)" 'BEGIN { exit !(l > c / 4) }' && say "load average $load on" \
	"$(nproc) CPUs before starting: other work competes; expect noisy figures"

# --- the recording, grown ---------------------------------------------------------------
"$HITMAP" record -c timer -o "$tmp/in.data" -- sh -c "for m in global heap stack tls; do
	'$EX/objects' \$m $ITERS; done; '$EX/false_sharing' $ITERS" >/dev/null 2>"$tmp/err" ||
	die "hitmap record failed: $(head -2 "$tmp/err")"
say "recording: $(grep -o '[0-9]* samples' "$tmp/err" | head -1) of examples/bin/objects" \
	"global, heap, stack, tls and false_sharing, $ITERS iterations each"
"$TOOLS/perfgrow" "$tmp/in.data" "$tmp/grown.data" "$N" >"$tmp/grow" 2>&1 ||
	die "perfgrow failed: $(head -1 "$tmp/grow")"
say "$(sed 's/^perfgrow: [^:]*: //' "$tmp/grow")"

# --- symbench: cold and warm --------------------------------------------------------------
"$TOOLS/symbench" "$tmp/grown.data" >"$tmp/sym" 2>&1 || die "symbench failed: $(head -1 "$tmp/sym")"
val() { awk -v k="$1" '$1 == k { print $2 }' "$tmp/sym"; }

# --- hitmap report on the grown file (it streams: memory is one batch, docs/report.md) ---
/usr/bin/time -f '%e %M' -o "$tmp/time" "$HITMAP" report -i "$tmp/grown.data" \
	>/dev/null 2>"$tmp/rerr" || say "hitmap report failed: $(head -1 "$tmp/rerr")"
read -r rwall rrss < <(tail -1 "$tmp/time")

echo
printf '%-28s %14s %14s %10s\n' "pass ($(val distinct_ips) distinct ips)" "samples/CPU s" \
	"samples/wall s" "CPU s"
for p in cold warm; do
	awk -v p="$p" -v n="$(val samples)" -v c="$(val ${p}_s)" -v w="$(val ${p}_wall_s)" 'BEGIN {
		printf "%-28s %14.0f %14.0f %10.3f\n", p, (c > 0 ? n / c : 0),
			(w > 0 ? n / w : 0), c }'
done
awk -v s="$(val setup_s)" -v d="$(val named)" -v a="$(val with_addr)" -v k="$(val skid)" 'BEGIN {
	printf "setup (maps, before the passes) %.3f s; data object named: %.1f%% of samples" \
		" (%.1f%% have an address; %.1f%% through the skid decode)\n", s, 100 * d,
		100 * a, 100 * k }'
awk -v n="$N" -v w="$rwall" -v r="$rrss" 'BEGIN {
	printf "hitmap report on %d samples: %.2f s wall, %.0f MB peak RSS\n", n, w, r / 1024 }'
awk -v r="$(val warm_per_s)" 'BEGIN {
	printf "%s  warm symbolization >= 1M samples/s on one core: %.2fM/s\n",
		(r >= 1e6 ? "PASS" : "MISS"), r / 1e6 }'
exit 0
