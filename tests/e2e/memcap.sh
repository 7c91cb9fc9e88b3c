#!/usr/bin/env bash
# report --max-lines (docs/report.md, Memory): past the limit the least contended lines are
# dropped and counted, the kept ones are exact, and below it nothing changes. On committed
# recordings (tests/data/rec), so every count here is the same on every run. Prints
# "ok NAME" / "not ok NAME".
. "$(dirname "$0")/../lib/tap.sh"

rep() {	# recording, then options
	local f=$1
	shift
	"$H" report -i "$R/$f.data" --buildid-dir "$R" "$@"
}

# objects_global: 25 lines, none contended (one thread), 14 to 1 records each.
rep objects_global --json >"$T/all.json"
rep objects_global --json --max-lines 4 >"$T/four.json"
rep objects_global --json --max-lines 4 --batch 20 >"$T/four_b20.json"
rep objects_global --json --batch 20 >"$T/all_b20.json"
rep objects_global --max-lines 4 >"$T/four.txt"

check "max-lines: the text says how many lines and samples were dropped" \
	grep -q "^21 lines dropped past --max-lines 4, the least contended, with [0-9]* samples" \
	"$T/four.txt"

# kept + dropped = every line; their samples add up to the run's; each kept line is the
# line of the unlimited report, field for field (also when a prune comes every batch)
cat >"$T/same.py" <<'EOF'
import json, sys
full, cut = (json.load(open(p)) for p in sys.argv[1:3])
s = cut["samples"]
assert s["max_lines"] == 4 and len(cut["lines"]) == 4, s
assert s["dropped_lines"] + 4 == len(full["lines"]) == 25, (s, len(full["lines"]))
total = sum(l["records"] for l in full["lines"])
assert s["dropped_samples"] + sum(l["records"] for l in cut["lines"]) == total, s
by_addr = {(l["pid"], l["addr"]): l for l in full["lines"]}
for l in cut["lines"]:
    assert l == by_addr[(l["pid"], l["addr"])], l["addr"]
# one prune, at the end (a single batch): the busiest lines are the ones kept when
# nothing is contended. With a prune per batch a line busy only later can go early.
if len(sys.argv) > 3:
  assert sorted(l["records"] for l in cut["lines"]) == sorted(
      l["records"] for l in full["lines"])[-4:], [l["records"] for l in cut["lines"]]
assert "dropped_lines" not in full["samples"]
EOF
check "max-lines: kept + dropped lines and samples add up; kept lines are exact" \
	python3 "$T/same.py" "$T/all.json" "$T/four.json" busiest
check "max-lines: kept lines exact with a prune after every batch of 20 (lines busy only later go)" \
	python3 "$T/same.py" "$T/all_b20.json" "$T/four_b20.json"

# below the limit: byte-identical to the report without one, text and JSON
rep objects_global --max-lines 25 --json >"$T/25.json"
rep objects_global --max-lines 25 >"$T/25.txt"
rep objects_global >"$T/all.txt"
check "max-lines: at the limit the report is byte-identical (JSON)" cmp "$T/all.json" "$T/25.json"
check "max-lines: at the limit the report is byte-identical (text)" cmp "$T/all.txt" "$T/25.txt"

# xfs_like_variant: a false-sharing line (60 conflicts) and a private one; a limit of one
# keeps the shared line, exactly as the unlimited report has it
rep xfs_like_variant --json >"$T/xv.json"
rep xfs_like_variant --json --max-lines 1 >"$T/xv1.json"
check "max-lines 1: the contended line is the one kept, unchanged" python3 -c '
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert a["lines"][0]["verdict"] == "false_sharing", a["lines"][0]["verdict"]
assert b["lines"] == a["lines"][:1], b["lines"]
assert b["samples"]["dropped_lines"] == 1, b["samples"]' "$T/xv.json" "$T/xv1.json"

"$H" report -i "$R/false_sharing.data" --max-lines 0 >/dev/null 2>"$T/err"
rc=$?
check "max-lines 0 is a usage error naming the flag" \
	bash -c "[ $rc = 1 ] && grep -q -- --max-lines '$T/err'"
