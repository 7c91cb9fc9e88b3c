#!/usr/bin/env bash
# Issue 14: every access named as the object a person knows, on REAL watchpoint
# recordings (exact: one trap per store), so that no assertion depends on where a timer
# sample lands.
#   - a global array of a typedef'd anonymous struct (examples/typedef_args: lreg_args
#     gargs[2], each thread writing its element's hits): report names gargs[k].hits; the
#     heat map of --type lreg_args, whatif --suggest and --pad print it as C declares it
#     (typedef struct { .. } lreg_args;) and replay it; diff of a build with a member
#     added finds lreg_args by its typedef, with -t and without;
#   - per-thread int slots of a malloc'd array behind a global pointer
#     (examples/heap_slots): every store of thread 1 is slots[1] of int[2] (malloc at
#     heap_slots.c:LINE);
#   - a function-static pointer to a calloc'd array, set on the first call
#     (examples/static_buf): every store to element 1's hits is tally_slot[1].hits from
#     the calloc at static_buf.c:LINE;
#   - --stats says how many accesses were named by allocation, as elements, and as the
#     program names them: at least every watched store.
# Prints "ok NAME" / "not ok NAME".
. "$(dirname "$0")/../lib/tap.sh"
N=20000

# --- typedef'd anonymous struct, global array ---
P=examples/bin/typedef_args
if ! traps; then
	skip "naming: the watch recording of typedef_args and its report, heat map and whatif (4 checks)"
elif "$H" record -c watch --watch 'gargs[0].hits:w' --watch 'gargs[1].hits:w' -o "$T/td.data" \
	-- "$P" $N >"$T/td.out" 2>"$T/td.err"; then
	"$H" report -i "$T/td.data" --json >"$T/td.json" 2>>"$T/td.err"
	got=$(/usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
f = {x["field"]: x["stores"] for l in d["lines"] for x in l["fields"]}
v = [l["verdict"] for l in d["lines"] if any(x["field"].startswith("gargs[") for x in l["fields"])]
print(f.get("gargs[0].hits"), f.get("gargs[1].hits"), v[0] if v else "-")' "$T/td.json")
	if [ "$got" = "$N $N false_sharing" ]; then
		ok "naming: typedef'd anonymous struct array: gargs[0].hits and gargs[1].hits, $N stores each, false sharing"
	else nok "naming: gargs[k].hits of lreg_args gargs[2]" "got: $got" "$(head -3 "$T/td.err")"; fi
	"$H" report -i "$T/td.data" --view heatmap --type lreg_args >"$T/hm.out" 2>&1
	if head -1 "$T/hm.out" | grep -q '^typedef struct {' && grep -q '^} lreg_args;$' "$T/hm.out" &&
		grep -E '^\s+long int\s+hits;' "$T/hm.out" | grep -q " $((2 * N)) "; then
		ok "naming: heatmap --type lreg_args prints typedef struct { .. } lreg_args; with hits' $((2 * N)) stores"
	else nok "naming: heatmap --type lreg_args" "$(head -6 "$T/hm.out")"; fi
	"$H" whatif -i "$T/td.data" --suggest lreg_args >"$T/sg.out" 2>&1
	if grep -q '^typedef struct {' "$T/sg.out" && grep -q '^} lreg_args;$' "$T/sg.out" &&
		grep -q 'align lreg_args to 64' "$T/sg.out" && ! grep -q 'struct lreg_args' "$T/sg.out" &&
		grep -q '1 shared line stops being shared' "$T/sg.out"; then
		ok "naming: whatif --suggest lreg_args: typedef'd, aligned to 64, the shared line stops being shared"
	else nok "naming: whatif --suggest lreg_args" "$(head -20 "$T/sg.out")"; fi
	"$H" whatif -i "$T/td.data" --pad lreg_args.misses=48 >"$T/pad.out" 2>&1
	if grep -q '^} lreg_args;$' "$T/pad.out" && grep -q '1 shared line stops being shared' "$T/pad.out"; then
		ok "naming: whatif --pad lreg_args.misses=48 replays the typedef'd struct: the shared line stops"
	else nok "naming: whatif --pad lreg_args.misses=48" "$(tail -6 "$T/pad.out")"; fi
else nok "naming: record typedef_args" "$(cat "$T/td.err")"; fi
sed 's/^\tlong misses;$/\tlong misses;\n\tlong extra;/' examples/typedef_args.c >"$T/td2.c"
cp examples/pin.h "$T/"
if cc -O2 -g -pthread -o "$T/td2" "$T/td2.c" && grep -q extra "$T/td2.c"; then
	"$H" diff "$P" "$T/td2" -t lreg_args >"$T/d1.out" 2>&1
	"$H" diff "$P" "$T/td2" >"$T/d2.out" 2>&1
	if grep -q '^lreg_args: size 16 -> 24' "$T/d1.out" && grep -q '^lreg_args: size 16 -> 24' "$T/d2.out" &&
		grep -q 'added  *extra' "$T/d2.out"; then
		ok "naming: diff finds lreg_args (16 -> 24 bytes, extra added) by its typedef, with -t and without"
	else nok "naming: diff of a typedef'd anonymous struct" "$(cat "$T/d1.out")" "$(head -5 "$T/d2.out")"; fi
else nok "naming: build the lreg_args variant"; fi

# --- heap objects: need the uprobes ---
if [ "$(id -u)" != 0 ] || [ ! -r /sys/bus/event_source/devices/uprobe/type ]; then
	ok "naming: heap examples # skip: uprobes need root and the uprobe PMU"
	exit 0
fi
# $1 program, $2 address line prefix, $3 byte offset watched, $4 length; records, reports
watch_heap() {
	local a
	a=$(setarch -R "examples/bin/$1" 1 | sed -n "s/^$2 \\(0x[0-9a-f]*\\) size .*/\\1/p")
	[ -n "$a" ] || { echo "no address from $1"; return 1; }
	setarch -R "$H" record -c watch --watch "$(printf '0x%x' $((a + $3)))/$4:w" -m 4096 \
		-o "$T/$1.data" -- "examples/bin/$1" $N >"$T/$1.out" 2>"$T/$1.err" || return 1
	"$H" report -i "$T/$1.data" --json >"$T/$1.json" 2>>"$T/$1.err" &&
		"$H" report -i "$T/$1.data" --stats >"$T/$1.stats" 2>>"$T/$1.err"
}
# the thread with the most stores, and those of its stores whose field and object match
named() {
	/usr/bin/python3 - "$1" "$2" "$3" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
rows = [f for l in d['lines'] for f in l['fields']]
per = {}
for f in rows:
    for t in f['threads']:
        per[t['tid']] = per.get(t['tid'], 0) + t['stores']
tid = max(per, key=per.get) if per else -1
ok = sum(t['stores'] for f in rows if f['field'] == sys.argv[2] and
         re.search(sys.argv[3], f['object'] or '') for t in f['threads'] if t['tid'] == tid)
print(per.get(tid, 0), ok, ' | '.join('%s in %s' % (f['field'], f['object']) for f in rows[:3]))
PY
}
stats_ok() {	# at least N named by allocation, as elements, and as the program names them
	local a e p
	a=$(sed -n 's/^  named by allocation *\([0-9]*\) .*/\1/p' "$1")
	e=$(sed -n 's/^  named by allocation .*(as an element, T\[k\].field or p\[k\]: \([0-9]*\))/\1/p' "$1")
	p=$(sed -n 's/^  as the program names it *\([0-9]*\) .*/\1/p' "$1")
	[ "${a:-0}" -ge $N ] && [ "${e:-0}" -ge $N ] && [ "${p:-0}" -ge $N ]
}
# heap_case PROG VAR A B ALLOC FIELD TYPE WHAT: watch PROG's heap array VAR (watch_heap's A
# B), then thread 1's stores must all be FIELD of TYPE, allocated by ALLOC (malloc, calloc)
# at the line of PROG.c that assigns VAR; WHAT says how the program reaches them.
heap_case() {
	local prog=$1 var=$2 alloc=$5 field=$6 type=$7 what=$8 L
	traps || { skip "naming: the watch recording of $prog and its 2 checks"; return; }
	L=$(grep -n "$var = $alloc(NTHREADS" "examples/$prog.c" | cut -d: -f1)
	if ! watch_heap "$prog" "$var" "$3" "$4"; then
		nok "naming: record $prog" "$(cat "$T/$prog.err" 2>/dev/null)"
		return
	fi
	set -- $(named "$T/$prog.json" "$field" "^$type \\($alloc at $prog.c:$L, array at \\+[0-9]+ in its line\\)$")
	if [ "$1" = $N ] && [ "$2" = $N ]; then
		ok "naming: all $N stores of thread 1$what are $field of ${type//\\/} ($alloc at $prog.c:$L)"
	else nok "naming: $prog's $field" "$*"; fi
	if stats_ok "$T/$prog.stats"; then
		ok "naming: --stats counts $prog's stores as named by allocation, as elements, as the program names them"
	else nok "naming: --stats on $prog" "$(grep -A2 'named by allocation' "$T/$prog.stats")"; fi
}
heap_case heap_slots slots 4 4 malloc 'slots[1]' 'int\[2\]' ''
heap_case static_buf table 16 8 calloc 'tally_slot[1].hits' tally_slot ' to element 1 through the static pointer'
