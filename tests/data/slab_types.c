/* Kernel-like types for tests/unit/test_slab.c: struct page, slab and kmem_cache with the
 * members symbolize/slab.c reads (at other offsets than Linux 6.1's, so that nothing
 * there may assume them), enum pageflags, and the types of a few caches. Built with -g
 * and turned into raw BTF as /sys/kernel/btf/vmlinux holds it. */
enum pageflags { PG_locked, PG_referenced, PG_uptodate, PG_dirty, PG_lru, PG_active,
		 PG_workingset, PG_waiters, PG_error, PG_owner_priv_1, PG_arch_1, PG_slab };
/* 6.12 on: a slab page's page_type has PGTY_slab in its top byte (no PG_slab) */
enum pagetype { PGTY_buddy = 0xf0, PGTY_offline = 0xf1, PGTY_table = 0xf2, PGTY_guard = 0xf3,
		PGTY_hugetlb = 0xf4, PGTY_slab = 0xf5 };

struct list_head {
	struct list_head *next, *prev;
};

struct page {
	unsigned long flags;
	union {
		struct {
			struct list_head lru;
			void *mapping;
			unsigned long index;
			unsigned long private;
		};
		struct {
			unsigned long compound_head;
		};
	};
	union {
		int _mapcount;
		unsigned int page_type;
	};
	int _refcount;
	unsigned long memcg_data;
	unsigned long virtual_pad;	/* 72 bytes: not Linux's 64 */
};

struct kmem_cache;

struct slab {
	unsigned long __page_flags;
	struct kmem_cache *slab_cache;	/* 8: Linux 6.1 has it at 24 */
	union {
		struct list_head slab_list;
		struct {
			struct slab *next;
			int slabs;
		};
	};
	void *freelist;
};

struct kmem_cache {
	void *cpu_slab;
	const char *name;
	unsigned int flags;
	unsigned int object_size;
	unsigned int size;
	int refcount;
	unsigned int red_left_pad;
	struct kmem_cache_node *node[64];	/* cut at nr_node_ids by the cache */
};

struct kmem_cache_node {
	long nr_partial;
};

struct thread_struct {
	unsigned long sp;
	unsigned long fpu_state[64];	/* sized at boot by the CPU's xsave features */
};

struct task_struct {
	long __state;
	int pid;
	struct thread_struct thread;
};

struct rw_semaphore {
	long count;
	long owner;
};

struct inode {
	unsigned long i_state;
	struct rw_semaphore i_rwsem;
	long long i_size;
};

struct ext4_inode_info {
	long i_flags;
	int i_disksize;
	struct inode vfs_inode;
	long i_tail;
};

struct lockref {
	int lock;
	int count;
};

struct dentry {
	unsigned int d_flags;
	int d_seq;
	struct dentry *d_parent;
	struct lockref d_lockref;
	char d_iname[40];
};

struct file {
	long f_count;
	unsigned int f_flags;
	void *private_data;
};

enum pageflags g_flags;
enum pagetype g_type;
struct page g_page;
struct slab g_slab;
struct kmem_cache g_cache;
struct ext4_inode_info g_ei;
struct dentry g_dentry;
struct file g_file;
struct task_struct g_task;

int main(void)
{
	return 0;
}
