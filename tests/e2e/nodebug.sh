#!/usr/bin/env bash
# A binary without debug info, on the committed recording of examples/false_sharing.c
# built -O2 without -g (tests/data/rec/false_sharing_nodebug: readelf agrees it has no
# .debug sections): the report says so once, names the variable by its symbol, and gives
# no field advice (no "move stats to its own cache line" as if stats were a field); the
# -g build's recording gets no such warning. Prints "ok NAME" / "not ok NAME".
. "$(dirname "$0")/../lib/tap.sh"
REC=tests/data/rec

if readelf -S $REC/bin/false_sharing_nodebug | grep -q '\.debug_'; then
	nok nodebug_binary_has_no_dwarf "readelf: .debug_* sections"
else
	ok nodebug_binary_has_no_dwarf
fi
"$H" report -i $REC/false_sharing_nodebug.data --buildid-dir $REC --view sharing \
	>"$T/out" 2>"$T/err"
n=$(grep -c 'no debug info in .*false_sharing_nodebug: named by symbol only' "$T/err")
[ "$n" -eq 1 ] && ok nodebug_said_once || nok nodebug_said_once "$n times: $(cat "$T/err")"
if grep -q 'fix: stats+0x0 and +0x8 .*no debug info' "$T/out"; then
	ok nodebug_fix_names_bytes
else
	nok nodebug_fix_names_bytes "$(grep -A2 'fix:' "$T/out")"
fi
if grep -Eq 'move stats|align stats|pad stats' "$T/out"; then
	nok nodebug_no_field_advice "$(grep -A2 'fix:' "$T/out")"
else
	ok nodebug_no_field_advice
fi
"$H" report -i $REC/false_sharing_nodebug.data --buildid-dir $REC --json >"$T/r.json" 2>/dev/null
/usr/bin/python3 - "$T/r.json" <<'PY' && ok nodebug_named_by_symbol || nok nodebug_named_by_symbol
import json, sys
d = json.load(open(sys.argv[1]))
rows = [f for l in d['lines'] for f in l['fields'] if f.get('object') == 'stats']
# the symbol, at its offsets, and no member names (there are none to have)
sys.exit(0 if rows and all(f['field'] == 'stats' for f in rows) and
         {f['offset'] for f in rows} >= {0, 8} else 1)
PY
"$H" report -i $REC/false_sharing.data --buildid-dir $REC >/dev/null 2>"$T/err2"
if grep -q 'no debug info' "$T/err2"; then
	nok nodebug_not_said_with_g "$(cat "$T/err2")"
else
	ok nodebug_not_said_with_g
fi
