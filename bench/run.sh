#!/usr/bin/env bash
# make bench: wall time and peak RSS of `hitmap layout` against pahole on a large DWARF
# file (a Debian kernel vmlinux when there is one), a kernel module and kernel BTF, then
# a peer check of ~30 kernel types; then bench/diff.sh, record.sh and symbolize.sh. See
# bench/README.md.
#   usage: bench/run.sh [HITMAP] [--install] [--install-rt]
#   HM_BENCH_INSTALL=1  same as --install: apt-get the newest 6.1 cloud-amd64 -dbg kernel
#                       (and, for diff.sh, 6.1.0-47 as the old one)
#   HM_BENCH_FILE=PATH  the DWARF file to use instead of searching for one
#   HM_BENCH_RUNS=N     keep the fastest of N runs per case (default 1)
# Exits 0 whatever the numbers say; 2 only when a tool it needs is missing.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
HITMAP=./hitmap
INSTALL=${HM_BENCH_INSTALL:-0}
for a in "$@"; do
	case $a in
	--install) INSTALL=1 ;;
	--install-rt) export HM_BENCH_INSTALL_RT=1 ;;
	-h | --help) sed -n '2,11s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) HITMAP=$a ;;
	esac
done
RUNS=${HM_BENCH_RUNS:-1}
CACHE=${TMPDIR:-/tmp}/hitmap-bench
ABSENT=hm_bench_no_such_type
PEER_TYPES="task_struct inode page sk_buff file dentry super_block mm_struct vm_area_struct
	net_device sock socket address_space file_operations cred signal_struct files_struct
	request_queue bio block_device device kobject rq cfs_rq sched_entity tcp_sock
	timer_list hrtimer work_struct folio kmem_cache"	# kmem_cache last: see step 5
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

die() { echo "bench: $*" >&2; exit 2; }
# Steps 6 to 8 end every run that gets past the tool checks: `hitmap diff` on two
# kernels, the overhead of `hitmap record`, then symbolization throughput. Exits 2 when
# any of them lacked a tool.
more_benches() {
	local rc=0
	echo; HM_BENCH_INSTALL=$INSTALL "$ROOT/bench/diff.sh" "$HITMAP" || rc=$?
	echo; "$ROOT/bench/record.sh" "$HITMAP" || rc=$?
	echo; "$ROOT/bench/alloc.sh" "$HITMAP" || rc=$?
	echo; "$ROOT/bench/symbolize.sh" "$HITMAP" || rc=$?
	echo; "$ROOT/bench/report.sh" "$HITMAP" || rc=$?
	echo; "$ROOT/bench/lab.sh" "$HITMAP" || rc=$?
	exit $((rc == 2 ? 2 : 0))
}
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else return 1; fi; }
apt_install() { as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null; }

[ -x "$HITMAP" ] || die "$HITMAP: not built; run make first"
if [ ! -x /usr/bin/time ]; then
	echo "bench: installing GNU time for peak-RSS figures"
	apt_install time || die "/usr/bin/time missing: apt-get install time"
fi
for t in pahole readelf awk python3; do
	command -v $t >/dev/null || die "$t missing: run make deps (pahole is in dwarves, readelf in binutils)"
done

# --- 1. the DWARF file ---------------------------------------------------------------
newest_vmlinux() { ls -1 /usr/lib/debug/boot/vmlinux-* 2>/dev/null | sort -V | tail -1; }
FILE=${HM_BENCH_FILE:-$(newest_vmlinux)}
if [ -z "$FILE" ] && [ "$INSTALL" = 1 ]; then
	as_root apt-get update -qq || die "apt-get update failed (needs root)"
	pkg=$(apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-cloud-amd64-dbg$' |
		cut -d' ' -f1 | sort -V | tail -1)
	[ -n "$pkg" ] || die "no linux-image-6.1.0-*-cloud-amd64-dbg in the apt sources"
	echo "bench: installing $pkg (~280 MB download, ~1.8 GB unpacked)"
	apt_install "$pkg" || die "apt-get install $pkg failed"
	FILE=$(newest_vmlinux)
fi
if [ -z "$FILE" ]; then
	FILE=$(find /usr/lib/debug -type f -size +1M -printf '%s %p\n' 2>/dev/null |
		sort -n | tail -1 | cut -d' ' -f2-)
	[ -n "$FILE" ] || { echo "bench: no DWARF file under /usr/lib/debug; rerun with --install"; more_benches; }
	echo "bench: no Debian vmlinux -dbg installed (--install fetches one);" \
		"using the largest debug file instead"
fi
echo "bench: DWARF file $FILE ($(($(stat -c %s "$FILE") / 1048576)) MB)"
cat "$FILE" >/dev/null	# warm the page cache so the first case is not charged for the disk

# --- 2. the types: first defined in the first, middle and last unit that defines any ----
cache="$CACHE/$(basename "$FILE")-$(stat -c '%s-%Y' "$FILE").types"
if [ ! -s "$cache" ]; then
	echo "bench: picking types from the DWARF units (once, ~20 s; cached in $cache)"
	mkdir -p "$CACHE"
	# Top-level DIEs only; a struct counts in the first unit that defines (not declares) it.
	readelf --debug-dump=info --dwarf-depth=2 "$FILE" 2>/dev/null | awk '
	function commit() {
		if (st && nm != "" && !decl && !(nm in seen)) { seen[nm] = 1; n++; cu_of[n] = cu; name[n] = nm }
		st = 0
	}
	/^  Compilation Unit @/ { commit(); cu++; next }
	/^ <1>/ { commit(); st = /DW_TAG_structure_type/; nm = ""; decl = 0; next }
	/^ <0>/ { commit(); next }
	st && /DW_AT_name/ { nm = $0; sub(/.*: /, "", nm) }
	st && /DW_AT_declaration/ { decl = 1 }
	END {
		commit()
		if (!n) exit 1
		for (i = 1; i <= n; i++) {
			d = cu_of[i] - cu / 2; if (d < 0) d = -d
			if (!mid || d < best) { best = d; mid = i }
		}
		printf "first %s %d\nmiddle %s %d\nlast %s %d\nunits %d\n",
			name[1], cu_of[1], name[mid], cu_of[mid], name[n], cu_of[n], cu
	}' >"$cache.tmp" && mv "$cache.tmp" "$cache"
fi
declare -A TYPE UNIT
while read -r k v u; do TYPE[$k]=$v; UNIT[$k]=$u; done <"$cache" 2>/dev/null
[ -n "${TYPE[first]:-}" ] && echo "bench: ${TYPE[units]:-?} units; types ${TYPE[first]} (unit ${UNIT[first]})," \
	"${TYPE[middle]} (unit ${UNIT[middle]}), ${TYPE[last]} (unit ${UNIT[last]}), $ABSENT (absent)"

# --- 3. measurements -----------------------------------------------------------------
# measure CMD...: sets T (wall seconds) and M (peak RSS, MB), fastest of $RUNS runs.
measure() {
	local i t0 t rss rc
	T='' M=''
	for ((i = 0; i < RUNS; i++)); do
		t0=${EPOCHREALTIME:-}
		/usr/bin/time -f '%e %M' -o "$tmp/time" "$@" >/dev/null 2>"$tmp/err"
		rc=$?
		read -r t rss < <(tail -1 "$tmp/time")
		[ -n "$t0" ] && t=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }')
		if [ "$rc" -gt 2 ]; then
			echo "bench: '$*' exited $rc: $(head -1 "$tmp/err")" >&2
		fi
		if [ -z "$T" ] || awk -v a="$t" -v b="$T" 'BEGIN { exit !(a < b) }'; then
			T=$t M=$(awk -v k="$rss" 'BEGIN { printf "%.1f", k / 1024 }')
		fi
	done
}
ROWS=()
# bench_case NAME FILE "HITMAP ARGS" "PAHOLE ARGS": one table row.
bench_case() {
	local ht hm
	measure "$HITMAP" layout $3 "$2"; ht=$T hm=$M
	measure pahole $4 "$2"
	ROWS+=("$1 $ht $T $hm $M")
}

for k in first middle last; do
	[ -n "${TYPE[$k]:-}" ] && bench_case "lookup:$k" "$FILE" "-t ${TYPE[$k]}" "-C ${TYPE[$k]}"
done
bench_case "lookup:absent" "$FILE" "-t $ABSENT" "-C $ABSENT"
bench_case "full-dump" "$FILE" "" ""

KO=$(find /usr/lib/debug/lib/modules \( -name xfs.ko -o -name ext4.ko \) 2>/dev/null | sort | tail -1)
case $KO in
*/xfs.ko) bench_case "module:xfs.ko:xfs_mount" "$KO" "-t xfs_mount" "-C xfs_mount" ;;
*/ext4.ko) bench_case "module:ext4.ko:ext4_sb_info" "$KO" "-t ext4_sb_info" "-C ext4_sb_info" ;;
*) echo "bench: no xfs.ko or ext4.ko with DWARF under /usr/lib/debug/lib/modules; module case skipped" ;;
esac
BTF=/sys/kernel/btf/vmlinux
if [ -r "$BTF" ]; then bench_case "btf-full-dump" "$BTF" "--btf" "-F btf"; fi

# --- 4. table and targets --------------------------------------------------------------
echo
printf '%s\n' "${ROWS[@]}" | awk '
function ratio(p, h) { return h > 0 ? sprintf("%.1fx", p / h) : "-" }
BEGIN { printf "%-28s %9s %9s %8s %10s %10s %7s\n", "case", "hitmap s", "pahole s", "ratio",
	"hitmap MB", "pahole MB", "ratio" }
{ printf "%-28s %9.3f %9.3f %8s %10.1f %10.1f %7s\n", $1, $2, $3, ratio($3, $2), $4, $5, ratio($5, $4) }
END { print "(ratio: pahole / hitmap; above 1 means hitmap is faster or smaller)" }'
echo
printf '%s\n' "${ROWS[@]}" | awk -v file="$(basename "$FILE")" '
function verdict(ok) { return ok ? "PASS" : "MISS" }
$1 ~ /^lookup:/ {
	if ($2 > lh) lh = $2; if ($3 > lp) lp = $3
	if ($4 > lhm) lhm = $4; if ($5 > lpm) lpm = $5
}
$1 == "full-dump" { fh = $2; fp = $3; fhm = $4; fpm = $5; full = 1 }
END {
	printf "%s  slowest lookup >= 5x faster than pahole'"'"'s slowest: hitmap %.3f s, pahole %.3f s (%s)\n",
		verdict(lp >= 5 * lh), lh, lp, file
	if (full) printf "%s  full dump no slower than pahole'"'"'s: hitmap %.3f s, pahole %.3f s\n",
		verdict(fh <= fp), fh, fp
	printf "%s  peak memory <= 1/3 of pahole'"'"'s: lookups %.1f vs %.1f MB, full dump %.1f vs %.1f MB\n",
		verdict(3 * lhm <= lpm && (!full || 3 * fhm <= fpm)), lhm, lpm, fhm, fpm
}'

# --- 5. correctness on a real kernel -----------------------------------------------------
case $(basename "$FILE") in
vmlinux*) ;;
*) echo; echo "bench: $FILE is not a vmlinux; kernel peer check skipped"; more_benches ;;
esac
echo
echo "bench: peer check of $(echo $PEER_TYPES | wc -w) kernel types against pahole -C (DWARF)"
peer() { python3 "$ROOT/tests/peer/pahole_peer.py" "$HITMAP" "$@"; }
peer vmlinux-dwarf "$FILE" $PEER_TYPES | tee "$tmp/peer"
# pahole 1.24 drops names from a long -C list once it has met some others (kmem_cache
# before rq loses rq); those get a second chance one at a time.
missing=$(sed -n 's/^    \([A-Za-z0-9_]*\): pahole did not print it$/\1/p' "$tmp/peer")
for t in $missing; do peer "vmlinux-dwarf:$t (alone)" "$FILE" "$t"; done

# The same types as text, white space ignored: what the offsets check cannot see.
split_types() {	# DIR: one file per top-level "struct NAME {" ... "};"
	mkdir -p "$1"
	awk -v dir="$1" '/^(struct|union|class) [A-Za-z0-9_]+ \{$/ && !f { f = dir "/" $2 }
		f { print > f } /^}/ && f { close(f); f = "" }'
}
"$HITMAP" layout $(printf -- '-t %s ' $PEER_TYPES) "$FILE" 2>/dev/null | split_types "$tmp/h"
pahole -C "$(echo $PEER_TYPES | tr ' ' ,)" "$FILE" 2>/dev/null | split_types "$tmp/p"
for t in $missing; do pahole -C "$t" "$FILE" 2>/dev/null | split_types "$tmp/p"; done
same=0 differ=()
for t in $PEER_TYPES; do
	if diff -qw "$tmp/h/$t" "$tmp/p/$t" >/dev/null 2>&1; then same=$((same + 1)); else differ+=("$t"); fi
done
echo "text equal to pahole's, white space aside: $same of $(echo $PEER_TYPES | wc -w);" \
	"differs: ${differ[*]:-none}"
for t in "${differ[@]:0:4}"; do
	echo "--- diff -w <(hitmap layout -t $t) <(pahole -C $t), first 12 lines"
	diff -w "$tmp/h/$t" "$tmp/p/$t" 2>&1 | head -12
done
more_benches
