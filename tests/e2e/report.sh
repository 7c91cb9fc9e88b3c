#!/usr/bin/env bash
# hitmap report end to end on committed recordings of the examples (tests/data/rec, their
# binaries found by build-id), asserted from --json: false sharing, true sharing,
# read-mostly, a split access, the padded variant; perf's own recording; perf's PMU
# recordings; bad input. Then live recordings, by hitmap and by perf, as smoke tests whose
# assertions hold for any sample count. Prints "ok NAME" / "not ok NAME".
#
# A verdict needs conflicts, and conflicts need the two threads to run at the same time
# on two CPUs: on a loaded machine they may not, so verdicts, fields and rankings are
# asserted only on the committed recordings (tests/data/rec/README.md).
. "$(dirname "$0")/../lib/tap.sh"
REC=tests/data/rec

rep() {	# NAME: reports the committed recording NAME.data into $T/NAME.json
	"$H" report -i $REC/$1.data --buildid-dir $REC --json >"$T/$1.json" 2>"$T/$1.rerr" ||
		echo "    report of $1 failed: $(cat "$T/$1.rerr")"
}

# check NAME FILE PYTHON-EXPR: d is the report, lines/top its lines, fields(line) names.
check() {
	local name=$1 file=$2 expr=$3
	/usr/bin/python3 - "$file" "$expr" <<'PY' && echo "ok $name" || { echo "not ok $name"; head -c 1200 "$file" | sed 's/^/    /'; echo; }
import json, sys
d = json.load(open(sys.argv[1]))
lines = d['lines']
top = lines[0] if lines else {}
def fields(l): return {f['field'] for f in l.get('fields', [])}
def tids(l): return {t['tid'] for f in l.get('fields', []) for t in f['threads']}
def shared(l): return l['verdict'] in ('false_sharing', 'true_sharing')
sys.exit(0 if eval(sys.argv[2]) else 1)
PY
}

rep false_sharing
check "false sharing: top line is false sharing" "$T/false_sharing.json" \
	"top['verdict'] == 'false_sharing' and top['object'] == 'stats'"
check "false sharing: both fields and both threads named" "$T/false_sharing.json" \
	"{'worker_stats.ops', 'worker_stats.errors'} <= fields(top) and len(tids(top)) == 2"
check "false sharing: the fix names padding or alignment" "$T/false_sharing.json" \
	"top['fix'] and ('padding' in top['fix'] or 'align' in top['fix'])"
check "false sharing: at least 95% of memory samples resolved" "$T/false_sharing.json" \
	"d['samples']['resolved'] >= 0.95 * d['samples']['with_addr'] > 0"

rep false_sharing_padded
check "padded variant: nothing flagged" "$T/false_sharing_padded.json" \
	"not any(shared(l) for l in lines) and any('worker_stats.ops' in fields(l) for l in lines)"

rep true_sharing
check "true sharing: top line is true sharing of one field" "$T/true_sharing.json" \
	"top['verdict'] == 'true_sharing' and 'shared_counter.hits' in fields(top) and len(tids(top)) == 2"

rep read_mostly
check "read-mostly config: read_only, never written, nothing flagged" "$T/read_mostly.json" \
	"not any(shared(l) for l in lines) and any(l['verdict'] == 'read_only' and any(x.startswith('config.') for x in fields(l)) and sum(f['stores'] for f in l['fields']) == 0 for l in lines)"

rep split
check "split access: counted and named" "$T/split.json" \
	"any(s['field'] == 'record.stamp' and s['count'] > 10 for s in d['splits'])"
check "split: the field straddles a line in the static layout" "$T/split.json" \
	"any(s['field'] == 'record.stamp' and s['offset'] == 60 for s in d['straddles'])"

FS=$REC/false_sharing.data
"$H" report -i $FS --buildid-dir $REC --html "$T/heat.html" >/dev/null 2>"$T/err"
if grep -q '<svg' "$T/heat.html" && grep -q 'worker_stats' "$T/heat.html" && ! grep -q 'https\?://' "$T/heat.html"; then
	ok "--html writes a self-contained heat map page"
else nok "--html heat map page" "$(cat "$T/err")"; fi
"$H" report -i $FS --buildid-dir $REC --view heatmap --type worker_stats >"$T/heat.txt" 2>&1
grep -q 'ops' "$T/heat.txt" && grep -q 'errors' "$T/heat.txt" &&
	ok "--view heatmap --type prints the layout with counts" || nok "--view heatmap" "$(head -5 "$T/heat.txt")"

# Streaming: small batches build the same report as one batch. Counts, rows, threads and
# sites are equal; conflicts may lose at most a few per batch boundary (docs/report.md,
# Memory), and with them the ranking of a line's field pairs, from which its verdict and
# fix come, when two pairs are that close. Batches are put in time order only when they
# are larger than one ring's flush (a few hundred samples here), hence 600 for the
# two-thread recording (877 samples) and 50 for the one-thread split (273).
same_batched() {	# NAME BATCH DATA [report args]
	local name=$1 nb=$2 data=$3
	shift 3
	"$H" report -i "$data" --buildid-dir $REC --json "$@" >"$T/one.json" 2>"$T/err" &&
		"$H" report -i "$data" --buildid-dir $REC --json --batch "$nb" "$@" >"$T/many.json" 2>>"$T/err" ||
		{ nok "$name" "$(cat "$T/err")"; return; }
	/usr/bin/python3 - "$T/one.json" "$T/many.json" "$nb" <<'PY' && ok "$name" || nok "$name"
import json, sys
one, many = (json.load(open(f)) for f in sys.argv[1:3])
batch = int(sys.argv[3])
soft = {'conflicts', 'contention', 'events', 'weight', 'inter', 'pairs', 'verdict', 'fix'}
def strip(x):
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items() if k not in soft}
    if isinstance(x, list):
        return [strip(v) for v in x]
    return x
def conflicts(d): return sum(l.get('conflicts', 0) for l in d['lines'])
key = lambda l: (l['addr'], l.get('pid', 0))
a = sorted(one['lines'], key=key); b = sorted(many['lines'], key=key)
ok = strip(a) == strip(b) and strip(one['splits']) == strip(many['splits'])
ok = ok and one['samples'] == many['samples']
c1, c2 = conflicts(one), conflicts(many)
nb = one['samples']['total'] // batch + 1
ok = ok and one['samples']['total'] > batch	# more than one batch, or nothing was merged
ok = ok and c2 <= c1 and c1 - c2 <= 2 * nb
if not ok:
    print('    lines equal:', strip(a) == strip(b), 'splits equal:',
          strip(one['splits']) == strip(many['splits']), 'conflicts', c1, c2, 'batches', nb)
sys.exit(0 if ok else 1)
PY
}
same_batched "--batch 600: the same report as one batch (false sharing)" 600 $FS
same_batched "--batch 50: the same report as one batch (split)" 50 $REC/split.data
"$H" report -i $FS --buildid-dir $REC --view heatmap --json >"$T/h1.json" 2>/dev/null
"$H" report -i $FS --buildid-dir $REC --view heatmap --json --batch 600 >"$T/h2.json" 2>/dev/null
cmp -s "$T/h1.json" "$T/h2.json" && grep -q worker_stats "$T/h1.json" &&
	ok "--batch 600: the same heat map as one batch" || nok "--batch 600 heat map differs"

# perf's own recording of the same workload (perf record -e cpu-clock --user-regs, in
# tests/data/rec/make.sh) reads the same way.
rep perf_false_sharing
check "a perf record file gives the same verdict" "$T/perf_false_sharing.json" \
	"top['verdict'] == 'false_sharing' and {'worker_stats.ops', 'worker_stats.errors'} <= fields(top)"

# The real PMU recordings from Intel machines: every one reports without error. They name
# files (/bin/ls) that exist here as other builds: refused unless --force (the same rule
# as for a --vmlinux of another build), so --force, and one case checks the refusal.
S=$(git rev-parse --show-toplevel)/../shared/data/perf
[ -d "$S" ] || S=/work/shared/data/perf
f=$S/ivb-e5-4610v2-perf-mem-load-numatop-old.data
if [ -f "$f" ]; then
	"$H" report -i "$f" >/dev/null 2>"$T/err"
	rc=$?
	[ "$rc" = 2 ] && grep -q "^hitmap report: /bin/ls: build-id .* on disk but .* in the recording.*--force" "$T/err" &&
		ok "a recording naming another build of /bin/ls: exit 2, both build-ids, the fix" ||
		nok "a recording naming another build of /bin/ls: exit 2" "rc=$rc" "$(cat "$T/err")"
fi
for f in "$S"/*.data; do
	[ -f "$f" ] || continue
	"$H" report -i "$f" --json --force >"$T/pmu.json" 2>"$T/err"
	rc=$?
	n=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["samples"]["total"])' "$T/pmu.json" 2>/dev/null)
	[ "$rc" = 0 ] && [ -n "$n" ] && [ "$n" -gt 0 ] && ok "PMU recording $(basename "$f"): $n samples reported" ||
		nok "PMU recording $(basename "$f")" "rc=$rc" "$(cat "$T/err")"
	case $f in *c2c*) same_batched "--batch 5 on $(basename "$f")" 5 "$f" --force ;; esac
done

# Bad input: one line, exit 2.
bad() {
	local name=$1 pat=$2
	shift 2
	"$H" report "$@" >/dev/null 2>"$T/err"
	local rc=$?
	[ "$rc" = 2 ] && [ "$(wc -l <"$T/err")" = 1 ] && grep -q -- "$pat" "$T/err" && ok "$name" ||
		nok "$name" "rc=$rc" "$(cat "$T/err")"
}
echo "not perf data" >"$T/text"
head -c 1000 $FS >"$T/trunc.data"
bad "bad input: not a perf.data file" "text" -i "$T/text"
bad "bad input: missing file" "none" -i "$T/none"
bad "bad input: truncated recording" "trunc.data" -i "$T/trunc.data"

# Smoke tests of live recordings, by hitmap and by perf: whatever samples they got, the
# report runs and its document is consistent (tests/e2e/invariants.py). Where the samples
# landed, and whether the threads overlapped, is not asserted.
smoke() {	# NAME DATA
	"$H" report -i "$2" --json >"$T/smoke.json" 2>"$T/err"
	local rc=$? out=""
	if [ "$rc" = 0 ] && out=$(/usr/bin/python3 tests/e2e/invariants.py report "$T/smoke.json"); then
		ok "$1: exit 0, a consistent hitmap.report/1 ($out)"
	else nok "$1" "rc=$rc" "$out" "$(cat "$T/err")"; fi
}
"$H" record -c timer -o "$T/live.data" -- examples/bin/false_sharing 50000000 >/dev/null 2>"$T/err" ||
	nok "live hitmap record" "$(cat "$T/err")"
smoke "live hitmap recording smoke" "$T/live.data"
perf record -q -e cpu-clock -F 4000 --user-regs=ax,bx,cx,dx,si,di,bp,sp,ip,r8,r9,r10,r11,r12,r13,r14,r15 \
	-o "$T/perf.data" -- examples/bin/false_sharing 50000000 >/dev/null 2>&1
smoke "live perf recording smoke" "$T/perf.data"
