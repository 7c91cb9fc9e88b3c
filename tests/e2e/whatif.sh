#!/usr/bin/env bash
# hitmap whatif end to end: a recording of the false-sharing example replayed through the
# padded build, a padding edit and the suggested layout predicts the shared line goes
# away, and a real recording of the padded build agrees; the xfs_like pair predicts the
# sharing the variant's own recording shows; bad input. Prints "ok NAME" / "not ok NAME".
set -u
cd "$(dirname "$0")/../.."
H=${HITMAP:-./hitmap}
B=examples/bin
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
ok() { echo "ok $1"; }
nok() { echo "not ok $1"; shift; for l in "$@"; do echo "    $l"; done; }

rec() {	# NAME ITERATIONS: records examples/bin/NAME with the timer into $T/NAME.data
	"$H" record -c timer -o "$T/$1.data" -- $B/$1 "$2" >/dev/null 2>"$T/$1.err" ||
		echo "    record of $1 failed: $(cat "$T/$1.err")"
}

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

# whatif NAME ARGS...: runs whatif --json into $T/NAME.json, reporting a failure.
whatif() {
	local name=$1
	shift
	"$H" whatif "$@" --json >"$T/$name.json" 2>"$T/$name.err" ||
		echo "    whatif $* failed: $(cat "$T/$name.err")"
}

numbers() {	# FILE: the conflicts before and after, for the log
	/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("    %s: %s on shared lines %d -> %d; shared lines %d -> %d" % (d["change"]["text"], d["contention_kind"], d["before"]["contention"], d["after"]["contention"], d["before"]["shared_lines"], d["after"]["shared_lines"]))' "$1" 2>/dev/null
}

rec false_sharing 200000000
whatif layout -i "$T/false_sharing.data" --layout $B/false_sharing_padded
check "--layout padded build: the false-sharing line stops being shared" "$T/layout.json" \
	"d['schema'] == 'hitmap.whatif/1' and any(c['before'][0]['verdict'] == 'false_sharing' and ws(c['before'][0]) and not any(shared(a) for a in c['after']) for c in ch('stops'))"
check "--layout padded build: no false sharing predicted, conflicts drop to 0" "$T/layout.json" \
	"d['prediction']['false_sharing'] == 0 and d['before']['contention'] > 0 and d['after']['contention'] == 0 and not ch('starts')"
check "--layout padded build: errors moves to line 1, the type aligns to 64" "$T/layout.json" \
	"any(t['name'] == 'worker_stats' and t['new_align'] == 64 and any(m['name'] == 'errors' and m['new_offset'] == 64 and m['new_line'] == 1 and m['old_line'] == 0 for m in t['members']) for t in d['types'])"
numbers "$T/layout.json"

rec false_sharing_padded 200000000
"$H" report -i "$T/false_sharing_padded.data" --json >"$T/padded.json" 2>"$T/padded.err"
check "the real padded recording agrees: no shared line holds worker_stats" "$T/padded.json" \
	"not any(shared(l) and ws(l) for l in d['lines']) and any(ws(l) for l in d['lines'])"

whatif suggest -i "$T/false_sharing.data" --suggest worker_stats
check "--suggest worker_stats: a layout whose prediction has no false sharing" "$T/suggest.json" \
	"d['suggest']['needed'] and d['prediction']['false_sharing'] == 0 and d['prediction']['true_sharing'] == 0 and ch('stops')"
check "--suggest worker_stats: ops and errors in different groups" "$T/suggest.json" \
	"len({m['group'] for t in d['types'][:1] for m in t['members'] if m['name'] in ('ops', 'errors')}) == 2"
"$H" whatif -i "$T/false_sharing.data" --suggest worker_stats >"$T/suggest.txt" 2>&1
grep -q '__attribute__((aligned(64)))' "$T/suggest.txt" && grep -q 'no false sharing predicted' "$T/suggest.txt" &&
	ok "--suggest prints the struct with the alignment to add and the prediction" ||
	nok "--suggest text" "$(head -20 "$T/suggest.txt")"
numbers "$T/suggest.json"

whatif pad -i "$T/false_sharing.data" --pad worker_stats.errors=56
check "--pad worker_stats.errors=56: no sharing predicted" "$T/pad.json" \
	"d['prediction']['false_sharing'] == 0 and d['prediction']['true_sharing'] == 0 and ch('stops') and d['after']['contention'] == 0"
numbers "$T/pad.json"

whatif order -i "$T/false_sharing.data" --order worker_stats=flags,errors,ops
check "--order that keeps the fields on one line: still false sharing" "$T/order.json" \
	"d['prediction']['false_sharing'] == 1 and ch('stays')"

whatif align -i "$T/false_sharing.data" --align worker_stats.errors=64
check "--align worker_stats.errors=64: no sharing predicted" "$T/align.json" \
	"d['prediction']['false_sharing'] == 0 and ch('stops')"

# The xfs_imap-like change: A has no sharing; replayed through B's layout, the lookup
# counter joins the written line; B's own recording shows that false sharing.
# Recorded with watchpoints: every access counted, where a timer lands on i_lookups'
# cheap load by luck (0 to 8 of ~470 samples on this VM; docs/decode.md, Skid). Stores
# only on i_writes: main's final read of it would pair with the writer as true sharing.
# Where no debug-register trap fires (exit 3), the timer as before.
for b in xfs_like xfs_like_variant; do
	"$H" record -c watch --watch inode.i_lookups --watch inode.i_writes:w -o "$T/$b.data" -- \
		$B/$b 20000 >/dev/null 2>"$T/$b.err" || rec $b 200000000
done
whatif xfs -i "$T/xfs_like.data" --layout $B/xfs_like_variant
check "xfs_like A through B's layout: i_lookups starts sharing i_writes' line" "$T/xfs.json" \
	"d['before']['shared_lines'] == 0 and any(c['after'][0]['verdict'] == 'false_sharing' and {'inode_like.i_lookups', 'inode_like.i_writes'} <= names(c['after'][0]) for c in ch('starts'))"
numbers "$T/xfs.json"
"$H" report -i "$T/xfs_like_variant.data" --json >"$T/xfsb.json" 2>/dev/null
check "xfs_like B's own recording agrees: false sharing on i_lookups and i_writes" "$T/xfsb.json" \
	"any(l['verdict'] == 'false_sharing' and {'inode_like.i_lookups', 'inode_like.i_writes'} <= names(l) for l in d['lines'])"

# Bad input: exit 2, one line, the nearest names.
bad() {
	local name=$1 want=$2 pat=$3
	shift 3
	"$H" whatif "$@" >/dev/null 2>"$T/err"
	local rc=$?
	[ "$rc" = "$want" ] && grep -q -- "$pat" "$T/err" && ok "$name" || nok "$name" "rc=$rc" "$(cat "$T/err")"
}
bad "bad input: unknown type names the nearest" 2 "nearest: worker_stats" \
	-i "$T/false_sharing.data" --pad worker_stat.errors=56
bad "bad input: unknown field names the nearest" 2 "no member 'eror'; nearest: errors" \
	-i "$T/false_sharing.data" --align worker_stats.eror=64
bad "bad input: --suggest of an unknown type" 2 "nearest: worker_stats" \
	-i "$T/false_sharing.data" --suggest workers
bad "bad input: alignment not a power of two" 2 "power of two" \
	-i "$T/false_sharing.data" --align worker_stats.errors=48
bad "bad input: --layout of a missing file" 2 "none" \
	-i "$T/false_sharing.data" --layout "$T/none"
bad "usage: no change given" 1 "give one of" -i "$T/false_sharing.data"
bad "usage: malformed --pad" 1 "TYPE.FIELD=BYTES" -i "$T/false_sharing.data" --pad worker_stats
bad "bad input: --layout of another program is refused" 2 "none of the" \
	-i "$T/false_sharing.data" --layout $B/true_sharing
