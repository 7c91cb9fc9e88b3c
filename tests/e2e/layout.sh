#!/usr/bin/env bash
# hitmap layout end to end: the pahole peer test on examples/, tests/data and kernel
# BTF, then bad input (each: one line on stderr, exit 2, no crash).
. "$(dirname "$0")/../lib/tap.sh"
nok() { echo "not ok $1"; shift; [ $# -gt 0 ] && printf '    %s\n' "$@"; }

# --- Peer test: every struct of the example objects equals pahole's layout.
for f in examples/bin/*; do
	/usr/bin/python3 tests/peer/pahole_peer.py "$H" "pahole-peer $(basename "$f")" "$f"
done

# typedef struct { ... } name; prints as pahole -C name prints it, byte for byte.
if out=$("$H" layout examples/bin/typedef_args -t lreg_args 2>&1) &&
	[ "$out" = "$(pahole -C lreg_args examples/bin/typedef_args)" ]; then
	ok "typedef'd anonymous struct: layout -t lreg_args equals pahole -C lreg_args"
else
	nok "typedef'd anonymous struct: layout -t lreg_args equals pahole -C lreg_args" "$out"
fi

# 50+ named kernel types from BTF, then every struct/union in the kernel's BTF.
KTYPES="task_struct inode page sk_buff file dentry super_block mm_struct vm_area_struct
address_space net_device sock tcp_sock rq cfs_rq sched_entity cred files_struct fs_struct
signal_struct sighand_struct kmem_cache bio request request_queue block_device gendisk
buffer_head kiocb iov_iter pipe_inode_info socket msghdr nsproxy pid pid_namespace
user_namespace cgroup css_set perf_event hrtimer timer_list work_struct workqueue_struct
mutex rw_semaphore spinlock wait_queue_head completion list_head callback_head xarray folio"
if [ -r /sys/kernel/btf/vmlinux ]; then
	/usr/bin/python3 tests/peer/pahole_peer.py "$H" "pahole-peer kernel-50-types" --btf \
		/sys/kernel/btf/vmlinux $KTYPES
	/usr/bin/python3 tests/peer/pahole_peer.py "$H" "pahole-peer kernel-all-btf-types" --btf \
		/sys/kernel/btf/vmlinux
else
	echo "ok pahole-peer kernel # skip: no /sys/kernel/btf/vmlinux"
fi

# --- Behaviour on good input.
out=$("$H" layout -t worker_stats examples/bin/false_sharing_padded)
if grep -q 'cacheline 1 boundary (64 bytes)' <<<"$out" && grep -q '__aligned__(64)' <<<"$out"; then
	ok "layout marks cache-line boundary and forced alignment"
else nok "layout marks cache-line boundary and forced alignment" "$out"; fi

cl=$("$H" layout --json --line-size 128 -t worker_stats examples/bin/false_sharing_padded |
	/usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["schema"], d["types"][0]["cachelines"])')
[ "$cl" = "hitmap.layout/1 1" ] && ok "json schema and --line-size 128" || nok "json schema and --line-size 128" "$cl"

exp=$("$H" layout -E -t holder examples/bin/imap)
if grep -q 'struct imap {' <<<"$exp" && grep -q 'im_boffset' <<<"$exp"; then
	ok "-E expands nested named types"
else nok "-E expands nested named types" "$exp"; fi

n=$("$H" layout -t 'struct imap' -t holder examples/bin/imap | grep -c '^struct ')
[ "$n" = 2 ] && ok "several -t, tagged names" || nok "several -t, tagged names" "$n"

# --- Bad input: one line, exit 2, names the file and the fix.
bad() {	# NAME EXPECTED_RC PATTERN CMD...
	local name=$1 want=$2 pat=$3
	shift 3
	"$@" >"$T/out" 2>"$T/err"
	local rc=$? lines
	lines=$(wc -l <"$T/err")
	if [ "$rc" = "$want" ] && [ "$lines" = 1 ] && grep -q -- "$pat" "$T/err"; then
		ok "$name"
	else
		nok "$name" "rc=$rc lines=$lines" "$(cat "$T/err")"
	fi
}
echo "not an elf" >"$T/text"
: >"$T/empty"
cp examples/bin/false_sharing "$T/stripped" && strip "$T/stripped"
size=$(stat -c %s examples/bin/false_sharing)
head -c 3000 examples/bin/false_sharing >"$T/trunc-head"
head -c $((size / 2)) examples/bin/false_sharing >"$T/trunc-half"
head -c $((size - 1)) examples/bin/false_sharing >"$T/trunc-1"
bad "bad input: not ELF" 2 "not an ELF file" "$H" layout "$T/text"
bad "bad input: empty file" 2 "not an ELF file" "$H" layout "$T/empty"
bad "bad input: missing file" 2 "No such file" "$H" layout "$T/none"
bad "bad input: stripped names -dbg and debuginfod" 2 "dbgsym.*DEBUGINFOD_URLS" "$H" layout "$T/stripped"
bad "bad input: truncated ELF (3000 bytes)" 2 "truncated" "$H" layout "$T/trunc-head"
bad "bad input: truncated ELF (half)" 2 "truncated" "$H" layout "$T/trunc-half"
bad "bad input: truncated ELF (one byte short)" 2 "truncated" "$H" layout "$T/trunc-1"
bad "bad input: unknown type suggests nearest" 2 "nearest: worker_stats" \
	"$H" layout -t worker_stat examples/bin/false_sharing
bad "bad input: --btf on a text file" 2 "no readable BTF" "$H" layout --btf "$T/text"
bad "bad input: bad --line-size" 1 "power of two" "$H" layout --line-size 48 examples/bin/imap
# Every prefix length of a small object: never a crash (exit 0 or 2 only).
crashes=0
osz=$(stat -c %s examples/bin/tricky.o)
for cut in $(seq 0 97 "$osz"); do
	head -c "$cut" examples/bin/tricky.o >"$T/cut"
	"$H" layout "$T/cut" >/dev/null 2>&1
	rc=$?
	[ "$rc" = 0 ] || [ "$rc" = 2 ] || { crashes=$((crashes + 1)); echo "    cut $cut rc $rc"; }
done
[ "$crashes" = 0 ] && ok "truncation at every 97th byte never crashes" || nok "truncation never crashes" "$crashes crashes"
