#!/usr/bin/env bash
# DWARF as distributions ship it: dwz moves DIEs shared by several files into one
# .gnu_debugaltlink file (Debian's and Fedora's debug packages). Two example builds are
# dwz'd into a common file here; every layout must read as from the original DWARF, and
# a report must name fields through it. Prints "ok NAME" / "not ok NAME".
. "$(dirname "$0")/../lib/tap.sh"
B=examples/bin

if ! command -v dwz >/dev/null; then
	nok "dwz installed" "install it: make deps (Debian package dwz)"
	exit 0
fi
cp $B/false_sharing "$T/a" && cp $B/false_sharing_padded "$T/b"
if ! dwz -m "$T/common.debug" -M "$T/common.debug" "$T/a" "$T/b" 2>"$T/dwz.err" ||
	! readelf -S "$T/a" | grep -q gnu_debugaltlink; then
	nok "dwz made a .gnu_debugaltlink file" "$(cat "$T/dwz.err")"
	exit 0
fi
ok "dwz made a .gnu_debugaltlink file"

for f in false_sharing:a false_sharing_padded:b; do
	orig=$B/${f%%:*} dwzd=$T/${f##*:}
	"$H" layout "$orig" >"$T/orig.txt" 2>&1
	"$H" layout "$dwzd" >"$T/dwz.txt" 2>&1
	if cmp -s "$T/orig.txt" "$T/dwz.txt" && grep -q 'struct worker_stats' "$T/dwz.txt"; then
		ok "${f%%:*} through dwz: every layout as from the original DWARF"
	else
		nok "${f%%:*} through dwz: every layout as from the original DWARF" \
			"$(diff "$T/orig.txt" "$T/dwz.txt" | head -12)"
	fi
done

# A live recording: whatever the samples, no field may read as a hole or unnamed.
"$H" record -c timer -o "$T/a.data" -- "$T/a" 20000000 >/dev/null 2>&1
"$H" report -i "$T/a.data" --json >"$T/a.json" 2>/dev/null
/usr/bin/python3 - "$T/a.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
fields = [f['field'] for l in d['lines'] for f in l['fields'] if f['field'].startswith('worker_stats')]
bad = [f for f in fields if '<' in f or f.endswith('.')]
print(("ok" if not bad else "not ok") + " report through dwz names worker_stats fields, never <hole>")
for f in bad[:5]:
    print("    " + f)
PY
