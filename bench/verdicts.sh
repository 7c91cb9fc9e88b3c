#!/usr/bin/env bash
# bench/verdicts.sh [HITMAP]: the closing table of issue 15, one block per example with a
# known answer. For each: the committed timer recording (tests/data/rec, deterministic)
# gives the per-field samples of its top line, the verdict, the confidence and the fix
# with its replay; `hitmap record --confirm` of that recording then runs the committed
# binary under watchpoints (real traps, rotated when the pairs need more than four
# registers) and gives the exact per-field counts, the watch verdict and its evidence.
# Shares are each field's part of the line's accesses, among the fields listed. Prints a
# markdown table; exits 0 whatever the numbers, 2 when hitmap is missing.
set -u
cd "$(dirname "$0")/.."
H=${1:-./hitmap}
R=tests/data/rec
[ -x "$H" ] || { echo "bench/verdicts.sh: build hitmap first (make)" >&2; exit 2; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# NAME RECORDING PROGRAM ARGS...: the watch run takes fewer iterations (a trap costs ~9 us)
one() {
	local name=$1 rec=$2
	shift 2
	"$H" report -i $R/$rec.data --buildid-dir $R --json >"$T/$name.timer.json" 2>/dev/null
	"$H" record --confirm $R/$rec.data --buildid-dir $R -o "$T/$name.watch.data" -- "$@" \
		>/dev/null 2>"$T/$name.confirm.err"
	"$H" report -i "$T/$name.watch.data" --json >"$T/$name.watch.json" 2>/dev/null
	python3 - "$T" "$name" "$rec" <<'PY'
import json, os, sys
T, name, rec = sys.argv[1:]
def load(k):
    try: return json.load(open(os.path.join(T, "%s.%s.json" % (name, k))))
    except Exception: return {"lines": []}
tm, wa = load("timer"), load("watch")
tl = tm["lines"][0] if tm["lines"] else {}
shared = [l for l in wa["lines"] if l.get("verdict") not in ("private", "read_only")]
def fields(l):
    out = {}
    for f in l.get("fields", []):
        o = out.setdefault(f["field"], [0, 0])
        o[0] += f["loads"]; o[1] += f["stores"]
    return out
tf = fields(tl)
wf = {}
for l in shared:
    for k, v in fields(l).items():
        o = wf.setdefault(k, [0, 0]); o[0] += v[0]; o[1] += v[1]
names = [k for k in tf if k in wf] or list(tf)
tt = sum(sum(tf[k]) for k in names) or 1
wt = sum(sum(wf.get(k, [0, 0])) for k in names) or 1
print("| **%s** (`%s.data`) | | | |" % (name, rec))
for k in names:
    a, b = tf[k], wf.get(k, [0, 0])
    print("| %s | %d L %d S, %.1f%% | %d L %d S, %.1f%% | |" % (k, a[0], a[1], 100.0 * sum(a) / tt,
          b[0], b[1], 100.0 * sum(b) / wt))
wl = max(shared, key=lambda l: l.get("transfers", 0)) if shared else {}
ev = (wl.get("evidence") or "").split(";")[0]
print("| verdict | %s, %s | %s, %s | %s |" % (tl.get("verdict"), tl.get("confidence"),
      wl.get("verdict"), wl.get("confidence"), ev))
print("| fix | %s | | %s |" % ((tl.get("fix") or "-").replace("|", "/"), tl.get("fix_replay") or "-"))
PY
}

echo "| example / field | timer (committed recording) | watch (record --confirm, exact) | |"
echo "|---|---|---|---|"
one false_sharing false_sharing $R/bin/false_sharing 20000
one interleaved interleaved $R/bin/interleaved 10000
one array_threads array_threads $R/bin/array_threads 20000
one packed packed $R/bin/packed 20000
one "short_run (0.16 s)" short_run $R/bin/false_sharing 20000
one "confirm_rotate (6 ranges)" confirm_rotate_spin $R/bin/confirm_rotate turns 20000
