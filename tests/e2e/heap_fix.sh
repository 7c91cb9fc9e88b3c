#!/usr/bin/env bash
# Heap arrays of per-thread structs, judged on REAL watchpoint traps (exact counts) with
# the allocation recorded by record's malloc-family uprobes (docs/report.md, "The fix is
# replayed before it is printed"; docs/heatmap.md, "What counts"). examples/heap_args:
# two threads, each updating the first (count, +0) and last (total, +56) member of its
# own 64-byte lreg_args; run under setarch -R, so the array's address is the same in
# every run, and the four members are watched by address (4 debug registers).
#   1. `heap_args N calloc`: the array is calloc(2, 64) itself, mid-line where malloc puts
#      it, so element 0's total and element 1's count share a line: false sharing that
#      only an aligned allocation fixes. The printed fix names the calloc's file:line and
#      aligned_alloc, and is printed because its replay leaves 0 falsely shared lines;
#      whatif agrees (--align lreg_args.count=64 --aligned-alloc: 0 after; without
#      --aligned-alloc the malloc'd base is kept and the line stays shared).
#   2. `heap_args N 0`: the array starts on a line (the padded, aligned build): each
#      instance's line is written by one thread. The heat map folds both instances onto
#      the type's line 0 (2 writers there) but must not say "2 threads write this line":
#      line_writers 1, and no line written by 2+ threads.
#   3. `heap_args N 48`: element 0's total and element 1's count on one real line: the
#      heat map says "2 threads write this line" (line_writers 2).
# Prints "ok NAME" / "not ok NAME".
. "$(dirname "$0")/../lib/tap.sh"
P=examples/bin/heap_args
SRC=examples/heap_args.c
N=20000

if [ "$(id -u)" != 0 ] || [ ! -r /sys/bus/event_source/devices/uprobe/type ]; then
	ok "heap_fix # skip: allocation probes need root and the uprobe PMU"
	exit 0
fi
traps || { skip "heap_fix: every check (watch recordings of heap_args)"; exit 0; }
LINE=$(grep -n 'calloc(2, sizeof(lreg_args))' "$SRC" | cut -d: -f1)

# MODE: watch the four members of the array heap_args MODE prints into $T/MODE.data
watch4() {
	local a w=()
	a=$(setarch -R "$P" 1 "$1" | sed -n 's/^args \(0x[0-9a-f]*\)$/\1/p')
	[ -n "$a" ] || return 1
	for o in 0 56 64 120; do w+=(--watch "$(printf '0x%x/8' $((a + o)))"); done
	setarch -R "$H" record -c watch "${w[@]}" -o "$T/$1.data" -- "$P" $N "$1" \
		>"$T/$1.out" 2>"$T/$1.err" || return 1
	grep -qx "$N $N" "$T/$1.out" || return 1
	echo "$a"
}

# 1. calloc'd mid-line: the fix names the allocation and is replayed
if ! A=$(watch4 calloc); then
	nok "heap_fix: watch recording of heap_args calloc" "$(cat "$T/calloc.err" 2>/dev/null)"
elif [ $((A % 64)) = 0 ]; then
	ok "heap_fix: fix at the allocation # skip: malloc put the array on a line boundary here"
else
	"$H" report -i "$T/calloc.data" --json >"$T/c.json" 2>"$T/c.rerr"
	/usr/bin/python3 - "$T/c.json" "$LINE" "$N" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
line, n = sys.argv[2], int(sys.argv[3])
fs = [l for l in d["lines"] if l["verdict"] == "false_sharing"]
l = fs[0] if fs else {}
st = sorted(f["stores"] for f in l.get("fields", []) if f["field"].startswith("lreg_args["))
fix, rep = l.get("fix") or "", l.get("fix_replay") or ""
site = "calloc at heap_args.c:%s" % line
good = (len(fs) == 1 and st == [n, n] and l.get("fix_check") == "replayed" and
        "aligned_alloc(64, size)" in fix and ("instead of the " + site) in fix and
        "before, 0 after" in rep)
print(("ok" if good else "not ok") + " heap_fix: the false sharing of the calloc'd array "
      "(%s stores a side) gets a replayed fix naming aligned_alloc and %s" % (st, site))
if not good:
    print("    lines %d, stores %s, fix_check %s" % (len(fs), st, l.get("fix_check")))
    print("    fix: %s" % fix)
    print("    replay: %s" % rep)
PY
	"$H" whatif -i "$T/calloc.data" --align lreg_args.count=64 --aligned-alloc --json >"$T/wa.json"
	"$H" whatif -i "$T/calloc.data" --align lreg_args.count=64 --json >"$T/wn.json"
	/usr/bin/python3 - "$T/wa.json" "$T/wn.json" <<'PY'
import json, sys
a, n = (json.load(open(p)) for p in sys.argv[1:3])
fa, fn = a["after"]["false_sharing"], n["after"]["false_sharing"]
good = a["before"]["false_sharing"] == 1 and fa == 0 and fn == 1 and n["samples"]["heap_held"] > 0
print(("ok" if good else "not ok") + " heap_fix: whatif --align lreg_args.count=64: %d falsely "
      "shared line after with --aligned-alloc, %d without (the malloc'd base held)" % (fa, fn))
PY
fi

# 2 and 3: the heat map judges each instance's real lines
heat() {	# MODE WANT_LINE_WRITERS WANT_TEXT
	if ! watch4 "$1" >/dev/null; then
		nok "heap_fix: watch recording of heap_args $1" "$(cat "$T/$1.err" 2>/dev/null)"
		return
	fi
	"$H" report -i "$T/$1.data" --view heatmap --type lreg_args --json >"$T/$1.json"
	"$H" report -i "$T/$1.data" --view heatmap --type lreg_args >"$T/$1.txt"
	/usr/bin/python3 - "$T/$1.json" "$T/$1.txt" "$1" "$2" "$3" "$N" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
txt, mode, want, text, n = open(sys.argv[2]).read(), sys.argv[3], int(sys.argv[4]), sys.argv[5], int(sys.argv[6])
hm = d["heatmap"]
hm = hm[0] if isinstance(hm, list) else hm
l0 = hm["lines"][0]
st = {f["field"]: f["stores"] for f in hm["fields"]}
good = (l0["writers"] == 2 and l0["line_writers"] == want and text in txt and
        st.get("count") == 2 * n and st.get("total") == 2 * n)
if want == 1:
    good = good and "threads write this line" not in txt and "lines written by 2+" not in txt
print(("ok" if good else "not ok") + " heap_fix: heat map of heap_args %s: 2 writers of the "
      "type's line, %d of one real line (%s)" % (mode, l0["line_writers"], text))
if not good:
    print("    line 0: %s; stores %s" % (l0, st))
    print("    " + txt.replace("\n", "\n    "))
PY
}
heat 0 1 "each in its own instance's line"
heat 48 2 "2 threads write this line"
