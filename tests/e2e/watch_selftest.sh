#!/usr/bin/env bash
# The watchpoint self-test's tries (docs/hardening.md: this VM's kernel counted 1 trap for
# 16 stores once, where every other run counted 16), through its hook
# HITMAP_SELFTEST_DROP=K (the first K tries count 1 trap): one bad try is tried again and
# said, by record on stderr and by check on its watch line; three bad tries are refused,
# exit 3, one line. Apart from watch.sh so that a stray SIGTRAP (tests/run.sh) costs a
# rerun of these few processes only.
# Prints "ok NAME" / "not ok NAME".
. "$(dirname "$0")/../lib/tap.sh"
P=examples/bin/watch_counts

# Where perf counts no trap (tests/lib/traps.sh), record's self-test must see the same and
# refuse watch in one line that names the fix; the tries above need real traps.
if ! traps; then
	# the command is spawned stopped at exec (its --watch names are looked up in it
	# first) and killed there: it prints nothing, and no file is left
	"$H" record -c watch --watch counters.hits -o "$T/n.data" -- $P 10 0 >"$T/n.out" 2>"$T/n.err"
	rc=$?
	[ $rc = 3 ] && [ "$(wc -l <"$T/n.err")" = 1 ] && grep -q "raised no trap" "$T/n.err" &&
		grep -q "use -c timer" "$T/n.err" && [ ! -s "$T/n.out" ] && [ ! -e "$T/n.data" ] &&
		ok "no traps delivered here (perf counts 0): record -c watch refuses, exit 3, one line naming -c timer; the command never ran" ||
		nok "no traps delivered here (perf counts 0): record -c watch refuses, exit 3, one line" \
			"rc=$rc" "$(cat "$T/n.err")"
	skip "watch_selftest: the self-test's tries (3 checks)"
	exit 0
fi

HITMAP_SELFTEST_DROP=1 "$H" record -c watch --watch counters.hits -o "$T/d1.data" -- $P 10 0 \
	>/dev/null 2>"$T/d1.err"
rc=$?
[ $rc = 0 ] && grep -q "self-test lost traps in 1 try before one counted all 16" "$T/d1.err" &&
	ok "self-test: a try that lost traps is tried again, and record says so" ||
	nok "self-test: a try that lost traps is tried again, and record says so" "rc=$rc" \
		"$(cat "$T/d1.err")"
HITMAP_SELFTEST_DROP=2 "$H" check --wide 2>&1 | grep -q "^watch *yes .*(self-test: 16 stores, 16 traps); an earlier try lost traps" &&
	ok "self-test: check says an earlier try lost traps" ||
	nok "self-test: check says an earlier try lost traps" \
		"$(HITMAP_SELFTEST_DROP=2 "$H" check --wide 2>&1 | grep '^watch')"
HITMAP_SELFTEST_DROP=3 "$H" record -c watch --watch counters.hits -o "$T/d3.data" -- $P 10 0 \
	>/dev/null 2>"$T/d3.err"
rc=$?
[ $rc = 3 ] && [ "$(wc -l <"$T/d3.err")" = 1 ] &&
	grep -q "counted 1 traps for 16 stores (the last of 3 tries, none exact)" "$T/d3.err" &&
	ok "self-test: lost traps in every try: refused, exit 3, one line" ||
	nok "self-test: lost traps in every try: refused, exit 3, one line" "rc=$rc" "$(cat "$T/d3.err")"
