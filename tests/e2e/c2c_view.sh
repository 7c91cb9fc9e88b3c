#!/usr/bin/env bash
# report --view c2c against real perf c2c report (perf 6.1, run here at test time) on the
# same files: the real Intel recordings in shared/data/perf (no HITM in any: perf and
# hitmap both show no shared line by default; with --show-all every line and its columns),
# and a SYNTHESIZED one (tests/tools/c2c_synth: hand-set data_src with local and remote
# HITM, every load level, stores L1 hit/miss/N/A, peer loads, a line under perf's 0.1%
# limit) under -d tot, lcl, rmt, peer and --show-all. tests/e2e/c2c_compare.py compares
# Global Shared Cache Line Event Information, the cache line table's columns and the
# Pareto rows. Then a timer recording: the HITM/level columns are said to be unavailable,
# once, and are null in JSON. Prints "ok NAME" / "not ok NAME".
. "$(dirname "$0")/../lib/tap.sh"
SYNTH=${BUILD:-build}/tests/tools/c2c_synth
FIX=${HM_FIXTURES:-/work/shared/data/perf}

# compare NAME FILE [OPTIONS]: perf's and hitmap's numbers on FILE agree.
compare() {
	local name=$1 f=$2
	shift 2
	perf c2c report -i "$f" --stdio --no-source "$@" >"$T/p.txt" 2>"$T/p.err"
	local prc=$?
	"$H" report -i "$f" --view c2c --json --force "$@" >"$T/h.json" 2>"$T/h.err"
	local hrc=$?
	if [ "$prc" != 0 ] || [ "$hrc" != 0 ]; then
		nok "$name" "perf rc=$prc: $(head -2 "$T/p.err")" "hitmap rc=$hrc: $(head -2 "$T/h.err")"
	elif /usr/bin/python3 tests/e2e/c2c_compare.py "$T/p.txt" "$T/h.json" >"$T/cmp" 2>&1; then
		ok "$name: $(tail -1 "$T/cmp")"
	else
		nok "$name" "$(head -12 "$T/cmp")"
	fi
}

real=0
for f in "$FIX"/*.data; do
	[ -f "$f" ] || continue
	real=$((real + 1))
	b=$(basename "$f" .data)
	compare "$b: shared lines and Global Shared as perf c2c counts them" "$f"
	compare "$b: --show-all: every line's columns and Pareto rows as perf's" "$f" --show-all
done
[ "$real" -ge 2 ] || nok "real perf recordings in $FIX" "found $real, need at least 2"

if [ ! -x "$SYNTH" ]; then
	nok "c2c_synth is built" "make $SYNTH"
else
	"$SYNTH" "$T/s.data" >/dev/null
	compare "synthesized HITM recording: -d tot (default)" "$T/s.data"
	compare "synthesized HITM recording: -d lcl" "$T/s.data" -d lcl
	compare "synthesized HITM recording: -d rmt (a line at 0.33%)" "$T/s.data" -d rmt
	compare "synthesized HITM recording: -d peer" "$T/s.data" -d peer
	compare "synthesized HITM recording: --show-all" "$T/s.data" --show-all
	# perf's 0.1% limit: the one-HITM line is in the table only with --show-all or -d rmt.
	n=$("$H" report -i "$T/s.data" --view c2c --json | /usr/bin/python3 -c '
import json, sys; print(len(json.load(sys.stdin)["c2c_view"]["cachelines"]))')
	[ "$n" = 1 ] && ok "default: only the line over 0.1% of HITM" ||
		nok "default: only the line over 0.1% of HITM" "lines shown: $n"
	# hitmap's verdict and fix beside perf's columns
	"$H" report -i "$T/s.data" --view c2c >"$T/s.txt" 2>&1
	if grep -q "false_sharing" "$T/s.txt" && grep -q "fix (" "$T/s.txt" &&
		grep -q "Shared Cache Line Distribution Pareto" "$T/s.txt"; then
		ok "text: verdict and fix beside the Pareto rows"
	else
		nok "text: verdict and fix beside the Pareto rows" "$(head -40 "$T/s.txt")"
	fi
	w=$(awk '{ if (length($0) > m) m = length($0) } END { print m }' "$T/s.txt")
	ww=$("$H" report -i "$T/s.data" --view c2c --wide 2>/dev/null |
		awk '{ if (length($0) > m) m = length($0) } END { print m }')
	[ "$w" -le 120 ] && [ "$ww" -gt 120 ] && ok "fits 120 columns ($w), --wide is perf's one row ($ww)" ||
		nok "fits 120 columns, --wide is perf's one row" "default $w, wide $ww"
	# -c: perf's Pareto rows with tid in the key are as many as hitmap's
	perf c2c report -i "$T/s.data" --stdio --no-source -c tid,iaddr 2>/dev/null |
		sed -n '/Distribution Pareto/,$p' | grep -c '^ *[0-9.]*%' >"$T/pn"
	hn=$("$H" report -i "$T/s.data" -c tid,iaddr --json | /usr/bin/python3 -c '
import json, sys; print(sum(len(c["offsets"]) for c in json.load(sys.stdin)["c2c_view"]["cachelines"]))')
	dn=$("$H" report -i "$T/s.data" --view c2c --json | /usr/bin/python3 -c '
import json, sys; print(sum(len(c["offsets"]) for c in json.load(sys.stdin)["c2c_view"]["cachelines"]))')
	[ "$(cat "$T/pn")" = "$hn" ] && [ "$hn" -gt "$dn" ] &&
		ok "-c tid,iaddr: $hn Pareto rows (by iaddr: $dn), as perf's" ||
		nok "-c tid,iaddr: Pareto rows as perf's" "perf $(cat "$T/pn"), hitmap $hn, by iaddr $dn"
fi

# Options as perf c2c takes them.
"$H" report -i "$T/s.data" --stdio -d lcl --show-all -N >"$T/o.txt" 2>&1
rc=$?
[ "$rc" = 0 ] && grep -q "Cachelines sort on *: Local HITMs" "$T/o.txt" &&
	grep -q "^-N: no node columns" "$T/o.txt" && ok "--stdio, -d, --show-all, -N accepted" ||
	nok "--stdio, -d, --show-all, -N accepted" "rc=$rc" "$(head -3 "$T/o.txt")"
for bad in "-d xyz" "-c dso" "--view lines -d tot"; do
	# shellcheck disable=SC2086
	"$H" report -i "$T/s.data" $bad >"$T/b.out" 2>"$T/b.err"
	rc=$?
	[ "$rc" = 1 ] && [ "$(wc -l <"$T/b.err")" = 1 ] && grep -q "^hitmap report: " "$T/b.err" &&
		ok "$bad: one line, exit 1" || nok "$bad: one line, exit 1" "rc=$rc" "$(cat "$T/b.err")"
done

# A timer recording has no data source: said once, not printed as measured zeros.
"$H" record -c timer -o "$T/t.data" -- examples/bin/false_sharing 20000000 >/dev/null 2>&1
"$H" report -i "$T/t.data" --view c2c >"$T/t.txt" 2>/dev/null
"$H" report -i "$T/t.data" --view c2c --json >"$T/t.json" 2>/dev/null
n=$(grep -c "unavailable from a timer recording" "$T/t.txt")
if [ "$n" = 1 ] && ! grep -q "Trace Event Information\|LclHitm" "$T/t.txt" &&
	/usr/bin/python3 -c '
import json, sys
v = json.load(open(sys.argv[1]))["c2c_view"]
assert v["data_src"] is False and v["unavailable"]
assert all(c["hitm_local"] is None and c["ld_l1"] is None for c in v["cachelines"])
assert v["global_shared"]["ld_l1"] is None' "$T/t.json"; then
	ok "timer recording: HITM and level columns unavailable, said once"
else
	nok "timer recording: HITM and level columns unavailable, said once" "said $n times" \
		"$(head -5 "$T/t.txt")"
fi
