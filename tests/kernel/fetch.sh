#!/bin/bash
# Fetches what the kernel lab needs, once: host tools through apt-get (qemu, busybox,
# mkfs tools, perf), the Debian cloud kernels and their -dbg DWARF through
# `apt-get download` + `dpkg -x` into $LAB (no host boot files or modules change).
# Idempotent: each part has a stamp file under $LAB.
# usage: fetch.sh LAB_DIR KVER OTHER_KVER
set -euo pipefail
LAB=$1 KV=$2 KV_OTHER=$3
mkdir -p "$LAB/deb" "$LAB/root" "$LAB/other"

host_pkgs="qemu-system-x86 busybox-static e2fsprogs xfsprogs linux-perf build-essential cpio xz-utils llvm"
missing=$(for p in $host_pkgs; do dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
	grep -q 'install ok installed' || echo "$p"; done)
if [ -n "$missing" ]; then
	echo "lab: installing $missing"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
fi

download() { # download PKG: into $LAB/deb unless there
	ls "$LAB/deb/$1"_*.deb >/dev/null 2>&1 && return 0
	echo "lab: downloading $1"
	(cd "$LAB/deb" && apt-get download -q "$1" 2>&1 | grep -v '^W: Download is performed unsandboxed' || true)
	ls "$LAB/deb/$1"_*.deb >/dev/null 2>&1 || { echo "lab: apt-get download $1 failed" >&2; exit 3; }
}

if [ ! -e "$LAB/root/.image.$KV" ]; then
	download "linux-image-$KV"
	dpkg -x "$LAB/deb/linux-image-${KV}"_*.deb "$LAB/root"
	touch "$LAB/root/.image.$KV"
fi
# From the 1.75 GB -dbg package only the vmlinux and the loaded modules' debug files.
if [ ! -e "$LAB/root/.dbg.$KV" ]; then
	download "linux-image-$KV-dbg"
	dpkg-deb --fsys-tarfile "$LAB/deb/linux-image-${KV}-dbg"_*.deb | tar -x -C "$LAB/root" \
		--wildcards './usr/lib/debug/boot/*' './usr/lib/debug/lib/modules/*/kernel/fs/xfs/*' \
		'./usr/lib/debug/lib/modules/*/kernel/drivers/virtio/*' \
		'./usr/lib/debug/lib/modules/*/kernel/drivers/block/*' \
		'./usr/lib/debug/lib/modules/*/kernel/lib/libcrc32c.ko'
	touch "$LAB/root/.dbg.$KV"
fi
# Another build: its vmlinux must be refused for this kernel's recordings, and its image
# boots a second guest whose runs compare against this kernel's.
if [ ! -e "$LAB/other/.image.$KV_OTHER" ] || [ ! -d "$LAB/other/lib/modules" ]; then
	download "linux-image-$KV_OTHER"
	dpkg-deb --fsys-tarfile "$LAB/deb/linux-image-${KV_OTHER}"_*.deb | tar -x -C "$LAB/other" \
		--wildcards "./boot/vmlinuz-$KV_OTHER" './lib/modules/*/kernel/drivers/virtio/*' \
		'./lib/modules/*/kernel/drivers/block/virtio_blk.ko'
	touch "$LAB/other/.image.$KV_OTHER"
fi
if [ ! -e "$LAB/other/.dbg.$KV_OTHER" ]; then
	download "linux-image-$KV_OTHER-dbg"
	dpkg-deb --fsys-tarfile "$LAB/deb/linux-image-${KV_OTHER}-dbg"_*.deb | tar -x -C "$LAB/other" \
		"./usr/lib/debug/boot/vmlinux-$KV_OTHER"
	touch "$LAB/other/.dbg.$KV_OTHER"
fi
# A current kernel (6.12, Debian 12's LTS line): slab pages marked by page_type there, not
# PG_slab. Its image and virtio_blk only (no -dbg: the guest reports through kcore and BTF).
# The version is whatever the meta-package depends on today; NEW_KV names it for run.sh.
if [ -n "${NEW_META:-}" ]; then
	nkv=$(apt-cache depends "$NEW_META" 2>/dev/null |
		sed -n 's/^ *Depends: linux-image-\(6\.[0-9.]*+deb[0-9]*-cloud-amd64\)$/\1/p' | head -1)
	[ -n "$nkv" ] || { echo "lab: $NEW_META names no linux-image package" >&2; exit 3; }
	if [ ! -e "$LAB/new/.image.$nkv" ]; then
		mkdir -p "$LAB/new"
		download "linux-image-$nkv"
		dpkg-deb --fsys-tarfile "$LAB/deb/linux-image-${nkv}"_*.deb | tar -x -C "$LAB/new" \
			--wildcards "./boot/vmlinuz-$nkv" './lib/modules/*/kernel/drivers/block/virtio_blk.ko*'
		find "$LAB/new/lib/modules" -name '*.ko.xz' -exec xz -d -f {} +
		touch "$LAB/new/.image.$nkv"
	fi
	echo "$nkv" > "$LAB/new/kv"
fi
