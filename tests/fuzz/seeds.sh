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

if fresh report; then
	# Small recordings of the examples (under 64 KiB: one batch of 7 or 97 is a few
	# samples, so many boundaries), their MMAP file names rewritten to
	# /proc/self/cwd/examples/bin/NAME (report_fuzz.c says why).
	R=$T/report
	mkdir -p "$R"
	for spec in "fs:false_sharing 50000000" "ts:true_sharing 20000000" "split:split 20000000" \
		"heap:objects heap 20000000" "stack:objects stack 20000000" \
		"tls:objects tls 20000000"; do
		"$H" record -c timer -F 2000 -o "$R/hm-${spec%%:*}.data" -- $B/${spec#*:} \
			>/dev/null 2>&1
	done
	if command -v perf >/dev/null; then
		perf record -q -e cpu-clock -F 2000 -g -d --user-regs=ax,bx,cx,dx,si,di,bp,sp,ip \
			-o "$R/perf-regs-g.data" -- $B/false_sharing 20000000 >/dev/null 2>&1
	fi
	for f in "$R"/*.data; do
		[ -f "$f" ] && tests/fuzz/renamebin.py "$f" "$f.cwd" $B /proc/self/cwd/$B &&
			seed report "$f.cwd" "$(basename "$f")"
	done
	# PMU recordings (c2c, mem) of other machines: their files do not resolve here.
	for f in "$SHARED"/data/perf/*.data; do
		[ -f "$f" ] && seed report "$f"
	done
	regress report
fi

if fresh btf_elf; then
	# Raw BTF of the examples behind the 3 bytes that pick the .BTF section's variant
	# (btf_elf_fuzz.c): each variant once, the huge header fields and vlen on two files.
	for o in false_sharing tricky imap split; do
		f=$B/$o
		[ -f "$f" ] || f=$B/$o.o
		[ -f "$f" ] && pahole --btf_encode_detached="$T/elf-$o.btf" "$f" >/dev/null 2>&1 ||
			continue
		python3 - "$T/elf-$o.btf" "$DIR/btf_elf/seed-$o" "$o" <<'PY'
import sys
btf, out, name = open(sys.argv[1], "rb").read(), sys.argv[2], sys.argv[3]
variants = {"progbits": (0, 0, 0), "nobits": (1, 0, 0), "note": (2, 0, 0),
            "alloc": (3, 0, 0), "misaligned": (4, 3, 0), "size-past-end": (8, 8, 0),
            "cut": (0x10, 0, 0), "offset-past-end": (0x18, 0, 0), "second": (0x20, 0, 0),
            "bad-name": (0x80, 0, 0)}
if name in ("false_sharing", "tricky"):
    for field in range(6):
        for val in (0, 3, 6):
            variants["huge-%d-%d" % (field, val)] = (0x40, field << 3, val)
for v, head in variants.items():
    open("%s-%s" % (out, v), "wb").write(bytes(head) + btf)
PY
	done
	regress btf_elf
fi

if fresh kcore; then
	# Core files as kcore_fuzz.c expects them: false_sharing's .text at KTEXT + KPAD (its
	# kallsyms says so), a segment after it in memory but not in the file, one without
	# bytes, a VMCOREINFO note; then the damage a core file can carry, once each.
	# "param-deref": each function starts with mov (%rdi),%rax, so that BTF types its
	# first parameter there.
	objcopy -O binary --only-section=.text $B/false_sharing "$T/ktext" 2>/dev/null &&
		python3 - "$T/ktext" "$DIR/kcore/seed" \
			"$(objdump -h $B/false_sharing | awk '$2 == ".text" {print $4}')" \
			$(nm $B/false_sharing | awk '$2 == "t" || $2 == "T" {print $1}') <<'PY'
import struct, sys
KTEXT, KPAD, RELEASE = 0xffffffff81000000, 0x1000, b"6.1.0-fuzz"
text = open(sys.argv[1], "rb").read()
text_addr, funcs = int(sys.argv[3], 16), [int(a, 16) for a in sys.argv[4:]]
deref = bytearray(text)
for a in funcs:
    if text_addr <= a and a + 3 <= text_addr + len(text):
        deref[a - text_addr:a - text_addr + 3] = b"\x48\x8b\x07"
seg_a = b"\xcc" * KPAD + text
seg_a += b"\xcc" * (-len(seg_a) % 16)
seg_b = bytes((i * 7 + 1) & 0xff for i in range(0x100))

def core(segs, note=True, release=RELEASE, bad=None):
    # segs: (vaddr, bytes or None, memsz); bytes in reverse order after the headers.
    info = b"OSRELEASE=" + release + b"\nBUILD-ID=" + b"ab" * 20 + b"\n"
    phnum = len(segs) + 1
    off = 64 + 56 * phnum
    body, phs = b"", []
    for vaddr, data, memsz in reversed(segs):
        n = len(data) if data else 0
        phs.insert(0, struct.pack("<IIQQQQQQ", 1, 7, off + len(body) if n else 0, vaddr,
                                  vaddr, n, memsz, 0x10))
        body += (data or b"") + b"\0" * (-n % 16)
    note_at = off + len(body)
    nb = struct.pack("<III", 11, len(info), 0) + b"VMCOREINFO\0\0" + info if note else b""
    body += nb
    phs.insert(0, struct.pack("<IIQQQQQQ", 4, 0, note_at if note else 0, 0, 0, len(nb), 0, 0))
    eh = bytearray(b"\x7fELF" + bytes([2, 1, 1]) + b"\0" * 9)
    eh += struct.pack("<HHIQQQIHHHHHH", 4, 62, 1, 0, 64, 0, 0, 64, 56, phnum, 0, 0, 0)
    phtab = b"".join(phs)
    if bad == "phoff":
        eh[32:40] = struct.pack("<Q", 1 << 20)
    if bad == "class32":
        eh[4] = 1
    if bad == "exec":
        eh[16:18] = struct.pack("<H", 2)
    if bad == "wrap":
        phtab = phtab[:56 + 16] + struct.pack("<Q", (1 << 64) - 0x100) + phtab[56 + 24:]
    if bad == "segoff":
        phtab = phtab[:56 + 8] + struct.pack("<Q", 1 << 24) + phtab[56 + 16:]
    out = bytes(eh) + phtab + body
    if bad == "cut":
        out = out[:off + len(seg_a) // 2]
    return out

plain = [(KTEXT, seg_a, len(seg_a)), (KTEXT + len(seg_a), seg_b, len(seg_b)),
         (0xffffffff83000000, None, 0x1000)]
seeds = {"plain": core(plain), "no-note": core(plain, note=False),
         "other-release": core(plain, release=b"6.2.0-other"),
         "text-only": core(plain[:1]), "overlap": core(plain + [(KTEXT + 0x800, seg_b, 0x100)]),
         "param-deref": core([(KTEXT, b"\xcc" * KPAD + bytes(deref), KPAD + len(deref))])}
for bad in ("phoff", "class32", "exec", "wrap", "segoff", "cut"):
    seeds[bad] = core(plain, bad=bad)
for name, data in seeds.items():
    open("%s-%s" % (sys.argv[2], name), "wb").write(data)
PY
	regress kcore
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

for t in perfdata layout_dwarf layout_btf decode report btf_elf kcore; do
	[ -d "$DIR/$t" ] || continue
	echo "seeds: $t: $(ls "$DIR/$t" 2>/dev/null | grep -c '^seed-') seeds, $(ls "$DIR/$t" | wc -l) inputs in $DIR/$t"
done
