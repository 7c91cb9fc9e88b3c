#!/usr/bin/env bash
# Watchpoint symbolization end to end. Two kinds of input:
#
# REAL traps (`hitmap record -c watch`, where the machine delivers debug-register traps:
# tests/lib/traps.sh; exact
# counts are in watch.sh) where --watch can reach the data: globals and statics, armed by
# name. Cases: real-global (stock[3].count of examples/objects), real-false_sharing.
#
# SYNTHESIZED breakpoint samples, kept only where real traps cannot reach: --watch arms
# globals and statics by name, while a heap object, a stack local or a thread-local has
# an address only at run time, different per run and (TLS) per thread; and a WRONG file
# cannot come from the kernel. Cases: heap, stack, tls, heap-len8 (a range wider than
# the field, on a heap object), chase (heap nodes), off-by-one (the wrong file). Each is
# recorded with -c timer and tests/tools/timer2watch writes the breakpoint samples the
# kernel would have delivered for the hottest ranges (see its header: trap ip = the
# instruction after the access, addr = bp_addr, the timer's pid/tid/time/cpu and
# registers); its counts are the timer's, not every access.
#
# Either way the report must:
#   - say its samples are watch samples,
#   - name at least 95% of them, the hottest row being the expected type.field,
#   - name each watched range as expected (real: the field armed, with exactly the
#     accesses the program makes; synthesized: the field the timer path named, with as
#     many records as samples were written),
#   - put each access at the accessing instruction, not the trap ip: every row's code
#     sites are instructions that end at one of its samples' trap ips, and its loads and
#     stores are those of the instructions objdump decodes there.
# A file written with --off-by-one (ip = the accessing instruction) must fail the last
# check. Prints "ok NAME" / "not ok NAME".
. "$(dirname "$0")/../lib/tap.sh"
X=${BUILD:-build}/tests/tools/timer2watch
B=examples/bin

if [ ! -x "$X" ]; then
	echo "not ok timer2watch: $X is not built (make $X)"
	exit 1
fi

cat >"$T/check.py" <<'PY'
import json, re, sys
name, rep, scr, conv, dis, want, method = sys.argv[1:8]
d = json.load(open(rep))
samples = json.load(open(scr))['samples']
ranges = [(int(a, 16), int(n), f, int(c)) for a, n, f, c in
          re.findall(r'(0x[0-9a-f]+)/(\d+) \(([^)]*)\) (\d+)', open(conv).read())]
s = d['samples']
rows = {int(l['addr'], 16) + f['offset']: f for l in d['lines'] for f in l['fields']}
def rows_in(addr, n):
    """The report's rows inside a watched range (a sample's addr is the range's start,
    bp_addr, unless the report narrows it to the accessed byte)."""
    return [f for a, f in sorted(rows.items()) if addr <= a < addr + n]
out = []
def check(what, ok, detail):
    out.append(('ok' if ok else 'not ok') + f' {name}: {what}' + ('' if ok else '\n    ' + detail))

# objdump -d --no-show-raw-insn: instructions by the address where they end.
funcs, insns, cur = {}, [], None
for line in open(dis):
    m = re.match(r'^([0-9a-f]+) <(.+)>:$', line)
    if m:
        cur = m.group(2)
        funcs[cur] = int(m.group(1), 16)
        continue
    m = re.match(r'^\s+([0-9a-f]+):\t(.*)$', line.rstrip('\n'))
    if m and cur:
        insns.append((int(m.group(1), 16), m.group(2).strip()))
ends = {insns[i + 1][0]: insns[i] for i in range(len(insns) - 1)}

def access(text):
    """'load'/'store' for an AT&T instruction that reads or writes memory, else None."""
    words = text.split('#')[0].split(None, 1)
    while words and words[0] in ('lock', 'rep', 'repz', 'repnz', 'notrack', 'bnd'):
        words = words[1].split(None, 1) if len(words) > 1 else []
    # An indirect jump or call through memory loads its target: a PLT's jmp *GOT(%rip),
    # which a short timer run can rank among the hottest ranges (the GOT slot).
    if words and words[0].startswith(('j', 'call')) and len(words) > 1 and \
            words[1].startswith('*') and '(' in words[1]:
        return 'load'
    # The stack slot that push, call and pop, ret touch without naming it (a watched stack
    # range can hold a return address or a saved register).
    if words and words[0].startswith(('push', 'call')) and not (len(words) > 1 and '(' in words[1]):
        return 'store'
    if words and words[0].startswith(('pop', 'ret')) and not (len(words) > 1 and '(' in words[1]):
        return 'load'
    if not words or words[0].startswith(('lea', 'nop', 'prefetch', 'j', 'call')):
        return None
    ops, depth, tok = [], 0, ''
    for ch in words[1] if len(words) > 1 else '':
        depth += (ch == '(') - (ch == ')')
        if ch == ',' and depth == 0:
            ops.append(tok); tok = ''
        else:
            tok += ch
    ops.append(tok)
    mem = [i for i, o in enumerate(ops) if '(' in o or '%fs:' in o or '%gs:' in o]
    if not mem:
        return None
    if words[0].startswith(('cmp', 'test')) or mem[0] != len(ops) - 1:
        return 'load'
    return 'store'	# the destination: a store, or read-modify-write (counted as a store)

check('samples are watch samples', d['source'] == 'watch' and
      d['stats']['by_source']['watch'] == s['total'] > 0 and s['with_addr'] == s['total'],
      f"source {d['source']}, {d['stats']['by_source']}, {s}")
hot = max(rows.values(), key=lambda f: f['records']) if rows else {}
share = s['resolved'] / s['with_addr'] if s['with_addr'] else 0
by = d['stats']['by_method'].get(method, 0)
check(f'{share:.1%} of {s["with_addr"]} named; hottest {hot.get("field")}',
      share >= 0.95 and (want == '-' or hot.get('field') == want) and
      (method == '-' or by >= 0.9 * s['with_addr']),
      f"want >= 95% named, hottest {want}, >= 90% by {method} (got {by})")
bad = []
for addr, n, field, count in ranges:
    got = rows_in(addr, n)
    if count and (sum(f['records'] for f in got) != count or
                  (field != '?' and any(f['field'] != field for f in got))):
        bad.append(f"{addr:#x}/{n}: expected {field} x{count}, watch report " +
                   ', '.join(f"{f['field']} x{f['records']}" for f in got))
check(f'{len(ranges)} watched ranges named as expected, each with its records', ranges and not bad,
      '; '.join(bad) or 'no range in the converter output')

# The accessing instruction: the one objdump finds ending at each trap ip. Only rows whose
# code is in this binary: its load bias is a page multiple, found from a site's function.
bad, seen = [], 0
for addr, n, field, count in ranges:
    got = rows_in(addr, n)
    site = next((x for f in got for x in f['sites'] if x['func'] in funcs), None)
    if not site:
        continue
    ip = int(site['ip'], 16)
    bias = ip - (funcs[site['func']] + (ip - funcs[site['func']]) % 4096)
    traps = [int(x['ip'], 16) for x in samples if int(x['addr'], 16) == addr]
    want_ld = want_st = 0
    acc = set()
    for t in traps:
        insn = ends.get(t - bias)
        kind = insn and access(insn[1])
        if not kind:
            bad.append(f'{addr:#x}: trap ip {t:#x} follows no memory access '
                       f'({insn and insn[1]})')
            break
        acc.add(insn[0] + bias)
        want_ld += kind == 'load'
        want_st += kind == 'store'
    sites = {int(x['ip'], 16) for f in got for x in f['sites']}
    loads, stores = sum(f['loads'] for f in got), sum(f['stores'] for f in got)
    seen += 1
    if not sites <= acc or sites & set(traps) or (loads, stores) != (want_ld, want_st):
        bad.append(f"{addr:#x}/{n} {field}: sites {sorted(map(hex, sites))}, accessing "
                   f"{sorted(map(hex, acc))}, traps {sorted(map(hex, set(traps)))}; "
                   f"loads/stores {loads}/{stores}, objdump {want_ld}/{want_st}")
check(f'sites of {seen} rows are the accessing instructions, loads and stores as decoded',
      seen and not bad, '; '.join(bad[:4]) or 'no row with a site in this binary')
print('\n'.join(out))
PY

# run NAME BINARY [timer2watch args] -- ARGS: records BINARY ARGS with the timer (once per
# BINARY ARGS), converts, reports; leaves $T/NAME.{json,script,conv} and BINARY's objdump.
run() {
	local name=$1 bin=$2 conv=() rec
	shift 2
	while [ "$1" != -- ]; do conv+=("$1"); shift; done
	shift
	rec=$T/$(basename "$bin")-$(echo "$*" | tr ' ' _).data
	[ -f "$rec" ] || "$H" record -c timer -F 10000 -o "$rec" -- "$bin" "$@" >/dev/null 2>"$T/err" ||
		{ echo "not ok $name: record failed: $(cat "$T/err")"; return 1; }
	"$X" "$rec" "$T/$name.data" "${conv[@]}" >"$T/$name.conv" 2>"$T/err" ||
		{ echo "not ok $name: timer2watch failed: $(cat "$T/err")"; return 1; }
	"$H" report -i "$T/$name.data" --json >"$T/$name.json" 2>"$T/err" &&
		"$H" script -i "$T/$name.data" --json >"$T/$name.script" 2>>"$T/err" ||
		{ echo "not ok $name: report failed: $(cat "$T/err")"; return 1; }
	[ -f "$T/$(basename "$bin").dis" ] ||
		objdump -d --no-show-raw-insn "$bin" >"$T/$(basename "$bin").dis"
}

check() {	# NAME BINARY FIELD METHOD
	/usr/bin/python3 "$T/check.py" "$1" "$T/$1.json" "$T/$1.script" "$T/$1.conv" \
		"$T/$(basename "$2").dis" "$3" "$4"
}

# real NAME BINARY EXPECT -- WATCH_SPECS -- ARGS: records BINARY ARGS with real traps on
# WATCH_SPECS, reports; EXPECT is "SYMBOL+OFFSET:FIELD:COUNT,..." per watched 8-byte
# range: its address is SYMBOL's (nm) plus OFFSET at the file's load bias, found from a
# sample; COUNT is the accesses the program makes to it. Writes $T/NAME.conv as
# timer2watch would, from EXPECT alone, so that check.py checks it the same way.
real() {
	local name=$1 bin=$2 expect=$3 specs=()
	traps || { skip "$name: record -c watch and its checks"; return 1; }
	shift 4
	while [ "$1" != -- ]; do specs+=(--watch "$1"); shift; done
	shift
	# --no-alloc: the load bias is found from the samples, which must all be the watch's
	"$H" record -c watch --no-alloc -m 4096 "${specs[@]}" -o "$T/$name.data" -- "$bin" "$@" \
		>/dev/null 2>"$T/err" ||
		{ echo "not ok $name: record -c watch failed: $(cat "$T/err")"; return 1; }
	"$H" report -i "$T/$name.data" --json >"$T/$name.json" 2>"$T/err" &&
		"$H" script -i "$T/$name.data" --json >"$T/$name.script" 2>>"$T/err" ||
		{ echo "not ok $name: report failed: $(cat "$T/err")"; return 1; }
	nm "$bin" >"$T/$name.nm"
	/usr/bin/python3 - "$T/$name.script" "$T/$name.nm" "$expect" >"$T/$name.conv" <<'PY' ||
import json, sys
samples = json.load(open(sys.argv[1]))['samples']
syms = {l.split()[2]: int(l.split()[0], 16) for l in open(sys.argv[2]) if len(l.split()) == 3}
want = [e.split(':') for e in sys.argv[3].split(',')]
first = min(syms[s.split('+')[0]] + int(s.split('+')[1], 0) for s, _, _ in want)
bias = min(int(x['addr'], 16) for x in samples) - first if samples else 0
if bias % 4096:
    sys.exit(f'samples start at {bias:#x} past the expected range: not a load bias')
print(' '.join(f"{syms[s.split('+')[0]] + int(s.split('+')[1], 0) + bias:#x}/8 ({f}) {c}"
               for s, f, c in want))
PY
		{ echo "not ok $name: no sample at the watched address"; return 1; }
	[ -f "$T/$(basename "$bin").dis" ] ||
		objdump -d --no-show-raw-insn "$bin" >"$T/$(basename "$bin").dis"
}

# stock[3].count: bump_stock loads and stores it once per 64 iterations (main prints
# stock[1]): 64000 iterations, 1000 loads and 1000 stores.
real real-global $B/objects "stock+80:stock_item.count:2000" -- 'stock[3].count' -- global 64000 &&
	check real-global $B/objects stock_item.count global

for spec in "heap order.qty heap" "stack totals.sum stack" "tls tls_hits tls"; do
	set -- $spec
	run "$1" $B/objects -- "$1" 600000000 && check "$1" $B/objects "$2" "$3"
done

# A watchpoint wider than the field accessed (--watch ADDR/8 over two ints): the trap's
# addr is bp_addr, the start of the range, yet the access is to order.qty at +4. The
# report must narrow the address from the decoded operand and the trap's registers (the
# access did not write them); while it takes bp_addr as the address, this names order.id.
run heap-len8 $B/objects --len 8 -- heap 600000000 && check heap-len8 $B/objects order.qty heap

# An access that overwrites its own base register (p = p->next: mov 0x8(%rax),%rax): after
# the trap the register holds the loaded value, not the node's address, so the report must
# not type the access by addr - rax; while it does, node.next is named key or hits.
cat >"$T/chase.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
struct node { long key; struct node *next; long hits; };
__attribute__((noinline)) long walk(struct node *head, unsigned long n)
{
	long s = 0;
	for (unsigned long i = 0; i < n; i++)
		for (struct node *p = head; p; p = p->next)
			s += p->key;
	return s;
}
int main(int argc, char **argv)
{
	struct node *head = NULL;
	for (int i = 0; i < 4; i++) {
		struct node *x = calloc(1, sizeof(*x));
		x->key = i;
		x->next = head;
		head = x;
	}
	printf("%ld\n", walk(head, argc > 1 ? strtoul(argv[1], NULL, 0) : 1000));
	return 0;
}
C
if cc -O2 -g -o "$T/chase" "$T/chase.c"; then
	# Which field is hottest depends on where live timer samples land (node.key or
	# node.next, run to run): not asserted. What this case is for is the naming of every
	# watched range, checked for any sample count.
	run chase "$T/chase" -- 100000000 && check chase "$T/chase" - heap
else echo "not ok chase: cc failed"; fi

# False sharing from real traps: count_ops loads and stores stats.ops once per iteration,
# count_errors stats.errors, and main loads each once to print them: 2N+1 accesses each.
# The verdict of the line depends on the schedule here (main's read of errors is a true
# sharing pair that could weigh as much as the false one if the workers never overlapped:
# watch.sh asserts the verdict on a program without it); the false-sharing pair of the two
# fields is there for any schedule.
if real real-false_sharing $B/false_sharing \
	"stats+0:worker_stats.ops:40001,stats+8:worker_stats.errors:40001" -- \
	stats.ops stats.errors -- 20000; then
	check real-false_sharing $B/false_sharing - global
	/usr/bin/python3 - "$T/real-false_sharing.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
top = d['lines'][0] if d['lines'] else {}
f = {f['field']: f for f in top.get('fields', [])}
pairs = {frozenset((p['a'], p['b'])) for p in top.get('pairs', []) if p['kind'] == 'false_sharing'}
counts = {k: (v['loads'], v['stores']) for k, v in f.items()}
ok = (top.get('object') == 'stats' and top.get('contention_kind') == 'transfers' and
      top.get('transfers', 0) > 0 and
      counts == {'worker_stats.ops': (20001, 20000), 'worker_stats.errors': (20001, 20000)} and
      frozenset(('worker_stats.ops', 'worker_stats.errors')) in pairs)
print(('ok' if ok else 'not ok') + ' real-false_sharing: worker_stats.ops and .errors, 20001 '
      'loads and 20000 stores each, a false-sharing pair, by transfers')
if not ok:
    print('    ', top.get('object'), top.get('contention_kind'), top.get('transfers'), counts, pairs)
PY
fi

# The checks can fail: a file whose ips are the accessing instructions (one instruction
# early) must not pass the site check.
if run off-by-one $B/objects --off-by-one -- global 600000000; then
	check off-by-one $B/objects stock_item.count global >"$T/obo.out"
	grep -q '^not ok off-by-one: sites' "$T/obo.out" &&
		echo "ok an off-by-one trap ip (the accessing instruction) fails the site check" ||
		{ echo "not ok an off-by-one trap ip passes the site check"; sed 's/^/    /' "$T/obo.out"; }
fi
