#!/bin/bash
# The folders are the pipeline (README, Layout of the code): core → collectors →
# symbolize → resolve → analyzer → render → cli. A file may include headers of its own
# folder and of folders before it, never after: each upward #include is one failure.
# And the analyses return data and print nothing: no stdio output call in analyzer/ and
# no FILE in its headers (the renderers in render/ print what they return).
set -u
cd "$(dirname "$0")/../.."
order="core collectors symbolize resolve analyzer render cli"
rank() { local i=0 f; for f in $order; do [ "$f" = "$1" ] && { echo $i; return; }; i=$((i + 1)); done; echo -1; }
pass=0 fail=0
for dir in $order; do
	r=$(rank "$dir") bad=""
	for f in "$dir"/*.[ch]; do
		while read -r inc; do
			to=${inc%%/*}
			t=$(rank "$to")
			[ "$t" -gt "$r" ] && bad="$bad $f→$inc"
		done < <(sed -n 's/^#include "\([a-z_]*\/[a-z_0-9]*\.h\)".*/\1/p' "$f")
	done
	if [ -z "$bad" ]; then
		echo "ok layering: $dir/ includes only $dir/ and the folders before it"; pass=$((pass + 1))
	else
		echo "not ok layering: $dir/ includes a later stage:$bad"; fail=$((fail + 1))
	fi
done
out=$(grep -nE "(^|[^a-z_])(fprintf|printf|vfprintf|fputs|fputc|putc|putchar|puts|fwrite)\(" \
	analyzer/*.c | head -3; grep -n "FILE *\*" analyzer/*.h | head -3)
if [ -z "$out" ]; then
	echo "ok layering: analyzer/ prints nothing (no stdio output, no FILE in its headers)"; pass=$((pass + 1))
else
	echo "not ok layering: analyzer/ prints: $out"; fail=$((fail + 1))
fi
[ "$fail" = 0 ]
