#!/usr/bin/env bash
# Data symbolization end to end: examples/bin/objects makes one kind of object hot per
# run (global array of structs, heap array through a pointer parameter, stack struct,
# __thread counter); a timer recording of each must name at least 95% of its memory
# samples, and the hot one by the right type.field. Asserted on committed recordings
# (tests/data/rec/objects_MODE.data, the binary found by build-id): which instruction a
# timer sample lands on is luck, and so is a share or a hottest field of a live one. A
# live recording of each mode is a smoke test: the report runs and is consistent.
. "$(dirname "$0")/../lib/tap.sh"
REC=tests/data/rec

for spec in "global global stock_item.count" "heap heap order.qty" "stack stack totals.sum" \
	"tls tls tls_hits"; do
	set -- $spec
	mode=$1 method=$2 field=$3
	"$H" report -i $REC/objects_$mode.data --buildid-dir $REC --json >"$T/$mode.json" 2>"$T/err" ||
		{ echo "not ok $mode: report failed"; cat "$T/err"; continue; }
	/usr/bin/python3 - "$T/$mode.json" "$method" "$field" "$mode" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
method, field, mode = sys.argv[2], sys.argv[3], sys.argv[4]
s = d['samples']
by = d['stats']['by_method']
rows = [f for l in d['lines'] for f in l['fields']]
hot = max(rows, key=lambda f: f['records']) if rows else {}
share = s['resolved'] / s['with_addr'] if s['with_addr'] else 0
ok = share >= 0.95 and hot.get('field') == field and by.get(method, 0) >= 0.9 * s['with_addr']
print(('ok' if ok else 'not ok') +
      f" {mode}: {share:.1%} of {s['with_addr']} memory samples named; hottest {hot.get('field')} "
      f"(want {field}), {by.get(method, 0)} by {method}")
PY
	"$H" record -c timer -o "$T/live.data" -- examples/bin/objects "$mode" 20000000 >/dev/null 2>"$T/err" &&
		"$H" report -i "$T/live.data" --json >"$T/live.json" 2>>"$T/err" &&
		out=$(/usr/bin/python3 tests/e2e/invariants.py report "$T/live.json") &&
		echo "ok $mode: live recording smoke, a consistent report ($out)" ||
		{ echo "not ok $mode: live recording smoke"; cat "$T/err"; }
done

# Kernel: a recording with -k names kernel functions through kallsyms (this machine has
# no vmlinux with DWARF for its kernel, so functions only). The kallsyms are this boot's,
# so the recording is live. Only dd is recorded, reading /dev/zero: it spends nearly all
# of its (fixed) CPU time in the kernel, so kernel functions fill the top list by
# construction, however busy the machine is with other processes.
if [ "$(id -u)" = 0 ] && [ -r /proc/kallsyms ]; then
	"$H" record -c timer -k -o "$T/k.data" -- dd if=/dev/zero of=/dev/null bs=64k count=50000 \
		>/dev/null 2>"$T/err"
	"$H" report -i "$T/k.data" --stats >"$T/k.txt" 2>&1
	nk=$(sed -n 's/^kernel samples: \([0-9]*\).*/\1/p' "$T/k.txt")
	n=$(grep -c '^ *[0-9]*  \[k\] [a-z_]' "$T/k.txt")
	[ "${nk:-0}" -gt 0 ] && [ "$n" -gt 0 ] &&
		echo "ok kernel functions named through kallsyms ($n in the top list, of $nk kernel samples)" ||
		{ echo "not ok kernel functions named through kallsyms"; tail -15 "$T/k.txt"; }
else
	echo "ok kernel functions through kallsyms # skip: needs root and /proc/kallsyms"
fi
