#!/usr/bin/env bash
# Heap typing through BTF where DWARF is absent: examples/objects.c's heap mode (a
# malloc'd array of struct order reached through a pointer parameter) built -O2 -g, given
# BTF with pahole -J and stripped of DWARF; its committed timer recording
# (tests/data/rec/objects_btf_heap.data) must name at least 95% of its memory samples
# order.qty, typed through BTF (--stats). The same file without .BTF is the control:
# nothing there may be typed. Kernel samples without a vmlinux must be explained in
# --stats.
. "$(dirname "$0")/../lib/tap.sh"
REC=tests/data/rec

# The committed binary (tests/data/rec/make.sh made it: pahole -J, then objcopy
# --strip-debug) and its recording. Each side gets a build-id cache of its own: the BTF
# build, and the control, the same file without .BTF (same build-id, so the same
# recording reads through it).
BTF=$REC/bin/objects.btf
secs=$(readelf -SW $BTF)
if grep -q '\.BTF ' <<<"$secs" && ! grep -q '\.debug_' <<<"$secs" && grep -q '\.symtab ' <<<"$secs"; then
	echo "ok btf: objects.btf has .BTF and .symtab, no .debug_* sections"
else
	echo "not ok btf: objects.btf sections are wrong:"; grep -E 'BTF|debug|symtab' <<<"$secs"
fi
id=$(readelf -n $BTF | awk '/Build ID/ { print $3 }')
for side in btf nobtf; do mkdir -p "$T/$side/.build-id/${id:0:2}/${id:2}"; done
cp $BTF "$T/btf/.build-id/${id:0:2}/${id:2}/elf"
objcopy --remove-section=.BTF $BTF "$T/nobtf/.build-id/${id:0:2}/${id:2}/elf"

# name, least share named order.qty, least share typed through BTF
check() {
	local name=$1 want=$2 want_btf=$3
	"$H" report -i $REC/objects_btf_heap.data --buildid-dir "$T/$name" --json --stats \
		>"$T/$name.json" 2>"$T/$name.stats" ||
		{ echo "not ok $name: report failed"; cat "$T/$name.stats"; return; }
	/usr/bin/python3 - "$T/$name.json" "$T/$name.stats" "$name" "$want" "$want_btf" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
stats = open(sys.argv[2]).read()
name, want, want_btf = sys.argv[3], float(sys.argv[4]), float(sys.argv[5])
n = d['samples']['with_addr']
rows = [f for l in d['lines'] for f in l['fields']]
named = sum(f['records'] for f in rows if f['field'] == 'order.qty')
m = re.search(r'typed through BTF \(no DWARF\): (\d+)', stats)
btf = int(m.group(1)) if m else 0
share, bshare = (named / n, btf / n) if n else (0, 0)
if want > 0:
    ok = n >= 100 and share >= want and bshare >= want_btf
else:	# the control: nothing may be typed
    ok = n >= 100 and named == 0 and btf == 0
print(('ok' if ok else 'not ok') +
      f" {name}: {named} of {n} memory samples ({share:.1%}) named order.qty, "
      f"{btf} ({bshare:.1%}) typed through BTF")
if not ok:
    print(stats)
PY
}
check btf 0.95 0.90
check nobtf 0 0

# Smoke test of a live recording of the BTF build: the report runs and is consistent.
cp $BTF "$T/objects.btf"
"$H" record -c timer -o "$T/live.data" -- "$T/objects.btf" heap 20000000 >/dev/null 2>"$T/err" &&
	"$H" report -i "$T/live.data" --json >"$T/live.json" 2>>"$T/err" &&
	out=$(/usr/bin/python3 tests/e2e/invariants.py report "$T/live.json") &&
	echo "ok btf: live recording smoke, a consistent report ($out)" ||
	{ echo "not ok btf: live recording smoke"; cat "$T/err"; }

# Kernel samples: typed through the recorded kernel's vmlinux (DWARF or .BTF, or
# /sys/kernel/btf/vmlinux on this kernel), or without one through /proc/kcore's code and
# /sys/kernel/btf/vmlinux; with neither, --stats says why and the fix. Live (the kernel
# is this boot's); dd from /dev/zero and the other CPUs' idle loop give kernel samples
# by construction.
if [ "$(id -u)" = 0 ] && [ -r /proc/kallsyms ]; then
	"$H" record -c timer -k -a -o "$T/k.data" -- dd if=/dev/zero of=/dev/null bs=64k count=50000 \
		>/dev/null 2>"$T/err"
	"$H" report -i "$T/k.data" --stats --wide >"$T/k.txt" 2>&1
	line=$(grep '^kernel samples:' "$T/k.txt")
	if [ -e "/usr/lib/debug/boot/vmlinux-$(uname -r)" ]; then
		grep -q 'data named: [1-9]' <<<"$line" &&
			echo "ok kernel data typed through the vmlinux ($line)" ||
			{ echo "not ok kernel data typed through the vmlinux"; tail -20 "$T/k.txt"; }
	elif head -c 4 /proc/kcore 2>/dev/null | grep -q ELF && [ -r /sys/kernel/btf/vmlinux ]; then
		grep -q 'data named: [1-9]' <<<"$line" &&
			echo "ok kernel data typed through /proc/kcore and BTF ($line)" ||
			{ echo "not ok kernel data typed through /proc/kcore and BTF"; tail -20 "$T/k.txt"; }
	elif [ -n "$line" ] && grep -A1 '^kernel samples:' "$T/k.txt" | grep -q -- '--vmlinux'; then
		echo "ok kernel data: --stats says why they are not typed ($line)"
	else
		echo "not ok kernel data: --stats does not say why they are not typed"
		tail -20 "$T/k.txt"
	fi
else
	echo "ok kernel data explained in --stats # skip: needs root and /proc/kallsyms"
fi
