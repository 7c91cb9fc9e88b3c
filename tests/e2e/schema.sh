#!/usr/bin/env bash
# Every command's --json against its JSON Schema (docs/schema/, draft 2020-12, checked by
# python3-jsonschema through tests/lib/schema_check.py --strict, which also refuses keys a
# schema does not declare and keys that are not snake_case):
#   - report (every --view, --type, --top, --line-size, heat maps), script, whatif (each
#     edit), compare, diff, layout (DWARF and BTF), check, on the committed recordings and
#     builds (tests/data/rec, found by build-id) and on the Intel PMU fixtures
#     (/work/shared/data/perf: real perf mem/c2c recordings of other machines);
#   - an empty recording (perf's own, file and pipe): valid JSON or an error with nothing
#     on stdout, never a partial document;
#   - negative cases: documents made wrong on purpose must fail (exit 1, naming the key),
#     so that this test cannot pass by validating nothing;
#   - the hook (tests/lib/schema_hook.sh): diff.sh and whatif.sh run with it as
#     their hitmap, and every document they print is valid.
# Prints "ok NAME" / "not ok NAME".
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
H=${HITMAP:-./hitmap}
case $H in /*) ;; *) H=$PWD/$H ;; esac
REC=tests/data/rec
RB=$REC/bin
S=$(git rev-parse --show-toplevel 2>/dev/null)/../shared/data/perf
[ -d "$S" ] || S=/work/shared/data/perf
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
ok() { echo "ok $1"; }
nok() { echo "not ok $1"; shift; for l in "$@"; do echo "    $l"; done; }
. tests/lib/json_schema.sh

if ! /usr/bin/python3 -c 'import jsonschema' 2>/dev/null; then
	nok "python3-jsonschema is installed" "run make deps (apt-get install python3-jsonschema)"
	exit 1
fi

# run NAME HITMAP-ARGS...: exit 0 and a document on stdout, validated at the end with all
# the others in one process (tests/lib/schema_check.py --tap): "ok NAME" or "not ok NAME".
n=0
: >"$T/list"
run() {
	local name=$1 rc
	shift
	n=$((n + 1))
	"$H" "$@" >"$T/$n.json" 2>"$T/$n.err"
	rc=$?
	if [ $rc -ne 0 ]; then
		nok "$name" "hitmap $* exited $rc" "$(head -3 "$T/$n.err")"
		return
	fi
	printf '%s\t%s: valid\n' "$T/$n.json" "$name" >>"$T/list"
}

# --- the schemas themselves, and the checker refusing wrong documents ---
for f in docs/schema/*.json; do
	case $(basename "$f") in common.json) continue ;; esac
	c=$(basename "$f" .json)
	grep -q "\"const\": \"hitmap.$c/1\"" "$f" && ok "docs/schema/$c.json pins \"schema\": \"hitmap.$c/1\"" ||
		nok "docs/schema/$c.json pins \"schema\": \"hitmap.$c/1\""
done
for c in report accesses script layout diff whatif compare check; do
	[ -f docs/schema/$c.json ] || nok "docs/schema/$c.json exists (hitmap $c --json)"
done

"$H" report -i $REC/false_sharing.data --buildid-dir $REC --json >"$T/good.json" 2>/dev/null
json_schema_ok "report on false_sharing: valid hitmap.report/1" "$T/good.json"

# bad NAME PATTERN PYTHON: d is the good report; the mutated one must exit 1 (invalid, not
# 2: a checker that cannot run proves nothing) with an error matching PATTERN.
bad() {
	local name=$1 pat=$2 code=$3 rc
	/usr/bin/python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
$code
json.dump(d, open(sys.argv[2], 'w'))
" "$T/good.json" "$T/bad.json" || { nok "$name" "the mutation failed"; return; }
	json_schema_check "$T/bad.json" >"$T/bad.out" 2>&1
	rc=$?
	[ $rc -eq 1 ] && grep -qE -- "$pat" "$T/bad.out" && ok "$name" ||
		nok "$name" "rc=$rc (want 1, matching $pat)" "$(head -3 "$T/bad.out")"
}
bad "refused: a count as a string" "/samples/total: '[0-9]+' is not of type 'integer'" \
	'd["samples"]["total"] = str(d["samples"]["total"])'
bad "refused: an address as a number" "/lines/0/addr: [0-9]+ is not of type 'string'" \
	'd["lines"][0]["addr"] = int(d["lines"][0]["addr"], 16)'
bad "refused: a required key missing" "'verdict' is a required property" \
	'del d["lines"][0]["verdict"]'
bad "refused: an unknown verdict" "/lines/0/verdict: 'falsesharing' is not one of" \
	'd["lines"][0]["verdict"] = "falsesharing"'
bad "refused: fields as names instead of objects" "/lines/0/fields/0: '.*' is not of type 'object'" \
	'd["lines"][0]["fields"] = [f["field"] for f in d["lines"][0]["fields"]]'
bad "refused: another schema major" "/schema: 'hitmap.report/1' was expected" \
	'd["schema"] = "hitmap.report/2"'
bad "refused (--strict): a key the schema does not declare" "'hit_rate' was unexpected" \
	'd["stats"]["hit_rate"] = 1'
/usr/bin/python3 tests/lib/schema_check.py "$T/bad.json" >"$T/bad.out" 2>&1 &&
	ok "the published schema is open: the same extra key passes without --strict" ||
	nok "the published schema is open: the same extra key passes without --strict" "$(head -3 "$T/bad.out")"
bad "refused: a key not in snake_case" "key 'hitCount' is not snake_case" \
	'd["stats"]["hitCount"] = 1'
: >"$T/empty.json"
head -c 100 "$T/good.json" >"$T/trunc.json"
echo '{"schema": "hitmap.nosuch/1"}' >"$T/nosuch.json"
for f in empty trunc nosuch; do
	json_schema_check "$T/$f.json" >/dev/null 2>&1
	[ $? -eq 1 ] && ok "refused: $f document" || nok "refused: $f document"
done

# Every schema, not only report's: each command's document with its most deeply nested
# count turned into a string must fail, at that key (through common.json's shapes too).
mutate_each() {	# NAME FILE
	/usr/bin/python3 - "$2" "$T/mut.json" <<'PY' >"$T/mut.path"
import json, sys
d = json.load(open(sys.argv[1]))
best = []
def walk(x, path):
    items = x.items() if isinstance(x, dict) else enumerate(x) if isinstance(x, list) else []
    for k, v in items:
        p = path + [k]
        if isinstance(v, int) and not isinstance(v, bool) and k != "schema":
            if len(p) > len(best):
                best[:] = p
        else:
            walk(v, p)
walk(d, [])
if best:
    x = d
    for k in best[:-1]:
        x = x[k]
    x[best[-1]] = str(x[best[-1]])
json.dump(d, open(sys.argv[2], "w"))
print("/" + "/".join(map(str, best)) if best else "")
PY
	local p rc
	p=$(cat "$T/mut.path")
	json_schema_check "$T/mut.json" >"$T/mut.out" 2>&1
	rc=$?
	[ -n "$p" ] && [ $rc -eq 1 ] && grep -qF "$p: " "$T/mut.out" && ok "$1: a count as a string at $p is refused" ||
		nok "$1: a count as a string is refused" "rc=$rc path=$p" "$(head -3 "$T/mut.out")"
}

# --- report: committed recordings (timer and perf's own), every view and option ---
for f in $REC/*.data; do
	run "report $(basename "$f")" report -i "$f" --buildid-dir $REC --json
done
FS=$REC/false_sharing.data
for v in lines fields sharing splits heatmap; do
	run "report --view $v" report -i $FS --buildid-dir $REC --view $v --json
done
run "report --view heatmap --type worker_stats --line-size 128" \
	report -i $FS --buildid-dir $REC --view heatmap --type worker_stats --line-size 128 --json
run "report --view heatmap on the split recording (a straddling field)" \
	report -i $REC/split.data --buildid-dir $REC --view heatmap --json
run "report --top 1 --stats --batch 50" report -i $FS --buildid-dir $REC --top 1 --stats --batch 50 --json
run "report --type worker_stats --window 1" report -i $FS --buildid-dir $REC --type worker_stats --window 1 --json
run "report without the binaries (nothing named)" report -i $FS --json
mutate_each "report" "$T/$n.json"
run "report --view c2c (timer: no data source)" report -i $FS --buildid-dir $REC --view c2c --json
run "report --view c2c --show-all -c tid,iaddr" report -i $FS --buildid-dir $REC --view c2c \
	--show-all -c tid,iaddr --json
for f in /work/shared/data/perf/*.data ../shared/data/perf/*.data; do
	[ -f "$f" ] && run "report --view c2c --show-all $(basename "$f") (PMU)" report -i "$f" \
		--force --view c2c --show-all --json
done
SYNTH=${BUILD:-build}/tests/tools/c2c_synth
if [ -x "$SYNTH" ] && "$SYNTH" "$T/c2c_synth.data" >/dev/null 2>&1; then
	run "report --view c2c -d rmt -N on a synthesized HITM recording" report -i \
		"$T/c2c_synth.data" --view c2c -d rmt -N -c tid,pid,iaddr --json
else
	nok "c2c_synth is built" "make $SYNTH"
fi

# --- report --view accesses (its own document, hitmap.accesses/1) ---
for f in $FS $REC/objects_heap.data $REC/confirm_rotate_spin.data; do
	run "report --view accesses $(basename "$f")" report -i "$f" --buildid-dir $REC \
		--view accesses --json
done
run "report --view accesses --top 3 --type pair_stats" report -i $REC/confirm_rotate_spin.data \
	--buildid-dir $REC --view accesses --top 3 --type pair_stats --json
mutate_each "report --view accesses" "$T/$n.json"

# --- script ---
for f in $FS $REC/perf_false_sharing.data $REC/objects_heap.data; do
	run "script $(basename "$f")" script -i "$f" --json
done
run "script --file-order --all" script -i $FS --file-order --all --json
mutate_each "script" "$T/$n.json"

# --- whatif: each kind of change ---
run "whatif --layout" whatif -i $FS --buildid-dir $REC --layout $RB/false_sharing_padded --json
run "whatif --pad" whatif -i $FS --buildid-dir $REC --pad worker_stats.errors=56 --json
run "whatif --order" whatif -i $FS --buildid-dir $REC --order worker_stats=flags,errors,ops --json
run "whatif --align" whatif -i $FS --buildid-dir $REC --align worker_stats.errors=64 --json
run "whatif --suggest" whatif -i $FS --buildid-dir $REC --suggest worker_stats --json
mutate_each "whatif" "$T/$n.json"
run "whatif --layout xfs_like (members moved, lines start)" \
	whatif -i $REC/xfs_like.data --buildid-dir $REC --layout $RB/xfs_like_variant --top 0 --json
run "whatif --max-lines 1 (lines dropped on both sides)" \
	whatif -i $REC/wide_stats.data --buildid-dir $REC --suggest worker_stats --max-lines 1 --json

# --- compare ---
run "compare 5 runs -- 5 runs" compare --buildid-dir $REC $REC/cmp_a?.data -- $REC/cmp_b?.data --json
mutate_each "compare" "$T/$n.json"
run "compare one run each (no test: nulls)" compare --buildid-dir $REC $REC/cmp_a1.data -- $REC/cmp_b1.data --json
run "compare a build against itself" compare --buildid-dir $REC $REC/cmp_a1.data $REC/cmp_a2.data -- \
	$REC/cmp_a3.data $REC/cmp_a4.data --json
run "compare interleaved A -- B -- A (drift)" compare --buildid-dir $REC $REC/cmp_a1.data \
	$REC/cmp_a2.data -- $REC/cmp_b1.data $REC/cmp_b2.data -- $REC/cmp_a3.data $REC/cmp_a4.data --json

# --- diff ---
run "diff -t worker_stats" diff -t worker_stats $RB/false_sharing $RB/false_sharing_padded --json
mutate_each "diff" "$T/$n.json"
run "diff --globals, every type" diff --globals $RB/xfs_like $RB/xfs_like_variant --json
run "diff a build against itself" diff $RB/xfs_like $RB/xfs_like --json
[ -x examples/bin/layout_change ] &&
	run "diff --globals layout_change (bitfields, reorders)" diff --globals --line-size 128 \
		examples/bin/layout_change examples/bin/layout_change_variant --json

# --- layout ---
for b in $RB/false_sharing $RB/xfs_like $RB/objects; do
	run "layout $(basename "$b"), every type" layout "$b" --json
done
run "layout -E --line-size 128" layout $RB/xfs_like -E --line-size 128 --json
mutate_each "layout" "$T/$n.json"
run "layout --btf objects.btf" layout --btf $RB/objects.btf --json
run "layout --sizes" layout --sizes $RB/objects --json
run "layout --sizes -H 1" layout --sizes -H 1 $RB/xfs_like --json
run "layout --reorganize worker_stats" layout --reorganize worker_stats $RB/false_sharing --json
run "layout --reorganize with -i (line aware)" layout --reorganize worker_stats $RB/false_sharing \
	-i $FS --buildid-dir $REC --json
[ -r /sys/kernel/btf/vmlinux ] && run "layout --sizes, no FILE (the kernel's BTF)" layout --sizes --json &&
	run "layout --reorganize task_struct, no FILE" layout --reorganize task_struct --json
[ -x examples/bin/typedef_args ] && run "layout of a typedef'd unnamed struct" layout examples/bin/typedef_args -t lreg_args --json
[ -r /sys/kernel/btf/vmlinux ] && run "layout --btf (the kernel) -t task_struct -E" layout --btf -t task_struct -E --json

# Names from hostile files (the fuzzers' saved BTF inputs hold bytes that are not UTF-8)
# must still give UTF-8 JSON: core/json.c writes U+FFFD for each broken byte.
for f in tests/data/fuzz-regress/layout_btf-print-blowup tests/data/fuzz-regress/layout_btf-align-blowup; do
	[ -f "$f" ] && run "layout --btf -E on $(basename "$f") (names not UTF-8)" layout --btf "$f" --json -E
done
printf '{"schema": "hitmap.check/1", "kernel_release": "\xff"}' >"$T/latin1.json"
json_schema_check "$T/latin1.json" >"$T/latin1.out" 2>&1
[ $? -eq 1 ] && grep -q "not UTF-8" "$T/latin1.out" && ok "refused: a document that is not UTF-8" ||
	nok "refused: a document that is not UTF-8" "$(cat "$T/latin1.out")"

# --- check ---
run "check" check --json
mutate_each "check" "$T/$n.json"

# --- the Intel PMU fixtures: real perf mem / c2c recordings ---
for f in "$S"/*.data; do
	[ -f "$f" ] || continue
	run "report PMU fixture $(basename "$f")" report -i "$f" --force --json
	run "script PMU fixture $(basename "$f")" script -i "$f" --json
done
[ -f "$T/$((n - 1)).json" ] && mutate_each "report (a PMU fixture)" "$T/$((n - 1)).json"

# --- an empty recording: perf's own, with a cpu-clock period of one second (true runs
# for about a millisecond, so no sample whatever the machine) ---
# empty NAME ARGS...: exit 0 and a valid document, or an error and nothing on stdout.
empty() {
	local name=$1 rc
	shift
	"$H" "$@" >"$T/e.json" 2>"$T/e.err"
	rc=$?
	if [ $rc -eq 0 ]; then
		json_schema_ok "$name: exit 0, valid" "$T/e.json"
	elif [ ! -s "$T/e.json" ] && [ "$(wc -l <"$T/e.err")" -eq 1 ]; then
		ok "$name: exit $rc, one line on stderr, nothing on stdout ($(cut -c1-80 "$T/e.err"))"
	else
		nok "$name" "rc=$rc" "stdout: $(head -c 200 "$T/e.json")" "stderr: $(head -3 "$T/e.err")"
	fi
}
if perf record -q -e cpu-clock -c 1000000000 -o "$T/empty.data" -- true >/dev/null 2>&1 &&
	perf record -q -e cpu-clock -c 1000000000 -o - -- true 2>/dev/null >"$T/empty.pipe"; then
	run "report on an empty recording" report -i "$T/empty.data" --json
	/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["samples"]["total"] == 0 and d["lines"] == [] and d["warnings"] == []' \
		"$T/$n.json" && ok "report on an empty recording: total 0, lines [], warnings []" ||
		nok "report on an empty recording: total 0, lines []" "$(head -c 300 "$T/$n.json")"
	for v in fields sharing splits; do
		run "report --view $v on an empty recording" report -i "$T/empty.data" --view $v --json
	done
	run "script on an empty recording" script -i "$T/empty.data" --json
	run "report on an empty pipe recording (-i -)" report -i - --json <"$T/empty.pipe"
	run "script on an empty pipe recording (-i -)" script -i - --json <"$T/empty.pipe"
	grep -q '"mode":"pipe"' "$T/$n.json" && ok "script on a pipe says mode pipe" ||
		nok "script on a pipe says mode pipe" "$(head -c 200 "$T/$n.json")"
	empty "report --view heatmap on an empty recording" report -i "$T/empty.data" --view heatmap --json
	empty "whatif on an empty recording" whatif -i "$T/empty.data" --layout $RB/false_sharing_padded --json
	empty "compare of empty recordings" compare "$T/empty.data" -- "$T/empty.data" --json
else
	nok "an empty recording" "perf record failed: install linux-perf (make deps)"
fi

# --- every document above, in one process: one result per document, or a failure ---
/usr/bin/python3 "$HM_SCHEMA_CHECK" --strict --tap "$T/list" >"$T/tap.out" 2>&1
rc=$?
cat "$T/tap.out"
got=$(grep -cE '^(not )?ok ' "$T/tap.out")
[ $rc -le 1 ] && [ "$got" -eq "$(wc -l <"$T/list")" ] ||
	nok "the checker judged every document" "rc=$rc, $got results for $(wc -l <"$T/list") documents"

# --- the hook: other e2e tests' --json, kept as they run, then validated ---
# Their own assertions are theirs (run.sh runs them); here only the documents count.
for t in diff whatif; do
	mkdir "$T/hook_$t"
	: >"$T/hook_$t/list"
	HITMAP=$ROOT/tests/lib/schema_hook.sh HM_HOOK_HITMAP=$H HM_SCHEMA_KEEP=$T/hook_$t \
		bash tests/e2e/$t.sh >/dev/null 2>&1
	/usr/bin/python3 "$HM_SCHEMA_CHECK" --strict --tap "$T/hook_$t/list" >"$T/hook.out" 2>&1
	v=$(grep -c '^ok ' "$T/hook.out")
	if [ "$v" -gt 0 ] && ! grep -q '^not ok ' "$T/hook.out"; then
		ok "hook: the $v --json documents of tests/e2e/$t.sh are valid"
	else
		nok "hook: the --json documents of tests/e2e/$t.sh are valid ($v valid)" \
			"$(grep -v '^ok ' "$T/hook.out" | head -20)"
	fi
done
