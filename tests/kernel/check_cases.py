"""The lab's regression cases (docs/cases.md), called from check.py: the tmpfs flistxattr,
shmem create/unlink and ext4 orphan workloads as the reported regressions, named from
the outermost kernel object the evidence gives, and a compare of the flistxattr runs of
both Debian builds. Names and counts, never speed (TCG has no caches); the second tools
are pahole (member offsets), nm (which functions a build has) and perf script (the
functions of the same recordings).
"""
import collections
import json
import os
import re
import subprocess
import time

# --stats, under the kernel counts (render/stats_print.c)
KSTATS = re.compile(r"kernel heap data named: (\d+); to a container [^:]*: (\d+); to their "
                    r"pointer's type only: (\d+)")
# The spin loops of the contended locks, and the member each one's owner word must be named
# as: (workload, spin function, container type, member path in it, lock type, owner member)
# (workload, spin function, container, its path to the owner word as (struct, member)s);
# the ext4 directory's inode is named as its ext4_inode_info when a sample typed that.
LOCKS = (
    ("orphan", "mutex_spin_on_owner", "ext4_sb_info",
     (("ext4_sb_info", "s_orphan_lock"), ("mutex", "owner"))),
    ("orphan", "rwsem_spin_on_owner", "inode", (("inode", "i_rwsem"), ("rw_semaphore", "owner"))),
    ("orphan", "rwsem_spin_on_owner", "ext4_inode_info",
     (("ext4_inode_info", "vfs_inode"), ("inode", "i_rwsem"), ("rw_semaphore", "owner"))),
    ("create_unlink", "rwsem_spin_on_owner", "inode",
     (("inode", "i_rwsem"), ("rw_semaphore", "owner"))),
)
# What 6.1 runs for a tmpfs create and unlink (no simple_offset_add before 6.6): the
# dentry's and the shmem inode's allocation, initialization and teardown.
DCACHE = ("__d_alloc", "d_alloc", "d_alloc_parallel", "__d_instantiate", "d_instantiate",
          "__d_add", "d_delete", "__dentry_kill", "dput", "__d_lookup_rcu", "step_into",
          "dentry_unlink_inode", "lookup_fast", "__d_lookup_unhash", "d_set_d_op")
INODE = ("inode_init_always", "inode_init_owner", "shmem_get_inode", "evict", "__destroy_inode",
         "shmem_evict_inode", "clear_inode", "iput", "inode_sb_list_add", "security_inode_alloc",
         "current_time", "vfs_unlink", "inode_permission", "may_delete")
XATTR_FUNCS = ("simple_xattr_list", "shmem_listxattr", "vfs_listxattr", "listxattr")
PAHOLE = {}
NAMED = {}	# workload and spin function -> owner-word records named from a typed container


def run(cmd, timeout=900):
    t = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return p, time.monotonic() - t


def pahole_offsets(vmlinux):
    """(struct, member) -> byte offset, for the types of LOCKS, from one pahole call."""
    if vmlinux not in PAHOLE:
        names = sorted({st for l in LOCKS for st, _ in l[3]})
        p, _ = run(["pahole", "-C", ",".join(names), vmlinux], timeout=600)
        out, cur = {}, None
        for ln in p.stdout.splitlines():
            m = re.match(r"^struct (\S+) \{", ln)
            if m:
                cur = m.group(1)
                continue
            m = re.match(r"^\t\S.*?(\w+)(\[\d+\])?( __attribute__\(\(.*\)\))?;\s+"
                         r"/\*\s+(\d+)\s+\d+\s+\*/", ln)
            if m and cur:
                out.setdefault((cur, m.group(1)), int(m.group(4)))
        PAHOLE[vmlinux] = out
    return PAHOLE[vmlinux]


def fields_at(host, func):
    """(line, field) of every field with a site in func."""
    for line in host["lines"]:
        for f in line["fields"]:
            if any(s["func"] == func for s in f["sites"]):
                yield line, f


def check_locks(check, a, name, host):
    """The owner word each spinning waiter loads, named from its container at pahole's
    offset (the container's member, then the lock's), not as atomic64_t.counter, wherever
    another sample typed that container at that base (the evidence the rule needs; a short
    run may have none for a lock it sampled once: then it is counted, not asserted, and
    check_evidence asserts that some lock of the lab had it)."""
    off = pahole_offsets(a.vmlinux)
    for w, spin, cont, path in LOCKS:
        if w != name:
            continue
        want = ".".join([cont] + [m for _, m in path]) + "."
        at = sum(off.get(p, -1 << 20) for p in path)
        words = [f for _, f in fields_at(host, spin)
                 if f["field"].endswith(".counter") and f.get("spin", 0) > 0]
        # container bases other samples typed: (base of the struct cont) of fields that
        # are not these words
        typed = {int(f["obj_base"], 16) for line in host["lines"] for f in line["fields"]
                 if f["object"] == "struct " + cont and f.get("obj_base") and
                 not any(s["func"] == spin for s in f["sites"])}
        named = [f for f in words if f["field"].startswith(want) and f["obj_offset"] == at]
        due = [f for f in words if int(f["obj_base"], 16) + f["obj_offset"] - at in typed]
        # an outer container of this one (ext4_inode_info around the inode) names it too
        outer = [(".".join([c] + [m for _, m in pth]) + ".", sum(off.get(x, -1 << 20)
                                                                 for x in pth))
                 for w2, s2, c, pth in LOCKS if w2 == name and s2 == spin]
        bad = [(f["field"], f["obj_offset"]) for f in due if f not in named and not any(
            f["field"].startswith(w2) and f["obj_offset"] == a2 for w2, a2 in outer)]
        NAMED[name + " " + cont] = sum(f["records"] for f in named if f in due)
        check("%s: the owner word %s spins on is named %s* at pahole's offset %d where a "
              "sample typed the %s (%d of %d lines, %d records; %d lines with it typed)" % (
                  name, spin, want, at, cont, len(named), len(words),
                  sum(f["records"] for f in named), len(due)),
              at >= 0 and not bad,
              "named otherwise: %s" % bad[:3])


def check_stats(check, name, text):
    m = KSTATS.search(text)
    if m:
        print("# %-28s kernel heap named %s: to a container %s, by own pointer's type only %s"
              % (name + " host (vmlinux)", m.group(1), m.group(2), m.group(3)))
    if name in ("orphan", "create_unlink"):
        check(name + ": --stats counts kernel heap data named to a container and by "
              "pointer type only", m and int(m.group(1)) == int(m.group(2)) + int(m.group(3))
              and int(m.group(2)) > 0, "no such --stats line, or no container named")


def has_symbol(vmlinux, name):
    p, _ = run(["nm", "--defined-only", vmlinux])
    return p.returncode == 0 and any(ln.split()[-1] == name for ln in p.stdout.splitlines()
                                     if ln.split())


def check_shmem(check, a, host):
    """create/unlink on tmpfs: 6.1 has no simple_offset_add (6.6's, whose xa_alloc was the
    reported radix_tree_node cost), so what it allocates and touches is the dentry and the
    shmem inode: their fields named in the dcache's and the inode's own functions."""
    check("create_unlink: neither Debian 6.1 build has simple_offset_add (nm), so no "
          "offset-directory xarray to name",
          not has_symbol(a.vmlinux, "simple_offset_add") and
          not has_symbol(a.other_vmlinux, "simple_offset_add") and
          has_symbol(a.vmlinux, "shmem_mknod"), "simple_offset_add found, or no shmem_mknod")
    seen = collections.Counter()
    for line in host["lines"]:
        for f in line["fields"]:
            for s in f["sites"]:
                kind = f["field"].split(".")[0]
                if (kind == "dentry" and s["func"] in DCACHE) or \
                        (kind == "inode" and s["func"] in INODE):
                    seen[kind] += s["count"]
                if re.match(r"(xa_node|radix_tree_node|xarray|xa_state)\.", f["field"]):
                    seen[f["field"].split(".")[0]] += s["count"]
    print("# create_unlink objects named in the dcache's and the inode's functions "
          "(records): %s" % dict(seen))


def check_shmem_compare(check, a):
    """The same objects on both builds, over the six 1 s compare runs (check.py's
    check_compare wrote compare.json): dentry and inode fields, matched by type.field."""
    try:
        with open(os.path.join(a.out, "compare.json")) as f:
            d = json.load(f)
    except (OSError, ValueError):
        d = {}
    got = collections.defaultdict(list)
    for m in d.get("metrics", []):
        kind = m["name"].split(".")[0]
        if m.get("kind") == "field" and m["name"].endswith(" samples") and \
                kind in ("dentry", "inode") and any(m.get("a_values") or []) and \
                any(m.get("b_values") or []):
            got[kind].append(m["name"][:-len(" samples")])
    print("# create_unlink compare, fields on both builds: %s" % dict(got))
    check("create_unlink: dentry and inode fields named on both builds (%d, %d)"
          % (len(got["dentry"]), len(got["inode"])), got["dentry"] and got["inode"],
          "by kind: %s" % dict(got))


def after_workload(check, a, name, host, stats_text):
    """check.py's check_workload, with the host report (vmlinux) and its --stats text."""
    check_stats(check, name, stats_text)
    check_locks(check, a, name, host)
    if name == "create_unlink":
        check_shmem(check, a, host)


def check_evidence(check):
    """check_locks asserts where the evidence is; on a loaded host a short run may lack it
    for one lock, but the lab as a whole must have some, or nothing was checked."""
    check("owner words named from a container another sample typed, over the lab's locks "
          "(%s)" % ", ".join("%s %d" % kv for kv in sorted(NAMED.items())),
          any(NAMED.values()), "no lock word with its container typed: nothing checked")


def funcs_of(a, data, vmlinux, debug_root):
    """Function -> samples in a recording, as perf script names them and as hitmap does."""
    perf, hm = collections.Counter(), collections.Counter()
    for f in data:
        p, _ = run(["perf", "script", "-i", f, "--vmlinux", vmlinux, "--symfs", debug_root,
                    "-F", "ip,sym"])
        perf.update(ln.split()[1] for ln in p.stdout.splitlines() if len(ln.split()) >= 2)
        q, _ = run([a.ksyms, f, vmlinux, debug_root])
        hm.update(ln.split(" ", 2)[2] for ln in q.stdout.splitlines()
                  if len(ln.split(" ", 2)) == 3)
    return perf, hm


def check_xattr_compare(check, a):
    """hitmap compare of the flistxattr runs of -47 (A) against -57 (B), each side read
    with its own vmlinux: sides named by release and kernel, kernel type.field metrics
    matched across builds, and the workload's functions named on both sides as perf
    script names them."""
    check_evidence(check)
    check_shmem_compare(check, a)
    olds = [os.path.join(a.other_out, "xcmp%d.data" % i) for i in (1, 2, 3)]
    news = [os.path.join(a.out, "xcmp%d.data" % i) for i in (1, 2, 3)]
    missing = [f for f in olds + news if not os.path.exists(f)]
    if not check("xattr compare runs recorded on both kernels (3 + 3)", not missing,
                 "missing: %s" % missing):
        return
    p, secs = run([a.hitmap, "compare"] + olds + ["--"] + news +
                  ["--vmlinux-a", a.other_vmlinux, "--vmlinux-b", a.vmlinux, "--json"])
    d = json.loads(p.stdout) if p.returncode == 0 and p.stdout.startswith("{") else {}
    with open(os.path.join(a.out, "xattr_compare.json"), "w") as f:
        f.write(p.stdout)
    ab, bb = d.get("a_build", {}), d.get("b_build", {})
    check("xattr compare of two kernels: exit 0 in %.0f s, sides named by kernel release"
          % secs, p.returncode == 0 and ab.get("kind") == "kernel" and
          bb.get("kind") == "kernel" and ab.get("kernel", {}).get("release") == a.kv_other and
          bb.get("kernel", {}).get("release") == a.kv,
          "exit %d, %s; a_build %r" % (p.returncode, p.stderr.strip()[-200:], ab))
    fields = [m for m in d.get("metrics", []) if m.get("kind") == "field" and
              m.get("presence") == "both" and "." in m["name"] and
              m["name"].endswith(" samples")]
    check("xattr compare: kernel type.field metrics matched across the builds (%d)"
          % len(fields), len(fields) >= 3, "matched: %s" % [m["name"] for m in fields][:5])
    def num(x, fmt="%.3g"):
        return "-" if x is None else fmt % x
    for m in d.get("metrics", [])[:8]:
        print("#   xattr compare %10s %9s %10s  p %-6s %s %s" % (
            num(m.get("a_mean")), num(m.get("change_pct"), "%+.1f%%"), num(m.get("b_mean")),
            num(m.get("p")), "*" if m.get("significant") else " ", m["name"]))
    for m in fields:
        if m["name"].startswith(("simple_xattr", "inode.")):
            print("#   xattr compare per 1k samples A %s, B %s: %s" % (
                m.get("a_values"), m.get("b_values"), m["name"]))
    other_root = a.other_vmlinux.rsplit("/usr/lib/debug/boot/", 1)[0]
    (pa, ha), (pb, hb) = (funcs_of(a, olds, a.other_vmlinux, other_root),
                          funcs_of(a, news, a.vmlinux, a.debug_root))
    both = [f for f in XATTR_FUNCS if pa[f] and pb[f] and ha[f] and hb[f]]
    print("# xattr functions, samples of the 3 runs, perf script A / B, hitmap A / B: %s" %
          ", ".join("%s %d/%d %d/%d" % (f, pa[f], pb[f], ha[f], hb[f]) for f in XATTR_FUNCS))
    check("xattr compare: simple_xattr_list named on both builds by perf and hitmap "
          "(both: %s)" % ", ".join(both), "simple_xattr_list" in both,
          "A perf %s hitmap %s; B perf %s hitmap %s" % (
              [pa[f] for f in XATTR_FUNCS], [ha[f] for f in XATTR_FUNCS],
              [pb[f] for f in XATTR_FUNCS], [hb[f] for f in XATTR_FUNCS]))
