#!/usr/bin/env bash
# record --confirm with more ranges than debug registers: the first recording (committed,
# tests/data/rec/confirm_rotate_spin.data: three falsely shared lines, six ranges) plans
# two groups that take turns on the four registers; the confirming run is on real traps
# of examples/confirm_rotate in `turns` mode, where the two threads of each pair store
# strictly in turn. What is asserted holds by construction, for any schedule:
#   - real perf (a second tool) reads the file: every trap lies inside a slice whose
#     mark armed its address, and hitmap's records per line equal perf's trap count;
#   - within one slice of a group (both fields of a line armed) every access after the
#     first moves the line (the threads alternate: load, store, load, store), so a line's
#     transfers lie between records - 1 and records - 2 (the main thread's two reads
#     after join) - 2 per slice (its first accesses may find the line where the last
#     slice left it) - what perf's view of the traps shows of broken alternation: a run
#     of one thread's traps moves the line with its first two only (L - 2 do not), and a
#     lone trap may not. The runs are at slice edges: the registers are armed and
#     disarmed one after another, so one side of a pair is watched alone for a while, the
#     longer the slower the recorder (docs/report.md);
#   - across threads: each worker's traps are on its own field only (a debug register is
#     per thread: the trap is the accessing thread's), and every busy slice of a line has
#     both threads' traps (one arming reaches every thread's copy): rotating across threads
#     would buy no register (docs/report.md, "Across threads");
#   - each line says "confirmed: N transfers in T s (watched X% of the time)", the two
#     lines of one group with the same X, and the groups' X add up to at most 100;
#   - perf stat -e mem:ADDR/8:w counts exactly N stores per field (the example's
#     construction), and hitmap's rotated count of that field is at most N.
# Prints "ok NAME" / "not ok NAME".
. "$(dirname "$0")/../lib/tap.sh"
P=$R/bin/confirm_rotate
N=20000

"$H" record --watch-slice 10 -c watch --watch pairs.a -o "$T/u.data" -- $P turns 10 >/dev/null 2>"$T/u.err"
rc=$?
[ $rc = 1 ] && grep -q "only --confirm rotates" "$T/u.err" && [ "$(wc -l <"$T/u.err")" = 1 ] &&
	ok "--watch-slice without --confirm: usage, exit 1, one line" ||
	nok "--watch-slice without --confirm: usage, exit 1, one line" "rc=$rc" "$(cat "$T/u.err")"
traps || { skip "confirm_rotate: --confirm of 6 ranges and every check on its recording"; exit 0; }

"$H" record --confirm $R/confirm_rotate_spin.data --buildid-dir $R --watch-slice 20 \
	-o "$T/c.data" -- $P turns $N >"$T/c.out" 2>"$T/c.err"
rc=$?
if [ $rc = 0 ] && grep -q "6 ranges for 4 debug registers: 2 groups armed in turn, 20 ms each" "$T/c.err"; then
	ok "--confirm of 6 ranges: 2 groups in turn"
else
	nok "--confirm of 6 ranges: 2 groups in turn" "rc=$rc" "$(cat "$T/c.err")"
	exit 0
fi
"$H" report -i "$T/c.data" --json >"$T/r.json" 2>"$T/r.err" || nok "report" "$(cat "$T/r.err")"
perf script --ns -i "$T/c.data" -F event,tid,time,addr >"$T/p.txt" 2>/dev/null ||
	nok "perf script reads the rotated recording" "$(head -3 "$T/p.txt")"
python3 - "$T/r.json" "$T/p.txt" <<'PY'
import json, re, sys
rep = json.load(open(sys.argv[1]))
marks, traps = [], []
open_ = []
for line in open(sys.argv[2]):
    f = line.split()
    tid, t, ev, addr = int(f[0]), float(f[1].rstrip(':')), f[2].rstrip(':'), int(f[3], 16)
    t = round(t * 1e9)
    if ev == 'hitmap:watch-slice':
        if addr == 0:
            for m in open_: m[1] = t
            open_ = []
        else:
            m = [t, None, addr]; marks.append(m); open_.append(m)
    elif ev.startswith('mem:'):	# the traps (not the malloc probes, hitmap:calloc...)
        traps.append((t, tid, addr))
def ok(c, name, *why):
    print(("ok " if c else "not ok ") + name)
    if not c:
        for w in why: print("    " + str(w))
# a trap's slice: the closed mark that armed its address and spans its time (one
# address's slices never overlap, so a bisect by start finds the only candidate)
import bisect
by_addr = {}
for s, e, a in marks:
    if e is not None: by_addr.setdefault(a, []).append((s, e))
for v in by_addr.values(): v.sort()
starts = {a: [x[0] for x in v] for a, v in by_addr.items()}
def mark_of(t, addr):
    for a, v in by_addr.items():
        if a <= addr < a + 8:
            i = bisect.bisect_right(starts[a], t) - 1
            if i >= 0 and v[i][0] <= t <= v[i][1]: return v[i]
    return None
def slice_of(t, addr):
    m = mark_of(t, addr)
    return m[0] if m else None
def end_of(t, addr):
    m = mark_of(t, addr)
    return m[1] if m else None
outside = [x for x in traps if slice_of(x[0], x[2]) is None]
ok(traps and not outside, "perf script: every trap lies in a slice that armed its address",
   "%d of %d outside" % (len(outside), len(traps)))
lines = [l for l in rep['lines'] if l.get('verdict') == 'false_sharing']
ok(len(lines) == 3, "three falsely shared lines", [l.get('verdict') for l in rep['lines']])
pct = {}
for l in lines:
    base = int(l['addr'], 16)
    mine = sorted(x for x in traps if base <= x[2] < base + 64)
    n, tr = len(mine), l['transfers']
    ok(l['records'] == n, "line %s: hitmap's records equal perf's traps" % l['addr'], l['records'], n)
    # the group's slice: a trap's mark closes with the others armed with it (one close
    # mark ends them all), so its end time is the group slice's
    groups, broken = {}, 0
    for x in mine: groups.setdefault(end_of(x[0], x[2]), []).append(x[1])
    for seq in groups.values():
        k = 0
        for i in range(1, len(seq) + 1):
            if i == len(seq) or seq[i] != seq[i - 1]:
                broken += max(i - k - 2, 0) + (i - k == 1)
                k = i
    ok(n - 2 - 2 * len(groups) - broken <= tr <= n - 1,
       "line %s: transfers by construction (records - 2 - 2 x %d slices - %d of broken "
       "alternation <= N <= records - 1)" % (l['addr'], len(groups), broken),
       "N=%d records=%d" % (tr, n))
    m = re.match(r'confirmed: (\d+) transfers in ([0-9.]+) s \(watched (\d+)% of the time\)', l['evidence'])
    ok(m is not None and int(m.group(1)) >= 1, "line %s says confirmed: N transfers in T s (watched X%%)" % l['addr'],
       l['evidence'][:160])
    if m: pct.setdefault(min(x[1] for x in marks if x[2] == base), []).append(int(m.group(3)))
# Across threads: the registers are per thread (each thread's inherited copy of an event
# is its own debug register, switched with it), so a trap belongs to the thread that made
# the access, and one arming reaches every thread at once. Each worker traps on its own
# field only (main's reads after join aside: at most 2 traps), and every slice with 20
# traps or more on a line has both of its threads' (in turns mode they alternate).
closes = sorted(m[1] for m in marks if m[1] is not None)
for l in lines:
    base = int(l['addr'], 16)
    mine = [x for x in traps if base <= x[2] < base + 64]
    by_tid, by_slice = {}, {}
    for t, tid, addr in mine:
        by_tid.setdefault(tid, set()).add(addr)
        by_slice.setdefault(bisect.bisect_left(closes, t), []).append(tid)
    workers = [tid for tid in by_tid if sum(1 for x in mine if x[1] == tid) > 2]
    own = len(workers) == 2 and all(len(by_tid[w]) == 1 for w in workers) and \
        by_tid[workers[0]] != by_tid[workers[1]]
    busy = [v for v in by_slice.values() if len(v) >= 20]
    both = [v for v in busy if len(set(v) & set(workers)) == 2]
    ok(own and busy and len(both) == len(busy),
       "line %s: each thread's traps are its own field's, and every busy slice has both threads (%d of %d)"
       % (l['addr'], len(both), len(busy)), {t: sorted(hex(a) for a in v) for t, v in by_tid.items()})
groups = sorted(pct.values(), key=len)
# each line's share is of its own span (first to last access), rounded to a whole percent:
# two lines of one group may differ by a point (50 and 51 seen once in CI's rehearsal)
ok(len(groups) == 2 and max(groups[1]) - min(groups[1]) <= 1 and
   groups[0][0] + min(groups[1]) <= 101 and min(groups[0][0], groups[1][0]) > 0,
   "the two groups' watched shares: one per group (within a point), in (0, 100]", pct)
PY
# perf stat: the example makes exactly N stores per field.
if command -v setarch >/dev/null; then
	A=$(setarch -R $P turns 10 | sed -n 's/^pairs=\(0x[0-9a-f]*\)$/\1/p')
	# perf stat's stderr is kept: when the workload dies of a signal perf says so there
	# ("confirm_rotate: Trace/breakpoint trap", the stray SIGTRAP tests/run.sh reruns)
	setarch -R perf stat -x, -e "mem:$A/8:w:u" -- $P turns $N >/dev/null 2>"$T/stat"
	pw=$(awk -F, '/mem:/ { print $1 }' "$T/stat")
	hw=$(python3 -c "
import json,sys
for l in json.load(open('$T/r.json'))['lines']:
    for f in l.get('fields', []):
        if f.get('offset') == 0 and f.get('stores') and int(l['addr'],16) % 192 == int('$A',16) % 192: print(f['stores'])" | sort -n | tail -1)
	[ "$pw" = "$N" ] && [ -n "$hw" ] && [ "$hw" -le "$N" ] &&
		ok "perf stat counts $N stores on pairs[0].a; hitmap's rotated count $hw <= $N" ||
		nok "perf stat counts the example's stores" "perf=$pw want $N; hitmap=$hw" "$(cat "$T/stat")"
fi
