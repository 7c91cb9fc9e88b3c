#!/usr/bin/env bash
# bench/mem.sh [HITMAP]: peak memory (max RSS, /usr/bin/time) of report, compare and whatif
# on a 1M-sample and an 8M-sample recording (compare: that run against the committed one) (a committed timer recording, few lines,
# grown by build/bench/perfgrow) and on 2M samples over 2M distinct lines (synthesized by
# build/bench/memgen; whatif also with --max-lines 50000), then the cost per sample and
# per distinct line. Inputs go under
# $TMPDIR (about 1.8 GB at the most, one at a time), never into the checkout.
#   HM_BENCH_MEM_N="1000000 8000000"   sample counts of the grown recordings
#   HM_BENCH_MEM_LINES=2000000         distinct lines (and samples) of the synthesized one
#   HM_BENCH_MEM_SKIP="compare whatif" commands left out (e.g. on a small machine)
# Exits 0 whatever the numbers; 2 when a tool is missing. bench/README.md has the story.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
H=${1:-./hitmap}
NS=${HM_BENCH_MEM_N:-1000000 8000000}
NL=${HM_BENCH_MEM_LINES:-2000000}
SKIP=${HM_BENCH_MEM_SKIP:-}
R=$ROOT/tests/data/rec
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

[ -x /usr/bin/time ] || { echo "bench/mem: /usr/bin/time missing: apt-get install time" >&2; exit 2; }
for t in perfgrow memgen; do
	[ -x "$ROOT/build/bench/$t" ] || { echo "bench/mem: build/bench/$t missing: make bench-tools" >&2; exit 2; }
done

# "SECONDS KB RC" of one run
measure() {
	/usr/bin/time -f "%e %M %U %S" -o "$T/t" "$@" >/dev/null 2>"$T/err"
	local rc=$? u sy
	# the last line: a failed command's has "Command exited with non-zero status N" first
	read -r s kb u sy < <(tail -n 1 "$T/t" 2>/dev/null) || { s=0 kb=0 u=0 sy=0; }
	awk -v u="$u" -v s="$sy" 'BEGIN { printf "%.2f\n", u + s }' >>"$T/cpu"
	[ "$rc" = 0 ] || sed 's/^/      /' "$T/err" | grep -v "Command exited" | head -2 >&2
	echo "$s $kb $rc"
}

# one input: NAME FILE; prints a row per command and keeps "cmd kb" in $T/rows
run_input() {
	local name=$1 f=$2
	for cmd in report compare whatif; do
		case " $SKIP " in *" $cmd "*) continue ;; esac
		case $cmd in
		report) set -- "$H" report -i "$f" --buildid-dir "$R" ;;
		compare) set -- "$H" compare "$f" -- "$R/false_sharing.data" --buildid-dir "$R" ;;
		whatif) set -- "$H" whatif -i "$f" --buildid-dir "$R" --suggest worker_stats ;;
		esac
		read -r s kb rc < <(measure "$@")
		printf "  %-26s %-8s %8.1f s %9.0f MB%s\n" "$name" "$cmd" "$s" "$((kb / 1024))" \
			"$([ "$rc" = 0 ] || echo "  (exit $rc)")"
		echo "$name $cmd $kb" >>"$T/rows"
	done
}

echo "peak memory (max RSS) of hitmap on large inputs; $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg)"
start=$(date +%s)
for n in $NS; do
	"$ROOT/build/bench/perfgrow" "$R/false_sharing.data" "$T/grown.data" "$n" >/dev/null || exit 2
	run_input "${n} samples, 1 line" "$T/grown.data"
	rm -f "$T/grown.data"
done
"$ROOT/build/bench/memgen" "$T/lines.data" "$R/bin/false_sharing" "$NL" "$NL" || exit 2
run_input "${NL} samples on ${NL} lines" "$T/lines.data"
# the same without the default --max-lines: what every line costs (a hitmap from before
# --max-lines has no limit)
ALL=()
"$H" report --help 2>/dev/null | grep -q -- --max-lines && ALL=(--max-lines "$NL")
read -r s kb rc < <(measure "$H" report -i "$T/lines.data" --buildid-dir "$R" "${ALL[@]}")
printf "  %-26s %-8s %8.1f s %9.0f MB\n" "  ${ALL[*]:-(no limit)}" report "$s" "$((kb / 1024))"
echo "unlimited report $kb" >>"$T/rows"
# whatif with a small line bound (a hitmap from before whatif --max-lines has none)
if "$H" whatif --help 2>/dev/null | grep -q -- --max-lines; then
	read -r s kb rc < <(measure "$H" whatif -i "$T/lines.data" --buildid-dir "$R" \
		--suggest worker_stats --max-lines 50000)
	printf "  %-26s %-8s %8.1f s %9.0f MB%s\n" "  --max-lines 50000" whatif "$s" \
		"$((kb / 1024))" "$([ "$rc" = 0 ] || echo "  (exit $rc)")"
fi
# a quarter of the lines, for the slope (both past one --batch of new lines, whose
# scratch tables are there in both)
"$ROOT/build/bench/memgen" "$T/lines.data" "$R/bin/false_sharing" "$((NL / 4))" "$((NL / 4))" || exit 2
read -r s kb rc < <(measure "$H" report -i "$T/lines.data" --buildid-dir "$R" "${ALL[@]}")
printf "  %-26s %-8s %8.1f s %9.0f MB\n" "  $((NL / 4)) on as many lines" report "$s" "$((kb / 1024))"
echo "quarter report $kb" >>"$T/rows"
rm -f "$T/lines.data"

awk -v nl="$NL" -v ns="$NS" '
	{ kb[$(NF - 2) " " $(NF - 1)] = $NF; if ($2 == "samples,") grown[$1 " " $(NF - 1)] = $NF }
	END {
		split(ns, n, " ")
		if (length(n) >= 2)
			for (c in grown) {
				split(c, p, " ")
				if (p[1] != n[1]) continue
				hi = n[length(n)] " " p[2]
				if (hi in grown)
					printf "  %-8s per sample: %.1f bytes (%d to %d samples)\n", p[2],
					       (grown[hi] - grown[c]) * 1024 / (n[length(n)] - n[1]), n[1],
					       n[length(n)]
			}
		if (("unlimited report" in kb) && ("quarter report" in kb))
			printf "  report   per distinct line: %.0f bytes (%d to %d lines, no --max-lines)\n",
			       (kb["unlimited report"] - kb["quarter report"]) * 1024 / (nl - nl / 4),
			       nl / 4, nl
	}' "$T/rows"
echo "  ($(($(date +%s) - start)) s wall, generating the inputs included; the runs took $(awk '{ c += $1 } END { printf "%.0f", c }' "$T/cpu") s of CPU)"
