#!/usr/bin/env python3
"""The kernel lab's assertions on what the guest brought back (tests/kernel/run.sh).

Names, verdicts and counts, never speed: TCG has no cache model. The second tool is real
perf: `perf script` over hitmap's own recordings (same file, perf's symbolization) and
`perf report` over perf's own guest recordings. Prints `ok NAME` / `not ok NAME - why`,
a table of the numbers per workload, and `N passed, N failed`.
"""
import argparse
import collections
import json
import os
import re
import struct
import subprocess
import sys
import time

import check_xfs
import check_cases
import check_slab
import check_kmod

WORKLOADS = {  # name: (setup step it needs, kernel function prefixes the workload reaches)
    "xattr_list": (None, ("simple_xattr", "shmem_listxattr", "vfs_listxattr", "listxattr")),
    "create_unlink": (None, ("shmem_",)),
    "orphan": ("ext4.setup", ("ext4_",)),
    "pread_block": ("xfs.setup", ("xfs_",)),
    "loop_ctl": (None, ("loop_control", "idr_", "mutex_")),
}
PERCPU_LIMIT = 1 << 32  # a %gs:-relative offset, not a kernel-half address

results = []


def check(name, ok, why=""):
    results.append(ok)
    print(("ok " if ok else "not ok ") + name + ("" if ok or not why else " - " + why))
    return ok


def run(cmd, timeout=300):
    t = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return p, time.monotonic() - t


def load_json(text):
    try:
        return json.loads(text)
    except ValueError:
        return None


def report_ok(tag, d, rc, err):
    return check(tag, rc == 0 and d is not None and d.get("schema") == "hitmap.report/1"
                 and "stats" in d and d["samples"]["total"] > 0,
                 "exit %d, %s" % (rc, (err.strip().splitlines() or ["no JSON"])[-1][:160]))


def sites(d):
    """(ip, func) of every code site on every line."""
    for line in d["lines"]:
        for f in line["fields"]:
            for s in f["sites"]:
                yield int(s["ip"], 16), s["func"], line, f


def perf_syms(data, vmlinux, symfs):
    """ip -> symbol as perf names it, and samples per symbol, from perf script over the
    same file (modules from their files under symfs, the unpacked packages)."""
    p, _ = run(["perf", "script", "-i", data, "--vmlinux", vmlinux, "--symfs", symfs,
                "-F", "ip,sym"])
    out, count = {}, collections.Counter()
    for ln in p.stdout.splitlines():
        parts = ln.split()
        if len(parts) >= 2:
            out[int(parts[0], 16)] = parts[1]
            count[parts[1]] += 1
    return out, count


def noaddr_funcs(stats_text):
    """--stats' "samples without a data address, by function": kernel name -> count."""
    out, inside = {}, False
    for ln in stats_text.splitlines():
        if ln.startswith("samples without a data address"):
            inside = True
            continue
        m = re.match(r"\s+(\d+)\s+\[k\]\s+(\S+)$", ln) if inside else None
        if inside and not m and not re.match(r"\s+\d+\s", ln):
            inside = False
        if m:
            out[m.group(2)] = int(m.group(1))
    return out


def perf_top(data, vmlinux, n):
    p, _ = run(["perf", "report", "-i", data, "--vmlinux", vmlinux, "--stdio", "-q",
                "--sort", "sym"])
    top = []
    for ln in p.stdout.splitlines():
        m = re.match(r"\s*[\d.]+%\s+\[k\]\s+(\S+)", ln)
        if m:
            top.append(m.group(1))
    return top[:n]


SYMS = {}


def symbol_ranges(vmlinux, debug_root):
    """name -> [(start, end)] of the vmlinux's and the lab modules' functions (nm)."""
    if not SYMS:
        files = [vmlinux] + [os.path.join(d, f) for d, _, fs in
                             os.walk(os.path.join(debug_root, "usr/lib/debug/lib/modules"))
                             for f in fs if f.endswith(".ko")]
        for f in files:
            p, _ = run(["nm", "-S", "--defined-only", f])
            for ln in p.stdout.splitlines():
                parts = ln.split()  # "addr size type name", or "addr type name"
                if len(parts) == 3:
                    parts.insert(1, "0")
                if len(parts) == 4 and parts[2] in "tTwW":
                    start = int(parts[0], 16)
                    SYMS.setdefault((f, parts[3]), []).append((start, start + int(parts[1], 16)))
    return SYMS


def aliases(a, b, vmlinux, debug_root):
    """Two names of one code: one's symbol starts inside the other's (in one file)."""
    syms = symbol_ranges(vmlinux, debug_root)
    for (f, n), ra in syms.items():
        if n != a:
            continue
        for s1, e1 in ra:
            for s2, e2 in syms.get((f, b), []):
                if s2 <= s1 < max(e2, s2 + 1) or s1 <= s2 < max(e1, s1 + 1):
                    return True
    return False


def hitmap_syms(a, data, kallsyms=None):
    """ip -> function as hitmap's report names it (tests/kernel/ksyms.c); with kallsyms,
    from that file alone (no vmlinux)."""
    p, _ = run([a.ksyms, data, "", "", kallsyms] if kallsyms else
               [a.ksyms, data, a.vmlinux, a.debug_root])
    out, with_addr = {}, 0
    for ln in p.stdout.splitlines():
        ip, addr, name = ln.split(" ", 2)
        out[int(ip, 16)] = name
        with_addr += addr != "0"
    return out, p.returncode, with_addr


def line_name(line):
    f = max(line["fields"], key=lambda f: f["records"])
    where = ("cpu%d:" % line["percpu_cpu"] if "percpu_cpu" in line else "") + line["addr"]
    return "%s %s %s (%d)" % (where, f["field"], line["verdict"], line["records"])


def numbers(tag, d, secs):
    s = d["samples"]
    named = 100.0 * s["resolved"] / s["with_addr"] if s["with_addr"] else 0.0
    # Outside string and copy primitives (memset, copy_user: docs/report.md).
    w, r = s["with_addr"] - s.get("primitives", 0), s["resolved"] - s.get("primitives_resolved", 0)
    print("# %-28s samples %5d  with_addr %5d  named %5d (%4.1f%%; %4.1f%% outside %d in "
          "primitives)  report %.1f s" % (tag, s["total"], s["with_addr"], s["resolved"], named,
                                          100.0 * r / w if w > 0 else 0.0,
                                          s.get("primitives", 0), secs))
    for line in d["lines"][:3]:
        print("#     " + line_name(line))


def check_workload(a, name, steps, guest_secs):
    setup, func_prefix = WORKLOADS[name]
    data = os.path.join(a.out, name + ".data")
    needed = ([setup] if setup else []) + [name + ".record", name + ".guestreport",
                                            name + ".perfrecord"]
    bad = [s for s in needed if steps.get(s) != "0"]
    if not check(name + ": guest steps exit 0", not bad,
                 "; ".join("%s exit %s: %s" % (s, steps.get(s, "missing"),
                                               tail(a.out, s)) for s in bad)):
        return
    p, secs = run([a.hitmap, "report", "-i", data, "--vmlinux", a.vmlinux, "--sysroot",
                   a.debug_root, "--json", "--stats"])
    host = load_json(p.stdout)
    if not report_ok(name + ": host report (vmlinux) exits 0 with hitmap.report/1", host,
                     p.returncode, p.stderr):
        return
    with open(os.path.join(a.out, name + ".guestreport.out")) as f:
        guest = load_json(f.read())
    report_ok(name + ": guest report (kcore+BTF) exits 0 with hitmap.report/1", guest,
              0, "no JSON")
    numbers(name + " host (vmlinux)", host, secs)
    if guest:
        numbers(name + " guest (kcore+BTF)", guest, guest_secs.get(name, -1))
        check(name + ": guest and host read the same samples",
              guest["samples"]["total"] == host["samples"]["total"],
              "guest %d, host %d" % (guest["samples"]["total"], host["samples"]["total"]))

    syms, counts = perf_syms(data, a.vmlinux, a.debug_root)
    noaddr = noaddr_funcs(p.stderr)
    kernel = [ip for ip in syms if ip >= 1 << 63]
    check(name + ": kernel samples recorded", len(kernel) > 0, "perf script sees none")
    kaddr = [1 for line in host["lines"] if int(line["addr"], 16) >= 1 << 63]
    check(name + ": kernel accesses with an address", len(kaddr) > 0, "no kernel-half line")
    # Every kernel ip, modules too: hitmap names the function perf names (or an alias of
    # it: another symbol of the same code, __x86_indirect_thunk_rcx in _array).
    hsyms, hrc, kaddr_n = hitmap_syms(a, data)
    kstats = re.search(r"kernel samples: (\d+), code bytes unreadable: \d+, data named: (\d+)",
                       p.stderr)
    if kstats:
        print("# %-28s kernel samples %5s  with an address %5d  named %5s" %
              (name + " host (vmlinux)", kstats.group(1), kaddr_n, kstats.group(2)))
    try:
        with open(os.path.join(a.out, name + ".guestreport.err")) as f:
            g = re.search(r"kernel samples: (\d+), code bytes unreadable: (\d+), data named: "
                          r"(\d+)", f.read())
        if g:
            print("# %-28s kernel samples %5s  code unreadable %5s  named %5s" %
                  (name + " guest (kcore+BTF)", g.group(1), g.group(2), g.group(3)))
    except OSError:
        pass
    wrong, both = collections.Counter(), 0
    for ip, perf_name in syms.items():
        if ip < 1 << 63 or perf_name == "[unknown]" or ip not in hsyms:
            continue
        both += 1
        if hsyms[ip] != perf_name and not aliases(hsyms[ip], perf_name, a.vmlinux,
                                                   a.debug_root):
            wrong["%s!=%s" % (hsyms[ip], perf_name)] += 1
    check(name + ": every kernel ip named as perf script names it (%d ips)" % both,
          hrc == 0 and both > 0 and not wrong,
          "ksyms exit %d; %s" % (hrc, ", ".join("%s (%d)" % kv for kv in wrong.most_common(3))))
    reach = [s for s in set(syms.values()) if s.startswith(func_prefix)]
    check(name + ": reaches %s* (perf script)" % "|".join(func_prefix), bool(reach),
          "no sample in such a function")
    # By function, not ip: a timer sample is charged to the access that held it up, the
    # instruction before ip in the same function (docs/decode.md, Skid), so a function
    # whose few samples were all charged so has none of perf's ips in hitmap's list.
    hnames = set(hsyms.values())

    def named(f):
        return f in hnames or any(aliases(h, f, a.vmlinux, a.debug_root) for h in hnames
                                  if h.split(".")[0] == f.split(".")[0])
    check(name + ": hitmap names those functions too", reach and all(named(f) for f in reach),
          "not named by hitmap: %s" % [f for f in reach if not named(f)][:3])
    # Functions of the samples without an address (--stats, top 10) are perf's names,
    # never more samples than perf counts for them.
    over = ["%s %d > perf %d" % (f, n, counts[f]) for f, n in noaddr.items()
            if f != "[unknown]" and n > counts[f]]
    check(name + ": --stats functions are perf's, with at most perf's counts", not over,
          ", ".join(over[:3]))
    # perf's own recording of the same workload: its hottest kernel function is in ours.
    # (thousands of samples each; the hottest function holds far more than one of them)
    top = perf_top(os.path.join(a.out, name + ".perf.data"), a.vmlinux, 1)
    check(name + ": perf record's hottest kernel function is in hitmap's recording",
          top and top[0] in set(syms.values()), "perf top %s" % top)
    check_kernel_items(name + " host", host)
    if guest:
        check_kernel_items(name + " guest", guest)
    check_primitives(name, host, counts)
    if name in SPIN_WORKLOADS:
        check_spin(a, name, host, counts)
    check_cases.after_workload(check, a, name, host, p.stderr)
    check_slab.after_workload(check, a, name, host, guest)
    check_kmod.check_workload(check, a, name, host, guest)


PRIMITIVE = re.compile(r"^_*(memset|memcpy|memmove|copy_user|copy_to_user|copy_from_user|"
                       r"clear_user|clear_page|rep_movs|rep_stos|strncpy_from_user|"
                       r"csum_partial_copy)")


def check_primitives(name, host, counts):
    """Samples perf script puts in string and copy primitives (memset_erms, copy_user_*):
    hitmap counts their accesses apart (samples.primitives, docs/report.md), at most one
    per sample of the workload."""
    perf_n = sum(n for f, n in counts.items() if PRIMITIVE.match(f))
    s = host["samples"]
    if perf_n:
        check(name + ": string and copy primitives counted apart (%d accesses; perf script "
              "has %d samples in such functions)" % (s.get("primitives", 0), perf_n),
              0 < s.get("primitives", 0) <= s["total"] and
              s.get("primitives_resolved", 0) <= min(s["primitives"], s["resolved"]),
              json.dumps(s))


SPIN_WORKLOADS = ("orphan", "create_unlink")	# a mutex / a directory rwsem, 2 threads


def check_spin(a, name, host, counts):
    """The lock the workload contends (s_orphan_lock's mutex, the directory's i_rwsem):
    waiters spin on its owner word, which timer samples of the holder's store seldom
    show. The line must rank in the top 3 shared lines with a sharing verdict, its
    evidence the spinning loads; perf (second tool) must see the spin function in the
    same recording."""
    shared = [l for l in host["lines"] if l["verdict"] in ("true_sharing", "false_sharing")]
    spin = [(i, l) for i, l in enumerate(shared[:3]) if l.get("spin", 0) > 0]
    funcs = {s["func"] for _, l in spin for f in l["fields"] for s in f["sites"]
             if s["func"] and "spin" in s["func"]}
    perf_n = {f: counts[f] for f in funcs}
    check(name + ": the contended lock ranks in the top 3 shared lines (spinning in %s, "
          "perf script counts %s)" % (sorted(funcs), perf_n),
          spin and funcs and all(n > 0 for n in perf_n.values()) and
          "spin" in (spin[0][1]["evidence"] or ""),
          "top shared: %s" % [(line_name(l), l["verdict"], l.get("spin")) for l in shared[:3]])
    pc = [line_name(l) for l in host["lines"] if "percpu_cpu" in l and
          l["verdict"] in ("true_sharing", "false_sharing")]
    check(name + ": no sharing verdict on a per-CPU copy", not pc, "; ".join(pc[:2]))


def check_kernel_items(name, rep):
    """The kernel-path defects from issue 12, one assertion each."""
    pv = [line_name(l) for l in rep["lines"]
          if (l["object"] or "").startswith("pv_ops") or
          any(f["field"].startswith("paravirt_patch_template") for f in l["fields"])]
    check(name + ": no line named after pv_ops (boot-patched calls)", not pv, "; ".join(pv[:2]))
    shared = [line_name(l) for l in rep["lines"]
              if int(l["addr"], 16) < PERCPU_LIMIT and len(l["cpus"]) > 1 and
              all(int(s["ip"], 16) >= 1 << 63 for f in l["fields"] for s in f["sites"])]
    check(name + ": per-CPU data kept apart per CPU", not shared, "; ".join(shared[:2]))
    pc = {l["fields"][0]["field"] for l in rep["lines"] if "percpu_cpu" in l}
    check(name + ": per-CPU variables named", "__preempt_count" in pc or "current_task" in pc,
          "per-CPU lines: %s" % sorted(pc)[:4])


def check_other_build(a):
    """A vmlinux of another build must not be used silently."""
    data = os.path.join(a.out, "xattr_list.data")
    p, _ = run([a.hitmap, "report", "-i", data, "--vmlinux", a.other_vmlinux, "--json"])
    lines = p.stderr.strip().splitlines()
    check("--vmlinux of another build: exit 2 and one line naming the build-id",
          p.returncode == 2 and len(lines) == 1 and "build-id" in lines[0],
          "exit %d, stderr %r" % (p.returncode, lines[:2]))
    p, _ = run([a.hitmap, "report", "-i", data, "--vmlinux", a.other_vmlinux, "--json",
                "--force"])
    d = load_json(p.stdout) or {}
    check("--vmlinux of another build with --force: exit 0, warning on stderr and in JSON",
          p.returncode == 0 and "warning" in p.stderr and "build-id" in p.stderr and
          any("build-id" in w for w in d.get("warnings", [])),
          "exit %d, warnings %r" % (p.returncode, d.get("warnings")))


def check_kallsyms(a):
    """report --kallsyms: the guest's kallsyms names the guest's kernel and module code on
    the host without a vmlinux, as the vmlinux path does; this machine's kallsyms (another
    kernel) is refused, and never used by default for another release."""
    ks = os.path.join(a.out, "kallsyms")
    data = os.path.join(a.out, "pread_block.data")
    if not check("guest kallsyms saved", os.path.getsize(ks) > 0 if os.path.exists(ks) else False,
                 "no %s" % ks):
        return
    want, _, _ = hitmap_syms(a, data)
    got, rc, _ = hitmap_syms(a, data, ks)
    want = {ip: f for ip, f in want.items() if f != "[unknown]"}
    same = [ip for ip in want if got.get(ip) == want[ip]]
    mods = {f for ip, f in got.items() if ip >= 0xffffffffc0000000 and f.startswith("xfs_")}
    p, _ = run([a.hitmap, "report", "-i", data, "--vmlinux", "", "--kallsyms", ks])
    check("--kallsyms (guest's, no vmlinux): kernel samples named as the vmlinux path names "
          "them (%d of %d), xfs.ko functions too (%d)" % (len(same), len(want), len(mods)),
          rc == 0 and p.returncode == 0 and want and len(same) >= 0.9 * len(want) and mods,
          "exit %d/%d, %s; differ: %s" % (rc, p.returncode, p.stderr.strip()[-160:],
                                          [(hex(ip), want[ip], got.get(ip))
                                           for ip in want if got.get(ip) != want[ip]][:3]))
    p, _ = run([a.hitmap, "report", "-i", data, "--vmlinux", "", "--kallsyms", "/proc/kallsyms"])
    lines = p.stderr.strip().splitlines()
    check("--kallsyms of another kernel: exit 2, one line naming the text size",
          p.returncode == 2 and len(lines) == 1 and "another kernel build" in lines[0],
          "exit %d, stderr %r" % (p.returncode, lines[:2]))
    q, _ = run([a.ksyms, data, ""])	# no vmlinux, no kallsyms given: this machine's
    named = [ln for ln in q.stdout.splitlines() if not ln.endswith(" [unknown]")]
    p, _ = run([a.hitmap, "report", "-i", data, "--vmlinux", ""])
    check("this machine's kallsyms not used for another release (%d of %d kernel samples "
          "named)" % (len(named), len(q.stdout.splitlines())),
          q.returncode == 0 and q.stdout and not named and p.returncode == 0 and
          "not this machine's" in p.stderr,
          "exit %d/%d, named %r, stderr %r" % (q.returncode, p.returncode, named[:3],
                                               p.stderr.strip()[-200:]))


def section_bytes(vmlinux, name):
    """(address, bytes) of one section, through readelf's section table and the file."""
    p, _ = run(["readelf", "-S", "-W", vmlinux])
    for ln in p.stdout.splitlines():
        m = re.search(r"\]\s+%s\s+\S+\s+([0-9a-f]+) ([0-9a-f]+) ([0-9a-f]+)" % re.escape(name), ln)
        if m:
            addr, off, size = (int(x, 16) for x in m.groups())
            with open(vmlinux, "rb") as f:
                f.seek(off)
                return addr, f.read(size)
    return None, b""


def check_alternatives(a):
    """Alternatives sites are not decoded from the vmlinux's bytes (the boot may have
    replaced them): for 12 sites spread over .altinstructions, objdump (a second tool)
    must show an instruction starting at the site, and hitmap must call the site's first
    byte an alternative (or paravirt) site and the byte after it not, where no other site
    covers it."""
    base, raw = section_bytes(a.vmlinux, ".altinstructions")
    sites = []
    for i in range(0, len(raw) - 11, 12):
        io, _, _, ilen, _ = struct.unpack_from("<iiHBB", raw, i)
        if ilen:
            sites.append((base + i + io, ilen))
    if not check("alternatives table read (%d sites)" % len(sites), len(sites) > 1000):
        return
    covered = {}
    for at, n in sites:
        for x in range(at, at + n):
            covered[x] = True
    pick = [sites[i * len(sites) // 12] for i in range(12)]
    starts, bad = 0, []
    for at, n in pick:
        p, _ = run(["objdump", "-d", "--no-show-raw-insn", "--start-address=0x%x" % at,
                    "--stop-address=0x%x" % (at + n), a.vmlinux])
        first = [ln for ln in p.stdout.splitlines() if re.match(r"^ffffffff[0-9a-f]+:", ln.strip())]
        starts += bool(first) and int(first[0].split(":")[0], 16) == at
    args = ["%x" % at for at, _ in pick] + ["%x" % (at + n) for at, n in pick if at + n not in covered]
    p, _ = run([a.ksyms, "--patched", a.vmlinux, a.kv] + args)
    kind = dict(ln.split() for ln in p.stdout.splitlines())
    for at, n in pick:
        if kind.get("%x" % at) not in ("1", "2"):
            bad.append("0x%x: %s" % (at, kind.get("%x" % at)))
        if at + n not in covered and kind.get("%x" % (at + n)) != "0":
            bad.append("0x%x (after): %s" % (at + n, kind.get("%x" % (at + n))))
    check("alternatives sites: objdump starts an instruction at %d of 12, hitmap skips "
          "them and not the byte after" % starts, starts == 12 and not bad and p.returncode == 0,
          "exit %d; %s" % (p.returncode, "; ".join(bad[:4]) or p.stderr.strip()[-160:]))


def check_compare(a):
    """compare between two kernel builds: three runs of the tmpfs create+unlink workload on the
    other build (A, the older) against three on this one (B), each side read with its own
    vmlinux; sides named by kernel, kernel fields matched by type.field, the layout side
    diffing the two vmlinux files; one vmlinux for both sides refused."""
    olds = [os.path.join(a.other_out, "cmp%d.data" % i) for i in (1, 2, 3)]
    news = [os.path.join(a.out, "cmp%d.data" % i) for i in (1, 2, 3)]
    missing = [f for f in olds + news if not os.path.exists(f)]
    if not check("compare runs recorded on both kernels (3 + 3)", not missing,
                 "missing: %s" % missing):
        return
    cmd = [a.hitmap, "compare"] + olds + ["--"] + news + [
        "--vmlinux-a", a.other_vmlinux, "--vmlinux-b", a.vmlinux]
    p, secs = run(cmd + ["--json"], timeout=900)
    d = load_json(p.stdout) or {}
    ab, bb = d.get("a_build", {}), d.get("b_build", {})
    check("compare of two kernels: exit 0 in %.0f s, sides named by kernel release and "
          "build-id" % secs, p.returncode == 0 and ab.get("kind") == "kernel" and
          bb.get("kind") == "kernel" and ab.get("kernel", {}).get("release") == a.kv_other and
          bb.get("kernel", {}).get("release") == a.kv and
          ab["kernel"].get("build_id") and ab["kernel"]["build_id"] != bb["kernel"].get("build_id"),
          "exit %d, %s; a_build %r" % (p.returncode, p.stderr.strip()[-200:], ab))
    with open(os.path.join(a.out, "compare.json"), "w") as f:
        f.write(p.stdout)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    v, _ = run(["python3", os.path.join(root, "tests/lib/schema_check.py"), "--strict",
                os.path.join(a.out, "compare.json")])
    check("the kernel compare's JSON is valid against docs/schema/compare.json",
          v.returncode == 0, (v.stdout + v.stderr).strip()[-300:])
    fields = [m for m in d.get("metrics", []) if m.get("kind") == "field"
              and m.get("presence") == "both" and m["name"].endswith(" samples")]
    zero_a = [m["name"] for m in fields if not any(v for v in m["a_values"] if v)]
    check("kernel type.field metrics matched across the builds (%d), none all-zero on a "
          "side" % len(fields), len(fields) >= 10 and not zero_a, "all-zero on A: %s" % zero_a[:3])
    q, _ = run(cmd, timeout=900)
    first = " ".join(ln.strip() for ln in q.stdout.splitlines()[:2])	# wrapped at 120
    check("compare text names the kernels, not a process",
          "kernel %s" % a.kv_other in first and "kernel %s" % a.kv in first
          and "busybox" not in first and "xattr_list" not in first, "first lines %r" % first)
    li = d.get("layout_info") or {}
    check("layout side diffed the two vmlinux files (%d hot fields changed, %d unchanged)"
          % (len(d.get("layout", [])), li.get("unchanged", -1)),
          li.get("a") == a.other_vmlinux and li.get("b") == a.vmlinux,
          "layout_info %r, notes %r" % (li, d.get("notes")))
    p, _ = run([a.hitmap, "compare"] + olds + ["--"] + news + ["--vmlinux", a.vmlinux, "--json"],
               timeout=900)
    lines = p.stderr.strip().splitlines()
    check("one --vmlinux for both kernels: refused, exit 2, naming the build-id",
          p.returncode == 2 and len(lines) == 1 and "build-id" in lines[0],
          "exit %d, %r" % (p.returncode, lines[:2]))


def pahole_sizes(vmlinux):
    """struct/union name -> size, from one pahole dump (the first definition wins)."""
    p, _ = run(["pahole", vmlinux], timeout=600)
    out, name = {}, None
    for line in p.stdout.splitlines():
        m = re.match(r"^(struct|union) (\S+) \{", line)
        if m:
            name = m.group(1) + " " + m.group(2)
            continue
        m = re.search(r"/\* size: (\d+)", line)
        if m and name:
            out.setdefault(name, int(m.group(1)))
            name = None
    return out


def check_builds_diff(a):
    """diff between two Debian builds: nothing against itself, pahole's size changes."""
    p, _ = run([a.hitmap, "diff", a.vmlinux, a.vmlinux, "--json"], timeout=600)
    d = load_json(p.stdout) or {}
    check("diff of the vmlinux against itself: 0 findings in %d types" % d.get("compared", 0),
          p.returncode == 0 and d.get("compared", 0) > 1000 and d.get("types") == [],
          "exit %d, %d types with findings" % (p.returncode, len(d.get("types", []))))
    p, _ = run([a.hitmap, "diff", a.other_vmlinux, a.vmlinux, "--json"], timeout=600)
    d = load_json(p.stdout) or {}
    hm = {t["name"] for t in d.get("types", [])
          if any(f["kind"] == "size" for f in t["findings"])}
    old, new = pahole_sizes(a.other_vmlinux), pahole_sizes(a.vmlinux)
    ph = {k for k in old if k in new and old[k] != new[k]}
    check("diff of the two Debian builds names pahole's %d size changes, no other" % len(ph),
          p.returncode == 0 and ph and hm == ph,
          "pahole only: %s; hitmap only: %s" % (sorted(ph - hm)[:4], sorted(hm - ph)[:4]))


def tail(out, step):
    try:
        with open(os.path.join(out, step + ".err")) as f:
            return (f.read().strip().splitlines() or [""])[-1][:160]
    except OSError:
        return "no log"


def read_pairs(path):
    try:
        with open(path) as f:
            return dict(ln.split() for ln in f if len(ln.split()) == 2)
    except OSError:
        return {}


def main():
    ap = argparse.ArgumentParser()
    for opt in ("out", "hitmap", "ksyms", "vmlinux", "other-vmlinux", "debug-root", "kv",
                "other-out", "kv-other"):
        ap.add_argument("--" + opt, required=True)
    ap.add_argument("--new-out", default="")
    ap.add_argument("--kv-new", default="")
    a = ap.parse_args()
    steps = read_pairs(os.path.join(a.out, "steps"))
    guest_secs = {k: float(v) for k, v in read_pairs(
        os.path.join(a.out, "guest_report_seconds")).items()}
    check("guest booted and wrote its results", bool(steps), "no /out/steps on the disk")
    for name in WORKLOADS:
        check_workload(a, name, steps, guest_secs)
    if steps:
        check_slab.check_total(check)
    if steps:
        check_other_build(a)
        check_kallsyms(a)
    if steps:
        check_slab.check_slabinfo(check, a, run)
    check_alternatives(a)
    check_compare(a)
    check_cases.check_xattr_compare(check, a)
    check_builds_diff(a)
    check_xfs.check_all(a, check, run, load_json, read_pairs(os.path.join(a.out, "steps")))
    check_slab.check_modern(check, a, read_pairs)
    print("%d passed, %d failed" % (results.count(True), results.count(False)))
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
