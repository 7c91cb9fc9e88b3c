#!/usr/bin/env bash
# One CLI style across the subcommands: --version, script's default input, one-line
# errors ("hitmap CMD: FLAG: ...") with the documented exit codes, validated numbers,
# plurals, text that fits 120 columns (and --wide that only changes where lines break),
# --html that prints only where it wrote, valid JSON from an empty recording.
# Recordings are live timer recordings of the examples: the assertions hold for any
# sample count (widths, exit codes, wording), never for which lines appear.
# Prints "ok NAME" / "not ok NAME".
set -u
cd "$(dirname "$0")/../.."
H=${HITMAP:-$PWD/hitmap}
case $H in /*) ;; *) H=$PWD/$H ;; esac
B=$PWD/examples/bin
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
ok() { echo "ok $1"; }
nok() { echo "not ok $1"; shift; for l in "$@"; do echo "    $l"; done; }

# err NAME RC PATTERN CMD...: exit RC, nothing on stdout, exactly one line on stderr
# that starts "hitmap SUBCMD: " and matches PATTERN (an extended regex).
err() {
	local name=$1 want=$2 pat=$3 rc
	shift 3
	"$@" >"$T/out" 2>"$T/err"
	rc=$?
	if [ "$rc" -eq "$want" ] && [ ! -s "$T/out" ] && [ "$(wc -l <"$T/err")" -eq 1 ] &&
		grep -qE "^hitmap( [a-z]+)?: " "$T/err" && grep -qE -- "$pat" "$T/err"; then
		ok "$name"
	else
		nok "$name" "rc=$rc (want $want)" "stdout: $(head -c 200 "$T/out")" \
			"stderr: $(head -5 "$T/err")"
	fi
}

# The widest line of a file, tabs counted to the next multiple of 8.
width() { expand -t 8 "$1" | awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }'; }

# -c auto: the timer here, the PMU where there is one
"$H" record -o "$T/fs.data" -- $B/false_sharing 100000000 >/dev/null 2>"$T/rec.err" ||
	echo "    record of false_sharing failed: $(cat "$T/rec.err")"
"$H" record -c timer -o "$T/pad.data" -- $B/false_sharing_padded 100000000 >/dev/null 2>&1 ||
	echo "    record of false_sharing_padded failed"

# --- version ---
v=$("$H" --version 2>&1)
if [ $? -eq 0 ] && [[ "$v" =~ ^hitmap\ [0-9]+\.[0-9]+\.[0-9]+$ ]]; then ok "--version prints 'hitmap X.Y.Z'"
else nok "--version prints 'hitmap X.Y.Z'" "$v"; fi

# --- script reads perf.data by default, as record writes it ---
mkdir -p "$T/cwd"
cp "$T/fs.data" "$T/cwd/perf.data"
(cd "$T/cwd" && "$H" script >"$T/script.out" 2>"$T/script.err")
if [ $? -eq 0 ] && grep -q "^perf.data: " "$T/script.err"; then ok "script reads perf.data by default"
else nok "script reads perf.data by default" "$(head -3 "$T/script.err")"; fi
rm "$T/cwd/perf.data"
(cd "$T/cwd" && err "script without perf.data names perf.data" 2 "perf.data" "$H" script)

# --- one-line errors, exit 1 for usage ---
err "report --top x: one line, exit 1" 1 "^hitmap report: --top x: " "$H" report -i "$T/fs.data" --top x
err "report --top -1 refused" 1 "^hitmap report: --top -1: " "$H" report -i "$T/fs.data" --top -1
err "report --window x: one line, exit 1" 1 "^hitmap report: --window x: " \
	"$H" report -i "$T/fs.data" --window x
err "report --batch 0 refused" 1 "^hitmap report: --batch 0: " "$H" report -i "$T/fs.data" --batch 0
err "whatif --top x: one line, exit 1" 1 "^hitmap whatif: --top x: " \
	"$H" whatif -i "$T/fs.data" --suggest worker_stats --top x
err "whatif --window -5 refused" 1 "^hitmap whatif: --window -5: " \
	"$H" whatif -i "$T/fs.data" --suggest worker_stats --window -5
err "compare --top x: one line, exit 1" 1 "^hitmap compare: --top x: " \
	"$H" compare "$T/fs.data" -- "$T/pad.data" --top x
err "record -F x: one line, exit 1" 1 "^hitmap record: -F x: " "$H" record -F x -o "$T/x.data" -- true
err "record -F 99999999999999999999 (overflow) refused" 1 "^hitmap record: -F " \
	"$H" record -F 99999999999999999999 -o "$T/x.data" -- true
for c in record report script layout diff whatif compare check; do
	err "$c --bogus: one line naming the option, no usage dump" 1 \
		"^hitmap $c: --bogus: unknown option; see 'hitmap $c --help'" "$H" $c --bogus
done
err "report --top without a value: one line" 1 "^hitmap report: --top needs a value" \
	"$H" report -i "$T/fs.data" --top
err "report with a stray argument names it" 1 "^hitmap report: stray: unexpected argument" \
	"$H" report -i "$T/fs.data" stray
err "diff with one file: one line" 1 "^hitmap diff: give two builds" "$H" diff $B/false_sharing
err "unknown command: one line" 1 "^hitmap: frobnicate: unknown command" "$H" frobnicate

# --- -e goes with -c auto: no "-e needs -c pmu" ---
"$H" record -e c2c -o "$T/e.data" -- true >/dev/null 2>"$T/e.err"
rc=$?
if grep -q "needs -c pmu" "$T/e.err"; then nok "-e with -c auto tries the PMU" "$(cat "$T/e.err")"
elif [ $rc -eq 0 ] || { [ $rc -eq 3 ] && [ "$(wc -l <"$T/e.err")" -eq 1 ] &&
	grep -q "^hitmap record: -e c2c: " "$T/e.err"; }; then ok "-e with -c auto tries the PMU"
else nok "-e with -c auto tries the PMU" "rc=$rc" "$(cat "$T/e.err")"; fi
err "-e with -c timer: one line, exit 1" 1 "^hitmap record: -e c2c: .*-c pmu" \
	"$H" record -c timer -e c2c -o "$T/x.data" -- true

# --- -c auto does not advise the timer it just used ---
if grep -q "used -c timer" "$T/rec.err"; then
	if grep "used -c timer" "$T/rec.err" | grep -q "use -c timer"; then
		nok "auto: 'used -c timer' without 'use -c timer'" "$(cat "$T/rec.err")"
	else ok "auto: 'used -c timer' without 'use -c timer'"; fi
else ok "auto: 'used -c timer' without 'use -c timer' (the PMU was used here)"; fi

# --- --type: exit 2, naming the nearest recorded type ---
err "--type nosuchtype: exit 2, one line" 2 "^hitmap report: --type nosuchtype: .*nearest: " \
	"$H" report -i "$T/fs.data" --type nosuchtype
err "--type worker_stat: nearest worker_stats" 2 "nearest: worker_stats" \
	"$H" report -i "$T/fs.data" --type worker_stat

# --- plurals ---
"$H" report -i "$T/fs.data" --type worker_stats --json >"$T/ws.json" 2>/dev/null
"$H" report -i "$T/fs.data" --type worker_stats --view lines >"$T/ws.txt" 2>/dev/null
n=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["stats"]["lines"])' "$T/ws.json" 2>/dev/null)
if [ "$n" = 1 ] && grep -q "; 1 line of 64 bytes$" "$T/ws.txt"; then ok "plural: '1 line of 64 bytes'"
elif [ -n "$n" ] && [ "$n" != 1 ] && grep -q "; $n lines of 64 bytes$" "$T/ws.txt"; then
	ok "plural: '$n lines of 64 bytes'"
else nok "plural: '1 line of 64 bytes'" "json lines=$n" "$(head -1 "$T/ws.txt")"; fi
"$H" report -i "$T/fs.data" --view sharing >"$T/sharing.txt" 2>/dev/null
bad=$(grep -E "threads? on [0-9]+ (cpu|CPU)" "$T/sharing.txt" |
	grep -vE "(^|[^0-9])(1 thread|[02-9]+ threads|[0-9]{2,} threads) on (1 CPU|[02-9]+ CPUs|[0-9]{2,} CPUs)" ||
	true)
if [ -z "$bad" ]; then ok "plural: 'N threads on N CPUs' in the sharing view"
else nok "plural: 'N threads on N CPUs' in the sharing view" "$bad"; fi
cat "$T"/*.txt "$T/rec.err" 2>/dev/null | grep -nE "(^|[^0-9.])1 (lines|cpus|CPUs|threads|samples|rows|types)\b" >"$T/plural" || true
if [ ! -s "$T/plural" ]; then ok "plural: no '1 lines', '1 cpus', '1 samples' in the text views"
else nok "plural: no '1 lines', '1 cpus', '1 samples' in the text views" "$(head -3 "$T/plural")"; fi

# Real PMU recordings (perf c2c / perf mem on Intel machines): PMU samples carry no access
# size, which the lines view printed as "+0x8/0".
S=$(git rev-parse --show-toplevel)/../shared/data/perf
[ -d "$S" ] || S=/work/shared/data/perf
for f in "$S"/*c2c*.data "$S"/*c19946.data; do
	[ -f "$f" ] || continue
	"$H" report -i "$f" --top 0 >"$T/pmu.txt" 2>/dev/null
	if [ -s "$T/pmu.txt" ] && ! grep -qE "\+0x[0-9a-f]+/0( |$)" "$T/pmu.txt"; then
		ok "no '+0x../0' offsets: $(basename "$f")"
	else nok "no '+0x../0' offsets: $(basename "$f")" "$(grep -E '/0( |$)' "$T/pmu.txt" | head -2)"; fi
	if [ "$(width "$T/pmu.txt")" -le 120 ]; then ok "fits 120 columns: PMU lines view, $(basename "$f")"
	else nok "fits 120 columns: PMU lines view, $(basename "$f")" "widest: $(width "$T/pmu.txt")"; fi
done

# --- 120 columns, --wide changes only where lines break ---
fits() {	# NAME CMD...: stdout no wider than 120; the --wide run has the same words
	local name=$1 w
	shift
	"$@" >"$T/fit.txt" 2>/dev/null
	"$@" --wide >"$T/wide.txt" 2>/dev/null
	w=$(width "$T/fit.txt")
	if [ ! -s "$T/fit.txt" ]; then nok "fits 120 columns: $name" "no output"
	elif [ "$w" -le 120 ]; then ok "fits 120 columns: $name ($w)"
	else nok "fits 120 columns: $name" "widest line: $w" "$(expand -t 8 "$T/fit.txt" |
		awk 'length($0) > 120' | head -2)"; fi
	if [ "$(tr -s ' \t\n' '\n' <"$T/fit.txt")" = "$(tr -s ' \t\n' '\n' <"$T/wide.txt")" ]; then
		ok "--wide has the same words: $name"
	else nok "--wide has the same words: $name" "$(diff <(tr -s ' \t\n' '\n' <"$T/fit.txt") \
		<(tr -s ' \t\n' '\n' <"$T/wide.txt") | head -4)"; fi
}
for v in lines fields sharing splits; do
	fits "report --view $v" "$H" report -i "$T/fs.data" --view $v --top 0
done
fits "report --view heatmap" "$H" report -i "$T/fs.data" --view heatmap --type worker_stats
fits "whatif --suggest" "$H" whatif -i "$T/fs.data" --suggest worker_stats --top 0
fits "whatif --pad" "$H" whatif -i "$T/fs.data" --pad worker_stats.errors=56 --top 0
fits "whatif --layout" "$H" whatif -i "$T/fs.data" --layout $B/false_sharing_padded --top 0
fits "compare" "$H" compare "$T/fs.data" -- "$T/pad.data" --top 0
fits "diff" "$H" diff $B/false_sharing $B/false_sharing_padded
fits "check" "$H" check
fits "report --stats" "$H" report -i "$T/fs.data" --stats
for f in "$S"/skx-*.data; do	# a kernel-sample hint of 340 columns
	[ -f "$f" ] && fits "report --stats, $(basename "$f")" "$H" report -i "$f" --stats --view splits
done

# --- --html: the page, and one line saying where ---
"$H" report -i "$T/fs.data" --html "$T/heat.html" >"$T/html.out" 2>"$T/html.err"
rc=$?
if [ $rc -eq 0 ] && [ ! -s "$T/html.out" ] && [ "$(wc -l <"$T/html.err")" -eq 1 ] &&
	grep -q "^hitmap report: wrote $T/heat.html" "$T/html.err" &&
	head -c 15 "$T/heat.html" | grep -q "<!DOCTYPE html>"; then
	ok "--html writes the page and prints only where"
else nok "--html writes the page and prints only where" "rc=$rc" "stdout: $(head -3 "$T/html.out")" \
	"stderr: $(cat "$T/html.err")"; fi

# --- JSON: an empty recording, and the heat map inside hitmap.report/1 ---
# perf itself, with a cpu-clock period of one second: `true` runs for about a millisecond,
# so this recording has no sample, whatever the machine.
if perf record -q -e cpu-clock -c 1000000000 -o "$T/empty.data" -- true >/dev/null 2>&1; then
	"$H" report -i "$T/empty.data" --json >"$T/empty.json" 2>"$T/empty.err"
	rc=$?
	if [ $rc -eq 0 ] && python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "hitmap.report/1" and d["samples"]["total"] == 0 and d["lines"] == []
' "$T/empty.json"; then ok "report --json on an empty recording: hitmap.report/1, no lines"
	else nok "report --json on an empty recording: hitmap.report/1, no lines" "rc=$rc" \
		"stdout: $(head -c 300 "$T/empty.json")" "stderr: $(cat "$T/empty.err")"; fi
else
	nok "report --json on an empty recording" "perf record failed: install linux-perf (make deps)"
fi
"$H" report -i "$T/fs.data" --view heatmap --type worker_stats --json >"$T/heat.json" 2>/dev/null
if python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "hitmap.report/1" and "lines" in d
assert d["heatmap"][0]["type"] == "worker_stats" and d["heatmap"][0]["fields"]
' "$T/heat.json"; then ok "--view heatmap --json: hitmap.report/1 with a heatmap array"
else nok "--view heatmap --json: hitmap.report/1 with a heatmap array" "$(head -c 300 "$T/heat.json")"; fi
"$H" diff -t worker_stats $B/false_sharing $B/false_sharing_padded --json >"$T/diff.json"
if python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))["types"][0]
assert t["name"] == "struct worker_stats" and t["type"] == "worker_stats" and t["kind"] == "struct"
' "$T/diff.json"; then ok "diff --json: name kept, bare type and kind added"
else nok "diff --json: name kept, bare type and kind added" "$(head -c 300 "$T/diff.json")"; fi
"$H" whatif -i "$T/fs.data" --suggest worker_stats --json >"$T/wi.json" 2>/dev/null
if python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for ch in d["lines"]:
    for ln in ch["before"] + ch["after"]:
        assert [f["field"] for f in ln["field_rows"]] == ln["fields"]
        assert all("offset" in f and "loads" in f for f in ln["field_rows"])
' "$T/wi.json"; then ok "whatif --json: fields kept as names, field_rows as objects"
else nok "whatif --json: fields kept as names, field_rows as objects" "$(head -c 300 "$T/wi.json")"; fi

# --- README: the first lines are the two commands; no link leaves the repository ---
if [ "$(sed -n 4,5p README.md | awk '{print $1, $2}')" = "$(printf 'make demo\nmake check')" ]; then
	ok "README opens with make demo and make check"
else nok "README opens with make demo and make check" "$(sed -n 1,5p README.md)"; fi
if ! grep -nE '\]\(\.\./|`\.\./' README.md >"$T/links"; then ok "no README link outside the repository"
else nok "no README link outside the repository" "$(head -3 "$T/links")"; fi
