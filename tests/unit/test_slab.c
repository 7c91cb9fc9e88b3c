/* symbolize/slab.c, symbolize/data_slab.c: kernel heap objects named by their slab cache,
 * read through a kcore. This machine has no /proc/kcore: every test here runs on
 * synthesized memory (a core file this test writes, with struct pages, slabs and
 * kmem_caches laid out as tests/data/slab_types.c declares them, and that file's BTF).
 * The real thing is checked in the kernel lab (tests/kernel/check.py: the guest report
 * through /proc/kcore, and the caches' sizes against the guest's /proc/slabinfo). */
#define main slab_types_main	/* the same types, so offsetof and sizeof come from gcc */
#include "../data/slab_types.c"
#undef main

#include <stddef.h>

#include "core/kslab.h"
#include "symbolize/data.h"
#include "symbolize/layout.h"
#include "symbolize/slab.h"
#include "symbolize/slab_kcore.h"
#include "kcore_util.h"

#define PO 0xffff888000000000ull	/* page_offset_base */
#define VMEMMAP 0xffffea0000000000ull	/* vmemmap_base */
#define VMALLOC 0xffffc90000000000ull	/* vmalloc_base: the direct map's end */
#define PFN0 0x100ull			/* the first page of the direct-map segment */
#define NPAGES 16
#define CACHES (PFN0 + 15)		/* the page holding the kmem_caches and names */
#define KVARS (KTEXT + 0x800)		/* page_offset_base, vmemmap_base, vmalloc_base,
					 * max_pfn */
#define KFUNC (KTEXT + 0x100)

static struct {
	char dir[256], src[512], btf[512], core[512], ksyms[512], ksyms_novars[512];
	char mod[512], modbtf[512];
	uint32_t xfs_inode_size;	/* the module's type, from its split BTF */
	uint8_t text[0x1000];
	uint8_t mem[NPAGES << 12];		/* physical PFN0.. */
	uint8_t pages[NPAGES * sizeof(struct page)];	/* their struct pages */
} T;

static uint64_t va(uint64_t pfn, uint64_t off)
{
	return PO + (pfn << 12) + off;
}

static void put(uint64_t addr, const void *v, size_t n)
{
	uint64_t pages = VMEMMAP + PFN0 * sizeof(struct page);

	if (addr >= va(PFN0, 0) && addr + n <= va(PFN0 + NPAGES, 0))
		memcpy(T.mem + (addr - va(PFN0, 0)), v, n);
	else if (addr >= pages && addr + n <= pages + sizeof(T.pages))
		memcpy(T.pages + (addr - pages), v, n);
	else if (addr >= KTEXT && addr + n <= KTEXT + sizeof(T.text))
		memcpy(T.text + (addr - KTEXT), v, n);
	else
		fail_msg("put %#llx: outside the synthesized memory", (unsigned long long)addr);
}

static void put64(uint64_t addr, uint64_t v)
{
	put(addr, &v, 8);
}

static uint64_t page_at(uint64_t pfn)
{
	return VMEMMAP + pfn * sizeof(struct page);
}

/* A kmem_cache at slot i of the CACHES page, named name (NULL: its name pointer at name_at). */
static uint64_t cache(int i, const char *name, uint64_t name_at, uint32_t size,
		      uint32_t object_size, uint32_t red_left_pad, int refcount)
{
	uint64_t kc = va(CACHES, (uint64_t)i * 256), str = kc + 128;
	struct kmem_cache c = {.object_size = object_size, .size = size, .refcount = refcount,
			       .red_left_pad = red_left_pad};

	if (name)
		put(str, name, strlen(name) + 1);
	memcpy(&c.name, &(uint64_t){name ? str : name_at}, 8);
	put(kc, &c, offsetof(struct kmem_cache, node));	/* node[] unread */
	return kc;
}

/* The struct page of pfn: a slab's head (PG_slab, its cache), or a tail of head. */
static void slab_head(uint64_t pfn, uint64_t kc, int slab_flag)
{
	uint32_t type = slab_flag ? (uint32_t)PGTY_slab << 24 : 0xffffffffu;

	/* marked both ways, as 6.1 (PG_slab) and 6.12 (page_type) mark a slab */
	put64(page_at(pfn) + offsetof(struct page, flags),
	      slab_flag ? 1ull << PG_slab | 1ull << PG_uptodate : 1ull << PG_uptodate);
	put(page_at(pfn) + offsetof(struct page, page_type), &type, 4);
	put64(page_at(pfn) + offsetof(struct slab, slab_cache), kc);
}

static void tail(uint64_t pfn, uint64_t head_page)
{
	put64(page_at(pfn) + offsetof(struct page, compound_head), head_page + 1);
}

/* xfs_inode's size from the module's split BTF: the one place that type is known. */
static int module_size(void)
{
	struct hm_layout *base = NULL, *lay = NULL;
	struct hm_err err = {0};
	const struct hm_type *t;

	if (hm_layout_open_btf(T.btf, &base, &err) != 0 ||
	    hm_layout_open_btf_split(T.modbtf, base, &lay, &err) != 0) {
		fprintf(stderr, "%s\n", err.msg);
		hm_layout_close(base);
		return -1;
	}
	t = hm_layout_find(lay, "xfs_inode");
	T.xfs_inode_size = t ? (uint32_t)t->size : 0;
	hm_layout_close(lay);
	hm_layout_close(base);
	return T.xfs_inode_size ? 0 : -1;
}

static int setup(void **state)
{
	const char *tmp = getenv("TMPDIR");
	char cwd[512];
	uint64_t name_max = va(CACHES, 8 * 256 + 128);
	struct seg segs[3];
	FILE *f;

	(void)state;
	unsetenv("DEBUGINFOD_URLS");
	snprintf(T.dir, sizeof(T.dir), "%s/hm_slab_XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
	if (!mkdtemp(T.dir) || !getcwd(cwd, sizeof(cwd)))
		return -1;
	snprintf(T.src, sizeof(T.src), "%s/types", T.dir);
	/* named as /sys/kernel/btf/ names them: a module's BTF beside vmlinux's */
	snprintf(T.btf, sizeof(T.btf), "%s/btf/vmlinux", T.dir);
	snprintf(T.mod, sizeof(T.mod), "%s/mod", T.dir);
	snprintf(T.modbtf, sizeof(T.modbtf), "%s/btf/xfs", T.dir);
	snprintf(T.core, sizeof(T.core), "%s/kcore", T.dir);
	snprintf(T.ksyms, sizeof(T.ksyms), "%s/kallsyms", T.dir);
	snprintf(T.ksyms_novars, sizeof(T.ksyms_novars), "%s/kallsyms.novars", T.dir);
	if (run("mkdir %s/btf && gcc -g -O0 -o %s %s/tests/data/slab_types.c && pahole -J %s "
		">/dev/null && objcopy --dump-section .BTF=%s %s", T.dir, T.src, cwd, T.src,
		T.btf, T.src) ||
	    run("gcc -g -O0 -o %s %s/tests/data/slab_module.c && pahole -J --btf_base %s %s "
		">/dev/null && objcopy --dump-section .BTF=%s %s", T.mod, cwd, T.btf, T.mod,
		T.modbtf, T.mod) || module_size())
		return -1;
	memset(T.text, 0xcc, sizeof(T.text));
	put64(KVARS, PO);
	put64(KVARS + 8, VMEMMAP);
	put64(KVARS + 16, VMALLOC);
	put64(KVARS + 24, PFN0 + NPAGES);
	/* 0x100-0x101: a dentry slab of order 1, 96-byte slots */
	slab_head(PFN0, cache(0, "dentry", 0, 96, sizeof(struct dentry), 0, 1), 1);
	tail(PFN0 + 1, page_at(PFN0));
	/* 0x102: ext4_inode_cache with a left red zone; 0x103: kmalloc-64 */
	slab_head(PFN0 + 2, cache(1, "ext4_inode_cache", 0, 128, sizeof(struct ext4_inode_info),
				  16, 1), 1);
	slab_head(PFN0 + 3, cache(2, "kmalloc-64", 0, 64, 64, 0, 1), 1);
	/* 0x104: no slab page; 0x105: a tail whose head is outside the vmemmap */
	slab_head(PFN0 + 4, cache(3, "dentry", 0, 96, sizeof(struct dentry), 0, 1), 0);
	tail(PFN0 + 5, PO);
	/* 0x106: a cache pointer into nowhere; 0x107: a name pointer into nowhere; 0x108: a
	 * name without its NUL; 0x109: a merged cache; 0x10a: object_size not the type's;
	 * 0x10b: object_size over size; 0x10c: filp */
	slab_head(PFN0 + 6, PO + (1ull << 40), 1);
	slab_head(PFN0 + 7, cache(4, NULL, PO + (1ull << 40), 96, 64, 0, 1), 1);
	memset(T.mem + (CACHES - PFN0) * 4096 + 8 * 256 + 128, 'a', 128);
	slab_head(PFN0 + 8, cache(5, NULL, name_max, 96, 64, 0, 1), 1);
	slab_head(PFN0 + 9, cache(6, "inode_cache", 0, 64, sizeof(struct inode), 0, 2), 1);
	slab_head(PFN0 + 10, cache(7, "dentry", 0, 256, sizeof(struct dentry) + 64, 0, 1), 1);
	slab_head(PFN0 + 11, cache(9, "dentry", 0, 32, sizeof(struct dentry), 0, 1), 1);
	slab_head(PFN0 + 12, cache(10, "filp", 0, 64, sizeof(struct file), 0, 1), 1);
	/* 0x10d: a module's cache, typed only by the module's BTF */
	slab_head(PFN0 + 13, cache(11, "xfs_inode", 0, T.xfs_inode_size + 8, T.xfs_inode_size,
				   0, 1), 1);
	segs[0] = (struct seg){KTEXT, sizeof(T.text), sizeof(T.text), T.text};
	segs[1] = (struct seg){va(PFN0, 0), sizeof(T.mem), sizeof(T.mem), T.mem};
	segs[2] = (struct seg){page_at(PFN0), sizeof(T.pages), sizeof(T.pages), T.pages};
	write_core(T.core, segs, 3, BAD_NONE);
	if (!(f = fopen(T.ksyms, "w")))
		return -1;
	fprintf(f, "%016llx T _text\n%016llx T a_func\n%016llx T _etext\n%016llx D "
		"page_offset_base\n%016llx D vmemmap_base\n%016llx D vmalloc_base\n%016llx D "
		"max_pfn\n", KTEXT, KFUNC, KTEXT + 0x700, KVARS, KVARS + 8, KVARS + 16, KVARS + 24);
	if (fclose(f) || !(f = fopen(T.ksyms_novars, "w")))
		return -1;
	/* a report elsewhere: the kernel's memory is not there to read */
	fprintf(f, "%016llx T _text\n%016llx T a_func\n%016llx T _etext\n", KTEXT, KFUNC,
		KTEXT + 0x700);
	return fclose(f);
}

static int teardown(void **state)
{
	(void)state;
	run("rm -rf %s", T.dir);
	return 0;
}

struct ctx {
	struct hm_code *code;
	struct hm_data *d;
};

/* The kernel from the synthesized kcore, with the slab facts a recording saved (or none). */
static void open_kernel_with(struct ctx *c, const char *ksyms, const uint8_t *kslab, size_t len)
{
	struct hm_err err = {0};
	struct hm_data_kernel k = {0};

	c->code = open_code(T.core, ksyms);
	assert_int_equal(hm_data_open(&c->d, &err), 0);
	k.kcore = T.core;
	k.code = c->code;
	k.btf = T.btf;
	k.kslab = kslab;
	k.kslab_len = len;
	k.input = "test.data";
	assert_int_equal(hm_data_set_kernel(c->d, &k), 0);
}

static void open_kernel(struct ctx *c)
{
	open_kernel_with(c, T.ksyms, NULL, 0);
}

static void close_kernel(struct ctx *c)
{
	hm_data_close(c->d);
	hm_code_close(c->code);
}

static struct hm_data_obj named(struct ctx *c, uint64_t addr)
{
	struct hm_data_query q = {.pid = PID, .tid = PID, .addr = addr, .ip = KFUNC, .kernel = 1};
	struct hm_data_obj o;

	assert_int_equal(hm_data_resolve(c->d, &q, &o), 0);
	return o;
}

static void test_slab_object_named_by_cache_on_synthesized_kcore(void **state)
{
	uint64_t d3 = va(PFN0, 3 * 96), d50 = va(PFN0, 50 * 96);
	uint64_t e2 = va(PFN0 + 2, 16 + 2 * 128);
	struct hm_data_stats st;
	struct hm_data_obj o;
	struct ctx c;

	(void)state;
	open_kernel(&c);
	o = named(&c, d3 + offsetof(struct dentry, d_lockref.count));
	assert_int_equal(o.method, HM_M_HEAP);
	assert_string_equal(o.field, "dentry.d_lockref.count");
	assert_string_equal(o.object, "struct dentry");
	assert_int_equal(o.base, d3);
	/* in the order-1 slab's tail page: object 50 straddles no page of its own */
	o = named(&c, d50 + offsetof(struct dentry, d_iname) + 3);
	assert_string_equal(o.field, "dentry.d_iname[3]");
	assert_int_equal(o.base, d50);
	/* the left red zone before every object */
	o = named(&c, e2 + offsetof(struct ext4_inode_info, vfs_inode.i_rwsem.owner));
	assert_string_equal(o.field, "ext4_inode_info.vfs_inode.i_rwsem.owner");
	assert_int_equal(o.base, e2);
	o = named(&c, va(PFN0 + 12, 64 + 8));
	assert_string_equal(o.field, "file.f_flags");
	/* a slab object is its whole allocation: a memset over its end does not continue
	 * into a next dentry (the slot's padding follows) */
	{
		struct hm_data_part parts[HM_DATA_MAX_PARTS];
		size_t n;

		o = named(&c, d3 + offsetof(struct dentry, d_lockref));
		n = hm_data_split(c.d, &o, 96, parts, HM_DATA_MAX_PARTS);
		assert_true(n >= 2);
		for (size_t i = 0; i < n; i++)
			assert_true(parts[i].offset >= offsetof(struct dentry, d_lockref) &&
				    parts[i].offset < sizeof(struct dentry));
	}
	hm_data_stats(c.d, 0, &st);
	assert_int_equal(st.kernel_slab, 5);
	assert_string_equal(st.slab_source, "kcore");
	close_kernel(&c);
}

/* What names nothing: a kmalloc cache, a slot's padding, a page that is no slab, and
 * damaged slab data (never a crash; counted as not named). */
static void test_damaged_or_untyped_slabs_name_nothing(void **state)
{
	const uint64_t addrs[] = {
		va(PFN0 + 3, 8),			/* kmalloc-64 */
		va(PFN0, 96 + sizeof(struct dentry) + 4),	/* the slot's tail */
		va(PFN0 + 2, 4),			/* the red zone before object 0 */
		va(PFN0 + 4, 8),			/* no PG_slab */
		va(PFN0 + 5, 8),			/* a tail with a head outside the vmemmap */
		va(PFN0 + 6, 8),			/* cache pointer into nowhere */
		va(PFN0 + 7, 8),			/* name pointer into nowhere */
		va(PFN0 + 8, 8),			/* name without NUL */
		va(PFN0 + 9, 8),			/* merged cache */
		va(PFN0 + 10, 8),			/* object_size not dentry's */
		va(PFN0 + 11, 8),			/* object_size over size */
		va(PFN0 + 15, 8),			/* the caches' own page: no slab */
		va(PFN0 + NPAGES + 3, 8),		/* beyond the core's memory */
		PO - 0x1000,				/* below the direct map */
		VMALLOC + 0x1000,			/* vmalloc space */
	};
	struct hm_data_stats st;
	struct ctx c;

	(void)state;
	open_kernel(&c);
	for (size_t i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
		struct hm_data_obj o = named(&c, addrs[i]);

		if (o.method != HM_M_UNKNOWN)
			fail_msg("address %zu (%#llx) named %s", i, (unsigned long long)addrs[i],
				 o.field ? o.field : "?");
	}
	hm_data_stats(c.d, 0, &st);
	assert_int_equal(st.kernel_slab, 0);
	assert_int_equal(st.by_method[HM_M_UNKNOWN], sizeof(addrs) / sizeof(addrs[0]));
	close_kernel(&c);
}

/* The cache name -> type rule, with the size check, on the test types' BTF. */
static void test_cache_names_map_to_types_that_fit(void **state)
{
	struct hm_layout *lay = NULL;
	struct hm_err err = {0};
	const struct hm_type *t;
	struct hm_slab_offs o;
	const char *why = NULL;

	(void)state;
	assert_int_equal(hm_layout_open_btf(T.btf, &lay, &err), 0);
	assert_non_null(t = hm_slab_type(lay, "ext4_inode_cache", sizeof(struct ext4_inode_info)));
	assert_string_equal(t->name, "ext4_inode_info");
	assert_non_null(t = hm_slab_type(lay, "inode_cache", sizeof(struct inode) + 8));
	assert_string_equal(t->name, "inode");
	assert_non_null(t = hm_slab_type(lay, "filp", sizeof(struct file)));
	assert_string_equal(t->name, "file");
	assert_null(hm_slab_type(lay, "dentry", sizeof(struct dentry) + 16));
	assert_null(hm_slab_type(lay, "dentry", sizeof(struct dentry) - 1));
	assert_null(hm_slab_type(lay, "kmalloc-64", 64));
	/* kmem_cache's node[] cut at an element boundary; task_struct past thread's start */
	assert_non_null(hm_slab_type(lay, "kmem_cache", offsetof(struct kmem_cache, node) + 16));
	assert_null(hm_slab_type(lay, "kmem_cache", offsetof(struct kmem_cache, node) + 12));
	assert_non_null(t = hm_slab_type(lay, "task_struct",
					 offsetof(struct task_struct, thread) + 64));
	assert_string_equal(t->name, "task_struct");
	assert_null(hm_slab_type(lay, "task_struct", offsetof(struct task_struct, thread)));
	assert_null(hm_slab_type(lay, "no_such_cache", 64));
	/* the offsets are BTF's, not Linux's: struct page of 72 bytes, slab_cache at 8 */
	assert_int_equal(hm_slab_offs_from(lay, HM_SLAB_PG_FLAG, PG_slab, &o, &why), 0);
	assert_int_equal(o.page_size, sizeof(struct page));
	assert_int_equal(o.page_head, offsetof(struct page, compound_head));
	assert_int_equal(o.slab_cache, offsetof(struct slab, slab_cache));
	assert_int_equal(o.kc_name, offsetof(struct kmem_cache, name));
	assert_int_equal(o.kc_red_left_pad, offsetof(struct kmem_cache, red_left_pad));
	hm_layout_close(lay);
}

/* record -k's snapshot (slab.c, core/kslab.c): every slab page of memory, encoded, decoded
 * and looked up, finds what reading memory finds, address by address. */
static uint8_t *snapshot(size_t *len, struct hm_kslab *k)
{
	struct hm_code *code = open_code(T.core, T.ksyms);
	struct hm_layout *lay = NULL;
	struct hm_slab *s = NULL;
	struct hm_err err = {0};
	const char *why = NULL;
	uint64_t max_pfn = 0;
	uint8_t *bytes;

	assert_int_equal(hm_layout_open_btf(T.btf, &lay, &err), 0);
	assert_int_equal(hm_slab_open_kcore(code, lay, &s, &max_pfn, &why), 0);
	assert_int_equal(max_pfn, PFN0 + NPAGES);
	assert_int_equal(hm_slab_snapshot(s, max_pfn, k), 0);
	assert_non_null(bytes = hm_kslab_encode(k, len));
	hm_slab_close(s);
	hm_layout_close(lay);
	hm_code_close(code);
	return bytes;
}

static void test_snapshot_finds_what_memory_finds(void **state)
{
	struct hm_code *code = open_code(T.core, T.ksyms);
	struct hm_layout *lay = NULL;
	struct hm_slab *live = NULL, *table;
	struct hm_kslab k, back;
	struct hm_err err = {0};
	const char *why = NULL;
	size_t len, found = 0;
	uint8_t *bytes;

	(void)state;
	bytes = snapshot(&len, &k);
	/* dentry (2 pages), ext4_inode_cache, kmalloc-64, the merged inode_cache, the
	 * dentry of a bigger object_size, filp, xfs_inode: not the damaged caches nor the
	 * non-slabs */
	assert_int_equal(k.nr_runs, 7);
	assert_int_equal(k.runs[0].start, va(PFN0, 0));
	assert_int_equal(k.runs[0].pages, 2);
	assert_int_equal(hm_kslab_decode(bytes, len, "test.data", &back, &err), 0);
	assert_int_equal(back.nr_runs, k.nr_runs);
	assert_int_equal(back.nr_caches, k.nr_caches);
	assert_int_equal(hm_layout_open_btf(T.btf, &lay, &err), 0);
	assert_int_equal(hm_slab_open_kcore(code, lay, &live, NULL, &why), 0);
	table = hm_slab_open_table(&back);
	for (uint64_t a = va(PFN0, 0) - 64; a < va(PFN0 + NPAGES, 0) + 64; a += 8) {
		struct hm_slab_obj x = {0}, y = {0};
		int rx = hm_slab_lookup(live, a, &x), ry = hm_slab_lookup(table, a, &y);

		if (rx != ry || (rx == 0 && (strcmp(x.cache, y.cache) || x.base != y.base ||
					     x.offset != y.offset || x.size != y.size ||
					     x.object_size != y.object_size || x.merged != y.merged ||
					     x.cache_addr != y.cache_addr)))
			fail_msg("%#llx: memory %d %s+%llu, snapshot %d %s+%llu",
				 (unsigned long long)a, rx, rx ? "-" : x.cache,
				 (unsigned long long)x.offset, ry, ry ? "-" : y.cache,
				 (unsigned long long)y.offset);
		found += rx == 0;
	}
	assert_true(found > 500);	/* it compared objects, not only misses */
	hm_slab_close(table);
	hm_slab_close(live);
	hm_kslab_free(&back);
	hm_kslab_free(&k);
	free(bytes);
	hm_layout_close(lay);
	hm_code_close(code);
}

/* A report without the kernel's memory (kallsyms gives no bases: another machine) names
 * the slab object from the recording's facts, and says so. */
static void test_report_elsewhere_names_by_recorded_slabs(void **state)
{
	struct hm_data_stats st;
	struct hm_data_obj o;
	struct hm_kslab k;
	struct ctx c;
	size_t len;
	uint8_t *bytes = snapshot(&len, &k);
	uint64_t e2 = va(PFN0 + 2, 16 + 2 * 128);

	(void)state;
	open_kernel_with(&c, T.ksyms_novars, NULL, 0);
	o = named(&c, e2 + offsetof(struct ext4_inode_info, vfs_inode.i_rwsem.owner));
	assert_int_not_equal(o.method, HM_M_HEAP);	/* no facts: not named by the slab */
	hm_data_stats(c.d, 0, &st);
	assert_null(st.slab_source);
	close_kernel(&c);

	open_kernel_with(&c, T.ksyms_novars, bytes, len);
	o = named(&c, e2 + offsetof(struct ext4_inode_info, vfs_inode.i_rwsem.owner));
	assert_int_equal(o.method, HM_M_HEAP);
	assert_string_equal(o.field, "ext4_inode_info.vfs_inode.i_rwsem.owner");
	assert_int_equal(o.base, e2);
	hm_data_stats(c.d, 0, &st);
	assert_string_equal(st.slab_source, "recording");
	assert_int_equal(st.kernel_slab, 1);
	close_kernel(&c);
	hm_kslab_free(&k);
	free(bytes);
}

/* The guest: a module's cache (xfs_inode) is typed through that module's BTF beside
 * vmlinux's, its embedded base type (struct inode) included. */
static void test_module_cache_typed_by_module_btf(void **state)
{
	uint64_t x1 = va(PFN0 + 13, T.xfs_inode_size + 8);
	struct hm_layout *base = NULL, *lay = NULL, *dwarf = NULL;
	struct hm_err err = {0};
	const struct hm_type *t;
	const struct hm_member *m;
	uint32_t nr = 0;
	struct hm_data_obj o;
	struct ctx c;

	(void)state;
	/* the split layout holds the module's own types, not the base's; a member of a
	 * base type is the base layout's own hm_type (borrowed, not converted again) */
	assert_int_equal(hm_layout_open_btf(T.btf, &base, &err), 0);
	assert_int_equal(hm_layout_open_btf_split(T.modbtf, base, &lay, &err), 0);
	assert_non_null(t = hm_layout_find(lay, "xfs_inode"));
	assert_null(hm_layout_find(lay, "dentry"));
	m = hm_type_members(t, &nr);
	assert_int_equal(nr, 4);
	assert_ptr_equal(hm_type_strip(m[2].type), hm_layout_find(base, "inode"));
	hm_layout_close(lay);
	/* a base that is no BTF layout is refused, named */
	assert_int_equal(hm_layout_open(T.src, &dwarf, &err), 0);
	assert_int_equal(hm_layout_open_btf_split(T.modbtf, dwarf, &lay, &err), -1);
	assert_non_null(strstr(err.msg, T.src));
	hm_layout_close(dwarf);
	hm_layout_close(base);
	open_kernel(&c);
	o = named(&c, x1 + 16 + offsetof(struct inode, i_rwsem.owner));
	assert_int_equal(o.method, HM_M_HEAP);
	assert_string_equal(o.field, "xfs_inode.i_vnode.i_rwsem.owner");
	assert_int_equal(o.base, x1);
	close_kernel(&c);
}

static size_t code_mem(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return hm_code_read(ctx, 0, addr, 1, buf, len);
}

/* 6.12's mark (page_type's top byte, PGTY_slab) finds the slabs 6.1's (PG_slab) finds. */
static void test_page_type_mark_finds_the_same_slabs(void **state)
{
	struct hm_code *code = open_code(T.core, T.ksyms);
	struct hm_layout *lay = NULL;
	struct hm_err err = {0};
	struct hm_slab_offs of, ot;
	struct hm_slab_bases b = {PO, VMEMMAP, VMALLOC};
	struct hm_slab *sf, *st;
	const char *why = NULL;
	size_t found = 0;

	(void)state;
	assert_int_equal(hm_layout_open_btf(T.btf, &lay, &err), 0);
	assert_int_equal(hm_slab_offs_from(lay, HM_SLAB_PG_FLAG, PG_slab, &of, &why), 0);
	assert_int_equal(hm_slab_offs_from(lay, HM_SLAB_PAGE_TYPE, PGTY_slab, &ot, &why), 0);
	assert_int_equal(ot.page_type, offsetof(struct page, page_type));
	sf = hm_slab_open(&b, &of, code_mem, code);
	st = hm_slab_open(&b, &ot, code_mem, code);
	for (uint64_t a = va(PFN0, 0); a < va(PFN0 + NPAGES, 0); a += 8) {
		struct hm_slab_obj x = {0}, y = {0};
		int rx = hm_slab_lookup(sf, a, &x), ry = hm_slab_lookup(st, a, &y);

		if (rx != ry || (!rx && (x.base != y.base || strcmp(x.cache, y.cache))))
			fail_msg("%#llx: PG_slab %d, page_type %d", (unsigned long long)a, rx, ry);
		found += !rx;
	}
	assert_true(found > 500);
	hm_slab_close(sf);
	hm_slab_close(st);
	hm_layout_close(lay);
	hm_code_close(code);
}

static void put32le(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

/* Damaged slab sections are refused whole, with the file named; never a crash. */
static void test_damaged_slab_section_refused(void **state)
{
	struct hm_kslab k, out;
	struct hm_err err = {0};
	size_t len, runs;
	uint8_t *bytes = snapshot(&len, &k), *b = malloc(len);

	(void)state;
	runs = len - (size_t)k.nr_runs * 16;
	for (size_t cut = 0; cut < len; cut += 7)	/* truncated anywhere */
		assert_int_equal(hm_kslab_decode(bytes, cut, "x.data", &out, &err), -1);
	assert_non_null(strstr(err.msg, "x.data"));
	memcpy(b, bytes, len);
	put32le(b + runs + 12, k.nr_caches);		/* a run of no cache */
	assert_int_equal(hm_kslab_decode(b, len, "x.data", &out, &err), -1);
	memcpy(b, bytes, len);
	memcpy(b + runs + 16, b + runs, 16);		/* two runs at one address */
	assert_int_equal(hm_kslab_decode(b, len, "x.data", &out, &err), -1);
	memcpy(b, bytes, len);
	memset(b + 40 + 24, 'a', HM_KSLAB_NAME);	/* a name without its NUL */
	assert_int_equal(hm_kslab_decode(b, len, "x.data", &out, &err), -1);
	memcpy(b, bytes, len);
	put32le(b + 40 + 12, 1u << 30);			/* object_size over size */
	assert_int_equal(hm_kslab_decode(b, len, "x.data", &out, &err), -1);
	memcpy(b, bytes, len);
	put32le(b + runs + 8, 0);			/* a slab of no page */
	assert_int_equal(hm_kslab_decode(b, len, "x.data", &out, &err), -1);
	assert_int_equal(hm_kslab_decode(bytes, len, "x.data", &out, &err), 0);
	hm_kslab_free(&out);
	hm_kslab_free(&k);
	free(bytes);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slab_object_named_by_cache_on_synthesized_kcore),
		cmocka_unit_test(test_damaged_or_untyped_slabs_name_nothing),
		cmocka_unit_test(test_cache_names_map_to_types_that_fit),
		cmocka_unit_test(test_snapshot_finds_what_memory_finds),
		cmocka_unit_test(test_report_elsewhere_names_by_recorded_slabs),
		cmocka_unit_test(test_damaged_slab_section_refused),
		cmocka_unit_test(test_module_cache_typed_by_module_btf),
		cmocka_unit_test(test_page_type_mark_finds_the_same_slabs),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
