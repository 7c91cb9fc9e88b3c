#!/usr/bin/env bash
# Verdicts on the must-show examples, from committed timer recordings (deterministic):
#   - interleaved (a 4-field struct, threads A, B, A, B): false sharing between the two
#     threads, both threads' fields in the pairs;
#   - array_threads (int counts[2]): false sharing between counts[0] and counts[1];
#   - short_run (false_sharing for about 0.16 s at the default 4000 Hz): whichever the
#     evidence supports, asserted by construction: a sharing verdict exactly when each
#     side has HM_MIN_RECORDS (6) records and the writer HM_MIN_STORES (3) stores, else
#     too_few_samples with the advice (-F 20000, --confirm).
# Prints "ok NAME" / "not ok NAME".
. "$(dirname "$0")/../lib/tap.sh"
for r in interleaved array_threads short_run; do
	"$H" report -i $R/$r.data --buildid-dir $R --json >"$T/$r.json" 2>"$T/$r.err" ||
		echo "not ok report $r: $(cat "$T/$r.err")"
done
python3 - "$T" <<'PY'
import json, os, sys
T = sys.argv[1]
def ok(c, name, *why):
    print(("ok " if c else "not ok ") + name)
    if not c:
        for w in why: print("    " + str(w)[:400])
def top(r):
    return json.load(open(os.path.join(T, r + ".json")))["lines"][0]
l = top("interleaved")
fields = {p["a"] for p in l["pairs"]} | {p["b"] for p in l["pairs"]}
ok(l["verdict"] == "false_sharing" and len(l["threads"]) == 2 and
   fields == {"interleaved.f0", "interleaved.f1", "interleaved.f2", "interleaved.f3"} and
   all(p["tid_a"] != p["tid_b"] for p in l["pairs"]),
   "interleaved: false sharing, all four fields in pairs of different threads", l["verdict"], sorted(fields))
l = top("array_threads")
p = l["pairs"][0]
ok(l["verdict"] == "false_sharing" and {p["a"], p["b"]} == {"counts[0]", "counts[1]"},
   "array_threads: counts[0] and counts[1] falsely shared", l["verdict"], p)
l = top("short_run")
s = l.get("sides") or {}
enough = (min(s.get("a_records", 0), s.get("b_records", 0)) >= 6 and
          max(s.get("a_writes", 0), s.get("b_writes", 0)) >= 3)
if enough:
    ok(l["verdict"] in ("false_sharing", "true_sharing") and l["confidence"] in ("medium", "high"),
       "short_run (0.16 s): enough samples (%d, %d records), so a verdict: %s" % (s["a_records"], s["b_records"], l["verdict"]),
       l["verdict"], s)
else:
    ok(l["verdict"] == "too_few_samples" and "-F 20000" in (l["advice"] or "") and "--confirm" in (l["advice"] or ""),
       "short_run (0.16 s): too few samples, with the advice", l["verdict"], l.get("advice"))
PY
