/* A kernel module's types over tests/data/slab_types.c's, as xfs.ko's are over vmlinux's:
 * `pahole -J --btf_base` gives split BTF holding only xfs_inode, whose i_vnode is the
 * base's struct inode (tests/unit/test_slab.c, the guest's /sys/kernel/btf/xfs). */
#define main slab_types_main
#include "slab_types.c"
#undef main

struct xfs_inode {
	void *i_mount;
	unsigned long i_ino;
	struct inode i_vnode;
	unsigned long i_flags;
};

struct xfs_inode g_xfs_inode;

int main(void)
{
	return (int)sizeof(g_xfs_inode) + slab_types_main();
}
