#!/usr/bin/env bash
# hitmap whatif end to end on committed recordings (tests/data/rec, found by build-id):
# the false-sharing example replayed through the padded build, a padding edit and the
# suggested layout predicts the shared line goes away, and the padded build's own
# recording agrees; the xfs_like pair predicts the sharing the variant's own recording
# shows; bad input. Then a live recording as a smoke test whose assertions hold for any
# sample count. Prints "ok NAME" / "not ok NAME".
#
# Why committed recordings: whether a timer sample lands on a field read by one load of
# a loop, and whether two threads ran at the same time, is luck (xfs_like's i_lookups got
# 0 to 96 samples in a dozen recordings here, and false_sharing's conflicts go to 0 when
# another process shares a CPU with one of its threads). tests/data/rec/README.md says
# what each recording holds and how to remake them.
. "$(dirname "$0")/../lib/tap.sh"
REC=tests/data/rec
RB=$REC/bin

# check NAME FILE PYTHON-EXPR: d is the JSON document; helpers below.
check() {
	local name=$1 file=$2 expr=$3
	/usr/bin/python3 - "$file" "$expr" <<'PY' && echo "ok $name" || { echo "not ok $name"; head -c 1500 "$file" | sed 's/^/    /'; echo; }
import json, sys
d = json.load(open(sys.argv[1]))
def shared(l): return l['verdict'] in ('false_sharing', 'true_sharing')
def names(l): return {f['field'] if isinstance(f, dict) else f for f in l['fields']}
def ws(l): return any(f.startswith('worker_stats.') for f in names(l))
def ch(kind): return [c for c in d.get('lines', []) if c['change'] == kind]
sys.exit(0 if eval(sys.argv[2]) else 1)
PY
}

# whatif NAME ARGS...: runs whatif --json into $T/NAME.json, reporting a failure; the
# recordings' binaries are found in the committed build-id cache.
whatif() {
	local name=$1
	shift
	"$H" whatif "$@" --buildid-dir $REC --json >"$T/$name.json" 2>"$T/$name.err" ||
		echo "    whatif $* failed: $(cat "$T/$name.err")"
}

numbers() {	# FILE: the conflicts before and after, for the log
	/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("    %s: %s on shared lines %d -> %d; shared lines %d -> %d" % (d["change"]["text"], d["contention_kind"], d["before"]["contention"], d["after"]["contention"], d["before"]["shared_lines"], d["after"]["shared_lines"]))' "$1" 2>/dev/null
}

FS=$REC/false_sharing.data
whatif layout -i $FS --layout $RB/false_sharing_padded
check "--layout padded build: the false-sharing line stops being shared" "$T/layout.json" \
	"d['schema'] == 'hitmap.whatif/1' and any(c['before'][0]['verdict'] == 'false_sharing' and ws(c['before'][0]) and not any(shared(a) for a in c['after']) for c in ch('stops'))"
check "--layout padded build: no false sharing predicted, conflicts drop to 0" "$T/layout.json" \
	"d['prediction']['false_sharing'] == 0 and d['before']['contention'] > 0 and d['after']['contention'] == 0 and not ch('starts')"
check "--layout padded build: errors moves to line 1, the type aligns to 64" "$T/layout.json" \
	"any(t['name'] == 'worker_stats' and t['new_align'] == 64 and any(m['name'] == 'errors' and m['new_offset'] == 64 and m['new_line'] == 1 and m['old_line'] == 0 for m in t['members']) for t in d['types'])"
numbers "$T/layout.json"

"$H" report -i $REC/false_sharing_padded.data --buildid-dir $REC --json >"$T/padded.json" 2>"$T/padded.err"
check "the real padded recording agrees: no shared line holds worker_stats" "$T/padded.json" \
	"not any(shared(l) and ws(l) for l in d['lines']) and any(ws(l) for l in d['lines'])"

whatif suggest -i $FS --suggest worker_stats
check "--suggest worker_stats: a layout whose prediction has no false sharing" "$T/suggest.json" \
	"d['suggest']['needed'] and d['prediction']['false_sharing'] == 0 and d['prediction']['true_sharing'] == 0 and ch('stops')"
check "--suggest worker_stats: ops and errors in different groups" "$T/suggest.json" \
	"len({m['group'] for t in d['types'][:1] for m in t['members'] if m['name'] in ('ops', 'errors')}) == 2"
"$H" whatif -i $FS --buildid-dir $REC --suggest worker_stats >"$T/suggest.txt" 2>&1
grep -q '__attribute__((aligned(64)))' "$T/suggest.txt" && grep -q 'no false sharing predicted' "$T/suggest.txt" &&
	ok "--suggest prints the struct with the alignment to add and the prediction" ||
	nok "--suggest text" "$(head -20 "$T/suggest.txt")"
numbers "$T/suggest.json"

whatif pad -i $FS --pad worker_stats.errors=56
check "--pad worker_stats.errors=56: no sharing predicted" "$T/pad.json" \
	"d['prediction']['false_sharing'] == 0 and d['prediction']['true_sharing'] == 0 and ch('stops') and d['after']['contention'] == 0"
numbers "$T/pad.json"

whatif order -i $FS --order worker_stats=flags,errors,ops
check "--order that keeps the fields on one line: still false sharing" "$T/order.json" \
	"d['prediction']['false_sharing'] == 1 and ch('stays')"

whatif align -i $FS --align worker_stats.errors=64
check "--align worker_stats.errors=64: no sharing predicted" "$T/align.json" \
	"d['prediction']['false_sharing'] == 0 and ch('stops')"

# The xfs_imap-like change: A has no sharing; replayed through B's layout, the lookup
# counter joins the written line; B's own recording shows that false sharing. The
# committed A has 83 samples on i_lookups, B 2 threads on 2 CPUs with conflicts.
whatif xfs -i $REC/xfs_like.data --layout $RB/xfs_like_variant
check "xfs_like A through B's layout: i_lookups starts sharing i_writes' line" "$T/xfs.json" \
	"d['before']['shared_lines'] == 0 and any(c['after'][0]['verdict'] == 'false_sharing' and {'inode_like.i_lookups', 'inode_like.i_writes'} <= names(c['after'][0]) for c in ch('starts'))"
numbers "$T/xfs.json"
"$H" report -i $REC/xfs_like_variant.data --buildid-dir $REC --json >"$T/xfsb.json" 2>/dev/null
check "xfs_like B's own recording agrees: false sharing on i_lookups and i_writes" "$T/xfsb.json" \
	"any(l['verdict'] == 'false_sharing' and {'inode_like.i_lookups', 'inode_like.i_writes'} <= names(l) for l in d['lines'])"

# Bad input: exit 2, one line, the nearest names.
bad() {
	local name=$1 want=$2 pat=$3
	shift 3
	"$H" whatif --buildid-dir $REC "$@" >/dev/null 2>"$T/err"
	local rc=$?
	[ "$rc" = "$want" ] && grep -q -- "$pat" "$T/err" && ok "$name" || nok "$name" "rc=$rc" "$(cat "$T/err")"
}
bad "bad input: unknown type names the nearest" 2 "nearest: worker_stats" \
	-i $FS --pad worker_stat.errors=56
bad "bad input: unknown field names the nearest" 2 "no member 'eror'; nearest: errors" \
	-i $FS --align worker_stats.eror=64
bad "bad input: --suggest of an unknown type" 2 "nearest: worker_stats" \
	-i $FS --suggest workers
bad "bad input: alignment not a power of two" 2 "power of two" \
	-i $FS --align worker_stats.errors=48
bad "bad input: --layout of a missing file" 2 "none" \
	-i $FS --layout "$T/none"
bad "usage: no change given" 1 "give one of" -i $FS
bad "usage: malformed --pad" 1 "TYPE.FIELD=BYTES" -i $FS --pad worker_stats
bad "bad input: --layout of another program is refused" 2 "none of the" \
	-i $FS --layout $RB/true_sharing

# Smoke test of a live recording: whatever samples it got, whatif runs and its document
# is consistent (tests/e2e/invariants.py); which fields it names is left to luck, so it
# is not asserted.
"$H" record -c timer -o "$T/live.data" -- examples/bin/xfs_like 50000000 >/dev/null 2>"$T/live.err" ||
	nok "live xfs_like recording" "$(cat "$T/live.err")"
"$H" whatif -i "$T/live.data" --layout examples/bin/xfs_like_variant --json >"$T/live.json" 2>"$T/err"
rc=$?
out=""
if [ "$rc" = 0 ] && out=$(/usr/bin/python3 tests/e2e/invariants.py whatif "$T/live.json"); then
	ok "live recording smoke: exit 0, a consistent hitmap.whatif/1 ($out)"
else nok "live recording smoke" "rc=$rc" "$out" "$(cat "$T/err")"; fi
