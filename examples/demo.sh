#!/usr/bin/env bash
# make demo: record the bundled false-sharing example (PMU where there is one, timer
# samples here), show the sharing view naming the struct, the two fields and the two
# threads, then the padded build, whose line is no longer shared; then what the padding
# changed in the layout, as a reviewer sees it. The recordings and the heat-map page stay
# in build/demo/, so that the closing hint's commands work after the demo.
set -eu
cd "$(dirname "$0")/.."
H=${1:-./hitmap}
T=build/demo
mkdir -p "$T"

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
echo "== heat map of the hot struct"
"$H" report -i "$T/fs.data" --view heatmap --type worker_stats
"$H" report -i "$T/fs.data" --html "$T/heat.html"
echo
echo "== kept in $T/: fs.data, padded.data and heat.html; try"
echo "   $H report -i $T/fs.data --view lines"
echo "   $H whatif -i $T/fs.data --suggest worker_stats"
