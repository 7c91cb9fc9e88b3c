#!/usr/bin/env python3
"""Writes small damaged perf.data files for tests/e2e/hostile.sh (data our own script
synthesizes, in perf's file or pipe layout; perf script reads the undamaged ones).

  hostile_gen.py OUT BINARY [--samples N] [--zero-size K] [--extra K:BYTES]
                 [--unknown-id K] [--pipe] [--mmap PATH]...

Every file holds one PMU-like event (PERF_TYPE_RAW) with IDENTIFIER, IP, TID, TIME, ADDR,
CPU and PERIOD, one MMAP record per PT_LOAD of BINARY (at 0x555555554000) and one per
--mmap path, and N samples whose ip is BINARY's `main` and whose addr walks the 64 bytes
after its symbol `stats` (a global; --data-sym names another). Sample k (0-based) can be damaged:
  --zero-size K     its header size becomes 0 (a corrupt record)
  --extra K:BYTES   BYTES zero bytes appended inside the record (size grows)
  --unknown-id K    its IDENTIFIER names no attr (the file then has a second event, id
                    ID + 1, without samples: with one event perf and hitmap take every
                    sample for it)
With --mmap, every 10th sample's ip and addr fall in the first --mmap path instead.
"""
import argparse
import os
import struct
import subprocess

BASE = 0x555555554000
ID = 77
ST = (1 << 16) | (1 << 0) | (1 << 1) | (1 << 2) | (1 << 3) | (1 << 7) | (1 << 8)
# IDENTIFIER | IP | TID | TIME | ADDR | CPU | PERIOD


def sym(binary, name):
    out = subprocess.run(["nm", binary], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[2] == name:
            return int(f[0], 16)
    raise SystemExit(f"hostile_gen.py: {binary} has no symbol {name}")


def attr():
    # perf_event_attr, PERF_ATTR_SIZE_VER5 (112 bytes); flags: sample_id_all (bit 18)
    a = struct.pack("<IIQQQQQII", 4, 112, 0x1cd, 4000, ST, 0, 1 << 18, 0, 0)
    return a + b"\0" * (112 - len(a))


def sid(pid, time):
    # sample_id_all trailer of ST: TID, TIME, CPU, IDENTIFIER
    return struct.pack("<IIQIIQ", pid, pid, time, 0, 0, ID)


def segments(binary):
    """(vaddr, offset, memsz) of each PT_LOAD, page-aligned, as the loader maps them."""
    out = subprocess.run(["readelf", "-lW", binary], capture_output=True, text=True,
                         check=True).stdout
    segs = []
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == "LOAD":
            off, va, memsz = int(f[1], 16), int(f[2], 16), int(f[5], 16)
            segs.append((va & ~0xfff, off & ~0xfff, (va & 0xfff) + memsz + 0xfff & ~0xfff))
    return segs


def mmap(path, pid, start, length, pgoff=0):
    name = path.encode() + b"\0"
    name += b"\0" * (-len(name) % 8)
    body = struct.pack("<IIQQQ", pid, pid, start, length, pgoff) + name + sid(pid, 0)
    return struct.pack("<IHH", 1, 2, 8 + len(body)) + body


def sample(k, ip, addr, pid, extra, ident):
    body = struct.pack("<QQIIQQIIQ", ident, ip, pid, pid + k % 2, 1000 + k, addr,
                       k % 2, 0, 4000)
    body += b"\0" * extra
    return struct.pack("<IHH", 9, 2, 8 + len(body)) + body


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("binary")
    p.add_argument("--samples", type=int, default=100)
    p.add_argument("--zero-size", type=int, default=-1)
    p.add_argument("--extra", default="")
    p.add_argument("--unknown-id", type=int, action="append", default=[])
    p.add_argument("--pipe", action="store_true")
    p.add_argument("--mmap", action="append", default=[])
    p.add_argument("--data-sym", default="stats")
    a = p.parse_args()
    a.binary = os.path.abspath(a.binary)
    extra_at, extra_n = (int(x) for x in a.extra.split(":")) if a.extra else (-1, 0)
    ip = BASE + sym(a.binary, "main")
    data = BASE + sym(a.binary, a.data_sym)
    pid = 4242
    recs = [mmap(a.binary, pid, BASE + va, size, off) for va, off, size in segments(a.binary)]
    for i, path in enumerate(a.mmap):
        recs.append(mmap(path, pid, 0x7f0000000000 + i * 0x100000, 0x1000))
    for k in range(a.samples):
        at_ip, at_addr = ip, data + (k * 8) % 64
        if a.mmap and k % 10 == 9:
            at_ip = at_addr = 0x7f0000000000 + 0x10
        r = sample(k, at_ip, at_addr, pid, extra_n if k == extra_at else 0,
                   ID + 1000 if k in a.unknown_id else ID)
        if k == a.zero_size:
            r = r[:6] + b"\0\0" + r[8:]
        recs.append(r)
    body = b"".join(recs)
    with open(a.out, "wb") as f:
        if a.pipe:
            # pipe header, then HEADER_ATTR (attr + its ids) before the records
            f.write(struct.pack("<QQ", 0x32454c4946524550, 16))
            ha = attr() + struct.pack("<Q", ID)
            f.write(struct.pack("<IHH", 64, 0, 8 + len(ha)) + ha)
            f.write(body)
            return
        ids = [ID, ID + 1] if a.unknown_id else [ID]
        hdr = 104
        attrs_off = hdr
        ids_off = attrs_off + (112 + 16) * len(ids)
        data_off = ids_off + 8 * len(ids)
        f.write(struct.pack("<QQQ", 0x32454c4946524550, hdr, 112 + 16))
        f.write(struct.pack("<QQ", attrs_off, (112 + 16) * len(ids)))
        f.write(struct.pack("<QQ", data_off, len(body)))
        f.write(struct.pack("<QQ", 0, 0))
        f.write(b"\0" * 32)	# no features
        for i in range(len(ids)):
            f.write(attr() + struct.pack("<QQ", ids_off + 8 * i, 8))
        for i in ids:
            f.write(struct.pack("<Q", i))
        f.write(body)


main()
