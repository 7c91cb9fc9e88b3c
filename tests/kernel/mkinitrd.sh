#!/bin/bash
# Builds the lab guest's initramfs: busybox, hitmap, perf, mke2fs, mkfs.xfs with every
# library ldd lists, the static workloads, the kernel's modules, /init and /lab.conf.
# usage: mkinitrd.sh LAB_DIR KVER HITMAP OUT.cpio [MODULE_ROOT (default LAB_DIR/root)]
set -euo pipefail
LAB=$1 KV=$2 HITMAP=$3 OUT=$4 MROOT=${5:-$1/root}
HERE=$(cd "$(dirname "$0")" && pwd)
T=$LAB/initrd
rm -rf "$T"
mkdir -p "$T"/{bin,sbin,usr/bin,usr/sbin,usr/local/bin,lib,lib64,proc,sys,dev,etc,tmp,out,mnt}
cp /bin/busybox "$T/bin/busybox"
for tool in "$HITMAP" /usr/bin/perf /usr/sbin/mke2fs /sbin/mkfs.xfs; do
	cp "$tool" "$T/usr/local/bin/"
	for lib in $(ldd "$tool" | awk '/=>/ { print $3 } /^\t\/lib/ { print $1 }'); do
		mkdir -p "$T$(dirname "$lib")"
		cp -L "$lib" "$T$lib"
	done
done
mkdir -p "$T/lib64"
cp -L /lib64/ld-linux-x86-64.so.2 "$T/lib64/"
cp "$LAB"/bin/* "$T/bin/"
# Only the modules /init loads, at their /lib/modules paths (record names them from there).
. "$LAB/lab.conf"
for m in $LAB_MODULES; do
	f=$(cd "$MROOT" && find "lib/modules/$KV" -name "$m.ko" | head -1)
	[ -n "$f" ] || { echo "lab: module $m not in linux-image-$KV" >&2; exit 3; }
	mkdir -p "$T/$(dirname "$f")"
	cp "$MROOT/$f" "$T/$f"
done
# The xfs_imap case's three xfs.ko builds for this kernel (tests/kernel/xfs_imap/build.sh).
[ "$LAB_PLAN" != full ] || [ ! -d "$LAB/xfs/guest-$KV" ] || cp -rL "$LAB/xfs/guest-$KV" "$T/xfs_imap"
cp "$HERE/init" "$T/init"
cp "$LAB/lab.conf" "$T/lab.conf"
echo "root:x:0:0:root:/:/bin/sh" > "$T/etc/passwd"
(cd "$T" && find . | cpio -o -H newc --quiet) > "$OUT"
