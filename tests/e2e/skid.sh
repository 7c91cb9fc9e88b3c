#!/usr/bin/env bash
# Timer skid (docs/decode.md, Skid): which instruction a cpu-clock sample is charged to.
#   - On COMMITTED recordings (tests/data/skid: `hitmap record -c timer` of
#     examples/skid_load_store and skid_store_load, 150000 iterations, with the binaries
#     under .build-id/ for --buildid-dir), whose numbers are fixed: the reader's load of
#     rcu_state.gp_ctr (followed by a TLS store) and the producer's store to queue.head
#     (followed by a load) are charged to themselves, so each line holds both threads'
#     fields and reads false sharing; --stats counts the rules.
#   - Against watch's exact counts on REAL traps (live; skipped where no trap fires):
#     each field's share of its line from the committed timer recording is within 10
#     points of its share from watch, and both name the same code sites.
#   - Live timer recording: every access charged to the rcu_state line is the load at
#     rcu_read_lock or the store in updater, whatever the number of samples.
# Prints "ok NAME" / "not ok NAME".
. "$(dirname "$0")/../lib/tap.sh"
D=tests/data/skid

for t in perf setarch python3; do
	command -v $t >/dev/null || { nok "skid: $t is not installed"; exit 1; }
done
for p in load_store store_load; do
	"$H" report -i $D/$p.data --buildid-dir $D --json >"$T/$p.json" 2>"$T/$p.err" &&
		"$H" report -i $D/$p.data --buildid-dir $D --stats >"$T/$p.stats" 2>>"$T/$p.err" ||
		{ nok "skid: report of $D/$p.data" "$(cat "$T/$p.err")"; exit 1; }
done

# Fields by (line, offset) and site: the committed binaries are found by build-id, but
# the data symbolizer reads the recorded path (gone), so fields are named by offset.
cat >"$T/fix.py" <<'PY'
import json, sys
name, rep, want = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
d = json.load(open(rep))
got = {}
for ln in d['lines']:
    key = tuple(sorted((f['offset'], f['loads'], f['stores'],
                        tuple(sorted((s['func'], s['line']) for s in f['sites'])))
                       for f in ln['fields']))
    got[key] = ln['verdict']
w = tuple(sorted((o, l, s, tuple(sorted(tuple(x) for x in sites))) for o, l, s, sites in want['fields']))
ok = got.get(w) == want['verdict']
print(('ok' if ok else 'not ok') + f' {name}: one line holds both threads\' fields ' +
      f'{[f[:3] for f in want["fields"]]}, verdict {want["verdict"]}' +
      ('' if ok else '\n    got ' + repr(got)))
PY
python3 "$T/fix.py" "fixture load_store" "$T/load_store.json" \
	'{"verdict": "false_sharing", "fields": [[0, 207, 0, [["rcu_read_lock", 22]]], [8, 0, 214, [["updater", 48]]]]}'
python3 "$T/fix.py" "fixture store_load" "$T/store_load.json" \
	'{"verdict": "false_sharing", "fields": [[0, 0, 223, [["producer", 27]]], [8, 0, 211, [["consumer", 39]]]]}'
# The thread-local store after the load keeps only the samples taken after it.
python3 - "$T/load_store.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
tls = [f for ln in d['lines'] if int(ln['addr'], 16) >= 1 << 63 for f in ln['fields']]
n = sum(f['records'] for f in tls)
print(('ok' if n == 0 else 'not ok') + ' fixture load_store: no sample charged to the TLS '
      'store that follows the load' + ('' if n == 0 else f'\n    {tls}'))
PY
grep -q '^    after a load or RMW  *208 ' "$T/load_store.stats" &&
	grep -q '^    after a store  *214 ' "$T/load_store.stats" &&
	grep -q "^    ip's insn accesses too  *207 " "$T/load_store.stats" &&
	ok "fixture load_store --stats: 208 after a load (207 over the store at ip), 214 after a store" ||
	nok "fixture load_store --stats" "$(sed -n '/^samples/,/^memory/p' "$T/load_store.stats")"

# --- watch's exact counts on the same programs (real traps; the live build of the
# examples, compared by function and line).
if [ "$(nproc)" -lt 2 ]; then
	echo "ok skid watch # skip: one CPU online"
	exit 0
fi
N=3000
A=$(setarch -R examples/bin/skid_load_store 0 | sed -n 's/^rcu_state=\(0x[0-9a-f]*\) .*/\1/p')
# perf stat's stderr is kept: a workload's death by signal is said there (psignal)
setarch -R perf stat -x, -e "mem:$A/8:rw:u" -- examples/bin/skid_load_store $N >/dev/null \
	2>"$T/stat"
n=$(awk -F, -v e="mem:$A" '$3 == e {print $1}' "$T/stat")
if [ "${n:-0}" = 0 ]; then
	echo "ok skid watch # skip: perf counts no trap on mem:$A here"
else
	# perf's count: N loads and N evictions by the reader (clflush traps too), main's read.
	[ "$n" = $((2 * N + 1)) ] && ok "perf stat mem:&rcu_state.gp_ctr/8:rw: $n = 2 x $N + 1" ||
		nok "perf stat mem:&rcu_state.gp_ctr/8:rw" "got $n, want $((2 * N + 1))" "$(cat "$T/stat")"
	for pw in load_store:rcu_state.gp_ctr,rcu_state.nr_callbacks store_load:queue.head,queue.tail; do
		p=${pw%%:*}
		f=${pw#*:}
		"$H" record -c watch --watch ${f%,*} --watch ${f#*,} -o "$T/$p.w.data" -- \
			examples/bin/skid_$p $N >/dev/null 2>"$T/$p.w.err" &&
			"$H" report -i "$T/$p.w.data" --json >"$T/$p.w.json" 2>>"$T/$p.w.err" ||
			{ nok "skid watch $p: record or report" "$(cat "$T/$p.w.err")"; continue; }
		python3 - "$p" "$T/$p.json" "$T/$p.w.json" $N <<'PY'
import json, sys
name, timer, watch, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
# The busiest line's fields with an access size (watch's clflush rows have none): the
# accesses of the threads under test (main's final read apart), and their sites.
def line_rows(path, named):
    d = json.load(open(path))
    ln = max(d['lines'], key=lambda l: sum(f['loads'] + f['stores'] for f in l['fields']))
    return {f['field'] if named else f['offset']:
            (sum(s['count'] for s in f['sites'] if s['func'] != 'main'),
             sorted((s['func'], s['line']) for s in f['sites'] if s['func'] != 'main'))
            for f in ln['fields'] if f['size']}
w = line_rows(watch, True)
t = line_rows(timer, False)
out = []
exact = all(c == n for c, _ in w.values()) and len(w) == 2
out.append(('ok' if exact else 'not ok') + f' skid watch {name}: exactly {n} accesses per field'
           + ('' if exact else f'\n    {w}'))
wt = sum(c for c, _ in w.values())
tt = sum(c for c, _ in t.values())
for field, (c, sites) in sorted(w.items()):
    off = 0 if field.endswith(('gp_ctr', 'head')) else 8
    tc, tsites = t.get(off, (0, []))
    ws, ts = 100 * c / wt, 100 * tc / tt if tt else 0
    good = abs(ws - ts) <= 10 and tsites == sites
    out.append(('ok' if good else 'not ok') + f' skid {name}: {field} timer {ts:.1f}% of the line, '
               f'watch {ws:.1f}% (within 10 points), sites {tsites}' +
               ('' if good else f'\n    watch sites {sites}'))
print('\n'.join(out))
PY
	done
fi

# --- live timer: whatever lands, nothing on the line but the two accesses.
"$H" record -c timer -o "$T/live.data" -- examples/bin/skid_load_store 100000 >/dev/null 2>&1 &&
	"$H" report -i "$T/live.data" --json >"$T/live.json" 2>/dev/null
python3 - "$T/live.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
bad = [(f['field'], f['loads'], f['stores'], [(s['func'], s['line']) for s in f['sites']])
       for ln in d['lines'] for f in ln['fields']
       if f['field'] and f['field'].startswith('rcu_state.') and not (
           (f['field'], f['stores']) == ('rcu_state.gp_ctr', 0) and
           all((s['func'], s['line']) == ('rcu_read_lock', 22) for s in f['sites']) or
           (f['field'], f['loads']) == ('rcu_state.nr_callbacks', 0) and
           all(s['func'] == 'updater' for s in f['sites']))]
print(('ok' if not bad else 'not ok') + ' live timer: the rcu_state line holds only the load '
      'in rcu_read_lock and the stores in updater' + ('' if not bad else f'\n    {bad}'))
PY
