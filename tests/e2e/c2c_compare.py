#!/usr/bin/env python3
"""c2c_compare.py PERF.txt HITMAP.json: compares `perf c2c report --stdio --no-source`
(perf 6.1's layout) with `hitmap report --view c2c --json` on the same recording and the
same -d/--show-all. Checked: every row of Global Shared Cache Line Event Information; the
set of lines in the Shared Data Cache Line Table and each one's columns (the metric's
share, HITM or peer totals, records, loads, stores, store levels, load levels); each
line's Pareto rows, by offset and code address (percentages of HITM or peer and stores,
mean cycles, records, cpu cnt). Node and PA cnt are not compared: hitmap does not read
the NUMA topology (docs/report.md). Prints one "mismatch: ..." line per difference and
the counts compared; exit 1 on a mismatch."""
import json
import re
import sys

GLOBAL = {
    "Total Shared Cache Lines": "shared_lines", "Load HITs on shared lines": "loads",
    "Fill Buffer Hits on shared lines": "ld_fb", "L1D hits on shared lines": "ld_l1",
    "L2D hits on shared lines": "ld_l2", "LLC hits on shared lines": "ld_llc",
    "Load hits on peer cache or nodes": "ld_peer",
    "Locked Access on shared lines": "locked", "Blocked Access on shared lines": "blocked",
    "Store HITs on shared lines": "stores", "Store L1D hits on shared lines": "st_l1hit",
    "Store No available memory level": "st_na", "Total Merged records": "merged_records",
}
# perf's table columns after Index, Address, Node, PA cnt and the metric's share.
TABLE = ["m_total", "m_lcl", "m_rmt", "records", "loads", "stores", "st_l1hit", "st_l1miss",
         "st_na", "ld_fb", "ld_l1", "ld_l2", "ld_llc", "hitm_local", "ld_rmt_hit",
         "hitm_remote", "dram_local", "dram_remote"]


def sections(text):
    out, name = {}, None
    lines = text.splitlines()
    for i, l in enumerate(lines):
        if l.startswith("=====") and i + 2 < len(lines) and lines[i + 2].startswith("====="):
            name = lines[i + 1].strip()
            out[name] = []
        elif name and not l.startswith("====="):
            out[name].append(l)
    return out


def parse_perf(text):
    s = sections(text)
    glob = {}
    for l in s.get("Global Shared Cache Line Event Information", []):
        m = re.match(r"\s+(.*?)\s+:\s+(\d+)$", l)
        if m:
            glob[m.group(1)] = int(m.group(2))
    table = {}
    for l in s.get("Shared Data Cache Line Table", []):
        f = l.split()
        if len(f) == 23 and f[0].isdigit() and f[1].startswith("0x"):
            table[int(f[1], 16)] = (float(f[4].rstrip("%")), [int(x) for x in f[5:]])
    pareto, cur = {}, None
    for l in s.get("Shared Cache Line Distribution Pareto", []):
        f = l.split()
        if len(f) == 7 and f[0].isdigit() and f[6].startswith("0x"):
            cur = int(f[6], 16)
            pareto[cur] = {}
        elif cur is not None and f and f[0].endswith("%") and len(f) >= 15:
            pct = [float(x.rstrip("%")) for x in f[0:5]]
            key = (int(f[5], 16), int(f[8], 16))
            pareto[cur][key] = (pct, [int(x) for x in f[9:14]])
    return glob, table, pareto


def main():
    perf = open(sys.argv[1]).read()
    view = json.load(open(sys.argv[2]))["c2c_view"]
    peer = view["display"] == "peer"
    glob, table, pareto = parse_perf(perf)
    bad, n = [], 0

    def check(what, want, got):
        nonlocal n
        n += 1
        if want != got:
            bad.append("%s: perf %s, hitmap %s" % (what, want, got))

    for label, key in GLOBAL.items():
        check("Global Shared: " + label, glob.get(label), view["global_shared"][key])
    mine = {int(c["addr"], 16): c for c in view["cachelines"]}
    check("lines in the table", sorted(hex(a) for a in table), sorted(hex(a) for a in mine))
    for addr, (share, cols) in table.items():
        c = mine.get(addr)
        if not c:
            continue
        c = dict(c)
        lcl, rmt = ("peer_local", "peer_remote") if peer else ("hitm_local", "hitm_remote")
        c["m_lcl"], c["m_rmt"] = c[lcl], c[rmt]
        c["m_total"] = c[lcl] + c[rmt]
        check("%#x share" % addr, "%.2f" % share, "%.2f" % c["pct_metric"])
        for name, want in zip(TABLE, cols):
            check("%#x %s" % (addr, name), want, c[name])
        rows = {(o["offset"], int(o["ip"], 16)): o for o in c["offsets"]}
        want_rows = pareto.get(addr, {})
        check("%#x Pareto rows" % addr, sorted(want_rows), sorted(rows))
        for key, (pct, nums) in want_rows.items():
            o = rows.get(key)
            if not o:
                continue
            r, l = ("pct_peer_remote", "pct_peer_local") if peer else \
                   ("pct_hitm_remote", "pct_hitm_local")
            got = [o[r], o[l], o["pct_st_l1hit"], o["pct_st_l1miss"], o["pct_st_na"]]
            check("%#x %s percentages" % (addr, key), ["%.2f" % x for x in pct],
                  ["%.2f" % x for x in got])
            cyc = o["mean_cycles"]
            cr, cl = ("rmt_peer", "lcl_peer") if peer else ("rmt_hitm", "lcl_hitm")
            got = ["%.0f" % (cyc[k] or 0) for k in (cr, cl, "load")]
            check("%#x %s mean cycles" % (addr, key), [str(x) for x in nums[0:3]], got)
            check("%#x %s records, cpu cnt" % (addr, key), nums[3:5], [o["records"], o["cpus"]])
    for b in bad:
        print("mismatch: " + b)
    print("%d values compared, %d lines, %d differ" % (n, len(table), len(bad)))
    return 1 if bad else 0


sys.exit(main())
