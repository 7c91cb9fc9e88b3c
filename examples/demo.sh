#!/usr/bin/env bash
# make demo: the bundled false-sharing example, its layout before and after the padding
# fix, as a reviewer would see them. (Recording and the sharing report join this demo
# when `hitmap record` and `hitmap report` land.)
set -eu
cd "$(dirname "$0")/.."
H=${1:-./hitmap}
echo "== struct worker_stats as built: ops (thread 0) and errors (thread 1) share line 0"
"$H" layout -t worker_stats examples/bin/false_sharing
echo
echo "== the padded build: errors starts cache line 1, away from ops"
"$H" layout -t worker_stats examples/bin/false_sharing_padded
echo
echo "== the same engine on the running kernel's BTF: struct list_head"
if [ -r /sys/kernel/btf/vmlinux ]; then
	"$H" layout --btf -t list_head
fi
