#!/bin/bash
# Builds xfs.ko out of tree three times for the kernel lab's xfs_imap case (docs/cases.md):
# stock Debian 6.1 source, agbno.patch (a 4-byte member in struct xfs_imap) and pad.patch
# (that plus uint32_t __im_pad), against the booted kernel's headers, so the modules'
# vermagic and modversions CRCs (Module.symvers) are the -57 kernel's. Each build is kept
# in LAB/xfs/build-NAME-HASH (HASH: of the patch and this script), so a rerun builds
# nothing. Prints one line per variant with its build time.
# usage: build.sh LAB_DIR KVER  -> LAB/xfs/{stock,agbno,pad}.ko (links to the builds) and
#        LAB/xfs/guest-KVER/*.ko (without DWARF, for the initramfs)
set -euo pipefail
LAB=$(cd "$1" && pwd) KV=$2
HERE=$(cd "$(dirname "$0")" && pwd)
X=$LAB/xfs
# The Debian version of the booted image: its source and headers are of the same one.
VER=$(dpkg-deb -f "$(ls "$LAB"/deb/linux-image-"$KV"_*.deb | head -1)" Version)
mkdir -p "$X" "$LAB/deb"
download() { # download PKG=VERSION
	local p=${1%%=*}
	ls "$LAB/deb/${p}_"*.deb >/dev/null 2>&1 && return 0
	echo "lab: downloading $1"
	(cd "$LAB/deb" && apt-get download -q "$1" 2>&1 | grep -v unsandboxed || true)
	ls "$LAB/deb/${p}_"*.deb >/dev/null 2>&1 || { echo "lab: apt-get download $1 failed" >&2; exit 3; }
}
common=linux-headers-${KV%-cloud-amd64}-common
if [ ! -e "$X/.headers.$KV" ]; then
	for p in "linux-headers-$KV" "$common" linux-kbuild-6.1; do
		download "$p=$VER"
		dpkg -x "$LAB/deb/${p}_$VER"_*.deb "$X/hdr"
	done
	# The headers' Makefile includes the -common one by its installed path.
	sed -i "s|/usr/src/$common|$X/hdr/usr/src/$common|" "$X/hdr/usr/src/linux-headers-$KV/Makefile"
	touch "$X/.headers.$KV"
fi
if [ ! -e "$X/.source.$VER" ]; then
	download "linux-source-6.1=$VER"
	rm -rf "$X/linux-source-6.1"
	dpkg-deb --fsys-tarfile "$LAB/deb/linux-source-6.1_$VER"_all.deb |
		tar -x -O ./usr/src/linux-source-6.1.tar.xz |
		tar -xJ -C "$X" --wildcards 'linux-source-6.1/fs/xfs/*'
	touch "$X/.source.$VER"
fi
HDR=$X/hdr/usr/src/linux-headers-$KV
# The xfs options of the booted kernel's config (the headers' auto.conf has them all).
XFS_OPTS=$(grep -E '^CONFIG_XFS_[A-Z0-9_]*=' "$HDR/.config" | tr '\n' ' ')
for v in stock agbno pad; do
	patch=/dev/null
	[ "$v" = stock ] || patch=$HERE/$v.patch
	# The cache key: the patch, the source and headers, and how it is built (bump the r).
	hash=$( (cat "$patch"; echo "$VER $KV $XFS_OPTS r1") | sha256sum | cut -c1-12)
	b=$X/build-$v-$hash
	if [ ! -e "$b/.built" ]; then
		rm -rf "$b" && mkdir -p "$b"
		cp -r "$X/linux-source-6.1/fs" "$b/"
		[ "$v" = stock ] || patch -s -d "$b" -p1 < "$patch"
		# Out of tree $(srctree)/$(src) is not the source: include it by $(src) alone.
		sed -i 's|\$(srctree)/\$(src)|$(src)|g' "$b/fs/xfs/Makefile"
		t0=$(date +%s)
		# shellcheck disable=SC2086
		make -s -C "$HDR" M="$b/fs/xfs" $XFS_OPTS -j2 modules > "$b/build.log" 2>&1 ||
			{ tail -20 "$b/build.log" >&2; echo "lab: xfs.ko ($v) build failed" >&2; exit 3; }
		echo "$(( $(date +%s) - t0 ))" > "$b/.built"
		echo "lab: built xfs.ko ($v, $(basename "$b")) in $(cat "$b/.built") s"
	else
		echo "lab: xfs.ko ($v) cached in $(basename "$b") (built in $(cat "$b/.built") s)"
	fi
	ln -sfn "$b/fs/xfs/xfs.ko" "$X/$v.ko"
	# The guest's copy without DWARF (the build-id stays): the host reads the unstripped one.
	mkdir -p "$X/guest-$KV"
	strip --strip-debug -o "$X/guest-$KV/$v.ko" "$b/fs/xfs/xfs.ko"
done
