#!/usr/bin/env bash
# make demo: record the bundled false-sharing example (PMU where there is one, timer
# samples here), show the sharing view naming the struct, the two fields and the two
# threads, then the padded build, whose line is no longer shared; then what the padding
# changed in the layout, as a reviewer sees it.
set -eu
cd "$(dirname "$0")/.."
H=${1:-./hitmap}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

echo "== hitmap check: what can be collected here"
"$H" check || true
echo
echo "== record examples/bin/false_sharing (two threads: one bumps ops, one errors and bytes)"
"$H" record -o "$T/fs.data" -- examples/bin/false_sharing 300000000
echo
echo "== hitmap report --view sharing"
"$H" report -i "$T/fs.data" --view sharing --top 3
echo
echo "== the padded build: errors starts its own cache line"
"$H" record -o "$T/padded.data" -- examples/bin/false_sharing_padded 300000000
"$H" report -i "$T/padded.data" --view sharing --top 3
echo
echo "== hitmap diff: what the padding did to struct worker_stats"
"$H" diff -t worker_stats examples/bin/false_sharing examples/bin/false_sharing_padded || true
echo
echo "== heat map of the hot struct (also: --html heat.html)"
"$H" report -i "$T/fs.data" --view heatmap --type worker_stats
