#!/usr/bin/env bash
# PMU smoke test for a machine WITH a hardware PMU (bare metal, or a VM with a virtual PMU
# that passes PEBS/IBS through). Not run by `make check`: this project's own CI machine is
# a VM without one. Records the false-sharing example with -c pmu -e c2c and checks, with
# perf script, that the samples carry data addresses and land on the contended struct.
#
# usage: tests/pmu-smoke.sh [OUTDIR]     (HITMAP=path/to/hitmap, PERF=path/to/perf)
# Prints "ok NAME" / "not ok NAME" per check; exit 0 when all pass, 77 when there is no
# usable PMU here (nothing was tested), 1 otherwise.
set -u
cd "$(dirname "$0")/.."
H=${HITMAP:-./hitmap}
PERF=${PERF:-perf}
OUT=${1:-$(mktemp -d)}
mkdir -p "$OUT"
X=$OUT/pmu-smoke.data
W=examples/bin/false_sharing
fail=0
ok() { echo "ok $1"; }
nok() { echo "not ok $1"; shift; [ $# -gt 0 ] && printf '    %s\n' "$@"; fail=1; }

echo "# /sys/bus/event_source/devices:"
ls /sys/bus/event_source/devices/ | sed 's/^/#   /'
echo "# perf_event_paranoid: $(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null)"
echo "# $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null)"
echo "# hitmap check:"
"$H" check | sed 's/^/#   /'
"$H" check --json >"$OUT/check.json"

if ! "$H" check | grep -q '^pmu  *yes'; then
	echo "# skip: hitmap check finds no usable PMU here; the line above says why"
	exit 77
fi
[ -x "$W" ] || make -C examples >/dev/null

"$H" record -c pmu -e c2c -o "$X" -- "$W" 20000000 >"$OUT/record.out" 2>"$OUT/record.err"
rc=$?
if [ "$rc" -eq 0 ] && [ -s "$X" ]; then ok "record -c pmu -e c2c exits 0 and writes $X"
else nok "record -c pmu -e c2c exits 0 and writes $X" "rc=$rc" "$(cat "$OUT/record.err")"; fi

"$PERF" report --header-only -i "$X" 2>/dev/null | grep -E '^# (event|cpudesc|cpuid)' |
	sed 's/^/#   /'
"$PERF" script -i "$X" -F event,ip,addr,data_src,weight >"$OUT/script.txt" 2>"$OUT/script.err"
rc=$?
echo "# perf script -F event,ip,addr,data_src,weight | head:"
head -20 "$OUT/script.txt" | sed 's/^/#   /'
if [ "$rc" -eq 0 ]; then ok "perf script reads the recording"
else nok "perf script reads the recording" "$(head -5 "$OUT/script.err")"; fi

# addr is the field after the ip; a sample without an address prints 0.
"$PERF" script -i "$X" -F addr,data_src 2>/dev/null >"$OUT/addr.txt"
total=$(grep -c . "$OUT/addr.txt")
with_addr=$(awk '$1 != "0" && $1 ~ /^[0-9a-f]+$/' "$OUT/addr.txt" | grep -c .)
echo "# samples: $total, with a data address: $with_addr"
if [ "$with_addr" -ge 10 ]; then ok "samples carry data addresses ($with_addr of $total)"
else nok "samples carry data addresses ($with_addr of $total)"; fi

# HITM (another core held the line modified) or load-latency loads, as perf c2c counts them.
hot=$(grep -c -E 'HitM|Hit\b|LFB|L2 hit|L3 hit|Peer|Remote' "$OUT/addr.txt")
if [ "$hot" -ge 1 ]; then ok "HITM or load-latency samples present ($hot)"
else nok "HITM or load-latency samples present" "$(head -5 "$OUT/addr.txt")"; fi

# The example is PIE: compare page offsets with 'stats' (struct worker_stats, 32 bytes).
off=$(nm "$W" | awk '$3 == "stats" {print $1}')
if [ -n "$off" ]; then
	on=$(awk -v o=$((16#$off & 0xfff)) '$1 ~ /^[0-9a-f]+$/ && $1 != "0" {
		a = strtonum("0x" $1) % 4096; if (a >= o && a < o + 32) n++ } END {print n + 0}' \
		"$OUT/addr.txt")
	if [ "$on" -ge 1 ]; then ok "samples land on stats, the falsely shared struct ($on)"
	else nok "samples land on stats, the falsely shared struct" "page offset $((16#$off & 0xfff))"; fi
fi

if "$H" script -i "$X" >"$OUT/hitmap-script.txt" 2>&1; then ok "hitmap script reads it"
else nok "hitmap script reads it" "$(head -3 "$OUT/hitmap-script.txt")"; fi

echo "# files in $OUT"
exit $fail
