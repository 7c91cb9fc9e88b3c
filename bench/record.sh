#!/usr/bin/env bash
# Overhead of `hitmap record -c timer -F 4000` on the two-thread false-sharing example,
# against a bare run and against `perf record -e cpu-clock -F 4000 --user-regs=...`, and
# the bytes each writes per sample (issue 4). See bench/README.md.
#   usage: bench/record.sh [HITMAP]
#   HM_BENCH_RECORD_N=N     iterations per thread (default: what makes a bare run ~2 s)
#   HM_BENCH_RECORD_RUNS=N  runs of each case; the median counts (default 5)
# Exits 0 whatever the numbers say; 2 only when a tool it needs is missing.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
HITMAP=./hitmap
for a in "$@"; do
	case $a in
	-h | --help) sed -n '2,8s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) HITMAP=$a ;;
	esac
done
RUNS=${HM_BENCH_RECORD_RUNS:-5}
HZ=4000
REGS=ax,bx,cx,dx,si,di,bp,sp,ip,r8,r9,r10,r11,r12,r13,r14,r15
W=$ROOT/examples/bin/false_sharing
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

die() { echo "bench record: $*" >&2; exit 2; }
say() { echo "bench record: $*"; }
[ -x "$HITMAP" ] || die "$HITMAP: not built; run make first"
for t in perf /usr/bin/time; do
	command -v $t >/dev/null || die "$t missing (perf is in linux-perf, /usr/bin/time in time)"
done
[ -x "$W" ] || make -s -C "$ROOT/examples" bin/false_sharing >/dev/null || die "cannot build $W"

# --- the workload size: a bare run of ~2 s ---------------------------------------------
# calibrate [PIN...]: the iterations that make a bare run of the workload take ~2 s.
calibrate() {
	local t0 t1
	t0=${EPOCHREALTIME/,/.}; "$@" "$W" 500000000 >/dev/null; t1=${EPOCHREALTIME/,/.}
	awk -v a="$t0" -v b="$t1" 'BEGIN { n = 5e8 * 2.0 / (b - a); printf "%d", int(n / 1e7 + 0.5) * 1e7 }'
}
CPUS=$(nproc)
read -r load _ </proc/loadavg
awk -v l="$load" -v c="$CPUS" 'BEGIN { exit !(l > c / 4) }' &&
	say "load average $load on $CPUS CPUs before starting: other work competes; expect noisy figures"
N=${HM_BENCH_RECORD_N:-$(calibrate)}
say "workload: examples/bin/false_sharing N (2 threads), N=$N; $CPUS CPUs; $RUNS runs per case, median"

# run NAME CMD...: one timed run; appends wall and CPU (user+sys, the workload included)
# seconds to $tmp/NAME.
run() {
	local name=$1 e u s
	shift
	/usr/bin/time -f '%e %U %S' -o "$tmp/time" "$@" >/dev/null 2>"$tmp/$name.err" ||
		echo "bench record: '$*' failed: $(grep -v '^\[ perf' "$tmp/$name.err" | head -2)" >&2
	read -r e u s < <(tail -1 "$tmp/time")
	echo "$e $(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')" >>"$tmp/$name"
}
median() {	# FILE COLUMN
	sort -g -k"$2" "$1" | awk -v c="$2" '{ v[NR] = $c }
		END { printf "%.3f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
spread() { sort -g "$1" | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.2f-%.2f", lo, hi }'; }
samples() { perf script -i "$1" -F tid 2>/dev/null | wc -l; }

# variant LABEL N [PIN...]: the cases, interleaved run by run; one line per case in
# $tmp/LABEL.rows: CASE WALL CPU SAMPLES BYTES WALL-RANGE. perf-nb is perf with
# --no-bpf-event, without the ~0.8 s its BPF side-band thread adds at exit (README).
variant() {
	local label=$1 n=$2 r c perf=(perf record -e cpu-clock -F "$HZ" --user-regs="$REGS")
	shift 2
	rm -f "$tmp"/{bare,hitmap,perf,perf-nb}
	for ((r = 0; r < RUNS; r++)); do
		run bare "$@" "$W" "$n"
		rm -f "$tmp"/*.data
		run hitmap "$HITMAP" record -c timer -F $HZ -o "$tmp/hitmap.data" -- "$@" "$W" "$n"
		run perf "${perf[@]}" -o "$tmp/perf.data" -- "$@" "$W" "$n"
		run perf-nb "${perf[@]}" --no-bpf-event -o "$tmp/perf-nb.data" -- "$@" "$W" "$n"
	done
	echo "bare $(median "$tmp/bare" 1) $(median "$tmp/bare" 2) 0 0 $(spread "$tmp/bare")" >"$tmp/$label.rows"
	for c in hitmap perf perf-nb; do
		echo "$c $(median "$tmp/$c" 1) $(median "$tmp/$c" 2) $(samples "$tmp/$c.data")" \
			"$(stat -c %s "$tmp/$c.data" 2>/dev/null || echo 0) $(spread "$tmp/$c")" >>"$tmp/$label.rows"
	done
	sed -n 's/^hitmap record: /  hitmap (last run): /p' "$tmp/hitmap.err" | head -1
	grep -h -i 'lost' "$tmp/perf.err" "$tmp/perf-nb.err" | sed 's/^/  perf (last run): /' | head -2
}

# report ROWS TITLE: the table and the targets of one variant.
report() {
	awk -v title="$2" '
	function pct(x, base) { return base > 0 ? 100 * (x - base) / base : 0 }
	function verdict(ok) { return ok ? "PASS" : "MISS" }
	{ k[NR] = $1; w[$1] = $2; c[$1] = $3; n[$1] = $4; b[$1] = $5; r[$1] = $6 }
	END {
		printf "\n%s\n%-8s %7s %11s %7s %8s %8s %8s %10s %9s\n", title, "case", "wall s",
			"wall range", "cpu s", "wall +%", "cpu +%", "samples", "bytes", "B/sample"
		for (i = 1; i <= NR; i++) {
			x = k[i]
			printf "%-8s %7.3f %11s %7.2f", x, w[x], r[x], c[x]
			if (x == "bare") { printf " %8s %8s %8s %10s %9s\n", "-", "-", "-", "-", "-"; continue }
			ow[x] = pct(w[x], w["bare"]); oc[x] = pct(c[x], c["bare"])
			bps[x] = n[x] > 0 ? b[x] / n[x] : 0
			printf " %7.1f%% %7.1f%% %8d %10d %9.1f\n", ow[x], oc[x], n[x], b[x], bps[x]
		}
		h = "hitmap"
		for (p = 0; p < 2; p++) {
			x = p ? "perf-nb" : "perf"
			printf "%s  hitmap overhead <= %s'"'"'s: wall %+.1f%% vs %+.1f%%, cpu %+.1f%% vs %+.1f%%\n",
				verdict(ow[h] <= ow[x] && oc[h] <= oc[x]), x, ow[h], ow[x], oc[h], oc[x]
		}
		printf "%s  hitmap overhead <= 5%% over bare: wall %+.1f%%, cpu %+.1f%%\n",
			verdict(ow[h] <= 5 && oc[h] <= 5), ow[h], oc[h]
		printf "%s  bytes per sample <= perf'"'"'s: %.1f vs %.1f\n",
			verdict(bps[h] > 0 && bps[h] <= bps["perf"]), bps[h], bps["perf"]
	}' "$1"
}

# cpu0_wrapper: writes $tmp/cpu0, a script that moves itself into a new cpuset $CG that
# holds CPU 0 alone, then execs its arguments. Leaves CG empty without a cpuset we may write.
CG=''
cpu0_wrapper() {
	local root=/sys/fs/cgroup/cpuset procs=tasks
	if [ ! -w "$root" ]; then
		root=/sys/fs/cgroup procs=cgroup.procs
		grep -qw cpuset "$root/cgroup.subtree_control" 2>/dev/null || return 0
	fi
	mkdir "$root/hitmap-bench.$$" 2>/dev/null || return 0
	CG=$root/hitmap-bench.$$
	trap 'rmdir "$CG" 2>/dev/null; rm -rf "$tmp"' EXIT
	echo 0 >"$CG/cpuset.cpus" || { rmdir "$CG"; CG=''; return 0; }
	[ -f "$root/cpuset.mems" ] && cat "$root/cpuset.mems" >"$CG/cpuset.mems"
	printf '#!/bin/sh\necho $$ >%s/%s && exec "$@"\n' "$CG" "$procs" >"$tmp/cpu0"
	chmod +x "$tmp/cpu0"
}

variant free "$N"
report "$tmp/free.rows" "workload free on $CPUS CPUs, N=$N (wall and cpu: median of $RUNS; cpu: user+sys, workload included)"
# The same with the workload confined to CPU 0 by a cpuset (its threads take turns and no
# longer bounce the line), so that the recorder has another CPU to itself. taskset would
# not do: the example pins its two threads to CPUs 0 and 1 itself.
[ "$CPUS" -ge 2 ] || exit 0
cpu0_wrapper
if [ -z "$CG" ]; then
	say "no writable cpuset cgroup (needs root); the variant on one CPU is skipped"
	exit 0
fi
NP=${HM_BENCH_RECORD_N:-$(calibrate "$tmp/cpu0")}
variant cpu0 "$NP" "$tmp/cpu0"
report "$tmp/cpu0.rows" "workload confined to CPU 0 (a cpuset), N=$NP; recorder on either CPU"
exit 0
