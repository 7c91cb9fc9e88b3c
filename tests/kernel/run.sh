#!/bin/bash
# The kernel lab (`make lab`): fetches a Debian cloud kernel with its -dbg DWARF, boots it
# under QEMU TCG with an initramfs holding hitmap, perf and five workloads modeled on real
# kernel regressions, records each under `hitmap record -k -a`, reports in the guest
# (/proc/kcore + BTF) and on the host (the -dbg vmlinux), and checks names, verdicts and
# counts, never speed. Prints `ok NAME` / `not ok NAME` and `N passed, N failed`.
# Environment: LAB (cache, default build-lab), LAB_KV, LAB_KV_OTHER, LAB_SECONDS (per
# workload), LAB_HZ, LAB_TIMEOUT (guest, seconds), LAB_SKIP_BOOT=1 (check the last run),
# LAB_NEW_META (the meta-package of a current kernel booted for slab naming; "" for none).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
LAB=${LAB:-$ROOT/build-lab}
KV=${LAB_KV:-6.1.0-57-cloud-amd64}
KV_OTHER=${LAB_KV_OTHER:-6.1.0-47-cloud-amd64}
NEW_META=${LAB_NEW_META-linux-image-6.12-cloud-amd64}
SECONDS_PER=${LAB_SECONDS:-2}
HZ=${LAB_HZ:-1000}
TIMEOUT=${LAB_TIMEOUT:-480}
HITMAP=$ROOT/hitmap
MODULES="virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci virtio_blk loop libcrc32c xfs"
t0=$(date +%s)

die() { echo "not ok lab: $*"; echo "0 passed, 1 failed"; exit 1; }

mkdir -p "$LAB" || die "cannot create $LAB"
LAB=$(cd "$LAB" && pwd)
NEW_META=$NEW_META "$HERE/fetch.sh" "$LAB" "$KV" "$KV_OTHER" ||
	die "fetch failed (apt-get; see above)"
KV_NEW=$([ -n "$NEW_META" ] && cat "$LAB/new/kv" 2>/dev/null || true)
make -C "$ROOT" -j2 --no-print-directory all >/dev/null || die "make failed"
mkdir -p "$LAB/bin"
for w in xattr_list create_unlink orphan pread_block loop_ctl; do
	gcc -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror -static -pthread \
		-o "$LAB/bin/$w" "$HERE/$w.c" || die "cannot build workload $w"
done
# The xfs_imap case: xfs.ko built three times against the -57 headers (cached).
"$HERE/xfs_imap/build.sh" "$LAB" "$KV" || die "xfs.ko builds failed (see above)"
# The report's own ip -> function names, for comparing every kernel ip with perf's.
gcc -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror -I"$ROOT" \
	$(pkg-config --cflags libdw libelf capstone libbpf) -o "$LAB/ksyms" "$HERE/ksyms.c" \
	"$ROOT/build/libhitmap.a" $(make -s --no-print-directory -C "$ROOT" print-libs) ||
	die "cannot build tests/kernel/ksyms.c"
conf() { # conf PLAN MODULES: the guest's /lab.conf
	cat > "$LAB/lab.conf" <<CONF
LAB_PLAN=$1
LAB_MODULES="$2"
LAB_SECONDS=$SECONDS_PER
LAB_HZ=$HZ
LAB_CMP_RUNS=3
CONF
}

# A guest kernel that dies before its /init logs a step is booted again, at most three
# times in all, and the run says so: Debian's 6.12.118 died that way once in CI with an
# "Oops: int3" in sched_clock_cpu during boot-time code patching under multi-threaded TCG,
# and booted on the next run. A guest that dies after /init started is never retried.
boot() { # boot KV KERNEL_ROOT OUT: one guest run of that kernel, its /out unpacked in OUT
	local kv=$1 kroot=$2 out=$3 try
	"$HERE/mkinitrd.sh" "$LAB" "$kv" "$HITMAP" "$LAB/initrd.cpio" "$kroot" ||
		die "initramfs failed"
	for try in 1 2 3; do
		boot_once "$kv" "$kroot" "$out"
		grep -q '^lab: ' "$LAB/serial.log" && return 0
		grep -q 'Kernel panic' "$LAB/serial.log" || return 0
		echo "lab: guest $kv died before /init ran a step (try $try of 3): $(grep -m1 -E 'Oops|BUG:|Kernel panic' "$LAB/serial.log")"
	done
}

boot_once() { # boot_once KV KERNEL_ROOT OUT
	local kv=$1 kroot=$2 out=$3 tb qrc
	rm -rf "$out" && mkdir -p "$out"
	rm -f "$LAB/out.img" && truncate -s 1G "$LAB/out.img"
	tb=$(date +%s)
	timeout -k 5 "$TIMEOUT" qemu-system-x86_64 -accel tcg,thread=multi -cpu max -smp 2 \
		-m 4096 -kernel "$kroot/boot/vmlinuz-$kv" -initrd "$LAB/initrd.cpio" \
		-append "console=ttyS0 panic=-1 quiet" -display none -serial "file:$LAB/serial.log" \
		-no-reboot -drive "file=$LAB/out.img,format=raw,if=virtio" </dev/null
	qrc=$?
	echo "lab: guest $kv ran $(( $(date +%s) - tb )) s (qemu exit $qrc)"
	[ "$qrc" = 124 ] && die "guest $kv still running after ${TIMEOUT}s, killed; last console lines: $(tail -3 "$LAB/serial.log" | tr '\n' '|')"
	tar xf "$LAB/out.img" -C "$out" 2>/dev/null ||
		die "no recordings on the output disk of $kv; console: $(tail -3 "$LAB/serial.log" | tr '\n' '|')"
}

OUT=$LAB/out
OUT_OTHER=$LAB/out-other
OUT_NEW=$LAB/out-new
if [ "${LAB_SKIP_BOOT:-0}" != 1 ]; then
	conf full "$MODULES"
	boot "$KV" "$LAB/root" "$OUT"
	# The other build, for compare: tmpfs only, so only the output disk's modules.
	conf compare "virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci virtio_blk"
	boot "$KV_OTHER" "$LAB/other" "$OUT_OTHER"
	# A current kernel: two tmpfs workloads, reported in the guest (virtio is built in).
	if [ -n "$KV_NEW" ]; then
		conf modern "virtio_blk"
		boot "$KV_NEW" "$LAB/new" "$OUT_NEW"
	fi
fi
python3 "$HERE/check.py" --out "$OUT" --hitmap "$HITMAP" --ksyms "$LAB/ksyms" \
	--vmlinux "$LAB/root/usr/lib/debug/boot/vmlinux-$KV" \
	--other-vmlinux "$LAB/other/usr/lib/debug/boot/vmlinux-$KV_OTHER" \
	--debug-root "$LAB/root" --kv "$KV" --other-out "$OUT_OTHER" --kv-other "$KV_OTHER" \
	--new-out "$OUT_NEW" --kv-new "${KV_NEW:-}"
rc=$?
echo "lab: whole run $(( $(date +%s) - t0 )) s"
exit $rc
