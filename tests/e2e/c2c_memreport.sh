#!/usr/bin/env bash
# perf mem report on hitmap's recordings, with real perf. A PMU recording (the events
# `hitmap record -c pmu -e c2c` opens on Ice Lake, through hitmap's perf.data writer, with
# SYNTHESIZED samples: tests/tools/c2c_synth; this machine has no PMU) is read: perf's
# sample count per event and total load weight equal hitmap script's. A timer recording
# cannot be: perf mem report requires PERF_SAMPLE_DATA_SRC, which the kernel fills only
# for memory events, and hitmap computes a timer sample's data address at report time
# (docs/report.md); the test holds perf to that refusal so a change is noticed.
# Prints "ok NAME" / "not ok NAME".
. "$(dirname "$0")/../lib/tap.sh"
SYNTH=${BUILD:-build}/tests/tools/c2c_synth

if [ ! -x "$SYNTH" ]; then
	nok "c2c_synth is built" "make $SYNTH"
else
	"$SYNTH" "$T/s.data" >/dev/null
	perf mem report -i "$T/s.data" --stdio -n >"$T/m.txt" 2>"$T/m.err"
	rc=$?
	want=$("$H" script -i "$T/s.data" --json | /usr/bin/python3 -c '
import json, sys, collections
s = json.load(sys.stdin)["samples"]
n = collections.Counter(x["event"] for x in s)
w = sum(x["weight"] for x in s if "LOAD" in x["event"])
print(" ".join("%s=%d" % kv for kv in sorted(n.items())), "load_weight=%d" % w)')
	got=$(/usr/bin/python3 - "$T/m.txt" <<'PY'
import re, sys
# Each event's section: "# Samples: 1K of event 'E'", "# Total weight : W", then rows
# "   57.03%   900  180  L3 hit ..." whose second column is the sample count.
n, w, ev = {}, {}, None
for l in open(sys.argv[1]):
    m = re.match(r"# Samples: \S+ +of event '([^']+)'", l)
    if m:
        ev = m.group(1)
        n[ev] = 0
        continue
    m = re.match(r"# Total weight : (\d+)", l)
    if m and ev:
        w[ev] = int(m.group(1))
        continue
    f = l.split()
    if ev and len(f) > 2 and f[0].endswith("%") and f[1].isdigit():
        n[ev] += int(f[1])
load = [w[e] for e in w if "LOAD" in e]
print(" ".join("%s=%d" % kv for kv in sorted(n.items())), "load_weight=%d" % (load[0] if load else -1))
PY
)
	[ "$rc" = 0 ] && [ "$got" = "$want" ] &&
		ok "perf mem report reads hitmap's PMU recording layout: $got" ||
		nok "perf mem report reads hitmap's PMU recording layout" "rc=$rc" "perf:   $got" \
			"hitmap: $want" "$(head -2 "$T/m.err")"
fi

"$H" record -c timer -o "$T/t.data" -- examples/bin/false_sharing 2000000 >/dev/null 2>&1
perf mem report -i "$T/t.data" --stdio >"$T/t.txt" 2>&1
rc=$?	# perf 6.1 exits 0 after this error
grep -q "^Selected --mem-mode but no mem data" "$T/t.txt" &&
	ok "perf mem report refuses a timer recording (no DATA_SRC), as docs/report.md says" ||
	nok "perf mem report refuses a timer recording (no DATA_SRC), as docs/report.md says" \
		"rc=$rc" "$(head -3 "$T/t.txt")"
