#!/usr/bin/env bash
# The fix candidates fixcheck replays before printing, on committed timer recordings
# (tests/data/rec, with the binaries that made them: deterministic):
#   - array_threads: int counts[2], thread i writes counts[i]: the fix is a copy per
#     thread, each on its own line, replayed to 0 shared lines (not "pad before
#     counts[1]": one line holds the whole array);
#   - packed: a packed struct whose two threads' fields share line 1: the fix is to
#     unpack it, replayed to 0;
#   - interleaved: fields written A, B, A, B: aligning one field leaves the line shared
#     (whatif --align, replayed here too), so the printed fix is the grouped layout,
#     replayed to 0.
# Prints "ok NAME" / "not ok NAME".
. "$(dirname "$0")/../lib/tap.sh"

for r in array_threads packed interleaved; do
	"$H" report -i $R/$r.data --buildid-dir $R --json >"$T/$r.json" 2>"$T/$r.err" ||
		echo "not ok report $r: $(cat "$T/$r.err")"
done
"$H" whatif -i $R/interleaved.data --buildid-dir $R --align interleaved.f1=64 --json \
	>"$T/align.json" 2>"$T/align.err" || echo "not ok whatif --align: $(cat "$T/align.err")"
python3 - "$T" <<'PY'
import json, os, re, sys
T = sys.argv[1]
def ok(c, name, *why):
    print(("ok " if c else "not ok ") + name)
    if not c:
        for w in why: print("    " + str(w)[:400])
def top(r):
    return json.load(open(os.path.join(T, r + ".json")))["lines"][0]
def clean(l):
    return (l.get("fix_check") == "replayed" and
            re.search(r"\b[1-9]\d* falsely shared lines? holding .* before, 0 after$", l.get("fix_replay") or ""))
l = top("array_threads")
ok(l["verdict"] == "false_sharing" and l["object"] == "counts", "array_threads: counts is falsely shared", l["verdict"], l["object"])
ok(clean(l) and l["fix"].startswith("give each thread its own copy of counts") and "padding before" not in l["fix"],
   "array_threads: the fix is a copy per thread, replayed to 0 shared lines", l.get("fix"), l.get("fix_replay"))
l = top("packed")
ok(l["verdict"] == "false_sharing" and {p["a"] for p in l["pairs"][:1]} | {p["b"] for p in l["pairs"][:1]} ==
   {"wire_record.head", "wire_record.tail"}, "packed: head and tail share a line", l["verdict"], l.get("pairs", [])[:1])
ok(clean(l) and l["fix"].startswith("unpack wire_record"), "packed: the fix is unpack, replayed to 0", l.get("fix"), l.get("fix_replay"))
l = top("interleaved")
w = json.load(open(os.path.join(T, "align.json")))
ok(w["after"]["false_sharing"] >= 1, "interleaved: aligning f1 alone leaves a line falsely shared (whatif)", w["after"])
ok(l["verdict"] == "false_sharing" and clean(l) and l["fix"].startswith("lay interleaved out as f0, f2, f1, f3"),
   "interleaved: the fix groups each thread's fields, replayed to 0", l.get("fix"), l.get("fix_replay"))
PY
