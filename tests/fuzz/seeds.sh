#!/usr/bin/env bash
# Makes the seed corpora of the fuzz targets from small real files: recordings of the
# examples by hitmap and perf (file and pipe mode), the shared perf.data fixtures, the
# examples' objects and binaries (DWARF 4 and 5), BTF that pahole encodes from them, and
# the code bytes of the examples' functions. Every saved crash input of a target
# (tests/data/fuzz-regress/TARGET-*) is a seed too.
#   usage: tests/fuzz/seeds.sh DIR [HITMAP]    (writes DIR/perfdata, DIR/layout_dwarf, ...)
# Idempotent: a corpus directory that already has seeds is kept, with what the fuzzer
# added to it; delete DIR to start again. Nothing here is committed: the corpora are
# generated at `make fuzz` time.
set -u
cd "$(dirname "$0")/../.." || exit 1
DIR=${1:?usage: seeds.sh DIR [HITMAP]}
H=${2:-./hitmap}
B=examples/bin
SHARED=$(git rev-parse --show-toplevel 2>/dev/null)/../shared
[ -d "$SHARED/data/perf" ] || SHARED=/work/shared
MAXLEN=65536	# keep in step with -max_len in tests/fuzz/run.sh
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# Files of at most MAXLEN bytes are copied; larger ones give their first MAXLEN bytes,
# which the readers must treat as a cut-off file.
seed() {	# seed TARGET FILE [NAME]
	local name=${3:-$(basename "$2")}
	[ -s "$2" ] || return 0
	head -c $MAXLEN "$2" >"$DIR/$1/seed-$name"
}

fresh() {	# true when TARGET's corpus has no seeds yet
	mkdir -p "$DIR/$1"
	! ls "$DIR/$1"/seed-* >/dev/null 2>&1
}

regress() {	# the saved crash inputs of TARGET
	local f
	for f in tests/data/fuzz-regress/"$1"-*; do
		[ -f "$f" ] && cp "$f" "$DIR/$1/seed-regress-$(basename "$f")"
	done
	return 0
}

if fresh perfdata; then
	W="$B/false_sharing 20000000"
	"$H" record -c timer -F 1000 -o "$T/hm-timer.data" -- $W >/dev/null 2>&1
	"$H" record -c timer -F 1000 -o "$T/hm-true.data" -- $B/true_sharing 2000000 >/dev/null 2>&1
	if command -v perf >/dev/null; then
		perf record -q -e cpu-clock -F 1000 -o "$T/perf.data" -- $W >/dev/null 2>&1
		perf record -q -e cpu-clock -F 1000 -g -d --user-regs=ax,bx,cx,dx,si,di,bp,sp,ip \
			-o "$T/perf-regs-g.data" -- $W >/dev/null 2>&1
		perf record -q -e cpu-clock -F 1000 -o - -- $W 2>/dev/null >"$T/perf-pipe.data"
		perf record -q -e cpu-clock -F 1000 --user-regs=ip,sp -o - -- $W 2>/dev/null \
			>"$T/perf-pipe-regs.data"
	fi
	for f in "$T"/*.data "$SHARED"/data/perf/*.data; do
		[ -f "$f" ] && seed perfdata "$f"
	done
	regress perfdata
fi

if fresh layout_dwarf; then
	for f in $B/*; do
		[ -f "$f" ] && seed layout_dwarf "$f"
	done
	regress layout_dwarf
fi

if fresh layout_btf; then
	for o in tricky imap false_sharing split layout_change; do
		f=$B/$o
		[ -f "$f" ] || f=$B/$o.o
		[ -f "$f" ] || continue
		pahole --btf_encode_detached="$T/$o.btf" "$f" >/dev/null 2>&1 &&
			seed layout_btf "$T/$o.btf"
		# The same types as an ELF .BTF section, which hm_layout_open_btf also reads.
		cp "$f" "$T/$o.elf" && pahole -J "$T/$o.elf" >/dev/null 2>&1 &&
			seed layout_btf "$T/$o.elf" "$o-elf"
	done
	regress layout_btf
fi

if fresh decode; then
	# Each function's bytes as objdump shows them, one seed per function (at most 4 KB).
	for f in $B/*; do
		[ -f "$f" ] || continue
		objdump -d "$f" 2>/dev/null | python3 -c '
import re, sys
out, prog = sys.argv[1], sys.argv[2]
name, code = None, bytearray()
def flush():
    if name and code:
        open("%s/seed-%s-%s" % (out, prog, re.sub(r"[^A-Za-z0-9_]", "_", name)[:60]),
             "wb").write(bytes(code[:4096]))
for line in sys.stdin:
    m = re.match(r"^[0-9a-f]+ <(.*)>:$", line)
    if m:
        flush(); name, code = m.group(1), bytearray(); continue
    parts = line.rstrip("\n").split("\t")
    if len(parts) >= 2 and re.match(r"^\s*[0-9a-f]+:$", parts[0]):
        code += bytes.fromhex(parts[1].replace(" ", ""))
flush()
' "$DIR/decode" "$(basename "$f")"
	done
	regress decode
fi

for t in perfdata layout_dwarf layout_btf decode; do
	echo "seeds: $t: $(ls "$DIR/$t" 2>/dev/null | grep -c '^seed-') seeds, $(ls "$DIR/$t" | wc -l) inputs in $DIR/$t"
done
