#!/usr/bin/env python3
"""Renames the files a perf.data recording mapped (MMAP and MMAP2 records, file mode):
each DIR/NAME becomes PREFIX/NAME, the records resized and the feature sections moved
after them. tests/fuzz/seeds.sh uses it so that the report target's seeds name the
examples as /proc/self/cwd/examples/bin/NAME, which resolves wherever the checkout is.
usage: tests/fuzz/renamebin.py IN OUT DIR PREFIX    (exit 1 when IN is not file mode)"""
import os
import struct
import sys

MMAP, MMAP2 = 1, 10


def rename(data, old_dir, prefix):
    magic, hsize, _attr_size = struct.unpack_from("<8sQQ", data, 0)
    if magic != b"PERFILE2" or hsize < 104:
        return None
    doff, dsize = struct.unpack_from("<QQ", data, 40)
    feats = struct.unpack_from("<4Q", data, 72)
    nfeat = sum(bin(w).count("1") for w in feats)
    out, pos, end = bytearray(), doff, doff + dsize
    while pos + 8 <= end:
        rtype, misc, size = struct.unpack_from("<IHH", data, pos)
        if size < 8 or pos + size > end:
            break
        rec = data[pos:pos + size]
        name_at = {MMAP: 40, MMAP2: 72}.get(rtype)
        if name_at and name_at < size:
            nul = rec.find(b"\0", name_at)
            name = rec[name_at:nul] if nul >= 0 else b""
            pad = (len(name) + 1 + 7) & ~7
            base = os.path.basename(name.decode("utf-8", "replace"))
            if nul >= 0 and name.startswith(old_dir.encode() + b"/") and name_at + pad <= size:
                new = (prefix + "/" + base).encode()
                npad = (len(new) + 1 + 7) & ~7
                rec = bytearray(rec[:name_at] + new.ljust(npad, b"\0") + rec[name_at + pad:])
                rec[6:8] = struct.pack("<H", len(rec))
        out += rec
        pos += size
    out += data[pos:end]
    delta = len(out) - dsize
    head = bytearray(data[:doff])
    struct.pack_into("<Q", head, 48, len(out))
    table = bytearray(data[end:end + 16 * nfeat])
    for i in range(nfeat):
        off, sz = struct.unpack_from("<QQ", table, 16 * i)
        if off >= end:
            struct.pack_into("<QQ", table, 16 * i, off + delta, sz)
    return bytes(head) + bytes(out) + bytes(table) + data[end + 16 * nfeat:]


def main():
    src, dst, old_dir, prefix = sys.argv[1:5]
    res = rename(open(src, "rb").read(), os.path.realpath(old_dir), prefix)
    if res is None:
        return 1
    open(dst, "wb").write(res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
