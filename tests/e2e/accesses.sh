#!/usr/bin/env bash
# report --view accesses: every access as resolved, in time order (docs/report.md, The
# accesses view), on committed recordings (heap, stack, rep stos and wide accesses split
# by member, watchpoint traps):
#   - perf script (a second tool) counts as many samples as the list has accesses (part 0
#     of each; the recordings' samples are all memory accesses or timer samples);
#   - the list is the report's input: per line row, the accesses to its address are its
#     records, and the row is named after the first of them in time order (what the view
#     is for: which sample named a row);
#   - times never go down; --top N prints the first N and counts them all; --type keeps
#     only that type's accesses; text has one line per access after its header;
#   - --view accesses with --html, or with a c2c option: usage, exit 1, one line.
# Prints "ok NAME" / "not ok NAME".
. "$(dirname "$0")/../lib/tap.sh"

for f in objects_heap objects_stack rep_reset wide_stats confirm_rotate_spin; do
	d=$R/$f.data
	[ -f "$d" ] || { nok "$f: the committed recording is there" "$d"; continue; }
	"$H" report -i $d --buildid-dir $R --view accesses --json >"$T/a.json" 2>"$T/a.err" ||
		{ nok "$f: report --view accesses --json exits 0" "$(cat "$T/a.err")"; continue; }
	"$H" report -i $d --buildid-dir $R --json >"$T/r.json" 2>/dev/null
	perf script -i $d -F ip >"$T/p.txt" 2>/dev/null
	python3 - "$f" "$T/a.json" "$T/r.json" "$T/p.txt" <<'PY'
import json, sys
name, a, r, p = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3])), sys.argv[4]
acc = a["accesses"]
def ok(c, what, *why):
    print(("ok " if c else "not ok ") + name + ": " + what)
    if not c:
        for w in why: print("    " + str(w))
perf_n = sum(1 for l in open(p) if l.strip())
whole = [x for x in acc if x["part"] == 0]
ok(len(whole) == perf_n == r["samples"]["total"] and a["total"] == a["printed"] == len(acc),
   "one access per sample: %d, perf script %d, report %d" % (len(whole), perf_n, r["samples"]["total"]),
   a["total"], a["printed"])
ok(all(x["time"] <= y["time"] for x, y in zip(acc, acc[1:])), "in time order")
rows = bad = 0
for line in r["lines"]:
    base = int(line["addr"], 16)
    for fld in line["fields"]:
        at = [x for x in acc if int(x["addr"], 16) == base + fld["offset"]]
        rows += 1
        first = at[0] if at else None
        if len(at) != fld["records"] or (fld["named"] and (first["object"] != fld["object"] or
                                                           first["obj_base"] != fld["obj_base"])):
            bad += 1
            if bad == 1:
                print("    # row %s+%d: %d accesses, %d records; first %s" %
                      (line["addr"], fld["offset"], len(at), fld["records"], first))
ok(rows > 0 and bad == 0, "each row: its address's accesses are its records, named after "
   "the first (%d rows, %d wrong)" % (rows, bad))
PY
done

d=$R/objects_heap.data
"$H" report -i $d --buildid-dir $R --view accesses --json --top 5 >"$T/t.json" 2>/dev/null
"$H" report -i $d --buildid-dir $R --view accesses --json >"$T/all.json" 2>/dev/null
python3 - "$T/t.json" "$T/all.json" <<'PY' || nok "--top 5: the first 5, all counted"
import json, sys
t, a = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
ok = t["printed"] == 5 and t["accesses"] == a["accesses"][:5] and t["total"] == a["total"] > 5
print(("ok" if ok else "not ok") + " --top 5: the first 5, all counted (%d)" % t["total"])
PY
"$H" report -i $d --buildid-dir $R --view accesses --type order --json >"$T/o.json" 2>/dev/null
python3 - "$T/o.json" "$T/all.json" <<'PY' || nok "--type order keeps its accesses"
import json, sys
o, a = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
want = [x for x in a["accesses"] if x["object"] == "struct order"]
ok = o["accesses"] == want and 0 < len(want) < len(a["accesses"])
print(("ok" if ok else "not ok") + " --type order: exactly the struct order accesses (%d of %d)"
      % (len(o["accesses"]), len(a["accesses"])))
PY
"$H" report -i $d --buildid-dir $R --view accesses >"$T/text" 2>/dev/null
n=$(python3 -c "import json; print(json.load(open('$T/all.json'))['total'])")
[ "$(head -1 "$T/text" | cut -c1-2)" = "# " ] && [ "$(wc -l <"$T/text")" = $((n + 1)) ] &&
	grep -q "heap struct order@0x[0-9a-f]*+[0-9]* order\." "$T/text" &&
	ok "text: a header, then one line per access ($n), naming object@base+offset field" ||
	nok "text: a header, then one line per access" "$(head -3 "$T/text")"
for extra in "--html $T/x.html" "-d rmt"; do
	"$H" report -i $d --view accesses $extra >"$T/u.out" 2>"$T/u.err"
	rc=$?
	[ $rc = 1 ] && [ "$(wc -l <"$T/u.err")" = 1 ] && grep -q "view" "$T/u.err" &&
		[ ! -s "$T/u.out" ] && ok "--view accesses $extra: usage, exit 1, one line" ||
		nok "--view accesses $extra: usage, exit 1, one line" "rc=$rc" "$(cat "$T/u.err")"
done
