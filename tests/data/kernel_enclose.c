/* Kernel-like objects for tests/unit/test_enclose_kernel.c, built at test time with
 * gcc -O2 -g and read as if it were a vmlinux: a struct ext4_sb_info laid out as the
 * Debian 6.1.0-57 one is around its orphan lock and list (pahole: s_orphan_lock at 600,
 * a 32-byte struct mutex whose owner is an atomic64_t; s_orphan at 632), a function
 * reading the owner word through an atomic64_t * (as mutex_spin_on_owner's inlined
 * atomic_long_read does), one reading the list through a struct list_head *, and one
 * reading a member through the struct ext4_sb_info * itself (ext4_orphan_add's). */
typedef struct {
	long counter;
} atomic64_t;
typedef atomic64_t atomic_long_t;

struct list_head {
	struct list_head *next, *prev;
};

struct mutex {
	atomic_long_t owner;
	unsigned int wait_lock;
	unsigned int osq;
	struct list_head wait_list;
};

struct ext4_sb_info {
	unsigned long s_desc_per_block;
	char s_before[592];
	struct mutex s_orphan_lock;
	struct list_head s_orphan;
	unsigned long s_commit_interval;
};

__attribute__((noinline)) long arch_atomic64_read(const atomic64_t *v)
{
	return *(const volatile long *)&v->counter;
}

__attribute__((noinline)) struct list_head *list_first(const struct list_head *h)
{
	return *(struct list_head *const volatile *)&h->next;
}

__attribute__((noinline)) unsigned long desc_per_block(const struct ext4_sb_info *sbi)
{
	return *(const volatile unsigned long *)&sbi->s_desc_per_block;
}

int main(void)
{
	static struct ext4_sb_info sb;

	sb.s_orphan.next = &sb.s_orphan;
	return (int)(arch_atomic64_read(&sb.s_orphan_lock.owner) + desc_per_block(&sb) +
		     (list_first(&sb.s_orphan) != &sb.s_orphan));
}
