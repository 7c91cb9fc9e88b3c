#!/usr/bin/env bash
# Watchpoints end to end on REAL debug-register traps: examples/watch_counts makes a known
# number of accesses per field per thread (N stores then L loads to counters.hits in
# hits_thread on CPU 0, the same to counters.misses in misses_thread on CPU 1, nothing
# else touches them), so every count is exact and asserted exactly:
#   - hitmap check says watchpoints work, from its self-test;
#   - perf stat -e mem:ADDR/8:w:u (a second tool) counts the same traps as hitmap;
#   - the report names both fields type.field at the program's own &counters, counts N
#     stores and L loads (:rw) or N stores and no load (:w) per field, one thread each,
#     code sites in the accessing function (one per instruction, N and L), false sharing;
#   - hitmap script gives one sample per access, at the trap ip (the next instruction).
# Nothing that depends on the schedule is asserted (how often the line moved between
# the CPUs): only that it moved at least once, which holds for any interleaving of two
# threads that both write it. Whether traps are delivered at all is decided by perf, not
# by hitmap's own self-test; where perf counts none, only the refusal is checked.
# Prints "ok NAME" / "not ok NAME".
. "$(dirname "$0")/../lib/tap.sh"
P=examples/bin/watch_counts
N=50000
L=20000
# Rings that hold the whole run (N + L samples of ~210 bytes per CPU fit in 16 MiB), so
# no sample is lost however long this shared machine keeps the reader off the CPU.
M=4096

for t in perf setarch python3; do
	command -v $t >/dev/null || { nok "watch: $t is not installed"; exit 1; }
done
[ -x "$P" ] || { nok "watch: $P is not built (make examples)"; exit 1; }
if [ "$(nproc)" -lt 2 ]; then
	echo "ok watch # skip: one CPU online; watch_counts needs two to share a line"
	exit 0
fi

# Without address randomization &counters is the same in every run, so perf can watch
# the bytes that hitmap watches by name. The program prints it.
A=$(setarch -R $P 0 0 | sed -n 's/^counters=\(0x[0-9a-f]*\) .*/\1/p')
[ -n "$A" ] || { nok "watch: watch_counts printed no address"; exit 1; }
A8=$(printf '0x%x' $((A + 8)))

# --- perf's counts: hits :w (N stores), misses :rw (N stores + L loads), user only.
setarch -R perf stat -x, -e "mem:$A/8:w:u" -e "mem:$A8/8:rw:u" -- $P $N $L \
	>/dev/null 2>"$T/perf"
pw=$(awk -F, -v e="mem:$A" '$3 == e {print $1}' "$T/perf")
prw=$(awk -F, -v e="mem:$A8" '$3 == e {print $1}' "$T/perf")

"$H" check --wide >"$T/check" 2>&1	# one line per check
if [ "$pw" = 0 ] && [ "$prw" = 0 ]; then
	# This machine delivers no debug-register trap (perf sees none either).
	grep -q '^watch *no .*raised no trap' "$T/check" &&
		ok "no traps here (perf counts 0): hitmap check says watch no, and why" ||
		nok "no traps: hitmap check" "$(grep '^watch' "$T/check")"
	"$H" record -c watch --watch counters.hits -o "$T/x.data" -- $P 10 0 >/dev/null 2>"$T/err"
	rc=$?
	[ "$rc" = 3 ] && grep -q "raised no trap" "$T/err" &&
		ok "no traps here: record -c watch exits 3 and says why" ||
		nok "no traps: record -c watch" "rc=$rc" "$(cat "$T/err")"
	echo "ok watch exact counts # skip: perf counts 0 traps on mem:$A, none are delivered here"
	exit 0
fi
[ "$pw" = $N ] && [ "$prw" = $((N + L)) ] &&
	ok "perf stat counts exactly the accesses made: $pw stores (:w), $prw accesses (:rw)" ||
	nok "perf stat counts the accesses made" "hits:w=$pw (want $N), misses:rw=$prw (want $((N + L)))" \
		"$(cat "$T/perf")"

grep -q "^watch *yes .*traps fire here (self-test: 16 stores, 16 traps)" "$T/check" &&
	ok "hitmap check: watchpoints work here (self-test counted every trap)" ||
	nok "hitmap check says watch yes" "$(grep '^watch' "$T/check")"
"$H" check --json | python3 -c '
import json, sys
c = {x["name"]: x for x in json.load(sys.stdin)["checks"]}
sys.exit(0 if c["watch"]["ok"] else 1)' &&
	ok "hitmap check --json: watch ok" || nok "hitmap check --json: watch ok"


# record NAME SPEC...: a watch recording of watch_counts N L, then its report and script.
record() {
	local name=$1
	shift
	setarch -R "$H" record -c watch -m $M "$@" -o "$T/$name.data" -- $P $N $L \
		>"$T/$name.out" 2>"$T/$name.err" &&
		"$H" report -i "$T/$name.data" --json >"$T/$name.json" 2>>"$T/$name.err" &&
		"$H" script -i "$T/$name.data" --json >"$T/$name.script" 2>>"$T/$name.err" ||
		{ nok "$name: record or report failed" "$(cat "$T/$name.err")"; return 1; }
}

cat >"$T/check.py" <<'PY'
import json, re, subprocess, sys
name, rep, scr, prog, addr, n, l, hits_loads, misses_loads = sys.argv[1:10]
A, N, L = int(addr, 16), int(n), int(l)
want = {'counters.hits': (A, 'hits_thread', N, int(hits_loads)),
        'counters.misses': (A + 8, 'misses_thread', N, int(misses_loads))}
d = json.load(open(rep))
samples = json.load(open(scr))['samples']
out = []
def check(what, ok, detail=''):
    out.append(('ok' if ok else 'not ok') + f' {name}: {what}' + ('' if ok else '\n    ' + str(detail)))

total = sum(st + ld for _, _, st, ld in want.values())
s = d['samples']
check(f'{total} watch samples, none lost, all named', d['source'] == 'watch' and
      s == {'total': total, 'with_addr': total, 'resolved': total, 'lost': 0}, s)
rows = {f['field']: (ln, f) for ln in d['lines'] for f in ln['fields']}
check('the rows are counters.hits and counters.misses', set(rows) == set(want), sorted(rows))
if set(rows) != set(want):
    print('\n'.join(out)); sys.exit(0)

# The accessing instructions, from objdump: in each thread function, the mov that stores
# to its field and the one that loads it (rip-relative or through a register).
dis = subprocess.run(['objdump', '-d', '--no-show-raw-insn', prog], capture_output=True,
                     text=True).stdout
funcs, cur = {}, None
for line in dis.splitlines():
    m = re.match(r'^([0-9a-f]+) <(.+)>:$', line)
    if m:
        cur = funcs.setdefault(m.group(2), [])
        continue
    m = re.match(r'^\s+([0-9a-f]+):\t(\S+)\s*(.*)$', line)
    if m and cur is not None:
        cur.append((int(m.group(1), 16), m.group(2), m.group(3)))

tids = set()
for field, (faddr, func, stores, loads) in want.items():
    ln, f = rows[field]
    at = int(ln['addr'], 16) + f['offset']
    check(f'{field} at the program\'s own address {faddr:#x}, 8 bytes, object counters',
          at == faddr and f['size'] == 8 and f['object'] == 'counters' and f['named'],
          f"at {at:#x}, size {f['size']}, object {f['object']}")
    check(f'{field}: exactly {stores} stores and {loads} loads',
          (f['stores'], f['loads'], f['records']) == (stores, loads, stores + loads),
          f"stores {f['stores']}, loads {f['loads']}, records {f['records']}")
    th = f['threads']
    check(f'{field}: one thread, all its accesses', len(th) == 1 and
          (th[0]['stores'], th[0]['loads']) == (stores, loads), th)
    tids |= {t['tid'] for t in th}
    sites = sorted((x['count'], x['func'], x['line']) for x in f['sites'])
    want_counts = sorted(c for c in (stores, loads) if c)
    check(f'{field}: code sites in {func}, one per accessing instruction ({want_counts})',
          [c for c, _, _ in sites] == want_counts and all(fn == func for _, fn, _ in sites) and
          all(x['file'].endswith('examples/watch_counts.c') for x in f['sites']), f['sites'])
    # Site ips are the accessing instructions; the samples' ips are the traps, one
    # instruction later (x86 data breakpoints trap after the access).
    insns = funcs.get(func, [])
    nxt = {insns[i][0]: insns[i + 1][0] for i in range(len(insns) - 1)}
    bias = int(f['sites'][0]['ip'], 16) - next((a for a, _, _ in insns), 0)
    bias -= bias % 4096
    site_ips = {int(x['ip'], 16) - bias for x in f['sites']}
    trap_ips = {}
    for x in samples:
        if int(x['addr'], 16) == faddr:
            trap_ips[int(x['ip'], 16) - bias] = trap_ips.get(int(x['ip'], 16) - bias, 0) + 1
    movs = {a for a, mn, ops in insns if mn.startswith('mov') and '(' in ops}
    check(f'{field}: sites are mov instructions of {func}, each sample at the next one',
          site_ips <= movs and set(trap_ips) == {nxt.get(a) for a in site_ips} and
          sorted(trap_ips.values()) == want_counts,
          f"sites {sorted(map(hex, site_ips))}, traps {dict((hex(k), v) for k, v in trap_ips.items())}")

ln = rows['counters.hits'][0]
check('two threads, one per field', len(tids) == 2, tids)
pairs = {frozenset((p['a'], p['b'])): p['kind'] for p in ln['pairs']}
check('verdict false sharing of counters.hits with counters.misses, by transfers',
      ln is rows['counters.misses'][0] and ln['verdict'] == 'false_sharing' and
      ln['contention_kind'] == 'transfers' and
      pairs == {frozenset(want): 'false_sharing'}, (ln['verdict'], pairs))
check('the line moved between the threads at least once (any schedule)',
      1 <= ln['transfers'] < total, ln['transfers'])
print('\n'.join(out))
PY

# --- both fields :rw (the default): N stores and L loads each.
if record rw --watch counters.hits --watch counters.misses; then
	python3 "$T/check.py" rw "$T/rw.json" "$T/rw.script" $P $A $N $L $L $L
fi

# --- hits :w, misses :rw, as perf counted them above: the same numbers.
if record w --watch counters.hits:w --watch counters.misses:rw; then
	python3 "$T/check.py" w "$T/w.json" "$T/w.script" $P $A $N $L 0 $L
	python3 - "$T/w.json" "$pw" "$prw" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
f = {f['field']: f['records'] for ln in d['lines'] for f in ln['fields']}
ok = (f.get('counters.hits'), f.get('counters.misses')) == (int(sys.argv[2]), int(sys.argv[3]))
print(('ok' if ok else 'not ok') + ' w: hitmap counts what perf stat counts on the same '
      f'bytes (hits:w {sys.argv[2]}, misses:rw {sys.argv[3]})' + ('' if ok else f'\n    {f}'))
PY
fi

# --- the same counts from perf's own recording: hitmap reads perf record's samples of
# mem:ADDR/8:rw:u -d (addresses, no registers) and attributes them as it does its own.
setarch -R perf record -q -d -m $M -e "mem:$A/8:rw:u" -o "$T/perf.data" -- $P $N $L >/dev/null 2>&1
np=$(perf script -i "$T/perf.data" -F tid 2>/dev/null | wc -l)
"$H" report -i "$T/perf.data" --json >"$T/perf.json" 2>"$T/err"
python3 - "$T/perf.json" "$np" $N $L <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
np, N, L = map(int, sys.argv[2:5])
f = {f['field']: f for ln in d['lines'] for f in ln['fields']}.get('counters.hits', {})
ok = np == N + L and (f.get('stores'), f.get('loads')) == (N, L)
print(('ok' if ok else 'not ok') + f' perf record -e mem:ADDR/8:rw:u: {np} samples, '
      'hitmap names them counters.hits with the same stores and loads' +
      ('' if ok else f"\n    perf {np}, hitmap {f.get('stores')} stores {f.get('loads')} loads"))
PY
