#!/usr/bin/env bash
# The fixes the report prints (tests/e2e/fix_candidates.sh), applied by hand in the
# examples' -DFIXED builds and checked on real traps: each build runs under watchpoints on
# the two threads' fields, once as shipped and once fixed. Watch counts every access, so
# what is asserted holds for any schedule: as shipped, the fields share a line and the
# line is written by both worker threads and is false sharing; fixed, no watched line is
# false sharing and no line is written by more than one thread. pahole, a second tool,
# says where the fixed fields are.
# Prints "ok NAME" / "not ok NAME".
. "$(dirname "$0")/../lib/tap.sh"
B=examples/bin
N=5000

# NAME PROGRAM WATCH...
check() {
	local name=$1 prog=$2
	shift 2
	traps || { skip "$name: record and report"; return; }
	"$H" record -c watch "$@" -o "$T/$name.data" -- $B/$prog $N >/dev/null 2>"$T/$name.err" ||
		{ nok "$name: record" "$(cat "$T/$name.err")"; return; }
	"$H" report -i "$T/$name.data" --json >"$T/$name.json" 2>/dev/null
	python3 - "$T/$name.json" "$name" <<'PY'
import json, sys
path, name = sys.argv[1:]
lines = json.load(open(path))["lines"]
writers = {l["addr"]: sum(1 for t in l["threads"] if t["stores"]) for l in lines}
fs = [l["addr"] for l in lines if l["verdict"] == "false_sharing"]
if name.endswith("_fixed"):
    good = len(lines) >= 2 and all(w <= 1 for w in writers.values()) and not fs
    print(("ok " if good else "not ok ") + "%s: the threads write different lines, no false sharing" % name)
else:
    good = len(fs) == 1 and writers[fs[0]] == 2
    print(("ok " if good else "not ok ") + "%s: both threads write one line, false sharing" % name)
if not good:
    print("    writers per line %s, false sharing on %s" % (writers, fs))
PY
}
check array_threads array_threads --watch counts+0/4 --watch counts+4/4
check array_threads_fixed array_threads_fixed --watch counts+0/4 --watch counts+64/4
check packed packed --watch rec+65/1 --watch rec+121/1
check packed_fixed packed_fixed --watch rec.head --watch rec.tail
check interleaved interleaved --watch il.f0 --watch il.f1 --watch il.f2 --watch il.f3
check interleaved_fixed interleaved_fixed --watch il.f0 --watch il.f1 --watch il.f2 --watch il.f3
if command -v pahole >/dev/null; then
	h=$(pahole -C wire_record $B/packed_fixed | awk '$4 == "head;" { print $6 }')
	t=$(pahole -C wire_record $B/packed_fixed | awk '$4 == "tail;" { print $6 }')
	[ "$h" = 72 ] && [ "$t" = 128 ] && ok "pahole: unpacked, head at 72 (line 1) and tail at 128 (line 2)" ||
		nok "pahole: unpacked offsets" "head=$h tail=$t"
fi
