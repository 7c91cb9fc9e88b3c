#!/usr/bin/env bash
# One thread, two or three (--jobs 1 | 2 | 3: the report's tables built on a second
# thread, resolve/handoff.h; with 3 the file also read ahead on a third,
# core/perfdata_ahead.h), and any --batch, give the same output byte for byte: on
# committed recordings, on one grown past the handoff's chunk (8192 accesses) and a
# report batch; every view, the heat maps and their page too. (Watch transfers across a batch's
# edge, on random data: tests/unit/test_lines_merge.c.)
# Prints "ok NAME" / "not ok NAME".
. "$(dirname "$0")/../lib/tap.sh"
GROW=build/bench/perfgrow

"$GROW" $R/false_sharing.data "$T/grown.data" 40000 >/dev/null 2>"$T/grow.err" ||
	nok "grow a recording for the threaded read" "$(cat "$T/grow.err")"
# Three repetitions 10^14 ns apart: a default batch spans more than its packed sort keys
# hold (resolve/order.c hm_order_sort: 2^46 ns), so it is sorted by both fields; --batch 997
# packs them. Same order either way.
"$GROW" $R/false_sharing.data "$T/spread.data" 2631 --span-ns 100000000000000 >/dev/null \
	2>"$T/grow.err" || nok "grow a recording over days" "$(cat "$T/grow.err")"

same() {	# NAME ARGS...: report ARGS with --jobs 1, 2, 3, and --jobs 2 --batch 997
	local name=$1 a b c d
	shift
	a=$("$H" report --buildid-dir $R --jobs 1 "$@" 2>&1; echo "rc=$?")
	b=$("$H" report --buildid-dir $R --jobs 2 "$@" 2>&1; echo "rc=$?")
	c=$("$H" report --buildid-dir $R --jobs 2 --batch 997 "$@" 2>&1; echo "rc=$?")
	d=$("$H" report --buildid-dir $R --jobs 3 "$@" 2>&1; echo "rc=$?")
	if [ "$a" = "$b" ] && [ "$a" = "$c" ] && [ "$a" = "$d" ] && [ "${a%rc=0}" != "$a" ]; then
		ok "$name"
	else
		nok "$name" "$(diff <(echo "$a") <(echo "$b") | head -5)" \
			"$(diff <(echo "$a") <(echo "$c") | head -5)" \
			"$(diff <(echo "$a") <(echo "$d") | head -5)"
	fi
}

for f in "$T/grown" "$T/spread" $R/wide_stats $R/true_sharing $R/objects_heap \
	 $R/confirm_rotate_spin $R/interleaved; do
	n=$(basename "$f")
	same "$n: text, one thread = two = three = small batches" -i "$f.data"
	same "$n: json" -i "$f.data" --json
	same "$n: sharing view" -i "$f.data" --view sharing
	same "$n: c2c view" -i "$f.data" --view c2c
	same "$n: accesses in order" -i "$f.data" --view accesses --json
	same "$n: stats" -i "$f.data" --stats
	# laid out where types load, counted on the tables' thread (analyzer/heatmap.h)
	same "$n: heat map" -i "$f.data" --view heatmap --json
	same "$n: heat map page" -i "$f.data" --html /dev/stdout
done

# The grown recording's conflicts are counted across every edge: 40000 samples are 45
# repetitions of the 877, and the repetitions' seams add conflicts of their own, but
# never fewer than 45 times one repetition's.
"$H" report -i $R/false_sharing.data --buildid-dir $R --json >"$T/one.json" 2>/dev/null
"$H" report -i "$T/grown.data" --buildid-dir $R --json --batch 997 >"$T/grown.json" 2>/dev/null
check "grown: conflicts at least 45 repetitions' worth with --batch 997" /usr/bin/python3 -c '
import json, sys
one = json.load(open(sys.argv[1]))["lines"][0]["conflicts"]
grown = json.load(open(sys.argv[2]))["lines"][0]["conflicts"]
print("one", one, "grown", grown)
sys.exit(0 if one > 0 and grown >= 45 * one else 1)' "$T/one.json" "$T/grown.json"

c1=$("$H" compare $R/cmp_a1.data $R/cmp_a2.data -- $R/cmp_b1.data $R/cmp_b2.data \
	--buildid-dir $R --json --jobs 1 2>&1)
for j in 2 3; do
	c2=$("$H" compare $R/cmp_a1.data $R/cmp_a2.data -- $R/cmp_b1.data $R/cmp_b2.data \
		--buildid-dir $R --json --jobs $j 2>&1)
	[ "$c1" = "$c2" ] && [ -n "$c1" ] && ok "compare: one thread = --jobs $j" ||
		nok "compare: one thread = --jobs $j" "$(diff <(echo "$c1") <(echo "$c2") | head -5)"
done

# Two runs load at once with --jobs 2: an odd number of runs (the last alone), and a run
# that cannot be read (the error and exit code are the first failing run's, as in turn).
c1=$("$H" compare $R/cmp_a1.data $R/cmp_a2.data $R/cmp_a3.data -- $R/cmp_b1.data \
	$R/cmp_b2.data --buildid-dir $R --jobs 1 2>&1)
c2=$("$H" compare $R/cmp_a1.data $R/cmp_a2.data $R/cmp_a3.data -- $R/cmp_b1.data \
	$R/cmp_b2.data --buildid-dir $R --jobs 2 2>&1)
[ "$c1" = "$c2" ] && [ -n "$c1" ] && ok "compare of 5 runs: one thread = --jobs 2" ||
	nok "compare of 5 runs: one thread = --jobs 2" "$(diff <(echo "$c1") <(echo "$c2") | head -5)"
head -c 3000 $R/cmp_b1.data >"$T/cut.data"
for j in 1 2; do
	"$H" compare $R/cmp_a1.data $R/cmp_a2.data -- "$T/cut.data" $R/cmp_b2.data \
		--buildid-dir $R --jobs $j >/dev/null 2>"$T/cut$j.err"
	echo "rc=$?" >>"$T/cut$j.err"
done
cmp -s "$T/cut1.err" "$T/cut2.err" && ! grep -q "rc=0" "$T/cut1.err" &&
	ok "compare with a cut run: --jobs 2 fails as --jobs 1" ||
	nok "compare with a cut run: --jobs 2 fails as --jobs 1" "$(cat "$T/cut1.err" "$T/cut2.err")"
# A run whose last sample is damaged (its register ABI word zeroed: the record is longer
# than its fields) passes the runs' identification, which counts samples by their headers,
# and fails in its load, beside the run loaded with it.
/usr/bin/python3 - $R/cmp_b1.data "$T/badsample.data" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
off, size = struct.unpack('<QQ', d[40:56])
pos, last = off, None
while pos < off + size:
    typ, misc, sz = struct.unpack('<IHH', d[pos:pos + 8])
    if typ == 9:
        last = (pos, sz)
    pos += sz
p, sz = last
q = next(q for q in range(p + 8, p + sz, 8) if struct.unpack('<Q', d[q:q + 8])[0] == 2)
d[q:q + 8] = bytes(8)
open(sys.argv[2], 'wb').write(d)
PY
for j in 1 2; do
	"$H" compare $R/cmp_a1.data $R/cmp_a2.data -- "$T/badsample.data" $R/cmp_b2.data \
		--buildid-dir $R --jobs $j >/dev/null 2>"$T/bad$j.err"
	echo "rc=$?" >>"$T/bad$j.err"
done
cmp -s "$T/bad1.err" "$T/bad2.err" && grep -q "rc=2" "$T/bad1.err" &&
	grep -q "corrupt sample record" "$T/bad1.err" &&
	ok "compare with a run whose load fails: --jobs 2 fails as --jobs 1" ||
	nok "compare with a run whose load fails: --jobs 2 fails as --jobs 1" \
		"$(cat "$T/bad1.err" "$T/bad2.err")"

"$H" report -i $R/false_sharing.data --jobs 4 >/dev/null 2>"$T/j4.err"
rc=$?
[ $rc = 1 ] && grep -q "jobs 4" "$T/j4.err" && ok "--jobs 4: a usage error, exit 1" ||
	nok "--jobs 4: a usage error, exit 1" "rc=$rc $(cat "$T/j4.err")"
