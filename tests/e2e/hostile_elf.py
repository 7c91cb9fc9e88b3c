#!/usr/bin/env python3
"""Damages an ELF64 little-endian file in place for tests/e2e/hostile.sh.

  hostile_elf.py FILE nobits SECTION      the section's sh_type becomes SHT_NOBITS
  hostile_elf.py FILE cu-version N [K]    the version of .debug_info's unit K (default 0,
                                          the first) becomes N
  hostile_elf.py FILE shrink SECTION N    the section's sh_size becomes N
"""
import struct
import sys


def sections(b):
    shoff, = struct.unpack_from("<Q", b, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", b, 0x3a)
    stroff, = struct.unpack_from("<Q", b, shoff + shstrndx * shentsize + 0x18)
    for i in range(shnum):
        o = shoff + i * shentsize
        nm, = struct.unpack_from("<I", b, o)
        yield b[stroff + nm:b.index(0, stroff + nm)].decode(), o


def header(b, name):
    for n, o in sections(b):
        if n == name:
            return o
    raise SystemExit(f"hostile_elf.py: no section {name}")


def main():
    path, op = sys.argv[1], sys.argv[2]
    b = bytearray(open(path, "rb").read())
    if op == "nobits":
        struct.pack_into("<I", b, header(b, sys.argv[3]) + 4, 8)
    elif op == "shrink":
        struct.pack_into("<Q", b, header(b, sys.argv[3]) + 0x20, int(sys.argv[4]))
    elif op == "cu-version":
        off, = struct.unpack_from("<Q", b, header(b, ".debug_info") + 0x18)
        for _ in range(int(sys.argv[4]) if len(sys.argv) > 4 else 0):
            unit_len, = struct.unpack_from("<I", b, off)
            off += 4 + unit_len
        unit_len, = struct.unpack_from("<I", b, off)
        assert unit_len < 0xfffffff0, "64-bit DWARF"
        struct.pack_into("<H", b, off + 4, int(sys.argv[3]))
    else:
        raise SystemExit(f"hostile_elf.py: unknown operation {op}")
    open(path, "wb").write(b)


main()
