#!/usr/bin/env bash
# Remakes the committed recordings of tests/data/rec (see README.md there): builds the
# examples into /tmp/hmrec/bin, a folder no checkout has, records each with
# `hitmap record -c timer` (one with perf itself), and copies the binaries into bin/ with
# a build-id cache beside them (.build-id/xx/yyyy/elf), where the tests find them with
# --buildid-dir. Then /tmp/hmrec goes away, so nothing can be found by its recorded path.
#
#   tests/data/rec/make.sh            every recording
#   tests/data/rec/make.sh NAME...    only these (NAME.data), e.g. xfs_like cmp_a3
#
# Afterwards run the tests that read them (report, whatif, compare, symbolize, btf and
# record in tests/e2e): a recording whose samples do not show what a test needs (a
# timer sample lands where it lands) is remade by name until they pass, and then stays.
set -eu
cd "$(dirname "$0")/../../.."
ROOT=$PWD
OUT=$ROOT/tests/data/rec
H=$ROOT/hitmap
W=/tmp/hmrec
BIN=$W/bin
[ -x "$H" ] || { echo "make.sh: build hitmap first (make)" >&2; exit 1; }
command -v pahole >/dev/null || { echo "make.sh: pahole missing: make deps" >&2; exit 1; }
rm -rf "$W"
mkdir -p "$BIN"
ONLY=("$@")
want() { [ ${#ONLY[@]} -eq 0 ] || [[ " ${ONLY[*]} " == *" $1 "* ]]; }

build() {
	# The examples' own flags (examples/Makefile), with source paths made relative so the
	# DWARF does not name this checkout.
	CF="-O2 -g -std=gnu11 -Wall -Wextra -Werror -pthread -fdebug-prefix-map=$ROOT=."
	cc $CF -o "$BIN/false_sharing" examples/false_sharing.c
	cc $CF -DPADDED -o "$BIN/false_sharing_padded" examples/false_sharing.c
	cc $CF -o "$BIN/true_sharing" examples/true_sharing.c
	cc $CF -o "$BIN/read_mostly" examples/read_mostly.c
	cc $CF -o "$BIN/split" examples/split.c
	cc $CF -o "$BIN/xfs_like" examples/xfs_like.c
	cc $CF -DVARIANT -o "$BIN/xfs_like_variant" examples/xfs_like.c
	cc $CF -o "$BIN/objects" examples/objects.c
	# objects with BTF instead of DWARF (btf.sh): pahole -J adds .BTF, then the DWARF goes.
	# Same build-id as objects, so it stays out of the build-id cache: btf.sh makes its own.
	cp "$BIN/objects" "$BIN/objects.tmp"
	pahole -J "$BIN/objects.tmp" >/dev/null
	objcopy --strip-debug "$BIN/objects.tmp" "$BIN/objects.btf"
	rm "$BIN/objects.tmp"
}
# The verdict and fix examples (docs/report.md): built when bin/ lacks them.
build_verdict() {
	CF="-O2 -g -std=gnu11 -Wall -Wextra -Werror -pthread -fdebug-prefix-map=$ROOT=."
	for p in confirm_rotate interleaved array_threads packed; do
		[ -e "$BIN/$p" ] || cc $CF -o "$BIN/$p" "examples/$p.c"
	done
}
# Remaking some: the committed binaries, so the other recordings keep their build-ids.
if [ ${#ONLY[@]} -gt 0 ] && [ -d "$OUT/bin" ]; then
	cp "$OUT"/bin/* "$BIN/"
else
	build
fi
# Examples added since: built when not committed yet (issue 14's naming patterns).
CF="-O2 -g -std=gnu11 -Wall -Wextra -Werror -pthread -fdebug-prefix-map=$ROOT=."
for p in wide_stats enclose_hist rep_reset lib_copy spin_wait; do
	[ -e "$BIN/$p" ] || cc $CF -o "$BIN/$p" "examples/$p.c"
done
# false_sharing as a binary without debug info is built: -O2 alone, no -g (nodebug.sh)
[ -e "$BIN/false_sharing_nodebug" ] ||
	cc -O2 -std=gnu11 -pthread -o "$BIN/false_sharing_nodebug" examples/false_sharing.c
build_verdict

# NAME [-F HZ] -- PROGRAM ARGS...: one timer recording (4000 Hz unless -F). Iterations
# are as few as keep what the tests need, so that the folder stays small (< 3 MB).
rec() {
	local name=$1
	shift
	want "$name" || return 0
	rm -f "$OUT/$name.data"	# else hitmap keeps the old one as NAME.data.old
	"$H" record -c timer -o "$OUT/$name.data" "$@" >/dev/null
}

rec false_sharing -- "$BIN/false_sharing" 200000000
rec false_sharing_padded -- "$BIN/false_sharing_padded" 200000000
rec true_sharing -- "$BIN/true_sharing" 200000000
rec read_mostly -- "$BIN/read_mostly" 150000000
rec split -- "$BIN/split" 100000000
rec xfs_like -- "$BIN/xfs_like" 200000000
rec xfs_like_variant -- "$BIN/xfs_like_variant" 200000000
for m in global heap stack tls; do rec "objects_$m" -- "$BIN/objects" "$m" 60000000; done
rec objects_btf_heap -- "$BIN/objects.btf" heap 60000000
rec wide_stats -- "$BIN/wide_stats" 20000000
rec enclose_hist -- "$BIN/enclose_hist" 200000000
rec rep_reset -- "$BIN/rep_reset" 10000000
rec lib_copy -- "$BIN/lib_copy" 5000000
rec false_sharing_nodebug -- "$BIN/false_sharing_nodebug" 200000000
# verdicts and fixes: the first step of --confirm with rotation (3 shared lines, 6
# ranges), a 4-field interleaved struct, an int array by thread, a packed struct, and a
# program of about 0.2 s at the default rate
rec confirm_rotate_spin -- "$BIN/confirm_rotate" spin 30000000
rec interleaved -- "$BIN/interleaved" 150000000
rec array_threads -- "$BIN/array_threads" 100000000
rec packed -- "$BIN/packed" 100000000
rec short_run -- "$BIN/false_sharing" 50000000
# a contended spinlock: the waiter's pause loop (spin.sh)
rec spin_wait -- "$BIN/spin_wait" 300000
for i in 1 2 3 4 5; do
	rec "cmp_a$i" -- "$BIN/false_sharing" 100000000
	rec "cmp_b$i" -- "$BIN/false_sharing_padded" 100000000
done
# perf's own recording of the same workload (report.sh reads it like ours).
if want perf_false_sharing; then
	rm -f "$OUT/perf_false_sharing.data"
	perf record -q -e cpu-clock -F 4000 \
		--user-regs=ax,bx,cx,dx,si,di,bp,sp,ip,r8,r9,r10,r11,r12,r13,r14,r15 \
		-o "$OUT/perf_false_sharing.data" -- "$BIN/false_sharing" 200000000 >/dev/null 2>&1
fi

# The binaries, and the build-id cache the tests pass as --buildid-dir tests/data/rec.
rm -rf "$OUT/bin" "$OUT/.build-id"
mkdir -p "$OUT/bin"
for f in "$BIN"/*; do
	n=$(basename "$f")
	cp "$f" "$OUT/bin/$n"
	[ "$n" = objects.btf ] && continue
	id=$(readelf -n "$f" | awk '/Build ID/ { print $3 }')
	mkdir -p "$OUT/.build-id/${id:0:2}/${id:2}"
	ln -s "../../../bin/$n" "$OUT/.build-id/${id:0:2}/${id:2}/elf"
done
chmod 644 "$OUT"/*.data
rm -rf "$W"
du -sh "$OUT"
