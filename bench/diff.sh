#!/usr/bin/env bash
# `hitmap diff` on two Debian 6.1 kernels (issue 3): every struct or union whose size
# differs per `pahole --sizes` must have a size finding in `hitmap diff --json`; then the
# whole diff's time and peak RSS against one full `pahole` dump of one file. See
# bench/README.md.
#   usage: bench/diff.sh [HITMAP] [--install] [--install-rt]
#   HM_BENCH_INSTALL=1     same as --install: apt-get linux-image-6.1.0-47-cloud-amd64-dbg
#                          (or the oldest 6.1.0-NN-cloud one) when fewer than 2 are installed
#   HM_BENCH_INSTALL_RT=1  same as --install-rt: also the -rt build of the newest cloud one
#   HM_BENCH_OLD, HM_BENCH_NEW  the two files to compare instead of searching
#   HM_BENCH_RUNS=N        keep the fastest of N runs per timing (default 1)
# Exits 0 whatever the numbers say; 2 only when a tool it needs is missing.
set -u
HITMAP=./hitmap
INSTALL=${HM_BENCH_INSTALL:-0}
INSTALL_RT=${HM_BENCH_INSTALL_RT:-0}
for a in "$@"; do
	case $a in
	--install) INSTALL=1 ;;
	--install-rt) INSTALL_RT=1 ;;
	-h | --help) sed -n '2,12s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) HITMAP=$a ;;
	esac
done
RUNS=${HM_BENCH_RUNS:-1}
DBG=/usr/lib/debug/boot
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

die() { echo "bench diff: $*" >&2; exit 2; }
say() { echo "bench diff: $*"; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else return 1; fi; }
[ -x "$HITMAP" ] || die "$HITMAP: not built; run make first"
for t in pahole python3 /usr/bin/time; do
	command -v $t >/dev/null || die "$t missing (pahole is in dwarves, /usr/bin/time in time)"
done

# --- the kernels ------------------------------------------------------------------------
cloud_files() { ls -1 $DBG/vmlinux-6.1.0-*-cloud-amd64 2>/dev/null | sort -V; }
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
UPDATED=0
apt_get() {	# PKG: apt-get update once, then install PKG
	[ "$UPDATED" = 1 ] || as_root apt-get update -qq || { say "apt-get update failed (needs root)"; return 1; }
	UPDATED=1
	say "installing $1 (~280 MB download, ~1.8 GB unpacked)"
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$1" >/dev/null
}
if [ -z "${HM_BENCH_OLD:-}" ] && [ "$(cloud_files | wc -l)" -lt 2 ] && [ "$INSTALL" = 1 ]; then
	as_root apt-get update -qq && UPDATED=1
	avail=$(apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-cloud-amd64-dbg$' |
		cut -d' ' -f1 | sort -V)
	old=linux-image-6.1.0-47-cloud-amd64-dbg
	if ! grep -qx "$old" <<<"$avail"; then
		old=$(head -1 <<<"$avail")
		say "linux-image-6.1.0-47-cloud-amd64-dbg is not in the apt sources; using the oldest, ${old:-none}"
	fi
	[ -z "$old" ] || installed "$old" || apt_get "$old" || say "apt-get install $old failed"
	new=$(tail -1 <<<"$avail")
	if [ "$(cloud_files | wc -l)" -lt 2 ] && [ -n "$new" ]; then
		apt_get "$new" || say "apt-get install $new failed"
	fi
fi
OLD=${HM_BENCH_OLD:-$(cloud_files | head -1)}
NEW=${HM_BENCH_NEW:-$(cloud_files | tail -1)}
if [ -z "$OLD" ] || [ "$OLD" = "$NEW" ]; then
	say "needs two vmlinux-6.1.0-NN-cloud-amd64 files in $DBG, found: ${OLD:-none}; rerun with --install"
	exit 0
fi
PAIRS=("$OLD $NEW")
RT=${NEW/-cloud-amd64/-rt-amd64}
if [ -z "${HM_BENCH_NEW:-}" ]; then
	rtpkg=linux-image-$(basename "$RT" | sed 's/^vmlinux-//')-dbg
	if [ ! -f "$RT" ] && [ "$INSTALL_RT" = 1 ]; then apt_get "$rtpkg" || say "apt-get install $rtpkg failed"; fi
	if [ -f "$RT" ]; then PAIRS+=("$NEW $RT"); else say "no $RT; cloud -> rt pair skipped (--install-rt fetches $rtpkg)"; fi
fi

# --- measurements -------------------------------------------------------------------------
# measure CMD...: sets T (wall seconds) and M (peak RSS, MB), fastest of $RUNS runs.
measure() {
	local i t rss
	T='' M=''
	for ((i = 0; i < RUNS; i++)); do
		/usr/bin/time -f '%e %M' -o "$tmp/time" "$@" >/dev/null 2>"$tmp/err" ||
			echo "bench diff: '$*' failed: $(head -1 "$tmp/err")" >&2
		read -r t rss < <(tail -1 "$tmp/time")
		if [ -z "$T" ] || awk -v a="$t" -v b="$T" 'BEGIN { exit !(a < b) }'; then
			T=$t M=$(awk -v k="$rss" 'BEGIN { printf "%.1f", k / 1024 }')
		fi
	done
}

# check OLD NEW JSON SIZES_OLD SIZES_NEW: pahole's size-changed names against hitmap's.
check() {
	python3 - "$@" <<'EOF'
import json, subprocess, sys
hitmap, old, new, js, so, sn = sys.argv[1:]
def sizes(path):	# name -> every size in pahole's order; the first one counts
    d = {}
    for line in open(path):
        f = line.split()
        if len(f) >= 2: d.setdefault(f[0], []).append(int(f[1]))
    return d
po, pn = sizes(so), sizes(sn)
changed = sorted(n for n in po if n in pn and po[n][0] != pn[n][0])
d = json.load(open(js))
types = {}
for t in d['types']:
    kind, _, name = t['name'].partition(' ')
    if kind in ('struct', 'union'): types.setdefault(name, t)
sized = {n: t for n, t in types.items() if any(f['kind'] == 'size' for f in t['findings'])}
missing = [n for n in changed if n not in sized]
print(f"  pahole --sizes: {len(changed)} of {len(set(po) & set(pn))} names in both files changed size"
      f" (first-seen size per name)")
print(f"  hitmap diff:    {len(sized)} types with a size finding, of {len(d['types'])} with findings"
      f" ({d.get('compared', '?')} compared); {len(changed) - len(missing)} of pahole's {len(changed)} found")
def layout_size(path, name):
    r = subprocess.run([hitmap, 'layout', '-t', name, path], capture_output=True, text=True)
    s = [l.strip() for l in r.stdout.splitlines() if '/* size:' in l]
    return s[0] if s else (r.stderr.strip().splitlines() or ['no output'])[0]
if missing:
    print(f"  MISSING from hitmap's diff ({len(missing)}): {' '.join(missing[:20])}")
for n in missing[:5]:
    t = types.get(n)
    where = ('in types[] with ' + ','.join(sorted({f['kind'] for f in t['findings']})) +
             f", sizes {t['old_size']} -> {t['new_size']}") if t else \
        'in only_old' if any(x.split(' ', 1)[-1] == n for x in d['only_old']) else \
        'in only_new' if any(x.split(' ', 1)[-1] == n for x in d['only_new']) else 'not in the diff'
    print(f"    {n}: pahole sizes old {po[n]} new {pn[n]}; hitmap: {where}")
    print(f"      hitmap layout -t {n}: old {layout_size(old, n)}; new {layout_size(new, n)}")
# Size findings that disagree with pahole's first-seen sizes, or that pahole does not see.
other = [n for n, t in sized.items() if n not in changed or
         (t['old_size'], t['new_size']) != (po[n][0], pn[n][0])]
for n in sorted(other)[:10]:
    t = sized[n]
    print(f"  DIFFERS {n}: hitmap {t['old_size']} -> {t['new_size']}, pahole old {po.get(n, 'absent')}"
          f" new {pn.get(n, 'absent')}" + (" (several definitions: hitmap's first is not pahole's)"
          if len(po.get(n, [])) > 1 or len(pn.get(n, [])) > 1 else ""))
dups = sorted(n for n in changed if len(po[n]) > 1 or len(pn[n]) > 1)
if dups and not set(dups) & set(missing + other):
    print(f"  defined more than once: {' '.join(dups)} (found with pahole's first sizes)")
print(f"  {'PASS' if not missing else 'MISS'}  every size change pahole sees is in hitmap's diff")
EOF
}

ROWS=()
for pair in "${PAIRS[@]}"; do
	read -r a b <<<"$pair"
	an=$(basename "$a") bn=$(basename "$b")
	echo
	say "$an -> $bn ($(($(stat -c %s "$a") / 1048576)) MB, $(($(stat -c %s "$b") / 1048576)) MB)"
	cat "$a" "$b" >/dev/null	# page cache, so that no tool is charged for the disk
	pahole --sizes "$a" >"$tmp/sizes.old" 2>/dev/null || say "pahole --sizes $an failed"
	pahole --sizes "$b" >"$tmp/sizes.new" 2>/dev/null || say "pahole --sizes $bn failed"
	"$HITMAP" diff "$a" "$b" --json >"$tmp/diff.json" 2>"$tmp/err"
	rc=$?
	if [ "$rc" != 0 ] || [ ! -s "$tmp/diff.json" ]; then
		say "hitmap diff exited $rc: $(head -3 "$tmp/err")"
		continue
	fi
	check "$HITMAP" "$a" "$b" "$tmp/diff.json" "$tmp/sizes.old" "$tmp/sizes.new"
	measure "$HITMAP" diff "$a" "$b" --json; ht=$T hm=$M
	measure pahole "$b"
	ROWS+=("${an#vmlinux-}->${bn#vmlinux-} $ht $hm $T $M")
done
[ ${#ROWS[@]} -gt 0 ] || exit 0

echo
printf '%s\n' "${ROWS[@]}" | awk -v runs="$RUNS" '
function verdict(ok) { return ok ? "PASS" : "MISS" }
BEGIN { printf "%-50s %8s %9s %9s %10s %7s %7s\n", "hitmap diff OLD NEW --json vs pahole NEW",
	"diff s", "pahole s", "diff MB", "pahole MB", "t/pah", "MB/pah" }
{
	printf "%-50s %8.2f %9.2f %9.1f %10.1f %6.2fx %6.2fx\n", $1, $2, $4, $3, $5,
		($4 > 0 ? $2 / $4 : 0), ($5 > 0 ? $3 / $5 : 0)
	t[NR] = sprintf("%s  whole diff <= 2x one pahole dump: %.2f s vs 2 x %.2f s (%s)",
		verdict($2 <= 2 * $4), $2, $4, $1)
	m[NR] = sprintf("%s  whole diff peak RSS <= one pahole dump'"'"'s: %.1f vs %.1f MB (%s)",
		verdict($3 <= $5), $3, $5, $1)
}
END {
	printf "(fastest of %d; t/pah and MB/pah: hitmap diff / one pahole dump, below 1 is better)\n", runs
	for (i = 1; i <= NR; i++) print t[i] "\n" m[i]
}'
exit 0
