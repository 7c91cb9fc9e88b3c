/* Enclosing objects in the kernel (symbolize/data_enclose.c, data_resolve.c): kernel data
 * are one address space whatever process ran, so a kernel access typed only by a member's
 * type (atomic64_t.counter, read through an atomic64_t *) is named from the outermost
 * object that any kernel sample typed around it (a struct ext4_sb_info * with its base),
 * before or after that sample; a user address is never named from kernel objects, and
 * --stats counts kernel heap data named to a container apart from the rest.
 * tests/data/kernel_enclose.c, built here with gcc -O2 -g, stands in for the vmlinux
 * (the kernel's real layout of those members, as pahole gives it for 6.1.0-57). */
#include "btftype_util.h"

#define KSRC "tests/data/kernel_enclose.c"
#define SBI 0xff3d9142c0a92000ull	/* an ext4_sb_info in the direct map */
#define ORPHAN_LOCK 600
#define ORPHAN 632

static char kbin[400];

static int ksetup(void **state)
{
	const char *tmp = getenv("TMPDIR");
	char cwd[512];
	struct hm_err err = {0};

	(void)state;
	snprintf(P.dir, sizeof(P.dir), "%s/hm_kenc_XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
	if (!mkdtemp(P.dir) || !getcwd(cwd, sizeof(cwd)))
		return -1;
	snprintf(kbin, sizeof(kbin), "%s/kernel_enclose", P.dir);
	if (run("gcc -O2 -g -o %s %s/" KSRC, kbin, cwd) || hm_decode_open(&P.dec, &err))
		return -1;
	return 0;
}

static int kteardown(void **state)
{
	(void)state;
	hm_decode_close(P.dec);
	run("rm -rf %s", P.dir);
	return 0;
}

/* A kernel sample of process pid at func's load through rdi, rdi = at. */
static struct hm_data_obj kload(struct hm_data *d, const char *func, uint32_t pid, uint64_t at)
{
	struct hm_insn in = find_access(kbin, 0, func, HM_REG_DI, 0, HM_ACC_LOAD);
	struct hm_data_query q = {.pid = pid, .tid = pid, .ip = in.addr, .insn = &in,
				  .op = &in.mem[0], .regs_mask = hm_decode_regs_mask(),
				  .kernel = 1};
	uint64_t regs[24] = {0};
	struct hm_data_obj o;

	regs[__builtin_popcountll(q.regs_mask & ((1ull << HM_REG_DI) - 1))] = at;
	q.regs = regs;
	assert_int_equal(hm_data_resolve(d, &q, &o), 0);
	return o;
}

static struct hm_data *kdata(void)
{
	struct hm_data *d = NULL;
	struct hm_err err = {0};
	struct hm_data_kernel k = {.vmlinux = kbin};

	assert_int_equal(hm_data_open(&d, &err), 0);
	assert_int_equal(hm_data_set_kernel(d, &k), 0);
	return d;
}

/* The spin on the orphan lock's owner word, read through an atomic64_t *, before and
 * after another process's sample typed the ext4_sb_info around it. */
static void test_kernel_member_named_from_container(void **state)
{
	struct hm_data *d = kdata();
	struct hm_data_obj spin, o, u;
	struct hm_data_stats st;

	(void)state;
	spin = kload(d, "arch_atomic64_read", 10, SBI + ORPHAN_LOCK);
	assert_int_equal(spin.method, HM_M_HEAP);
	assert_string_equal(spin.field, "atomic64_t.counter");	/* nothing around it yet */
	assert_int_equal(spin.base, SBI + ORPHAN_LOCK);
	o = kload(d, "desc_per_block", 11, SBI);
	assert_string_equal(o.field, "ext4_sb_info.s_desc_per_block");
	assert_int_equal(o.base, SBI);
	/* the earlier result, named again (as resolve_enclose.c does before a batch goes on) */
	u = spin;
	assert_int_equal(hm_data_enclose(d, 12, 1, SBI + ORPHAN_LOCK, &spin), 1);
	assert_string_equal(spin.field, "ext4_sb_info.s_orphan_lock.owner.counter");
	assert_string_equal(spin.object, "struct ext4_sb_info");
	assert_int_equal(spin.base, SBI);
	assert_int_equal(spin.offset, ORPHAN_LOCK);
	/* a user address is another space: pid 10's own objects know none of the kernel's */
	assert_int_equal(hm_data_enclose(d, 10, 0, SBI + ORPHAN_LOCK, &u), 0);
	assert_int_equal(hm_data_enclose(d, 10, 1, 0x7f0000001000ull, &u), 0);
	assert_string_equal(u.field, "atomic64_t.counter");
	/* later samples, any process: named from the container at once */
	o = kload(d, "arch_atomic64_read", 13, SBI + ORPHAN_LOCK);
	assert_string_equal(o.field, "ext4_sb_info.s_orphan_lock.owner.counter");
	o = kload(d, "list_first", 14, SBI + ORPHAN);
	assert_string_equal(o.field, "ext4_sb_info.s_orphan.next");
	assert_int_equal(o.offset, ORPHAN);
	/* outside the object (one past its end): its own type only */
	o = kload(d, "arch_atomic64_read", 13, SBI + 656);
	assert_string_equal(o.field, "atomic64_t.counter");
	hm_data_stats(d, 0, &st);
	assert_int_equal(st.kernel_heap, 5);
	assert_int_equal(st.kernel_enclosed, 3);	/* the renamed spin, the two later ones */
	hm_data_close(d);
}

/* A container typed first: the member's own typing inside it never replaces it. */
static void test_kernel_container_first_stays(void **state)
{
	struct hm_data *d = kdata();
	struct hm_data_obj o;

	(void)state;
	o = kload(d, "desc_per_block", 20, SBI);
	assert_string_equal(o.field, "ext4_sb_info.s_desc_per_block");
	for (int i = 0; i < 3; i++) {
		o = kload(d, "arch_atomic64_read", 21, SBI + ORPHAN_LOCK);
		assert_string_equal(o.field, "ext4_sb_info.s_orphan_lock.owner.counter");
		o = kload(d, "list_first", 22, SBI + ORPHAN_LOCK + 16);	/* wait_list */
		assert_string_equal(o.field, "ext4_sb_info.s_orphan_lock.wait_list.next");
	}
	hm_data_close(d);
}

/* An object typed inside a known one where that one has no member of its type (a list
 * head in the middle of s_before): the memory was freed and used again, so it is named
 * by its own type and replaces the old object, which names nothing more. */
static void test_kernel_reused_memory_replaces_old_object(void **state)
{
	struct hm_data *d = kdata();
	struct hm_data_obj o;

	(void)state;
	o = kload(d, "desc_per_block", 30, SBI);
	assert_string_equal(o.field, "ext4_sb_info.s_desc_per_block");
	o = kload(d, "list_first", 31, SBI + 64);
	assert_string_equal(o.field, "list_head.next");
	assert_int_equal(o.base, SBI + 64);
	o = kload(d, "arch_atomic64_read", 32, SBI + ORPHAN_LOCK);
	assert_string_equal(o.field, "atomic64_t.counter");
	hm_data_close(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kernel_member_named_from_container),
		cmocka_unit_test(test_kernel_container_first_stays),
		cmocka_unit_test(test_kernel_reused_memory_replaces_old_object),
	};

	return cmocka_run_group_tests(tests, ksetup, kteardown);
}
