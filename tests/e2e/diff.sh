#!/usr/bin/env bash
# hitmap diff on pairs of example builds, asserted from --json; --fail-on exit codes;
# bad input. Prints "ok NAME" / "not ok NAME" per case.
. "$(dirname "$0")/../lib/tap.sh"
B=examples/bin

# check NAME PYTHON-EXPR ARGS...: runs hitmap diff --json ARGS, evaluates EXPR with the
# document as d and a helper has(type, kind, member) -> bool.
check() {
	local name=$1 expr=$2
	shift 2
	if ! "$H" diff --json "$@" >"$T/j" 2>"$T/e"; then
		echo "not ok $name"; sed 's/^/    /' "$T/e"; return
	fi
	/usr/bin/python3 - "$T/j" "$expr" <<'PY' && echo "ok $name" || { echo "not ok $name"; head -c 1500 "$T/j" | sed 's/^/    /'; echo; }
import json, sys
d = json.load(open(sys.argv[1]))
types = {t['name']: t for t in d['types']}
def has(t, kind, member=None, other=None):
    return any(f['kind'] == kind and (member is None or f['member'] == member) and
               (other is None or f.get('other') == other)
               for f in types.get(t, {'findings': []})['findings'])
sys.exit(0 if eval(sys.argv[2]) else 1)
PY
}

check "field insertion: size, new member, hole" \
	"has('struct imap','size') and has('struct imap','added','im_pad') and types['struct imap']['new_size']==24" \
	$B/imap $B/imap_variant
check "field insertion: hot field moves onto the writer's line" \
	"has('struct holder','line','lookups') and has('struct holder','shared','lookups','writes')" \
	$B/imap $B/imap_variant
check "transitive: holder embeds the changed imap" \
	"has('struct holder','embeds','m','struct imap')" $B/imap $B/imap_variant
check "transitive through arrays and two levels" \
	"has('struct top','embeds','m','struct mid') and has('struct top','embeds','m.s','struct small')" \
	$B/layout_change $B/layout_change_variant
check "padding fix: fields leave the shared line" \
	"has('struct worker_stats','line','errors') and has('struct worker_stats','unshared','ops','errors') and has('struct worker_stats','hole','ops')" \
	$B/false_sharing $B/false_sharing_padded
check "reorder: members moved, hole gone, size shrinks" \
	"has('struct reorder','moved','b') and has('struct reorder','hole_gone','a') and types['struct reorder']['new_size']==16" \
	$B/layout_change $B/layout_change_variant
check "bitfield change: widened and added" \
	"has('struct flags','retyped','mode') and has('struct flags','added','dirty')" \
	$B/layout_change $B/layout_change_variant
check "globals: hot_counter gains a neighbour on its line" \
	"any(g['var']=='hot_counter' and g['kind']=='gained' and 'writer_flag' in g['neighbours'] for g in d['globals'])" \
	--globals $B/layout_change $B/layout_change_variant
check "sorted by impact" \
	"[t['impact'] for t in d['types']] == sorted([t['impact'] for t in d['types']], reverse=True)" \
	$B/layout_change $B/layout_change_variant
check "a file against itself reports nothing" \
	"d['types']==[] and d['globals']==[] and d['compared']>0" --globals $B/imap $B/imap
check "type missing on one side is listed, not an error" \
	"d['only_old']==['struct reorder'] and d['types']==[]" -t reorder $B/layout_change $B/imap
check "BTF against BTF" "d['types']==[] and d['compared']==1" -t task_struct \
	/sys/kernel/btf/vmlinux /sys/kernel/btf/vmlinux

expect_rc() {	# NAME RC PATTERN CMD...
	local name=$1 want=$2 pat=$3
	shift 3
	"$@" >"$T/o" 2>"$T/e"
	local rc=$?
	if [ "$rc" = "$want" ] && { [ -z "$pat" ] || { [ "$(wc -l <"$T/e")" = 1 ] && grep -q -- "$pat" "$T/e"; }; }; then
		echo "ok $name"
	else
		echo "not ok $name"; echo "    rc=$rc"; sed 's/^/    /' "$T/e"
	fi
}
expect_rc "--fail-on shared exits 4" 4 "" "$H" diff --fail-on shared $B/imap $B/imap_variant
expect_rc "--fail-on straddle exits 0 without straddles" 0 "" \
	"$H" diff --fail-on straddle $B/imap $B/imap_variant
expect_rc "--fail-on size on identical builds exits 0" 0 "" "$H" diff --fail-on size,shared,hole $B/imap $B/imap
expect_rc "--fail-on shared catches a global neighbour" 4 "" \
	"$H" diff --globals --fail-on shared -t flags $B/layout_change $B/layout_change_variant
expect_rc "--md renders a table" 0 "" "$H" diff --md $B/imap $B/imap_variant
grep -q '^| line | `lookups` |' "$T/o" && echo "ok --md has the line row" || echo "not ok --md has the line row"
expect_rc "bad --fail-on word" 1 "use a comma-separated list" "$H" diff --fail-on bogus $B/imap $B/imap
cp $B/imap "$T/arm" && printf '\xb7\x00' | dd of="$T/arm" bs=1 seek=18 conv=notrunc 2>/dev/null
expect_rc "mismatched architectures" 2 "same architecture" "$H" diff $B/imap "$T/arm"
cp $B/imap "$T/stripped" && strip "$T/stripped"
expect_rc "one side without DWARF" 2 "no DWARF" "$H" diff $B/imap "$T/stripped"
expect_rc "unknown type on both sides" 2 "nearest" "$H" diff -t holdr $B/imap $B/imap_variant
expect_rc "missing file" 2 "No such file" "$H" diff $B/imap "$T/none"

# Anonymous members are matched by their contents, not by an empty name: a build against
# itself has no finding (the Debian vmlinux self-diff gave 1,143 before), and a change
# names the anonymous member it moved by its first member.
if [ -r /sys/kernel/btf/vmlinux ]; then
	check "every type of the kernel's BTF against itself: 0 findings" \
		"d['types']==[] and d['compared']>1000" /sys/kernel/btf/vmlinux /sys/kernel/btf/vmlinux
else
	echo "ok every type of the kernel's BTF against itself # skip: no /sys/kernel/btf/vmlinux"
fi
for f in $B/*; do
	check "$(basename "$f") against itself: 0 findings" "d['types']==[]" "$f" "$f"
done
cat >"$T/anon.c" <<'C'
struct anon_u {
	int a;
	union { int b; float bf; };
	long pad1[8];		/* the next union on line 1 */
#ifdef VARIANT
	int added;
#endif
	union { long c; double cd; };
	struct { short d; short e; };
	char tail[40];
} anon_u_var;
C
cc -g -c -o "$T/anon_a.o" "$T/anon.c" && cc -g -c -DVARIANT -o "$T/anon_b.o" "$T/anon.c"
check "two anonymous unions on different lines, against itself: 0 findings" "d['types']==[]" \
	-t anon_u "$T/anon_a.o" "$T/anon_a.o"
check "anonymous unions: the moved one's members are named, the unmoved one's never" \
	"has('struct anon_u', 'added', 'added') and has('struct anon_u', 'moved', 'c') and not any(f['member'] in ('b', 'bf') or '{b' in (f.get('other') or '') for f in types['struct anon_u']['findings'])" \
	-t anon_u "$T/anon_a.o" "$T/anon_b.o"
