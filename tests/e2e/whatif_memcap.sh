#!/usr/bin/env bash
# whatif --max-lines and compare --max-lines (docs/whatif.md, Memory; docs/hardening.md,
# Bounded memory): past the limit the least contended lines of each side are dropped and
# counted, the kept ones are exact, below it nothing changes; on many distinct lines the
# bound keeps whatif inside a memory limit where one build per side runs out, and running
# out is a clean exit 3. The first part is on committed recordings (tests/data/rec: every
# count is the same on every run); the rest on PMU-like samples over as many distinct
# lines synthesized by build/bench/memgen (data our own tool made: memory, not verdicts).
# Prints "ok NAME" / "not ok NAME".
. "$(dirname "$0")/../lib/tap.sh"

wi() {	# recording, then options
	local f=$1
	shift
	"$H" whatif -i "$R/$f.data" --buildid-dir "$R" "$@"
}

# wide_stats: 5 lines, one of them false sharing (10 conflicts), the rest private.
wi wide_stats --suggest worker_stats --json >"$T/all.json"
wi wide_stats --suggest worker_stats >"$T/all.txt"
wi wide_stats --suggest worker_stats --json --max-lines 1 >"$T/one.json"
wi wide_stats --suggest worker_stats --max-lines 1 >"$T/one.txt"
check "whatif --max-lines 1: the text says how many lines and samples each side dropped" \
	sh -c "grep -q '^before: 4 lines dropped past --max-lines 1, the least contended, with 346 samples$' '$T/one.txt' &&
	       grep -q '^after: 4 lines dropped past --max-lines 1, the least contended, with [0-9]* samples$' '$T/one.txt'"
check "whatif --max-lines 1: the shared line is kept exact, the prediction the same" python3 -c '
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for side in ("before", "after"):
    assert b[side]["nr_lines"] == 1 and b[side]["max_lines"] == 1, b[side]
    assert b[side]["dropped_lines"] + 1 == a[side]["nr_lines"] == 5, (a[side], b[side])
    assert "dropped_lines" not in a[side], a[side]
for k in ("shared_lines", "false_sharing", "contention"):
    assert a["before"][k] == b["before"][k], k
assert a["before"]["shared_lines"] == 1 and a["before"]["contention"] > 0, a["before"]
assert a["prediction"] == b["prediction"] and a["samples"] == b["samples"]
sa = [c for c in a["lines"] if c["change"] == "stops"]
sb = [c for c in b["lines"] if c["change"] == "stops"]
assert len(sa) == len(sb) == 1 and sa[0]["before"] == sb[0]["before"], (sa, sb)' \
	"$T/all.json" "$T/one.json"
"$H" whatif -i - --buildid-dir "$R" --suggest worker_stats --json --max-lines 1 \
	<"$R/wide_stats.data" >"$T/pipe1.json"
check "whatif --max-lines 1 from a pipe (held, replayed from the array): as from the file" \
	python3 -c '
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
a["input"] = b["input"] = ""
assert a == b and b["before"]["dropped_lines"] == 4, b["before"]' "$T/one.json" "$T/pipe1.json"
wi wide_stats --suggest worker_stats --json --max-lines 5 >"$T/five.json"
wi wide_stats --suggest worker_stats --max-lines 5 >"$T/five.txt"
check "whatif --max-lines at the line count: byte-identical (JSON)" cmp "$T/all.json" "$T/five.json"
check "whatif --max-lines at the line count: byte-identical (text)" cmp "$T/all.txt" "$T/five.txt"
wi wide_stats --suggest worker_stats --max-lines 0 >/dev/null 2>"$T/err"
rc=$?
check "whatif --max-lines 0 is a usage error naming the flag" \
	sh -c "[ $rc = 1 ] && grep -q -- --max-lines '$T/err'"

# compare: one run per side is enough for the note (the test itself needs two)
"$H" compare "$R/objects_global.data" -- "$R/objects_global.data" --buildid-dir "$R" \
	--max-lines 4 >"$T/cmp4.txt" 2>&1
"$H" compare "$R/objects_global.data" -- "$R/objects_global.data" --buildid-dir "$R" \
	--max-lines 25 >"$T/cmp25.txt" 2>&1
"$H" compare "$R/objects_global.data" -- "$R/objects_global.data" --buildid-dir "$R" \
	>"$T/cmp.txt" 2>&1
check "compare --max-lines 4: a note per run says 21 lines were dropped" \
	sh -c "[ \$(grep -c 'objects_global.data: 21 of its distinct lines dropped past --max-lines 4, the least contended' '$T/cmp4.txt') = 2 ]"
check "compare --max-lines at the line count: byte-identical" cmp "$T/cmp.txt" "$T/cmp25.txt"

# many distinct lines (memgen: one access per line, no object but one)
if ! [ -x build/bench/memgen ] && ! make --no-print-directory -s build/bench/memgen >/dev/null 2>&1; then
	echo "ok whatif on many lines # skip: build/bench/memgen does not build"
	exit 0
fi
build/bench/memgen "$T/l30k.data" "$PWD/$R/bin/false_sharing" 30000 30000
"$H" whatif -i "$T/l30k.data" --buildid-dir "$R" --suggest worker_stats --json \
	--max-lines 1000 >"$T/l30k.json"
check "30000 lines, --max-lines 1000: each side keeps 1000, kept + dropped lines and samples add up" \
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["samples"]["total"] == 30000, d["samples"]
for side in ("before", "after"):
    s = d[side]
    assert s["nr_lines"] == 1000 and s["dropped_lines"] == 29000, s
    assert s["dropped_samples"] == 29000, s' "$T/l30k.json"

if [ "${HM_SUITE:-normal}" = asan ]; then
	echo "ok whatif under a memory limit # skip: ASan reserves its shadow memory beyond any ulimit -v"
	exit 0
fi
# 200000 lines: one build per side needs about 640 MB resident; with --max-lines 2000 about
# 220 MB. Under a 400 MB address-space limit the first is a clean exit 3 with the figure
# (as the 2M-line run is under 4 GB), the second a full result.
build/bench/memgen "$T/l200k.data" "$PWD/$R/bin/false_sharing" 200000 200000
(ulimit -v 400000; exec "$H" whatif -i "$T/l200k.data" --buildid-dir "$R" --suggest worker_stats \
	--max-lines 300000) >/dev/null 2>"$T/err"
rc=$?
check "200000 lines held whole under ulimit -v 400000: exit 3, one line naming --max-lines" \
	sh -c "[ $rc = 3 ] && [ \$(wc -l <'$T/err') = 1 ] && grep -q 'out of memory at [0-9]* MB resident: .*--max-lines' '$T/err'"
(ulimit -v 400000; exec "$H" whatif -i "$T/l200k.data" --buildid-dir "$R" --suggest worker_stats \
	--max-lines 2000) >"$T/out" 2>"$T/err"
rc=$?
check "200000 lines, --max-lines 2000 under ulimit -v 400000: exit 0, the drops said" \
	sh -c "[ $rc = 0 ] && grep -q '^before: 198000 lines dropped past --max-lines 2000' '$T/out'"
