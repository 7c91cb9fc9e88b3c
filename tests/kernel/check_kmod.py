"""Kernel modules' globals (docs/kernel.md, Kernel modules): accesses to a module's .data,
.bss and .rodata are named as the module's variables, on the host (section load addresses
from the recording + the module's -dbg DWARF) and in the guest (kallsyms module data
symbols). The second tool is the guest's own /proc/kallsyms (copied at boot, after the
modules were loaded, before any workload): every module global hitmap names must start
where kallsyms puts a symbol of that name, in that module; and real perf must still read
the module maps that now carry the section addresses (perf script --show-mmap-events).
"""
import os
import subprocess

MUST = {"loop_ctl": ("loop_ctl_mutex", "loop_index_idr")}  # workload: globals it must name
COUNTS = {}


def modules(out):
    """[(name, start, end)] from the guest's /proc/modules."""
    mods = []
    with open(os.path.join(out, "modules.txt")) as f:
        for ln in f:
            p = ln.split()
            if len(p) >= 6 and p[-1].startswith("0x"):
                mods.append((p[0], int(p[-1], 16), int(p[-1], 16) + int(p[1])))
    return mods


def kallsyms_data(out):
    """name -> set of (address, module) of kallsyms' module data symbols."""
    syms = {}
    with open(os.path.join(out, "kallsyms")) as f:
        for ln in f:
            p = ln.split()
            if len(p) >= 4 and p[1] in "dDbBrR" and p[3].startswith("["):
                syms.setdefault(p[2], set()).add((int(p[0], 16), p[3].strip("[]")))
    return syms


def module_lines(rep, mods):
    """(line, module, field) for each line of rep at a module address."""
    for line in rep["lines"]:
        if "percpu_cpu" in line:
            continue
        addr = int(line["addr"], 16)
        mod = next((m for m, lo, hi in mods if lo <= addr < hi), None)
        if mod:
            for f in line["fields"]:
                yield line, mod, f


def check_side(check, a, name, side, rep, mods, ksyms):
    total = named = 0
    wrong, seen = [], set()
    starts = {}
    for n, places in ksyms.items():
        for at, m in places:
            starts.setdefault((at, m), []).append((n, at))
    for line, mod, f in module_lines(rep, mods):
        total += f["records"]
        if not f.get("named") or not f.get("object") or "obj_base" not in f:
            continue
        obj, base = f["object"], int(f["obj_base"], 16)
        if obj not in ksyms:
            # A type's name (a heap result): no global claimed. But a name kallsyms does
            # not know, at the address of one it does, hides that variable (an empty
            # `__key` at xfsstats's address).
            there = [n for n, _ in starts.get((base, mod), ()) if n != obj]
            if there and not obj.startswith(("struct ", "union ")) and " " not in obj:
                wrong.append("%s at %s, where kallsyms has %s" % (obj, f["obj_base"], there[0]))
            continue
        named += f["records"]
        seen.add(obj)
        if (int(f["obj_base"], 16), mod) not in ksyms[obj]:
            wrong.append("%s at %s in %s" % (obj, f["obj_base"], mod))
    COUNTS[(name, side)] = (named, total)
    print("# %-28s module data accesses %5d  named as module globals %5d (%s)" %
          (name + " " + side, total, named, ", ".join(sorted(seen)[:4]) or "none"))
    check("%s %s: module globals start where the guest's kallsyms puts them (%d named)" %
          (name, side, named), not wrong, "; ".join(wrong[:3]))
    for g in MUST.get(name, ()):
        check("%s %s: %s named (loop.ko's global)" % (name, side, g),
              any(s == g for s in seen), "named: %s" % sorted(seen)[:6])


def check_workload(check, a, name, host, guest):
    mods, ksyms = modules(a.out), kallsyms_data(a.out)
    check_side(check, a, name, "host", host, mods, ksyms)
    if guest:
        check_side(check, a, name, "guest", guest, mods, ksyms)
    if name == "loop_ctl":
        check_perf_mmaps(check, os.path.join(a.out, name + ".data"), mods)


def check_perf_mmaps(check, data, mods):
    """Real perf reads the module MMAP records that carry the section addresses: the
    module's file name as recorded, at the module's address."""
    p = subprocess.run(["perf", "script", "-i", data, "--show-mmap-events", "-F", "ip"],
                       capture_output=True, text=True, timeout=300)
    lines = [ln for ln in p.stdout.splitlines() if "PERF_RECORD_MMAP" in ln and
             "/loop.ko" in ln]
    lo = next((hex(s) for m, s, _ in mods if m == "loop"), "none")
    check("perf script reads the module maps with section addresses (loop.ko at %s)" % lo,
          p.returncode == 0 and any(lo in ln and ln.rstrip().endswith("loop.ko") for ln in lines),
          "exit %d; %s" % (p.returncode, lines[:1] or p.stderr.strip()[-160:]))
