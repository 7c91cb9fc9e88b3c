#!/usr/bin/env bash
# Data symbolization end to end: examples/bin/objects makes one kind of object hot per
# run (global array of structs, heap array through a pointer parameter, stack struct,
# __thread counter); a timer recording of each must name at least 95% of its memory
# samples, and the hot one by the right type.field.
set -u
cd "$(dirname "$0")/../.."
H=${HITMAP:-./hitmap}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

for spec in "global global stock_item.count" "heap heap order.qty" "stack stack totals.sum" \
	"tls tls tls_hits"; do
	set -- $spec
	mode=$1 method=$2 field=$3
	"$H" record -c timer -o "$T/$mode.data" -- examples/bin/objects "$mode" 150000000 \
		>/dev/null 2>"$T/err" || { echo "not ok $mode: record failed"; cat "$T/err"; continue; }
	"$H" report -i "$T/$mode.data" --json >"$T/$mode.json" 2>"$T/err" ||
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
done

# Kernel: a system-wide recording with -k names kernel functions through kallsyms (this
# machine has no vmlinux with DWARF for its kernel, so functions only).
if [ "$(id -u)" = 0 ] && [ -r /proc/kallsyms ]; then
	"$H" record -c timer -k -a -o "$T/k.data" -- sh -c 'for i in 1 2; do find /usr/share -type f >/dev/null; done' \
		>/dev/null 2>"$T/err"
	"$H" report -i "$T/k.data" --stats >"$T/k.txt" 2>&1
	n=$(grep -c '^ *[0-9]*  \[k\] [a-z_]' "$T/k.txt")
	[ "$n" -gt 0 ] && echo "ok kernel functions named through kallsyms ($n in the top list)" ||
		{ echo "not ok kernel functions named through kallsyms"; tail -15 "$T/k.txt"; }
else
	echo "ok kernel functions through kallsyms # skip: needs root and /proc/kallsyms"
fi
