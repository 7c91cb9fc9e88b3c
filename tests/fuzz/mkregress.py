#!/usr/bin/env python3
"""Writes the hand-made inputs of tests/data/fuzz-regress/: shapes a compiler never emits but
a file can hold (types that contain themselves, typedef cycles), which the layout engine
must refuse or bound instead of recursing or looping forever. Raw BTF is built from
scratch; the DWARF ones patch one DW_AT_type (DW_FORM_ref4, CU-relative) in
examples/bin/tricky_dwarf4.o, checking the old value first.
usage: tests/fuzz/mkregress.py OUTDIR [examples/bin/tricky_dwarf4.o]"""
import os
import struct
import sys

KIND = {"int": 1, "ptr": 2, "array": 3, "struct": 4, "typedef": 8, "const": 10}


class Btf:
    def __init__(self):
        self.strs = b"\0"
        self.types = b""

    def s(self, name):
        if not name:
            return 0
        off = len(self.strs)
        self.strs += name.encode() + b"\0"
        return off

    def t(self, name, kind, vlen, size_or_type, extra=b""):
        info = (KIND[kind] << 24) | vlen
        self.types += struct.pack("<III", self.s(name), info, size_or_type) + extra

    def int(self, name, size):
        self.t(name, "int", 0, size, struct.pack("<I", size * 8))

    def struct(self, name, size, members):  # members: [(name, type_id, bit_offset)]
        body = b"".join(struct.pack("<III", self.s(n), tid, off) for n, tid, off in members)
        self.t(name, "struct", len(members), size, body)

    def array(self, elem, index, nelems):
        self.t(None, "array", 0, 0, struct.pack("<III", elem, index, nelems))

    def blob(self):
        hdr = struct.pack("<HBBIIIII", 0xEB9F, 1, 0, 24, 0, len(self.types),
                          len(self.types), len(self.strs))
        return hdr + self.types + self.strs


def self_struct():
    """struct loop { int a; struct loop self; }: [1] int, [2] struct with a member of id 2."""
    b = Btf()
    b.int("int", 4)
    b.struct("loop", 8, [("a", 1, 0), ("self", 2, 32)])
    return b.blob()


def self_struct_twice():
    """struct twice { struct twice a, b; }: a depth bound alone still leaves 2^depth calls."""
    b = Btf()
    b.int("int", 4)
    b.struct("twice", 16, [("a", 2, 0), ("b", 2, 64)])
    return b.blob()


def self_struct_twice_variant():
    """The same type grown by a member: `hitmap diff` then walks both (hm_layout_walk)."""
    b = Btf()
    b.int("int", 4)
    b.struct("twice", 24, [("a", 2, 0), ("b", 2, 64), ("c", 1, 128)])
    return b.blob()


def array_cycle():
    """struct ring { struct ring next[1]; } through an array: [2] struct -> [3] array -> [2]."""
    b = Btf()
    b.int("int", 4)
    b.struct("ring", 8, [("next", 3, 0)])
    b.array(2, 1, 1)
    return b.blob()


def typedef_cycle():
    """typedef a_t b_t; typedef const b_t a_t; and a struct with a member of that type."""
    b = Btf()
    b.int("int", 4)
    b.t("a_t", "typedef", 0, 3)          # [2] a_t -> [3]
    b.t(None, "const", 0, 2)            # [3] const -> [2]
    b.struct("holder", 8, [("x", 2, 0), ("y", 1, 32)])
    return b.blob()


def void_member():
    """struct hole { int a; void v; } with v at bit 60: a member of type id 0 (void) that
    starts inside a byte, so the byte holding it maps to a member with no type."""
    b = Btf()
    b.int("int", 4)
    b.struct("hole", 8, [("a", 1, 0), ("v", 0, 60)])
    return b.blob()


def patch_ref(obj, info_off, attr_off, old, new):
    """The DW_AT_type at .debug_info+attr_off (readelf's <offset>) from <old> to <new>."""
    b = bytearray(obj)
    cur = struct.unpack_from("<I", b, info_off + attr_off)[0]
    if cur != old:
        raise SystemExit("tricky_dwarf4.o changed: <0x%x> holds <0x%x>, expected <0x%x>"
                         % (attr_off, cur, old))
    struct.pack_into("<I", b, info_off + attr_off, new)
    return bytes(b)


def debug_info_offset(obj):
    """File offset of .debug_info in a little-endian ELF64 file."""
    shoff, = struct.unpack_from("<Q", obj, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", obj, 0x3A)
    sh = [struct.unpack_from("<IIQQQQ", obj, shoff + i * shentsize) for i in range(shnum)]
    strtab = sh[shstrndx][4]
    for name, _, _, _, off, _ in sh:
        if obj[strtab + name:].split(b"\0", 1)[0] == b".debug_info":
            return off
    raise SystemExit("no .debug_info")


def dwarf(obj):
    info = debug_info_offset(obj)
    return [
        # struct bits_hole's member 'tag' (type at <0x137>, was int8_t <0x85>) becomes
        # struct bits_hole <0x122> itself.
        ("self-member", patch_ref(obj, info, 0x137, 0x85, 0x122)),
        # typedef __uint8_t <0x40> (type at <0x48>, was <0x1d>) names itself.
        ("typedef-self", patch_ref(obj, info, 0x48, 0x1D, 0x40)),
    ]


if __name__ == "__main__":
    out = sys.argv[1]
    for name, fn in [("self-struct", self_struct), ("self-struct-twice", self_struct_twice),
                     ("self-struct-twice-variant", self_struct_twice_variant),
                     ("array-cycle", array_cycle),
                     ("typedef-cycle", typedef_cycle), ("void-member", void_member)]:
        with open(os.path.join(out, "layout_btf-" + name), "wb") as f:
            f.write(fn())
    obj = sys.argv[2] if len(sys.argv) > 2 else "examples/bin/tricky_dwarf4.o"
    with open(obj, "rb") as f:
        for name, data in dwarf(f.read()):
            with open(os.path.join(out, "layout_dwarf-" + name), "wb") as g:
                g.write(data)
