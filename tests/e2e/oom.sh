#!/usr/bin/env bash
# Out of memory is a clean exit 3 with one line and the figure, never an abort: a diff of
# the kernel's BTF against itself needs about 70 MB; under a 50 MB address-space limit
# the library's allocations fail. Prints "ok NAME" / "not ok NAME".
. "$(dirname "$0")/../lib/tap.sh"

if [ "${HM_SUITE:-normal}" = asan ]; then
	echo "ok out of memory # skip: ASan reserves its shadow memory beyond any ulimit -v"
	exit 0
fi
if [ ! -r /sys/kernel/btf/vmlinux ]; then
	echo "ok out of memory # skip: no /sys/kernel/btf/vmlinux"
	exit 0
fi
(ulimit -v 50000; exec "$H" diff /sys/kernel/btf/vmlinux /sys/kernel/btf/vmlinux) \
	>/dev/null 2>"$T/err"
rc=$?
if [ "$rc" = 3 ] && [ "$(wc -l <"$T/err")" = 1 ] && grep -q "out of memory at [0-9]* MB resident: raise" "$T/err"; then
	echo "ok out of memory: exit 3, one line with the figure"
else
	echo "not ok out of memory: exit 3, one line with the figure"
	echo "    rc=$rc"; sed 's/^/    /' "$T/err" | head -5
fi
