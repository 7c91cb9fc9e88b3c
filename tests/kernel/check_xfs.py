"""The kernel lab's xfs_imap case (docs/cases.md): xfs.ko built three times against the
booted kernel's headers (tests/kernel/xfs_imap/build.sh: stock, agbno.patch, pad.patch),
each loaded in the guest in turn under the 4-thread pread workload (3 runs each).

Asserts layouts, names and counts, never speed: QEMU TCG models no caches, so the
upstream 24% (fxmark DRBH) cannot show here; what hitmap owes is the layout and access
evidence. Second tools: readelf (vermagic, build-ids), pahole (member offsets), perf
(build-id cache, buildid-list). Called from check.py's main().
"""
import os
import re

VARIANTS = ("stock", "agbno", "pad")
RUNS = (1, 2, 3)
LINE = 64


def pahole_members(ko, struct):
    """member -> (offset, size) of one struct, from pahole (bit fields skipped)."""
    import subprocess
    p = subprocess.run(["pahole", "-C", struct, ko], capture_output=True, text=True)
    out, size, depth = {}, None, 0
    for ln in p.stdout.splitlines():
        if depth == 1:
            # "struct inode i_vnode __attribute__((__aligned__(8)));" too
            m = re.match(r"^\t[^\t/].*?[ *](\w+)(\[\d+\])*(?: __attribute__\(\(.*\)\))?;"
                         r"\s+/\*\s+(\d+)\s+(\d+)\s+\*/", ln)
            if m:
                out[m.group(1)] = (int(m.group(3)), int(m.group(4)))
            m = re.match(r"^\t(?:struct|union) \{.*", ln)
        m = re.search(r"/\* size: (\d+)", ln)
        if m and size is None and ln.startswith("\t/* size"):
            size = int(m.group(1))
        depth += ln.count("{") - ln.count("}")
    return out, size


def build_id(path):
    """The GNU build-id note, through readelf (a second tool)."""
    import subprocess
    p = subprocess.run(["readelf", "-n", path], capture_output=True, text=True)
    m = re.search(r"Build ID: ([0-9a-f]+)", p.stdout)
    return m.group(1) if m else None


def modinfo(path, key):
    import subprocess
    p = subprocess.run(["readelf", "-p", ".modinfo", path], capture_output=True, text=True)
    m = re.search(r"\]\s+%s=(.*)$" % key, p.stdout, re.M)
    return m.group(1).strip() if m else None


def notes_build_id(path):
    """The build-id in a copy of /sys/module/xfs/notes/.note.gnu.build-id (an ELF note:
    namesz, descsz, type, "GNU\\0", the id)."""
    import struct
    try:
        with open(path, "rb") as f:
            raw = f.read()
        namesz, descsz, typ = struct.unpack_from("<III", raw)
        off = 12 + ((namesz + 3) & ~3)
        return raw[off:off + descsz].hex() if typ == 3 else None
    except (OSError, struct.error):
        return None


def data(a, v, i):
    return os.path.join(a.out, "xfs_%s%d.data" % (v, i))


def check_all(a, check, run, load_json, steps):
    lab = os.path.dirname(os.path.abspath(a.out))
    kos = {v: os.path.join(lab, "xfs", v + ".ko") for v in VARIANTS}
    if not check("xfs_imap: three xfs.ko builds present", all(os.path.exists(k) for k in kos.values()),
                 "missing %s (tests/kernel/xfs_imap/build.sh)" %
                 [k for k in kos.values() if not os.path.exists(k)]):
        return
    deb = os.path.join(a.debug_root, "lib/modules", a.kv, "kernel/fs/xfs/xfs.ko")
    want = modinfo(deb, "vermagic")
    got = {v: modinfo(k, "vermagic") for v, k in kos.items()}
    check("xfs_imap: each build's vermagic is Debian's xfs.ko's (%r)" % want,
          want and all(g == want for g in got.values()), "got %r" % got)
    ids = {v: build_id(k) for v, k in kos.items()}
    check("xfs_imap: three distinct build-ids, none Debian's",
          len(set(ids.values())) == 3 and None not in ids.values() and build_id(deb) not in ids.values(),
          "%r" % ids)
    check_guest(a, check, run, steps, ids)
    cache = os.path.join(lab, "xfs", "buildid-cache")
    for k in kos.values():
        run(["perf", "--buildid-dir", cache, "buildid-cache", "-a", k])
    check_diff(a, check, run, load_json, kos)
    if not all(steps.get("xfs_%s%d.record" % (v, i)) == "0" for v in VARIANTS for i in RUNS):
        return
    check_reports(a, check, run, load_json, kos, cache, ids)
    check_compare(a, check, run, load_json, kos, cache, ids)
    check_whatif(a, check, run, load_json, kos, cache)


def check_guest(a, check, run, steps, ids):
    """Each build loaded (insmod's status, /proc/modules, the kernel's own note of the
    loaded module's build-id) and recorded with that build-id (perf buildid-list)."""
    for v in VARIANTS:
        need = ["xfs_%s.insmod" % v, "xfs_%s.setup" % v] + ["xfs_%s%d.record" % (v, i) for i in RUNS]
        bad = ["%s exit %s" % (s, steps.get(s, "missing")) for s in need if steps.get(s) != "0"]
        try:
            with open(os.path.join(a.out, "xfs_%s.modules" % v)) as f:
                live = "Live" in f.read()
        except OSError:
            live = False
        sysid = notes_build_id(os.path.join(a.out, "xfs_%s.notes" % v))
        p, _ = run(["perf", "buildid-list", "-i", data(a, v, 1)])
        rec = [ln.split()[0] for ln in p.stdout.splitlines() if ln.rstrip().endswith("xfs.ko")]
        check("xfs_imap: %s xfs.ko loaded in the guest (insmod, /proc/modules), the kernel's "
              "build-id note and the recording's (perf buildid-list) are the build's" % v,
              not bad and live and sysid == ids[v] and rec == [ids[v]],
              "%s; live %s; /sys/module note %s, recorded %s, built %s" %
              (bad, live, sysid, rec, ids[v]))


def check_diff(a, check, run, load_json, kos):
    """hitmap diff of the builds against pahole's offsets of the same files."""
    st, _ = pahole_members(kos["stock"], "xfs_imap")
    im = {v: pahole_members(kos[v], "xfs_imap") for v in VARIANTS}
    ino = {v: pahole_members(kos[v], "xfs_inode") for v in VARIANTS}
    print("# xfs_imap sizes (pahole): " + ", ".join("%s %s" % (v, im[v][1]) for v in VARIANTS) +
          "; xfs_inode: " + ", ".join("%s %s" % (v, ino[v][1]) for v in VARIANTS))
    for v in ("agbno", "pad"):
        p, _ = run([a.hitmap, "diff", kos["stock"], kos[v], "--fail-on", "size,line,embeds,added",
                    "--json"], timeout=600)
        d = load_json(p.stdout) or {}
        types = {t["type"]: t for t in d.get("types", [])}
        t_im = types.get("xfs_imap", {})
        added = [f["member"] for f in t_im.get("findings", []) if f["kind"] == "added"]
        want_added = sorted(set(im[v][0]) - set(st))
        t_in = types.get("xfs_inode", {})
        emb = [f for f in t_in.get("findings", []) if f["kind"] == "embeds"]
        found = [f for f in t_in.get("findings", []) if f["kind"] == "line"]
        # pahole (top-level members): each member's shift, and the plain members (no dot
        # in hitmap's path) whose line differs; hitmap's line findings name leaves
        # (i_vnode.i_ino): each must have its top-level member's shift and the new line
        # of its new offset.
        old, new = ino["stock"][0], ino[v][0]
        shift = {m: new[m][0] - old[m][0] for m in old if m in new}
        moved = {m: (old[m][0] // LINE, new[m][0] // LINE) for m in old
                 if m in new and old[m][0] // LINE != new[m][0] // LINE}
        flat = {f["member"]: (f["old_line"], f["new_line"]) for f in found if "." not in f["member"]}
        def shift_at(off):	# the top-level member holding old offset off (unions unnamed)
            m = max((o for o in old.values() if o[0] <= off), default=None)
            return shift.get([k for k, o in old.items() if o == m][0]) if m else None
        bad = ["%s %s->%s" % (f["member"], f["old_offset"], f["new_offset"]) for f in found
               if f["new_offset"] - f["old_offset"] != shift_at(f["old_offset"]) or
               f["new_line"] != f["new_offset"] // LINE or f["old_line"] != f["old_offset"] // LINE]
        missing = sorted(m for m in moved if "." not in m and m not in flat and
                         not any(f["member"].startswith(m + ".") for f in found))
        grew = im[v][1] != im["stock"][1]
        check("xfs_imap: diff stock.ko %s.ko exits 4, names xfs_imap (added %s, pahole %s) "
              "and xfs_inode.i_imap (embeds), xfs_imap %s -> %s bytes; %d xfs_inode members "
              "on another line, each moved by pahole's shift of its member" %
              (v, added, want_added, im["stock"][1], im[v][1], len(found)),
              p.returncode == 4 and added == want_added and
              any(f.get("member") == "i_imap" for f in emb) and not bad and not missing and
              (len(found) > 0) == grew and (len(moved) > 0) == grew,
              "exit %d; xfs_imap findings %r; xfs_inode embeds %r; disagree with pahole %r; "
              "pahole-only %r" % (p.returncode, [f["kind"] for f in t_im.get("findings", [])],
                                  emb[:2], bad[:3], missing[:3]))
        q, _ = run([a.hitmap, "diff", kos["stock"], kos[v], "-t", "xfs_imap", "-t", "xfs_inode"])
        with open(os.path.join(a.out, "xfs_diff_%s.txt" % v), "w") as f:
            f.write(q.stdout)


def sites_in(d, prefix):
    for line in d.get("lines", []):
        for f in line["fields"]:
            for s in f["sites"]:
                if (s.get("func") or "").startswith(prefix):
                    yield line, f, s


def check_reports(a, check, run, load_json, kos, cache, ids):
    """The host report of each build's run names xfs.ko's code through that build's own
    DWARF (perf's build-id cache); the stock build's file at the module's path is refused
    for the variant's recording (another build-id)."""
    for v in VARIANTS:
        p, _ = run([a.hitmap, "report", "-i", data(a, v, 1), "--vmlinux", a.vmlinux,
                    "--buildid-dir", cache, "--json", "--top", "0"])
        d = load_json(p.stdout) or {}
        xs = list(sites_in(d, "xfs_"))
        own = [s for _, _, s in xs if "/build-%s-" % v in (s.get("file") or "") or
               (s.get("file") or "").startswith("fs/xfs/") or "xfs" in (s.get("file") or "")]
        typed = sorted({f["field"] for _, f, _ in xs if f["field"][0] not in "+?"})
        check("xfs_imap: %s run's report names xfs.ko code with lines from its own build "
              "(%d xfs sites, %d with a source line; typed through xfs.ko's DWARF: %s)" %
              (v, len(xs), len(own), typed[:6]),
              p.returncode == 0 and xs and len(own) == len([s for _, _, s in xs if s.get("line")])
              and all(s.get("line") for _, _, s in xs),
              "exit %d, %s; sites %r" % (p.returncode, p.stderr.strip()[-160:],
                                         [(s["func"], s.get("file")) for _, _, s in xs[:3]]))
    # The stock build where the variant's recording names its module: another build-id.
    root = os.path.join(os.path.dirname(os.path.abspath(a.out)), "xfs", "stock-root")
    dst = os.path.join(root, "lib/modules", a.kv, "kernel/fs/xfs")
    os.makedirs(dst, exist_ok=True)
    link = os.path.join(dst, "xfs.ko")
    if os.path.lexists(link):
        os.remove(link)
    os.symlink(os.path.realpath(kos["stock"]), link)
    p, _ = run([a.hitmap, "report", "-i", data(a, "agbno", 1), "--vmlinux", a.vmlinux,
                "--sysroot", root, "--json", "--top", "0"])
    d = load_json(p.stdout) or {}
    lined = [s for _, _, s in sites_in(d, "xfs_") if s.get("line")]
    check("xfs_imap: the stock build's xfs.ko is not used for the agbno run (build-id "
          "differs): no xfs source line from it", p.returncode == 0 and not lined,
          "exit %d; lined sites %r" % (p.returncode, [(s["func"], s.get("file")) for s in lined[:3]]))


def check_compare(a, check, run, load_json, kos, cache, ids):
    """compare of the stock runs against the padded build's (and the agbno build's)."""
    for v in ("pad", "agbno"):
        cmd = [a.hitmap, "compare"] + [data(a, "stock", i) for i in RUNS] + ["--"] + \
              [data(a, v, i) for i in RUNS] + ["--vmlinux-a", a.vmlinux, "--vmlinux-b", a.vmlinux,
                                                "--buildid-dir", cache]
        p, secs = run(cmd + ["--json"], timeout=900)
        d = load_json(p.stdout) or {}
        fields = [m for m in d.get("metrics", []) if m.get("kind") == "field"
                  and m.get("presence") == "both" and m["name"].endswith(" samples")]
        xfs = [m["name"] for m in fields if m["name"].startswith("xfs_")]
        vfs = [m["name"] for m in fields if re.match(r"(inode|file|kiocb|folio|address_space|"
                                                     r"iov_iter|xa_state)\.", m["name"])]
        ab, bb = d.get("a_build", {}), d.get("b_build", {})
        check("xfs_imap: compare stock vs %s (3+3): exit 0 in %.0f s, both sides kernel %s, "
              "%d type.field metrics on both sides (%d xfs_*, %d VFS)" %
              (v, secs, a.kv, len(fields), len(xfs), len(vfs)),
              p.returncode == 0 and ab.get("kernel", {}).get("release") == a.kv and
              bb.get("kernel", {}).get("release") == a.kv and len(vfs) > 0,
              "exit %d, %s" % (p.returncode, p.stderr.strip()[-200:]))
        # One kernel, two builds of xfs.ko: each side is labelled by its module's build-id,
        # and the layout side diffs the two module files, found in the build-id cache.
        mods = [[(m["name"], m["build_id"]) for m in side.get("kernel", {}).get("modules_changed", [])]
                for side in (ab, bb)]
        q, _ = run(cmd + ["--wide"], timeout=900)
        head = q.stdout.split("\n")[0] + q.stdout.split("\n")[1]
        layout = re.search(r"^layout: (\S+) \(A\) ->\s+(\S+) \(B\)", q.stdout, re.M)
        check("xfs_imap: compare stock vs %s labels each side by its xfs.ko build-id and diffs "
              "the two module files (%s)" % (v, "; ".join(" ".join(m[0]) for m in mods if m)),
              mods == [[("xfs.ko", ids["stock"])], [("xfs.ko", ids[v])]] and
              ("xfs.ko (build-id %s)" % ids["stock"][:12]) in head and
              ("xfs.ko (build-id %s)" % ids[v][:12]) in head and
              "ran the same build" not in q.stdout and layout is not None and
              ids["stock"][2:] in layout.group(1) and ids[v][2:] in layout.group(2),
              "modules %r, first lines %r, layout %r" % (mods, head[:300],
                                                          layout and layout.group(0)))
        if v == "pad":
            with open(os.path.join(a.out, "xfs_compare_%s.txt" % v), "w") as f:
                f.write(q.stdout)
            check_moved(a, check, run, load_json, kos, cmd)


HOT = 0.5	# compare --hot: samples per 1000 (TCG's pread is mostly copying; no xfs_inode
		# field reaches the default 10)


def check_moved(a, check, run, load_json, kos, cmd):
    """compare --hot lists every xfs_inode field the runs sample that the padded build
    moved (every member after i_imap: 8 bytes on), with pahole's offsets in each build."""
    stock, pad = (pahole_members(kos[v], "xfs_inode")[0] for v in ("stock", "pad"))
    p, _ = run(cmd + ["--json", "--hot", str(HOT)], timeout=900)
    d = load_json(p.stdout) or {}
    hot = {m["name"][:-8] for m in d.get("metrics", []) if m.get("kind") == "field"
           and m["name"].startswith("xfs_inode.") and m["name"].endswith(" samples")
           and max(m.get("a_mean") or 0, m.get("b_mean") or 0) >= HOT}
    moved = {f for f in hot if stock.get(f.split(".")[1].split("[")[0], (0,))[0] !=
             pad.get(f.split(".")[1].split("[")[0], (0,))[0]}
    rows = {h["field"]: h for h in d.get("layout", []) if h.get("type") == "xfs_inode"}
    bad = []
    for field, h in rows.items():
        member = field.split(".", 1)[1]
        top = member.split(".")[0].split("[")[0]
        mv = [f for f in h.get("findings", []) if f["kind"] == "moved" and f["member"] == member]
        if top not in stock or top not in pad or not mv or \
                mv[0]["new_offset"] - mv[0]["old_offset"] != pad[top][0] - stock[top][0] or \
                not stock[top][0] <= mv[0]["old_offset"] < stock[top][0] + stock[top][1]:
            bad.append("%s: %s (pahole %s -> %s)" % (field, mv[:1], stock.get(top), pad.get(top)))
    print("# xfs_imap: compare stock vs pad --hot %g: %d xfs_inode fields sampled at %g per "
          "1000, %d of them moved by pad.ko; layout rows: %s" %
          (HOT, len(hot), HOT, len(moved), sorted(rows)))
    check("xfs_imap: compare stock vs pad --hot %g lists each sampled xfs_inode field the pad "
          "moved (%d), by pahole's offsets in both builds" % (HOT, len(moved)),
          p.returncode == 0 and (d.get("layout_info") or {}).get("hot_min") == HOT and
          moved <= set(rows) and not bad,
          "exit %d; missing %s; %s" % (p.returncode, sorted(moved - set(rows))[:3], bad[:3]))


def check_whatif(a, check, run, load_json, kos, cache):
    """whatif on the agbno build's run with the padded build's layout: every xfs_imap and
    xfs_inode member it re-lays must sit where pahole puts it in pad.ko; the padded
    build's own runs must name those types' fields at pahole's pad.ko offsets."""
    p, _ = run([a.hitmap, "whatif", "-i", data(a, "agbno", 1), "--vmlinux", a.vmlinux,
                "--buildid-dir", cache, "--layout", kos["pad"], "--json", "--top", "0"], timeout=600)
    d = load_json(p.stdout) or {}
    with open(os.path.join(a.out, "xfs_whatif.json"), "w") as f:
        f.write(p.stdout)
    want = {t: pahole_members(kos["pad"], t)[0] for t in ("xfs_imap", "xfs_inode")}
    rows = [(t["type"], m) for t in d.get("types", []) if t["type"] in want
            for m in t["members"] if m.get("name") in want[t["type"]]]
    bad = ["%s.%s %s != %s" % (t, m["name"], m["new_offset"], want[t][m["name"]][0])
           for t, m in rows if m["new_offset"] != want[t][m["name"]][0]]
    check("xfs_imap: whatif --layout pad.ko on the agbno run exits 0; its %d xfs_imap/"
          "xfs_inode member rows are at pahole's pad.ko offsets (%d accesses to changed "
          "types, %d moved)" % (len(rows), d.get("samples", {}).get("affected", -1),
                                d.get("samples", {}).get("moved", -1)),
          p.returncode == 0 and d.get("schema") == "hitmap.whatif/1" and not bad,
          "exit %d, %s; %s" % (p.returncode, p.stderr.strip()[-160:], bad[:3]))
    seen, wrong = 0, []
    for i in RUNS:
        q, _ = run([a.hitmap, "report", "-i", data(a, "pad", i), "--vmlinux", a.vmlinux,
                    "--buildid-dir", cache, "--json", "--top", "0"])
        for line in (load_json(q.stdout) or {}).get("lines", []):
            for f in line["fields"]:
                t, _, path = f["field"].partition(".")
                top = path.split(".")[0].split("[")[0]
                if t in want and top in want[t]:
                    seen += 1
                    o, n = want[t][top]
                    # obj_offset: in the object, as pahole counts ("offset" is the line's)
                    at = f.get("obj_offset", -1)
                    if not o <= at < o + n:
                        wrong.append("%s at %d, pahole %d+%d" % (f["field"], at, o, n))
    print("# xfs_imap: the pad runs name %d xfs_imap/xfs_inode fields (xfs_inode objects "
          "by the slab facts record -k saved, typed through pad.ko's DWARF)" % seen)
    if seen:	# nothing to compare when the timer never landed on one
        check("xfs_imap: the pad runs' xfs_imap/xfs_inode fields (%d) lie where pahole "
              "puts them in pad.ko" % seen, not wrong, "; ".join(wrong[:3]))
