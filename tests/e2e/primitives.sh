#!/usr/bin/env bash
# String and copy primitives counted apart (docs/report.md, Samples): on the committed
# recordings (tests/data/rec), lib_copy's copies run in glibc's __memcpy_avx512_unaligned_erms
# and rep_reset's resets are a rep stos; their accesses are the report's
# samples.primitives, named from the objects enclosing them, and a recording of plain
# stores (false_sharing) has none. Counts are the recordings' own, so fixed.
. "$(dirname "$0")/../lib/tap.sh"
REC=$R

check() { # check NAME: the samples object of NAME's report, checked by python
	"$H" report -i "$REC/$1.data" --buildid-dir "$REC" --json >"$T/$1.json" 2>"$T/$1.err" ||
		{ echo "not ok primitives: $1: report failed: $(head -1 "$T/$1.err")"; return; }
	python3 - "$1" "$T/$1.json" <<'PY'
import json, sys
name, path = sys.argv[1], sys.argv[2]
s = json.load(open(path))["samples"]
def ok(what, cond, why=""):
    print(("ok " if cond else "not ok ") + "primitives: %s: %s" % (name, what) +
          ("" if cond else " - " + why + " " + json.dumps(s)))
p, pr = s.get("primitives"), s.get("primitives_resolved")
if name == "false_sharing":
    ok("no string or copy primitive, no key", p is None and pr is None)
    sys.exit(0)
ok("counted apart (%s of %d with an address)" % (p, s["with_addr"]),
   p is not None and 0 < p <= s["with_addr"])
ok("their buffers named from the enclosing objects (%s of %s)" % (pr, p),
   pr is not None and pr == p and pr <= s["resolved"])
PY
}
check lib_copy
check rep_reset
check false_sharing
# The text --stats says the same.
if "$H" report -i "$REC/lib_copy.data" --buildid-dir "$REC" --stats 2>/dev/null |
	grep -q "made by string and copy primitives (memset, memcpy, copy_user, rep movs/stos): [1-9][0-9]*, their buffer named: [1-9]"; then
	echo "ok primitives: --stats counts them"
else
	echo "not ok primitives: --stats counts them"
fi
