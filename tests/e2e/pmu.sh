#!/usr/bin/env bash
# hitmap check end to end: runs, exits 0, one line per collector, JSON contract; on a
# machine without a cpu PMU (this VM) the pmu line says so and points at -c timer.
set -u
cd "$(dirname "$0")/../.."
H=${HITMAP:-./hitmap}
SYS=/sys/bus/event_source/devices
ok() { echo "ok $1"; }
nok() { echo "not ok $1"; shift; [ $# -gt 0 ] && printf '    %s\n' "$@"; }

out=$("$H" check --wide 2>&1)	# one line per check: --wide keeps long details whole
rc=$?
if [ "$rc" -eq 0 ]; then ok "check exits 0"; else nok "check exits 0" "rc=$rc" "$out"; fi

names=$(awk '{print $1}' <<<"$out" | tr '\n' ' ')
if [ "$names" = "pmu timer watch kernel btf vmlinux debuginfod " ]; then
	ok "check prints one line per collector"
else nok "check prints one line per collector" "$out"; fi

if awk '$2 != "yes" && $2 != "no" {bad=1} END {exit bad}' <<<"$out"; then
	ok "check says yes or no on every line"
else nok "check says yes or no on every line" "$out"; fi

# Every "no" names a fix: a flag, a command, a setting or a package to use instead.
if awk '$2 == "no" && !/(use -c|sysctl|run as root|install|set it|DEBUGINFOD_URLS|-e c2c|instead|detach)/ {bad=1} END {exit bad}' <<<"$out"; then
	ok "every no names the fix"
else nok "every no names the fix" "$out"; fi

paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 2)
if [ "$(id -u)" -eq 0 ] || [ "$paranoid" -le 2 ]; then
	if grep -q '^timer  *yes  *cpu-clock + user regs' <<<"$out"; then
		ok "timer yes here"
	else nok "timer yes here" "$out"; fi
else
	echo "ok timer yes here # skip: perf_event_paranoid $paranoid"
fi

if [ ! -e "$SYS/cpu" ] && [ ! -e "$SYS/cpu_core" ] && [ ! -e "$SYS/ibs_op" ] &&
	! ls -d "$SYS"/arm_spe_* "$SYS"/armv8_* >/dev/null 2>&1; then
	line=$(grep '^pmu ' <<<"$out")
	if grep -q '^pmu  *no  *no hardware PMU' <<<"$line" && grep -q -- "-c timer" <<<"$line" &&
		grep -q "has no 'cpu'" <<<"$line"; then
		ok "pmu no here: no cpu PMU in sysfs, use -c timer"
	else nok "pmu no here: no cpu PMU in sysfs, use -c timer" "$line"; fi
else
	if grep -q '^pmu  *\(yes\|no\) ' <<<"$out"; then ok "pmu line on a machine with a PMU"
	else nok "pmu line on a machine with a PMU" "$out"; fi
fi

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$H" check --json >"$T/check.json"
rc=$?
printf '%s\n' "$out" >"$T/check.txt"
verdict=$(/usr/bin/python3 - "$SYS" "$T/check.json" "$T/check.txt" <<'PY' 2>&1
import glob, json, os, sys
sysfs, jpath, tpath = sys.argv[1:4]
d = json.load(open(jpath))
text = open(tpath).read().splitlines()
assert d["schema"] == "hitmap.check/1", d["schema"]
names = [c["name"] for c in d["checks"]]
assert names == ["pmu", "timer", "watch", "kernel", "btf", "vmlinux", "debuginfod"], names
for c, line in zip(d["checks"], text):
    assert isinstance(c["ok"], bool) and c["detail"], c
    assert line.split()[1] == ("yes" if c["ok"] else "no"), (c, line)
p = d["pmu"]
core = [n for n in ("cpu", "cpu_core", "cpu_atom") if os.path.exists(os.path.join(sysfs, n))]
core += glob.glob(os.path.join(sysfs, "armv[89]_*"))
assert p["cpu_pmu"] == bool(core), (p, core)
assert isinstance(p["presets"], list)
assert d["checks"][0]["ok"] == bool(p["presets"]), p
assert isinstance(d["watch_slots"], int)
print("ok")
PY
)
if [ "$rc" -eq 0 ] && [ "$verdict" = ok ]; then ok "check --json is hitmap.check/1 and agrees with the text"
else nok "check --json is hitmap.check/1 and agrees with the text" "rc=$rc" "$verdict"; fi

"$H" check extra >/dev/null 2>&1
rc=$?
if [ "$rc" -eq 1 ]; then ok "check with an argument is a usage error"
else nok "check with an argument is a usage error" "rc=$rc"; fi

if "$H" check --help | grep -q 'hitmap.check/1'; then ok "check --help"
else nok "check --help"; fi
