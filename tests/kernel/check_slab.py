"""Kernel heap named by slab cache (issue 12; docs/kernel.md), called from check.py: the
guest's report (no vmlinux: /proc/kcore and BTF) names at least 60% of what the host's
(the -dbg vmlinux) names outside string and copy primitives, and 80% (issue 12's
target) over the five workloads pooled (each one's ratio is printed against it; the
orphan lock line is not named as its container in the guest); and the objects' bases agree with the
guest kernel's own /proc/slabinfo (second tool) and pahole's sizes of their types.
"""
import collections
import json
import os
import re
import subprocess

TARGET = 0.80	# issue 12's target: asserted over the five workloads together (per workload
		# sampling moves it by a few points: 82-89% in the run that first met it)
FLOOR = 0.60	# asserted per workload: below the 76-89% measured, far
		# above the 27-29% before slab naming
# Caches whose objects the guest names, and their types (symbolize/slab.c's rule); not
# inode_cache: a struct inode is also the vfs_inode inside ext4's and shmem's inodes, which
# the instruction's pointer type names where the slab cannot (a freed inode's page)
CACHE_TYPES = {"dentry": "dentry", "ext4_inode_cache": "ext4_inode_info",
               "shmem_inode_cache": "shmem_inode_info", "filp": "file",
               "task_struct": "task_struct"}
PRIMITIVE = re.compile(r"^_*(memset|memcpy|memmove|copy_user|copy_to_user|copy_from_user|"
                       r"clear_user|clear_page|rep_movs|rep_stos)")
SLABSTATS = re.compile(r"kernel heap named by slab cache \(.*?read from (\w+)\): (\d+)")
AGREE = 0.90	# the snapshot is of the workload's end, kcore of the report's: an object freed
		# in between may be another by then
BASES = collections.defaultdict(set)	# type -> object bases the guest named (all workloads)


def counts(d):
    """(named, with an address) outside string and copy primitives."""
    s = d["samples"]
    return (s["resolved"] - s.get("primitives_resolved", 0),
            s["with_addr"] - s.get("primitives", 0))


def share(d):
    r, w = counts(d)
    return 100.0 * r / w if w > 0 else 0.0


TOTAL = {"host": [0, 0], "guest": [0, 0], "workloads": 0}	# named, with_addr
LOCALS = {"agree": 0, "total": 0, "other": collections.Counter()}	# check_locals, pooled
LOCALS_MIN = 30


def check_total(check):
    """Issue 12's target over the workloads together: the guest names at least 80% of
    what the host names, the accesses of all five pooled (each alone is printed)."""
    (hr, hw), (gr, gw) = TOTAL["host"], TOTAL["guest"]
    h, g = 100.0 * hr / hw if hw else 0, 100.0 * gr / gw if gw else 0
    check("all %d workloads: guest (kcore+BTF) names >= %d%% of what the host (vmlinux) "
          "names outside primitives (host %.1f%% of %d, guest %.1f%% of %d: %.0f%%)" %
          (TOTAL["workloads"], 100 * TARGET, h, hw, g, gw, 100.0 * g / h if h else 0),
          TOTAL["workloads"] > 0 and h > 0 and g >= TARGET * h,
          "guest at %.0f%% of the host" % (100.0 * g / h if h else 0))
    check("all workloads: guest locals typed without DWARF agree with the host's DWARF "
          "(%d of %d accesses)" % (LOCALS["agree"], LOCALS["total"]),
          LOCALS["total"] >= LOCALS_MIN and LOCALS["agree"] >= 0.9 * LOCALS["total"],
          "; ".join("%s (%d)" % kv for kv in LOCALS["other"].most_common(3)))


def slab_objects(d):
    """address -> (object, base) of the field rows naming a struct object with its base."""
    out = {}
    for line in d["lines"]:
        try:
            at = int(line["addr"], 16)
        except ValueError:	# a per-CPU line ("cpu0:0x...")
            continue
        for f in line["fields"]:
            o = f.get("object") or ""
            if f.get("obj_base") and o.startswith("struct ") and "(stack of" not in o:
                out[at + f["offset"]] = (o[7:], int(f["obj_base"], 16))
    return out


def check_host(check, name, host, guest):
    """The host (vmlinux, no kernel memory) names slab objects from the facts record -k
    saved in the recording, and the objects agree with the guest's, read from kcore."""
    hs = host["stats"].get("kernel_slab", {})
    check(name + ": host report (vmlinux) names kernel heap by the slab facts record -k saved",
          hs.get("facts") == "recording" and hs.get("named", 0) > 0, "stats.kernel_slab: %s" % hs)
    if not guest:
        return
    h, g = slab_objects(host), slab_objects(guest)
    # xfs_inode: a module's cache, typed by xfs.ko's DWARF on the host, xfs's BTF in the guest
    slabbed = set(CACHE_TYPES.values()) | {"xfs_inode"}
    # Both named by a slab cache's type: where the host names a pointer's type instead
    # (`path` inside a guest's `file`), its snapshot, taken at the workload's end, held no
    # slab there (freed, then a slab again by the time the guest read kcore): counted
    # and printed, not compared
    both = [x for x in h if x in g and g[x][0] in slabbed and h[x][0] in slabbed]
    unslabbed = [x for x in h if x in g and g[x][0] in slabbed and h[x][0] not in slabbed]
    same = [x for x in both if h[x] == g[x]]
    print("# %-28s host named by recorded slab facts %s (guest by kcore %s); objects of %s "
          "at the same address: %d of %d the same" %
          (name, hs.get("named", "-"), guest["stats"].get("kernel_slab", {}).get("named", "-"),
           "/".join(sorted(slabbed)), len(same), len(both)))
    if unslabbed:
        print("# %-28s %d address(es) the guest names by slab cache, the host by a pointer "
              "type (no slab there in the snapshot): %s" %
              (name, len(unslabbed), ["%#x host %s guest %s" % (x, h[x][0], g[x][0])
                                      for x in unslabbed[:3]]))
    hx = sorted({b for o, b in h.values() if o == "xfs_inode"})
    if hx:
        gx = sorted({b for o, b in g.values() if o == "xfs_inode"})
        check(name + ": the host names %d xfs_inode object(s) (xfs.ko's DWARF); the guest "
              "names %d through xfs's module BTF, %d of them the same" %
              (len(hx), len(gx), len(set(hx) & set(gx))),
              bool(set(hx) & set(gx)), "guest %s" % ["%#x" % x for x in gx[:3]])
    check(name + ": host (recorded slab facts) and guest (kcore) name the same object at the "
          "same address (%d of %d)" % (len(same), len(both)),
          (not both and not unslabbed) or (both and len(same) >= AGREE * len(both)),
          "differ: %s" % ["%#x host %s guest %s" % (x, h[x], g[x]) for x in both
                          if h[x] != g[x]][:3])


def check_damaged(check, a, name):
    """A recording whose slab section is damaged (its last byte, a slab's cache index): the
    host report still exits 0, names the file and says the slab facts were refused."""
    src = os.path.join(a.out, name + ".data")
    bad = os.path.join(a.out, name + ".badslab.data")
    with open(src, "rb") as f:
        b = bytearray(f.read())
    b[-1] = 0xff
    with open(bad, "wb") as f:
        f.write(b)
    p = subprocess.run([a.hitmap, "report", "-i", bad, "--vmlinux", a.vmlinux, "--sysroot",
                        a.debug_root, "--json", "--stats"], capture_output=True, text=True, timeout=300)
    try:
        facts = json.loads(p.stdout)["stats"].get("kernel_slab")
    except (ValueError, KeyError):
        facts = "no JSON"
    check(name + ": a damaged slab section: exit 0, one warning naming the file, no slab "
          "naming", p.returncode == 0 and (bad + ": hitmap's slab section is damaged") in
          p.stderr and facts is None, "exit %d, kernel_slab %s, %s" %
          (p.returncode, facts, p.stderr.strip()[-200:]))
    os.remove(bad)


def after_workload(check, a, name, host, guest):
    check_host(check, name, host, guest)
    if name == "create_unlink":
        check_damaged(check, a, name)
    if not guest:
        return
    h, g = share(host), share(guest)
    for side, d in (("host", host), ("guest", guest)):
        TOTAL[side] = [x + y for x, y in zip(TOTAL[side], counts(d))]
    TOTAL["workloads"] += 1
    slab = guest["stats"].get("kernel_slab", {})
    print("# %-28s named outside primitives: host %.1f%%, guest %.1f%% (%.0f%% of the "
          "host's; guest named by slab cache %s)" % (name, h, g, 100.0 * g / h if h else 0,
                                                     slab.get("named", "-")))
    print("# %-28s guest at %.0f%% of the host: issue 12's %d%% target %s" %
          (name, 100.0 * g / h if h else 0, 100 * TARGET,
           "met" if h > 0 and g >= TARGET * h else "NOT met"))
    check(name + ": guest (kcore+BTF) names >= %d%% of what the host (vmlinux) names "
          "outside primitives (host %.1f%%, guest %.1f%%)" % (100 * FLOOR, h, g),
          h > 0 and g >= FLOOR * h, "guest at %.0f%% of the host" % (100.0 * g / h if h else 0))
    check(name + ": guest report says kernel heap was named by slab cache, facts from kcore",
          slab.get("facts") == "kcore" and slab.get("named", 0) > 0,
          "stats.kernel_slab: %s" % slab)
    try:
        with open(os.path.join(a.out, name + ".guestreport.err")) as f:
            m = SLABSTATS.search(f.read())
    except OSError:
        m = None
    check(name + ": guest --stats counts the accesses named by slab cache as JSON does",
          m is not None and m.group(1) == "kcore" and int(m.group(2)) == slab.get("named"),
          "--stats %s, JSON %s" % (m.groups() if m else None, slab.get("named")))
    for line in guest["lines"]:
        for f in line["fields"]:
            o = f.get("object") or ""
            # not a primitive's wide access split by the type (memset over a file)
            if o.startswith("struct ") and f.get("obj_base") and "(stack of" not in o and \
                    not any(PRIMITIVE.match(s["func"] or "") for s in f["sites"]):
                BASES[o[7:]].add(int(f["obj_base"], 16))
    check_locals(check, a, name)
    if name == "orphan":
        # Not asserted: ext4_sb_info is a kmalloc object (its cache names no type) and no
        # function entry in the workload's code takes it as a BTF-typed argument.
        orphan = [f["field"] for line in guest["lines"] for f in line["fields"]
                  if (f["field"] or "").startswith("ext4_sb_info.s_orphan_lock")]
        print("# orphan: guest names the orphan lock line as %s (host: "
              "ext4_sb_info.s_orphan_lock...; known gap, docs/kernel.md)" %
              (sorted(set(orphan))[:3] or "nothing"))


def accesses(cmd_or_path):
    """(time, tid, ip, addr, part) -> (object, obj_base, func) of every named access of a
    hitmap.accesses/1 document: report --view accesses --json, run here (a list: the
    command) or in the guest (a path: its output)."""
    if isinstance(cmd_or_path, list):
        p = subprocess.run(cmd_or_path, capture_output=True, text=True, timeout=600)
        text = p.stdout if p.returncode == 0 else ""
    else:
        try:
            with open(cmd_or_path) as f:
                text = f.read()
        except OSError:
            text = ""
    try:
        d = json.loads(text)
    except ValueError:
        return None
    return {(x["time"], x["tid"], x["ip"], x["addr"], x["part"]):
            (x["object"], x["obj_base"], x["func"]) for x in d["accesses"] if x["object"]}


def bare(obj):
    """The type of a stack object's name: "struct kiocb (stack of f)" -> "struct kiocb".
    va_list is x86-64's struct __va_list_tag[1]: a va_list parameter is a pointer to that
    struct, so the guest (by the callee's BTF parameter) names the struct."""
    t = obj.split(" (stack of")[0].split("[")[0]
    return "struct __va_list_tag" if t == "va_list" else t


MEMBERS = {}


def members(vmlinux, t):
    """(offset, type) of struct t's top-level members, by pahole on the vmlinux, in order
    ("struct vma_iterator" -> [(0, "struct ma_state"), ...]); [] when unknown."""
    if t not in MEMBERS:
        MEMBERS[t] = []
        if t.startswith("struct ") and "(" not in t:
            p = subprocess.run(["pahole", "-C", t.split()[1], vmlinux], capture_output=True,
                               text=True)
            for ln in p.stdout.splitlines()[1:]:
                m = re.match(r"\t(\S.*?)\s+\w+(\[\d*\])?;\s+/\*\s+(\d+)\s+\d+\s+\*/", ln)
                if m:
                    MEMBERS[t].append((int(m.group(3)), m.group(1)))
    return MEMBERS[t]


def nested(vmlinux, guest, host, gbase, hbase):
    """One object named by the guest as the type of a member of what the host names, or
    the reverse, at that member's place: the callee's BTF parameter is a pointer to a
    first member (a `struct shash_desc *` into the anonymous struct around it, which BTF
    cannot name; ma_state in vma_iterator), or DWARF describes a member as a variable of
    its own (__handle_mm_fault's `pte_t *ptep` over `vmf.pte`, 88 bytes into the guest's
    `struct vm_fault`)."""
    g, h = int(gbase, 16), int(hbase, 16)
    if g == h and host == "struct (anonymous)":
        return True
    if h >= g and (h - g, host) in members(vmlinux, guest):
        return True
    return g >= h and (g - h, guest) in members(vmlinux, host)


SLOTS = {}
QUALIFIERS = re.compile(r"\b(struct|union|enum|const|volatile)\b|\s+")


def dwarf_die(lines, i):
    """The attributes of the DIE whose header is lines[i]: name, type, origin (an abstract
    origin's offset) and fbreg (the frame offsets its DW_AT_location puts it at, alone or
    in a location list; an fbreg inside a computed value is no place of the variable)."""
    die, attr = {"fbreg": set()}, None
    for ln in lines[i + 1:]:
        if re.match(r"\s*0x[0-9a-f]+:\s+DW_TAG_", ln) or not ln.strip():
            break
        m = re.match(r"\s*DW_AT_(\w+)\s+\((?:0x([0-9a-f]+) )?(?:\"(.*)\")?", ln)
        if m:
            attr = m.group(1)
            if attr in ("name", "type"):
                die[attr] = m.group(3)
            elif attr == "abstract_origin":
                die["origin"] = m.group(2)
        if attr == "location":
            m = re.search(r"(?:\(|: )DW_OP_fbreg (-?\d+)\)?$", ln)
            if m:
                die["fbreg"].add(int(m.group(1)))
    return die


ORIGINS = {}


def origin_die(vmlinux, off):
    """Name and type of the abstract origin at DIE offset off (hex), read once: one
    origin stands behind each inlined copy of its variable."""
    if off not in ORIGINS:
        ol = subprocess.run(["llvm-dwarfdump", "--debug-info=0x" + off, vmlinux],
                            capture_output=True, text=True).stdout.splitlines()
        at = [j for j, x in enumerate(ol) if re.match(r"0x[0-9a-f]+:\s+DW_TAG_", x)]
        ORIGINS[off] = {k: v for k, v in (dwarf_die(ol, at[0]).items() if at else ())
                        if k in ("name", "type")}
    return ORIGINS[off]


def frame_slots(vmlinux, func):
    """fbreg offset -> {(name, type)} of func's variables and parameters in memory, read by
    llvm-dwarfdump (a second reader of the vmlinux's DWARF); {} when it is not there."""
    if func not in SLOTS:
        SLOTS[func] = collections.defaultdict(set)
        try:
            p = subprocess.run(["llvm-dwarfdump", "--name=" + func, "--show-children",
                                vmlinux], capture_output=True, text=True, timeout=300)
        except (OSError, subprocess.TimeoutExpired):
            return SLOTS[func]
        lines = p.stdout.splitlines()
        for i, ln in enumerate(lines):
            if not re.search(r"DW_TAG_(variable|formal_parameter)$", ln):
                continue
            die = dwarf_die(lines, i)
            if die["fbreg"] and "type" not in die and die.get("origin"):
                die.update(origin_die(vmlinux, die["origin"]))
            for off in die["fbreg"]:
                SLOTS[func][off].add((die.get("name", "?"), die.get("type", "?")))
    return SLOTS[func]


def slot_reused(vmlinux, func, guest, host):
    """The evidence, or None, that func's DWARF gives one frame slot to two variables, one
    of the guest's type (the one whose address a callee takes, all BTF can see) and one of
    the host's: jbd2_journal_stop keeps `ktime_t expires` at fbreg -72, and time_after_eq's
    typecheck dummy `volatile long unsigned int __dummy2` there too, where gcc zeroes it."""
    def plain(t):
        return QUALIFIERS.sub("", t)
    for off, vs in sorted(frame_slots(vmlinux, func).items()):
        g = sorted(n for n, t in vs if plain(t) == plain(guest))
        h = sorted(n for n, t in vs if plain(t) == plain(host))
        if g and h and set(g) != set(h):
            return "%s: %s %s and %s %s at fbreg %d" % (func, guest, g[0], host, h[0], off)
    return None


def check_locals(check, a, name):
    """Kernel locals the guest typed without DWARF (by the callee they are passed to, or
    the pointer spilled there) against the host's DWARF frame, sample by sample (report
    --view accesses on both sides: a row of report --json is named after the first access
    to its address, and a stack address is a different frame's local from one call to the
    next): same type, same base, or one object named by a member's type at its place."""
    g = accesses(os.path.join(a.out, name + ".guestaccesses.out"))
    h = accesses([a.hitmap, "report", "-i", os.path.join(a.out, name + ".data"), "--vmlinux",
                  a.vmlinux, "--sysroot", a.debug_root, "--view", "accesses", "--json"])
    if not check(name + ": guest and host report --view accesses --json read",
                 g is not None and h is not None, "guest %s, host %s" %
                 ("ok" if g is not None else "unreadable", "ok" if h is not None else "failed")):
        return
    agree, inner, other, reused = 0, 0, collections.Counter(), collections.Counter()
    for k, (obj, base, _) in g.items():
        if "(stack of" not in obj or k not in h or "(stack of" not in h[k][0]:
            continue
        if bare(obj) == bare(h[k][0]) and base == h[k][1]:
            agree += 1
        elif nested(a.vmlinux, bare(obj), bare(h[k][0]), base, h[k][1]):
            inner += 1
        elif base == h[k][1] and (why := slot_reused(a.vmlinux, obj.split("(stack of ")[1][:-1],
                                                     bare(obj), bare(h[k][0]))):
            reused[why] += 1
        else:
            other["%s at %s vs host %s at %s" % (obj, base, h[k][0], h[k][1])] += 1
    # A slot the compiler gives two variables is named by the guest as the one whose
    # address a callee takes, at every pc (BTF has no locals); the host's DWARF names the
    # one live at the sample's pc. How many samples land on the other one's instructions
    # is chance, so they are shown with llvm-dwarfdump's evidence and left out of the
    # ratio: three samples on jbd2_journal_stop's zeroing of __dummy2 failed orphan's
    # check in CI once (81 of 91). What remains must still agree 9 times in 10 (one
    # workload may have a slot reuse DWARF does not show as two variables), from
    # LOCALS_MIN accesses on, and on all workloads pooled (check_total).
    if reused:
        print("# %s: %d guest local(s) on a frame slot DWARF gives two variables, left out: %s"
              % (name, sum(reused.values()),
                 "; ".join("%s (%d)" % kv for kv in reused.most_common(3))))
    total = agree + inner + sum(other.values())
    LOCALS["agree"] += agree + inner
    LOCALS["total"] += total
    LOCALS["other"].update(other)
    what = (name + ": guest locals typed by callee parameters or spilled pointers agree with "
            "the host's DWARF (%d of %d accesses; %d more the same object by a member's "
            "type at its place)" % (agree, total, inner))
    if total < LOCALS_MIN:
        print("# %s%s" % (what, "; " + "; ".join("%s (%d)" % kv for kv in other.most_common(3))
                          if other else ""))
    else:
        check(what, agree + inner >= 0.9 * total,
              "; ".join("%s (%d)" % kv for kv in other.most_common(3)))
    if name == "pread_block":
        check_loop_walk(check, g, h)


def check_loop_walk(check, g, h):
    """filemap_read reads iocb (the caller's struct kiocb) through r13 at the top of its
    loop and through r15 in the inner one, each register reused in between (docs/
    symbolize-data.md): the guest's BTF walk must follow those loops to the parameter and
    name each such access as the host's DWARF does, sample by sample."""
    mine = {k: v for k, v in h.items() if v[2] == "filemap_read" and
            bare(v[0]) == "struct kiocb"}
    if not mine:
        print("# pread_block: no sample of filemap_read's kiocb reads this run")
        return
    same = [k for k, v in mine.items() if k in g and bare(g[k][0]) == "struct kiocb" and
            g[k][1] == v[1]]
    check("pread_block: the guest names filemap_read's reads of iocb struct kiocb, at the "
          "host's base (%d of %d accesses)" % (len(same), len(mine)), len(same) == len(mine),
          "; ".join("%s: guest %s" % (k[2], g.get(k)) for k in mine if k not in same)[:300])


def slabinfo(path):
    """name -> (objsize: the slot stride, kmem_cache.size) from /proc/slabinfo 2.1."""
    out = {}
    try:
        with open(path) as f:
            for ln in f:
                p = ln.split()
                if len(p) > 4 and not ln.startswith("#") and p[1].isdigit():
                    out[p[0]] = int(p[3])
    except OSError:
        pass
    return out


def check_slabinfo(check, a, run):
    """Two objects of one cache on one page lie a whole number of slots apart, the slot
    being /proc/slabinfo's objsize in the guest; and pahole's size of the type fits it."""
    info = slabinfo(os.path.join(a.out, "slabinfo"))
    if not check("guest /proc/slabinfo saved (%d caches)" % len(info), bool(info), "none"):
        return
    rows, bad = [], []
    for cache, typ in CACHE_TYPES.items():
        bases = sorted(BASES.get(typ, ()))
        if cache not in info or len(bases) < 2:
            continue
        p, _ = run(["pahole", "-C", typ, "--hex", a.vmlinux])
        m = re.search(r"/\* size: (0x[0-9a-f]+|\d+),", p.stdout)
        size = int(m.group(1), 0) if m else -1
        pairs = [(x, y) for x, y in zip(bases, bases[1:]) if x >> 12 == y >> 12]
        off = [(x, y) for x, y in pairs if (y - x) % info[cache]]
        rows.append("%s: %d bases, %d same-page pairs, slot %d, pahole %d" %
                    (cache, len(bases), len(pairs), info[cache], size))
        # task_struct's FPU state is sized at boot (symbolize/slab.c): shorter than pahole's
        if off or size < 0 or (size > info[cache] and cache != "task_struct"):
            bad.append("%s: %d pairs off the slot grid, pahole size %d" % (cache, len(off), size))
    print("# slab objects vs /proc/slabinfo: " + "; ".join(rows))
    check("guest slab objects lie on /proc/slabinfo's slot grid and fit pahole's sizes "
          "(%d caches)" % len(rows), rows and not bad, "; ".join(bad) or "no cache to check")


def check_modern(check, a, read_pairs):
    """A current kernel (6.12 marks slab pages by page_type's top byte, PGTY_slab, not
    PG_slab): record -k saves its slab facts, the guest report names kernel heap by slab
    cache through kcore and BTF, and the objects lie on the guest's /proc/slabinfo grid."""
    if not a.kv_new:
        print("# no current kernel booted (LAB_NEW_META empty)")
        return
    steps = read_pairs(os.path.join(a.new_out, "steps"))
    info = slabinfo(os.path.join(a.new_out, "slabinfo"))
    bases = collections.defaultdict(set)
    for name in ("create_unlink", "xattr_list"):
        bad = [s for s in (name + ".record", name + ".guestreport") if steps.get(s) != "0"]
        if not check("%s on %s: record and guest report exit 0" % (name, a.kv_new), not bad,
                     "; ".join("%s exit %s" % (s, steps.get(s, "missing")) for s in bad)):
            continue
        with open(os.path.join(a.new_out, name + ".record.err")) as f:
            rec = f.read()
        with open(os.path.join(a.new_out, name + ".guestreport.out")) as f:
            d = json.load(f)
        slab = d["stats"].get("kernel_slab", {})
        top = ["%s %s" % (ln["fields"][0]["field"] if ln["fields"] else ln["object"],
                          ln["verdict"]) for ln in d["lines"][:3]]
        print("# %-28s %s: samples %d, with an address %d, named %d, by slab cache %s; top: %s"
              % (name, a.kv_new, d["samples"]["total"], d["samples"]["with_addr"],
                 d["samples"]["resolved"], slab.get("named", "-"), "; ".join(top)))
        check("%s on %s: record saved the slab facts, the guest names kernel heap by slab "
              "cache (%s)" % (name, a.kv_new, slab.get("named", 0)),
              "kernel slab facts saved" in rec and slab.get("facts") == "kcore" and
              slab.get("named", 0) > 0, "record: %s; stats.kernel_slab %s" % (rec[-200:], slab))
        for o, b in slab_objects(d).values():
            bases[o].add(b)
    rows, off = [], []
    for cache, typ in CACHE_TYPES.items():
        bs = sorted(bases.get(typ, ()))
        pairs = [(x, y) for x, y in zip(bs, bs[1:]) if x >> 12 == y >> 12]
        if cache in info and pairs:
            rows.append("%s: %d same-page pairs, slot %d" % (cache, len(pairs), info[cache]))
            off += ["%s %#x %#x" % (cache, x, y) for x, y in pairs if (y - x) % info[cache]]
    print("# %s slab objects vs /proc/slabinfo: %s" % (a.kv_new, "; ".join(rows) or "none"))
    check("%s: the guest's slab objects lie on /proc/slabinfo's slot grid (%d caches)" %
          (a.kv_new, len(rows)), rows and not off, "; ".join(off[:3]) or "no pair to check")