#!/usr/bin/env bash
# perf c2c reads hitmap's recordings (they need the CPU and NUMA topology
# features); perf c2c's record count equals hitmap's sample count, and its topology
# header equals what perf itself writes on this machine. (perf mem report needs sampled
# data addresses, which a timer recording does not carry: hitmap computes them.) A live timer recording; the
# assertions hold for any sample count. Prints "ok NAME" / "not ok NAME".
. "$(dirname "$0")/../lib/tap.sh"

# --no-alloc: perf c2c counts allocation-probe samples as records, hitmap as none
"$H" record -c timer --no-alloc -o "$T/h.data" -- examples/bin/false_sharing 20000000 >/dev/null 2>&1
n=$("$H" report -i "$T/h.data" --json 2>/dev/null |
	/usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["samples"]["total"])')
perf c2c report -i "$T/h.data" --stdio >"$T/c2c.txt" 2>"$T/c2c.err"
rc=$?
recs=$(awk -F: '/Total records/ {gsub(/ /, "", $2); print $2; exit}' "$T/c2c.txt")
if [ "$rc" = 0 ] && grep -q "Trace Event Information" "$T/c2c.txt" && [ "$recs" = "$n" ]; then
	ok "perf c2c report reads a hitmap recording: $recs records, as hitmap counts"
else
	nok "perf c2c report reads a hitmap recording" "rc=$rc records=$recs hitmap=$n" \
		"$(head -3 "$T/c2c.err")"
fi

# The topology as perf writes it here (MemFree moves; perf's MEM_TOPOLOGY is not written).
perf record -o "$T/p.data" -- true >/dev/null 2>&1
topo() { perf report -i "$1" --header-only -I 2>/dev/null |
	grep -E '^# (sibling|CPU [0-9]+:|node[0-9]+ cpu list)' ; }
if [ -n "$(topo "$T/p.data")" ] && [ "$(topo "$T/p.data")" = "$(topo "$T/h.data")" ]; then
	ok "CPU and NUMA topology features equal perf's own on this machine"
else
	nok "CPU and NUMA topology features equal perf's own on this machine" \
		"$(diff <(topo "$T/p.data") <(topo "$T/h.data") | head -8)"
fi
