#!/usr/bin/env bash
# Allocation tracking end to end on REAL uprobes (docs/alloc.md), on examples/alloc_array:
# main callocs 2 x 24-byte thread_arg_t and prints the address; each worker writes its own
# element. Run under setarch -R, so the heap address is the same in every run.
#   - allocation events are exact: real perf script reads the file and shows calloc's
#     arguments (2, 0x18), its result (the address the program printed), the return
#     address in main, and main's free of it after the workers exited;
#   - real perf report reads the file;
#   - a watchpoint on element 1's ops (exact: one trap per store) is named by the
#     allocation: calloc at alloc_array.c:LINE, at +(ADDR % 64) in its line, offset 0x18;
#   - a timer recording, asserted only by construction (any sample count): every access
#     in the array is thread_arg_t[k] with k = (its object's base - ADDR) / 24, from the
#     calloc at LINE;
#   - the workload's threads still run (the probes once made pthread_create fail);
#   - C++: new S[3] in a small program compiled here is named "new[] at FILE:LINE", with
#     its element, from a watchpoint on s[1].a (one store); likewise an alignas(64) type's
#     aligned operator new and a nothrow new (perf script shows both returns);
#   - a block a worker thread callocs after recording started (examples/alloc_late): perf
#     script shows that thread's calloc returning the address the program printed, and all
#     watched stores into it (exact) are named by that calloc; with the per-thread probes
#     of the uprobe PMU (HITMAP_ALLOC_NO_TRACEFS=1, the fallback) it is not named;
#   - --alloc-budget: the probes are removed once it is spent, and record says so;
#   - without the uprobe PMU, or with the probes refused (the test hooks
#     HITMAP_ALLOC_FAIL and HITMAP_ALLOC_FAIL_OPEN), record says so once, records the
#     rest, and the report names the type alone; --no-alloc records no probe.
# Prints "ok NAME" / "not ok NAME".
. "$(dirname "$0")/../lib/tap.sh"
P=examples/bin/alloc_array
SRC=examples/alloc_array.c
N=20000

if [ "$(id -u)" != 0 ] || [ ! -r /sys/bus/event_source/devices/uprobe/type ]; then
	ok "alloc # skip: uprobes need root and the uprobe PMU"
	exit 0
fi
LINE=$(grep -n 'calloc(NTHREADS' "$SRC" | cut -d: -f1)
ADDR=$(setarch -R "$P" 1 | sed -n 's/^args \(0x[0-9a-f]*\) size 48$/\1/p')
[ -n "$ADDR" ] || { nok "alloc: $P prints its array's address" "$(setarch -R "$P" 1)"; exit 0; }
W=$(printf '0x%x' $((ADDR + 24)))
INLINE=$((ADDR % 64))

# 1. watchpoint on element 1's ops: every store is seen
if ! traps; then
	skip "alloc: the watch recording of alloc_array and its checks (probes, perf script, names)"
else
setarch -R "$H" record -c watch --watch "$W/8:w" -m 4096 -o "$T/w.data" -- "$P" $N \
	>"$T/w.out" 2>"$T/w.err"
rc=$?
if [ $rc = 0 ] && grep -qx "$N $N" "$T/w.out"; then
	ok "alloc: the workload's threads run under the probes ($N $N)"
else nok "alloc: the workload's threads run under the probes" "rc=$rc" "$(cat "$T/w.out" "$T/w.err")"; fi
if [ "$(grep -c 'allocation tracking' "$T/w.err")" = 0 ] && grep -q 'allocation events' "$T/w.err"; then
	ok "alloc: record counts allocation events and has no complaint"
else nok "alloc: record counts allocation events" "$(cat "$T/w.err")"; fi

perf script -i "$T/w.data" -F tid,event,ip,sym,uregs >"$T/w.script" 2>"$T/ps.err"
ent=$(grep -m1 'hitmap:calloc: ' "$T/w.script")
ret=$(grep -m1 'hitmap:calloc_ret: ' "$T/w.script")
if echo "$ent" | grep -q 'SI:0x18 ' && echo "$ent" | grep -q 'DI:0x2 ' &&
	echo "$ret" | grep -q " main .*AX:$ADDR "; then
	ok "alloc: perf script shows calloc(2, 0x18) returning $ADDR to main"
else nok "alloc: perf script shows the calloc" "entry: $ent" "return: $ret" "$(head -3 "$T/ps.err")"; fi
if grep 'hitmap:free: ' "$T/w.script" | grep -q "DI:$ADDR "; then
	ok "alloc: main's free($ADDR) after the workers exited is recorded"
else nok "alloc: main's free after pthread_join is recorded" "$(grep 'hitmap:free' "$T/w.script" | head -5)"; fi
if perf report -i "$T/w.data" --stdio >"$T/pr.out" 2>"$T/pr.err" && grep -q "hitmap:calloc" "$T/pr.out"; then
	ok "alloc: perf report reads the file and lists the hitmap:calloc event"
else nok "alloc: perf report reads the file" "$(tail -3 "$T/pr.err")"; fi

# The probes carry ADDR (0) as the watch events do, or perf refuses -F addr for the file.
if perf script -i "$T/w.data" -F event,addr >"$T/pa.out" 2>"$T/pa.err" &&
	grep -q "hitmap:calloc: *0$" "$T/pa.out" && grep -q "^ *mem:" "$T/pa.out"; then
	ok "alloc: perf script -F event,addr reads the watch recording, probes at address 0"
else nok "alloc: perf script -F addr on a recording with probes" "$(head -2 "$T/pa.err")"; fi

"$H" report -i "$T/w.data" --json >"$T/w.json" 2>"$T/wr.err" ||
	nok "alloc: report of the watch recording" "$(cat "$T/wr.err")"
/usr/bin/python3 - "$T/w.json" "$ADDR" "$LINE" "$INLINE" "$N" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
addr, line, inline, n = int(sys.argv[2], 16), sys.argv[3], sys.argv[4], int(sys.argv[5])
site = "calloc at alloc_array.c:%s" % line
rows = [f for l in d['lines'] for f in l['fields']
        if f.get('obj_base') and int(f['obj_base'], 16) + f['obj_offset'] == addr + 24]
# the worker's stores; main's are calloc zeroing the block, before it returned
worker = max([t['stores'] for f in rows for t in f['threads'] if t['tid'] != t['pid']] or [0])
named = rows and all(site in (f['object'] or '') and "at +%s in its line" % inline in f['object']
                     for f in rows)
# element 1 from its address, whatever fields the resolver splits the store into
named = named and all(f['field'].startswith("thread_arg_t[1].") for f in rows if
                      any(t['tid'] != t['pid'] for t in f['threads']))
if worker == n and named:
    print("ok alloc: all %d watched stores are thread_arg_t[1] from %s, at +%s in its line" % (n, site, inline))
else:
    print("not ok alloc: the watched stores are named by the allocation")
    for f in rows[:3] or [f for l in d['lines'] for f in l['fields']][:3]:
        print("    %s | %s | stores %d %s" % (f['field'], f['object'], f['stores'], f['threads']))
PY
fi

# 2. timer: by construction only
setarch -R "$H" record -c timer -o "$T/t.data" -- "$P" 20000000 >/dev/null 2>"$T/t.err" ||
	nok "alloc: timer record" "$(cat "$T/t.err")"
"$H" report -i "$T/t.data" --json >"$T/t.json" 2>"$T/tr.err" ||
	nok "alloc: report of the timer recording" "$(cat "$T/tr.err")"
/usr/bin/python3 - "$T/t.json" "$ADDR" "$LINE" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
addr, line = int(sys.argv[2], 16), sys.argv[3]
bad = []
for l in d['lines']:
    for f in l['fields']:
        base = int(f['obj_base'], 16) if f.get('obj_base') else 0
        if not (addr <= base < addr + 48):
            continue
        want = "thread_arg_t[%d]." % ((base - addr) // 24)
        if not f['field'].startswith(want) or "calloc at alloc_array.c:%s" % line not in f['object']:
            bad.append((f['field'], f['object'], want))
print(("ok" if not bad else "not ok") +
      " alloc: every timer access in the array is thread_arg_t[k] from the calloc, k from its address")
for b in bad[:3]:
    print("    %s | %s | want %s" % b)
PY
# the record index (core/perfdata_index.c): it lists what perf script shows besides the
# samples (MMAP2, COMM, FORK, EXIT...) and the probes' samples, no more; and the report
# read through it is the report of the same file with the index's feature bit (249)
# cleared, which the maps pass reads whole (sound here: a user-space recording has no slab
# section, bit 250, whose feature table entry would be taken for 249's)
IDX=${BUILD:-build}/tests/tools/pdindex
"$IDX" "$T/t.data" >"$T/t.idx" 2>&1
probes=$(perf script -i "$T/t.data" -F event 2>/dev/null | grep -c 'hitmap:')
others=$(perf script -i "$T/t.data" --show-task-events --show-mmap-events --show-lost-events \
	--show-namespace-events --show-switch-events --show-cgroup-events --show-bpf-events \
	--show-text-poke-events -F event 2>/dev/null | grep -c 'PERF_RECORD_')
listed=$(sed -n 's/^records //p' "$T/t.idx")
if grep -qx index "$T/t.idx" && grep -qx 'lists hitmap:malloc' "$T/t.idx" && [ "$probes" -gt 0 ] &&
	[ "$listed" = $((probes + others)) ]; then
	ok "alloc: the record index lists the $probes probe samples and $others other records perf script shows"
else nok "alloc: the record index" "listed=$listed probes=$probes others=$others" "$(cat "$T/t.idx")"; fi
/usr/bin/python3 - "$T/t.data" "$T/u.data" <<'PY'
import sys
b = bytearray(open(sys.argv[1], 'rb').read())
b[72 + 249 // 8] &= ~(1 << (249 % 8)) & 0xff
open(sys.argv[2], 'wb').write(b)
PY
"$H" report -i "$T/u.data" --json 2>&1 | sed "s#$T/u.data#$T/t.data#g" >"$T/u.json"
if grep -qx none <("$IDX" "$T/u.data") && grep -q 'calloc at alloc_array.c' "$T/t.json" &&
	cat "$T/t.json" "$T/tr.err" | cmp -s - "$T/u.json"; then
	ok "alloc: the report through the record index is the report of the whole file"
else nok "alloc: the report through the record index" "$(diff "$T/t.json" "$T/u.json" | head -5)"; fi

# 3. C++ operator new[] (it tail-calls operator new, which calls malloc: the outer wins)
if ! traps; then
	skip "alloc: C++ operator new[], aligned and nothrow new (2 checks on watch recordings)"
elif command -v g++ >/dev/null; then
	cat >"$T/n.cc" <<'CC'
#include <cstdio>
struct S { long a, b, c; };
int main(int argc, char **)
{
	S *s = new S[3];
	std::printf("s %p\n", (void *)s);
	s[1].a = argc;
	std::printf("%ld\n", s[1].a);
	delete[] s;
	return 0;
}
CC
	g++ -O1 -g -o "$T/n" "$T/n.cc"
	S=$(setarch -R "$T/n" | sed -n 's/^s \(0x[0-9a-f]*\)$/\1/p')
	setarch -R "$H" record -c watch --watch "$(printf '0x%x' $((S + 24)))/8:w" -o "$T/n.data" \
		-- "$T/n" >/dev/null 2>"$T/n.err"
	"$H" report -i "$T/n.data" --json >"$T/n.json" 2>>"$T/n.err"
	NL=$(grep -n 'new S\[3\]' "$T/n.cc" | cut -d: -f1)
	if perf script -i "$T/n.data" -F event,ip,sym,uregs 2>/dev/null | grep 'hitmap:new_array_ret' |
		grep -q " main .*AX:$S " && grep -q "new\[\] at n.cc:$NL" "$T/n.json" &&
		grep -q '"S\[1\]\.a"' "$T/n.json"; then
		ok "alloc: C++ new S[3] returns $S to main (perf script); the store is S[1].a from new[] at n.cc:$NL"
	else nok "alloc: C++ operator new[]" "$(cat "$T/n.err")" "$(grep -o '"field": "[^"]*"\|"object": "[^"]*"' "$T/n.json" | head -4)"; fi
	# The aligned form (an alignas(64) type: what a padding fix makes) and the nothrow
	# form; one watchpoint in each object.
	cat >"$T/a.cc" <<'CC'
#include <cstdio>
#include <new>
struct alignas(64) A { long a, b; };
struct S { long a, b, c; };
int main(int argc, char **)
{
	A *x = new A;
	S *t = new (std::nothrow) S;
	std::printf("x %p t %p\n", (void *)x, (void *)t);
	x->b = argc;
	t->c = argc;
	std::printf("%ld %ld\n", x->b, t->c);
	delete t;
	delete x;
	return 0;
}
CC
	g++ -std=c++17 -O1 -g -o "$T/a" "$T/a.cc"
	read -r XA TA < <(setarch -R "$T/a" | sed -n 's/^x \(0x[0-9a-f]*\) t \(0x[0-9a-f]*\)$/\1 \2/p')
	setarch -R "$H" record -c watch --watch "$(printf '0x%x' $((XA + 8)))/8:w" \
		--watch "$(printf '0x%x' $((TA + 16)))/8:w" -o "$T/a.data" -- "$T/a" >/dev/null 2>"$T/a.err"
	"$H" report -i "$T/a.data" --json >"$T/a.json" 2>>"$T/a.err"
	AL=$(grep -n 'new A;' "$T/a.cc" | cut -d: -f1)
	TL=$(grep -n 'nothrow' "$T/a.cc" | cut -d: -f1)
	perf script -i "$T/a.data" -F event,ip,sym,uregs 2>/dev/null >"$T/a.script"
	if grep 'hitmap:new_al_ret' "$T/a.script" | grep -q " main .*AX:$XA " &&
		grep 'hitmap:new_nt_ret' "$T/a.script" | grep -q " main .*AX:$TA " &&
		grep -q "new at a.cc:$AL" "$T/a.json" && grep -q "new at a.cc:$TL" "$T/a.json" &&
		grep -q '"A\.b"' "$T/a.json" && grep -q '"S\.c"' "$T/a.json"; then
		ok "alloc: C++ aligned new and nothrow new return $XA and $TA to main (perf script); the stores are A.b and S.c from new at a.cc:$AL and a.cc:$TL"
	else nok "alloc: C++ aligned and nothrow operator new" "$(cat "$T/a.err")" "$(grep -c . "$T/a.script") script lines" "$(grep -o '"field": "[^"]*"\|"object": "[^"]*"' "$T/a.json" | head -4)"; fi
else
	ok "alloc: C++ operator new[] # skip: no g++"
fi

# 4. threads created after recording starts are probed (tracefs events, inherited)
LP=examples/bin/alloc_late
LL=$(grep -n 'calloc(1, sizeof' examples/alloc_late.c | cut -d: -f1)
LA=$(setarch -R "$LP" 1 | sed -n 's/^stats \(0x[0-9a-f]*\) size 16$/\1/p')
LW=$(printf '0x%x' $((LA + 8)))
late() {	# $1: env setting; prints "named total worker-stores"
	# in the background for its pid (env and setarch exec): its tracefs group is hitmap_PID
	env $1 setarch -R "$H" record -c watch --watch "$LW/8:w" -m 4096 -o "$T/l.data" -- "$LP" $N \
		>"$T/l.out" 2>"$T/l.err" &
	local pid=$!
	echo "$pid" >>"$T/recorders"
	wait $pid || { echo "record failed: $(cat "$T/l.err")"; return; }
	"$H" report -i "$T/l.data" --json >"$T/l.json" 2>>"$T/l.err"
	/usr/bin/python3 - "$T/l.json" "calloc at alloc_late.c:$LL" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = [f for l in d['lines'] for f in l['fields']]
per = {}	# the consumer: the worker with the most stores (the producer's is calloc's zeroing)
for f in rows:
    for t in f['threads']:
        if t['tid'] != t['pid']:
            per[t['tid']] = per.get(t['tid'], 0) + t['stores']
tid = max(per, key=per.get) if per else -1
worker = per.get(tid, 0)
named = sum(t['stores'] for f in rows if sys.argv[2] in (f['object'] or '')
            and 'malloc_chunk' not in f['field'] for t in f['threads'] if t['tid'] == tid)
print(named, worker, rows[0]['field'] if rows else '-')
PY
}
if [ -n "$LA" ]; then
	set -- $(late HITMAP_ALLOC_NONE=)
	ret=$(perf script -i "$T/l.data" -F pid,tid,event,ip,sym,uregs 2>/dev/null | grep 'hitmap:calloc_ret: ' |
		awk -v a="AX:$LA" '$1 != $2 && $0 ~ a && / producer /')
	if ! traps; then	# recorded anyway: the tracefs check below counts its recorders
		skip "alloc: a worker's calloc after start is probed and names its block"
	elif [ -n "$ret" ] && [ "$1" = $N ] && [ "$2" = $N ]; then
		ok "alloc: a worker's calloc after start is probed (perf script); all $N watched stores into it are named by calloc at alloc_late.c:$LL"
	else nok "alloc: a worker's calloc after start is probed and names its block" "named=$1 worker=$2 field=$3" "perf script: $ret" "$(cat "$T/l.err")"; fi
	set -- $(late HITMAP_ALLOC_NO_TRACEFS=1)
	if ! traps; then
		skip "alloc: per-thread probes miss the worker's calloc"
	elif [ "$1" = 0 ] && [ "$2" = $N ] && grep -q 'allocation probes are per thread' "$T/l.err"; then
		ok "alloc: with per-thread probes (no tracefs) the worker's block is not named, and record says why"
	else nok "alloc: per-thread probes miss the worker's calloc" "named=$1 worker=$2 field=$3" "$(cat "$T/l.err")"; fi
else nok "alloc: $LP prints its block's address" "$(setarch -R "$LP" 1)"; fi
# A detached grandchild closes the probe fds after record returns, then removes the
# events (collectors/alloc.c): give it 10 s. Only this script's recorders count: other
# recordings on the machine have groups of their own.
ours() { grep -E "^[pr]:hitmap_($(paste -sd'|' "$T/recorders" 2>/dev/null || echo none))/" \
	/sys/kernel/tracing/uprobe_events 2>/dev/null; }
for _ in $(seq 20); do [ -z "$(ours)" ] && break; sleep 0.5; done
if [ -s "$T/recorders" ] && [ -z "$(ours)" ]; then
	ok "alloc: record removes its tracefs events ($(wc -l <"$T/recorders") recorders)"
else nok "alloc: record removes its tracefs events" "$(ours | head -3)"; fi

# 5. no uprobe PMU, probes refused, --no-alloc
for hook in HITMAP_ALLOC_FAIL HITMAP_ALLOC_FAIL_OPEN; do
	env "$hook=1" "$H" record -c timer -o "$T/f.data" -- "$P" 2000000 >"$T/f.out" 2>"$T/f.err"
	rc=$?
	lines=$(grep -c 'allocation tracking off' "$T/f.err")
	probes=$(perf script -i "$T/f.data" -F event 2>/dev/null | grep -c 'hitmap:')
	"$H" report -i "$T/f.data" --json >"$T/f.json" 2>/dev/null
	heap=$(grep -c 'calloc at' "$T/f.json")
	if [ $rc = 0 ] && [ "$lines" = 1 ] && [ "$probes" = 0 ] && [ "$heap" = 0 ] &&
		grep -qx "2000000 2000000" "$T/f.out"; then
		ok "alloc: $hook: record says so once and records the rest; no allocation names"
	else nok "alloc: $hook: record continues without allocation tracking" "rc=$rc lines=$lines probes=$probes heap=$heap" "$(cat "$T/f.err")"; fi
done
# the budget: the probes are removed after it, record says so, and what it wrote is what
# it counted (perf script's count of hitmap: events)
"$H" record -c timer --alloc-budget 100 -o "$T/b.data" -- examples/bin/alloc_churn 20000 \
	>"$T/b.out" 2>"$T/b.err"
rc=$?
said=$(sed -n 's/.*: \([0-9]*\) allocation events; --alloc-budget reached.*/\1/p' "$T/b.err")
probes=$(perf script -i "$T/b.data" -F event 2>/dev/null | grep -c 'hitmap:')
if [ $rc = 0 ] && [ -n "$said" ] && [ "$said" -ge 100 ] && [ "$probes" = "$said" ] && [ -s "$T/b.out" ]; then
	ok "alloc: --alloc-budget 100: probes removed after $said events, as record says"
else nok "alloc: --alloc-budget" "rc=$rc said=$said probes=$probes" "$(cat "$T/b.err")"; fi
"$H" record -c timer --no-alloc -o "$T/n.data" -- "$P" 2000000 >/dev/null 2>"$T/n.err"
probes=$(perf script -i "$T/n.data" -F event 2>/dev/null | grep -c 'hitmap:')
if [ "$probes" = 0 ] && ! grep -q 'allocation' "$T/n.err"; then
	ok "alloc: --no-alloc records no probe and says nothing about it"
else nok "alloc: --no-alloc" "probes=$probes" "$(cat "$T/n.err")"; fi
