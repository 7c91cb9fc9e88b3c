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
KSTATS = re.compile(r"kernel heap data named: (\d+); to a container, [^:]*: (\d+); to their "
                    r"own pointer's type only: (\d+)")
# The spin loops of the contended locks, and the member each one's owner word must be named
# as: (workload, spin function, container type, member path in it, lock type, owner member)
LOCKS = (
    ("orphan", "mutex_spin_on_owner", "ext4_sb_info", "s_orphan_lock", "mutex", "owner"),
    ("orphan", "rwsem_spin_on_owner", "inode", "i_rwsem", "rw_semaphore", "owner"),
    ("create_unlink", "rwsem_spin_on_owner", "inode", "i_rwsem", "rw_semaphore", "owner"),
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


def run(cmd, timeout=900):
    t = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return p, time.monotonic() - t


def pahole_offsets(vmlinux):
    """(struct, member) -> byte offset, for the types of LOCKS, from one pahole call."""
    if vmlinux not in PAHOLE:
        names = sorted({x for l in LOCKS for x in (l[2], l[4])})
        p, _ = run(["pahole", "-C", ",".join(names), vmlinux], timeout=600)
        out, cur = {}, None
        for ln in p.stdout.splitlines():
            m = re.match(r"^struct (\S+) \{", ln)
            if m:
                cur = m.group(1)
                continue
            m = re.match(r"^\t\S.*?(\w+)(\[\d+\])?;\s+/\*\s+(\d+)\s+\d+\s+\*/", ln)
            if m and cur:
                out.setdefault((cur, m.group(1)), int(m.group(3)))
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
    offset (the container's member, then the lock's), not as atomic64_t.counter: every
    such field in the report, and at least one."""
    off = pahole_offsets(a.vmlinux)
    for w, spin, cont, member, lock, owner in LOCKS:
        if w != name:
            continue
        want = "%s.%s.%s." % (cont, member, owner)
        at = off.get((cont, member), -1) + off.get((lock, owner), -1000)
        # the atomic64_t word (its counter) the waiters load; the loop also reads the
        # owner task (task_struct.on_cpu), another object
        got = [(f["field"], f["obj_offset"], f["records"]) for _, f in fields_at(host, spin)
               if f["field"].endswith(".counter") and f.get("spin", 0) > 0]
        bad = [g for g in got if not g[0].startswith(want) or g[1] != at]
        check("%s: the owner word %s spins on is named %s* at pahole's offset %d (%d "
              "records on %d lines)" % (name, spin, want, at, sum(g[2] for g in got), len(got)),
              got and not bad and at >= 0, "named otherwise: %s" % bad[:3])


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
    print("# create_unlink objects named (records): %s" % dict(seen))
    check("create_unlink: dentry fields named in the dcache's functions (%d records) and "
          "inode fields in the inode's (%d)" % (seen["dentry"], seen["inode"]),
          seen["dentry"] > 0 and seen["inode"] > 0, "none of one: %s" % dict(seen))


def after_workload(check, a, name, host, stats_text):
    """check.py's check_workload, with the host report (vmlinux) and its --stats text."""
    check_stats(check, name, stats_text)
    check_locks(check, a, name, host)
    if name == "create_unlink":
        check_shmem(check, a, host)


def funcs_of(a, data, vmlinux, debug_root):
    """Function -> samples in a recording, as perf script names them and as hitmap does."""
    p, _ = run(["perf", "script", "-i", data, "--vmlinux", vmlinux, "--symfs", debug_root,
                "-F", "sym"])
    perf = collections.Counter(ln.strip() for ln in p.stdout.splitlines() if ln.strip())
    q, _ = run([a.ksyms, data, vmlinux, debug_root])
    hm = collections.Counter(ln.split(" ", 2)[2] for ln in q.stdout.splitlines()
                             if len(ln.split(" ", 2)) == 3)
    return perf, hm


def check_xattr_compare(check, a):
    """hitmap compare of the flistxattr runs of -47 (A) against -57 (B), each side read
    with its own vmlinux: sides named by release and kernel, kernel type.field metrics
    matched across builds, and the workload's functions named on both sides as perf
    script names them."""
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
    for m in d.get("metrics", [])[:8]:
        print("#   xattr compare %10.3g %+8.1f%% %10.3g  p %-6.3g %s %s" % (
            m["a_mean"], m["change_pct"], m["b_mean"], m["p"], "*" if m["significant"] else " ",
            m["name"]))
    other_root = a.other_vmlinux.rsplit("/usr/lib/debug/boot/", 1)[0]
    (pa, ha), (pb, hb) = (funcs_of(a, olds[0], a.other_vmlinux, other_root),
                          funcs_of(a, news[0], a.vmlinux, a.debug_root))
    both = [f for f in XATTR_FUNCS if pa[f] and pb[f] and ha[f] and hb[f]]
    print("# xattr functions (perf script samples A / B): %s" %
          ", ".join("%s %d/%d" % (f, pa[f], pb[f]) for f in XATTR_FUNCS))
    check("xattr compare: the flistxattr path is named on both builds by perf and hitmap "
          "(%s)" % ", ".join(both), "simple_xattr_list" in both and len(both) >= 2,
          "A perf %s hitmap %s; B perf %s hitmap %s" % (
              [pa[f] for f in XATTR_FUNCS], [ha[f] for f in XATTR_FUNCS],
              [pb[f] for f in XATTR_FUNCS], [hb[f] for f in XATTR_FUNCS]))
