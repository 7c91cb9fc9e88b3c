#!/usr/bin/env bash
# Spin-wait loads as evidence of contention, on the committed recording of
# examples/spin_wait.c (a test-and-test-and-set lock, two threads; tests/data/rec): the
# waiter's loads in its pause loop are marked (`spin`), the lock's line is true sharing
# with that evidence and a fix that is no layout change, and objdump (a second tool) shows
# a pause within the loop after every marked site. Asserted from --json on a fixed
# recording: nothing depends on where a live sample lands. Prints "ok NAME" / "not ok NAME".
. "$(dirname "$0")/../lib/tap.sh"
REC=tests/data/rec

"$H" report -i $REC/spin_wait.data --buildid-dir $REC --json >"$T/r.json" 2>"$T/r.err" ||
	nok "report ran" "$(cat "$T/r.err")"
"$H" report -i $REC/spin_wait.data --buildid-dir $REC --stats >"$T/s.txt" 2>&1

check() {	# NAME PYTHON: d the report, spun the line with the most spinning loads
	/usr/bin/python3 - "$T/r.json" "$2" <<'PY' && ok "$1" || nok "$1" "$(head -c 400 "$T/r.json")"
import json, sys
d = json.load(open(sys.argv[1]))
spun = max(d['lines'], key=lambda l: l.get('spin', 0))
row = max(spun['fields'], key=lambda f: f.get('spin', 0))
sys.exit(0 if eval('(' + sys.argv[2] + ')') else 1)
PY
}
check "the waiter's loads are marked as a spin-wait's" "spun.get('spin', 0) >= 6 and row.get('spin') == spun['spin']"
check "only loads spin (the lock's stores are the holder's)" "row['spin'] <= row['loads']"
check "the lock's line is true sharing, with the spinning as its evidence" \
	"spun['verdict'] == 'true_sharing' and 'pause loop' in spun['evidence'] and
	 spun['confidence'] in ('medium', 'high')"
check "the fix is no layout change" "'no layout removes that' in spun['fix']"
check "no other line has spinning loads" "sum(1 for l in d['lines'] if l.get('spin')) == 1"
grep -q "^loads in a spin-wait loop (a pause loop: waiters on a lock or flag): [1-9]" "$T/s.txt" &&
	ok "--stats counts the spinning loads" || nok "--stats counts the spinning loads" "$(grep -i spin "$T/s.txt")"

# objdump: the spinning site (the row's top site holds exactly its spinning loads; the
# xchg that takes the lock is another site, not marked) has a pause in the 32 bytes after.
/usr/bin/python3 - "$T/r.json" $REC/bin/spin_wait <<'PY' && ok "objdump: a pause follows the spinning site, whose count is the spinning loads" ||
import json, re, subprocess, sys
d = json.load(open(sys.argv[1]))
spun = max(d['lines'], key=lambda l: l.get('spin', 0))
row = max(spun['fields'], key=lambda f: f.get('spin', 0))
# The recording's ips are runtime addresses; the binary is PIE: its text offset is the
# ip's low bits relative to the function's start, found through the symbol table.
nm = subprocess.run(["nm", sys.argv[2]], capture_output=True, text=True).stdout
work = int(next(l.split()[0] for l in nm.splitlines() if l.endswith(" work")), 16)
bad = []
top = max(row['sites'], key=lambda s: s['count'])
if top['count'] != row['spin']:
    sys.exit(1)
for s in [top]:
    ip = int(s['ip'], 16)
    off = work + (ip - int(s.get('func_start', hex(ip)), 16)) if 'func_start' in s else None
    # without func_start, match on the page offset: PIE loads at a page-aligned base
    cand = [a for a in range(work, work + 0x200) if (a & 0xfff) == (ip & 0xfff)]
    at = off if off is not None else (cand[0] if cand else None)
    if at is None:
        bad.append(s['ip']); continue
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "--start-address=%#x" % at,
                          "--stop-address=%#x" % (at + 32), sys.argv[2]],
                         capture_output=True, text=True).stdout
    if not re.search(r"\spause\b", out):
        bad.append(s['ip'])
sys.exit(1 if bad or not row['sites'] else 0)
PY
	nok "objdump: a pause follows the spinning site, whose count is the spinning loads"
