#!/usr/bin/env bash
# Runs each libFuzzer target SECONDS on its corpus in build-fuzz/corpus/TARGET (made by
# tests/fuzz/seeds.sh); one summary line per target; exits 1 if any target crashed, hung
# (-timeout) or ran out of memory (-rss_limit_mb). Crash inputs land in build-fuzz/crashes/;
# minimise one with:  build-fuzz/fuzz/TARGET_fuzz -minimize_crash=1 -runs=10000 FILE
# and save it as tests/data/fuzz-regress/TARGET-NAME (tests/fuzz/README.md).
#   usage: tests/fuzz/run.sh SECONDS TARGET...
# FUZZ_NICE=19 runs the fuzzers at that nice level; FUZZ_ARGS adds libFuzzer flags.
set -u
cd "$(dirname "$0")/../.." || exit 1
secs=${1:?usage: run.sh SECONDS TARGET...}
shift
out=build-fuzz
mkdir -p "$out/logs" "$out/crashes"
failed=0

max_len() {
	case $1 in
	decode) echo 4096 ;;
	*) echo 65536 ;;	# tests/fuzz/seeds.sh cuts larger seeds to this
	esac
}

for t in "$@"; do
	bin=$out/fuzz/${t}_fuzz
	log=$out/logs/$t.log
	if [ ! -x "$bin" ]; then
		echo "fuzz $t: FAIL: $bin not built (make fuzz-build)"
		failed=1
		continue
	fi
	mkdir -p "$out/corpus/$t"
	nice -n "${FUZZ_NICE:-0}" "$bin" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 \
		-max_len="$(max_len "$t")" -print_final_stats=1 \
		-artifact_prefix="$out/crashes/$t-" ${FUZZ_ARGS:-} "$out/corpus/$t" >"$log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
	ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
	corpus=$(ls "$out/corpus/$t" | wc -l)
	if [ "$rc" -eq 0 ]; then
		echo "$t $secs" >>"$out/cpu-seconds"
		echo "fuzz $t: ok: ${secs} s, ${runs:-?} runs, cov ${cov:-?}, ft ${ft:-?}, corpus $corpus"
	else
		art=$(grep -o "Test unit written to .*" "$log" | tail -1 | sed 's/Test unit written to //')
		why=$(grep -m1 -o 'ERROR: [A-Za-z]*Sanitizer: [^ ]*\|ERROR: libFuzzer: [a-z-]*\|runtime error: .*' "$log")
		echo "fuzz $t: FAIL (rc $rc): ${why:-see log}; input ${art:-none}; log $log"
		grep -m1 -A12 '^==[0-9]*==ERROR\|runtime error' "$log" | grep '#[0-9]' | head -6 | sed 's/^/    /'
		failed=1
	fi
done
exit $failed
