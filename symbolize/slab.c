/* Slab objects from kernel memory (slab.h). x86-64 with SPARSEMEM_VMEMMAP: the struct
 * page of direct-map address a is vmemmap + (a - page_offset) / 4096 * sizeof(struct
 * page); a tail page's compound_head is its head's address + 1 (mm_types.h); the head
 * of a slab has PG_slab set, and struct slab overlays it (6.1: slab_cache where struct
 * page keeps its mapping). SLUB lays objects out at slab start + red_left_pad + i * size
 * (mm/slub.c fixup_red_left). */
#include "symbolize/slab.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/hash.h"
#include "core/kslab.h"
#include "core/oom.h"
#include "symbolize/layout.h"

#define PAGE_SHIFT 12
#define MAX_TAIL (1ull << 18)		/* pages of one folio at most (1 GiB) */
#define NAME_MAX_LEN 64			/* kmem_cache names are short ("kmalloc-rcl-192") */
#define SIZE_MAX_SLOT (1u << 24)	/* larger slots are no slab cache's */

struct slab_cache {
	int ok;
	uint64_t addr;
	const char *name;
	uint32_t size, object_size, red_left_pad;
	int merged;
};

struct slab_page {
	uint64_t start;			/* the slab's first byte; 0: not a slab page */
	const struct slab_cache *cache;
};

/* A slab of a recorded snapshot (hm_slab_open_table): [start, end). */
struct slab_run {
	uint64_t start, end;
	const struct slab_cache *cache;
};

struct hm_slab {
	struct hm_slab_bases b;
	struct slab_run *runs;		/* from a recording's snapshot, sorted; else NULL and
					 * memory is read */
	size_t nr_runs;
	struct hm_slab_offs o;
	hm_slab_read_fn read;
	void *ctx;
	struct hm_arena arena;
	struct hm_map64 pages;		/* page address + 1 -> struct slab_page */
	struct hm_map64 caches;		/* kmem_cache address + 1 -> struct slab_cache */
};

static int member(const struct hm_type *t, const char *path, uint64_t *off, const char **why)
{
	uint64_t size;

	if (t && hm_layout_member_offset(t, path, off, &size) == 0)
		return 0;
	*why = path;
	return -1;
}

int hm_slab_offs_from(struct hm_layout *lay, enum hm_slab_mark mark, uint32_t value,
		      struct hm_slab_offs *o, const char **why)
{
	const struct hm_type *page = hm_layout_find(lay, "page");
	const struct hm_type *slab = hm_layout_find(lay, "slab");
	const struct hm_type *kc = hm_layout_find(lay, "kmem_cache");

	memset(o, 0, sizeof(*o));
	o->mark = mark;
	o->pg_slab = value;
	*why = !page ? "struct page" : !slab ? "struct slab" : !kc ? "struct kmem_cache" : NULL;
	if (*why)
		return -1;
	o->page_size = page->size;
	if (member(page, "flags", &o->page_flags, why) ||
	    member(page, "compound_head", &o->page_head, why) ||
	    member(slab, "slab_cache", &o->slab_cache, why) ||
	    member(kc, "size", &o->kc_size, why) ||
	    member(kc, "object_size", &o->kc_object_size, why) ||
	    member(kc, "name", &o->kc_name, why))
		return -1;
	if (member(kc, "red_left_pad", &o->kc_red_left_pad, why))
		o->kc_red_left_pad = UINT64_MAX;
	if (member(kc, "refcount", &o->kc_refcount, why))
		o->kc_refcount = UINT64_MAX;
	if (mark == HM_SLAB_PAGE_TYPE && member(page, "page_type", &o->page_type, why))
		return -1;
	*why = NULL;
	return o->page_size && (mark == HM_SLAB_PAGE_TYPE ? value < 256 : value < 64) ? 0 : -1;
}

struct hm_slab *hm_slab_open(const struct hm_slab_bases *b, const struct hm_slab_offs *o,
			     hm_slab_read_fn read, void *ctx)
{
	struct hm_slab *s = calloc(1, sizeof(*s));

	if (!s)
		hm_oom();
	s->b = *b;
	s->o = *o;
	s->read = read;
	s->ctx = ctx;
	hm_arena_init(&s->arena);
	hm_map64_init(&s->pages);
	hm_map64_init(&s->caches);
	return s;
}

void hm_slab_close(struct hm_slab *s)
{
	if (!s)
		return;
	hm_map64_free(&s->pages);
	hm_map64_free(&s->caches);
	hm_arena_free(&s->arena);
	free(s->runs);
	free(s);
}

static int rd(struct hm_slab *s, uint64_t addr, void *buf, size_t len)
{
	if (addr > UINT64_MAX - len)
		return -1;
	return s->read(s->ctx, addr, buf, len) == len ? 0 : -1;
}

static int rd64(struct hm_slab *s, uint64_t addr, uint64_t *v)
{
	return rd(s, addr, v, sizeof(*v));
}

static int rd32(struct hm_slab *s, uint64_t addr, uint32_t *v)
{
	return rd(s, addr, v, sizeof(*v));
}

/* A cache name: NUL-terminated within NAME_MAX_LEN, printable, not empty. */
static const char *read_name(struct hm_slab *s, uint64_t addr)
{
	char buf[NAME_MAX_LEN + 1];
	size_t got = s->read(s->ctx, addr, buf, NAME_MAX_LEN), n;

	if (got > NAME_MAX_LEN)
		return NULL;
	buf[got] = '\0';
	n = strnlen(buf, got);
	if (!n || n == got)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (buf[i] < 0x21 || buf[i] > 0x7e)
			return NULL;
	return hm_arena_strdup(&s->arena, buf);
}

static const struct slab_cache *cache_at(struct hm_slab *s, uint64_t kc)
{
	struct slab_cache *c = hm_map64_get(&s->caches, kc + 1);
	const struct hm_slab_offs *o = &s->o;
	uint64_t name;
	uint32_t ref = 1;

	if (c)
		return c->ok ? c : NULL;
	c = hm_arena_alloc(&s->arena, sizeof(*c));
	memset(c, 0, sizeof(*c));
	hm_map64_put(&s->caches, kc + 1, c);
	c->addr = kc;
	if (kc < (1ull << 63) || rd32(s, kc + o->kc_size, &c->size) ||
	    rd32(s, kc + o->kc_object_size, &c->object_size) || rd64(s, kc + o->kc_name, &name) ||
	    (o->kc_red_left_pad != UINT64_MAX &&
	     rd32(s, kc + o->kc_red_left_pad, &c->red_left_pad)) ||
	    (o->kc_refcount != UINT64_MAX && rd32(s, kc + o->kc_refcount, &ref)))
		return NULL;
	if (!c->object_size || c->object_size > c->size || c->size > SIZE_MAX_SLOT ||
	    c->red_left_pad >= c->size || !(c->name = read_name(s, name)))
		return NULL;
	c->merged = (int32_t)ref > 1;
	c->ok = 1;
	return c;
}

/* Whether the struct page at head is a slab's head page, as the kernel marks one. */
static int slab_head(struct hm_slab *s, uint64_t head)
{
	const struct hm_slab_offs *o = &s->o;
	uint64_t flags;
	uint32_t type;

	if (o->mark == HM_SLAB_PAGE_TYPE)
		return !rd32(s, head + o->page_type, &type) && type >> 24 == o->pg_slab;
	return !rd64(s, head + o->page_flags, &flags) && flags & (1ull << o->pg_slab);
}

/* The slab holding the page at pfn: its head page, PG_slab, its cache. */
static void page_slab(struct hm_slab *s, uint64_t pfn, struct slab_page *p)
{
	const struct hm_slab_offs *o = &s->o;
	uint64_t page = s->b.vmemmap + pfn * o->page_size, head = page, ch, kc;

	if (rd64(s, page + o->page_head, &ch))
		return;
	if (ch & 1) {
		head = ch - 1;
		/* a head before its tail, in the vmemmap, at a struct page boundary */
		if (head > page || head < s->b.vmemmap || (page - head) / o->page_size >= MAX_TAIL ||
		    (head - s->b.vmemmap) % o->page_size)
			return;
	}
	if (!slab_head(s, head) || rd64(s, head + o->slab_cache, &kc) ||
	    !(p->cache = cache_at(s, kc)))
		return;
	p->start = s->b.page_offset + (((head - s->b.vmemmap) / o->page_size) << PAGE_SHIFT);
}

/* The recorded slab holding addr, as the page lookup would have found it. */
static void run_slab(const struct hm_slab *s, uint64_t addr, struct slab_page *p)
{
	size_t lo = 0, hi = s->nr_runs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->runs[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < s->nr_runs && s->runs[lo].start <= addr)
		*p = (struct slab_page){s->runs[lo].start, s->runs[lo].cache};
}

/* The slab holding addr's page: from the snapshot, else memory (memoised per page). */
static const struct slab_page *page_of(struct hm_slab *s, uint64_t addr, struct slab_page *one)
{
	uint64_t key = (addr & ~((1ull << PAGE_SHIFT) - 1)) + 1;
	struct slab_page *p;

	if (s->runs) {
		run_slab(s, addr, one);
		return one;
	}
	if (!(p = hm_map64_get(&s->pages, key))) {
		p = hm_arena_alloc(&s->arena, sizeof(*p));
		memset(p, 0, sizeof(*p));
		page_slab(s, (addr - s->b.page_offset) >> PAGE_SHIFT, p);
		hm_map64_put(&s->pages, key, p);
	}
	return p;
}

int hm_slab_lookup(struct hm_slab *s, uint64_t addr, struct hm_slab_obj *out)
{
	struct slab_page one = {0};
	const struct slab_page *p;
	const struct slab_cache *c;
	uint64_t idx, base;

	if (!s || addr < s->b.page_offset || addr >= s->b.direct_end)
		return -1;
	p = page_of(s, addr, &one);
	if (!p->start || !(c = p->cache) || addr < p->start + c->red_left_pad)
		return -1;
	idx = (addr - p->start - c->red_left_pad) / c->size;
	base = p->start + c->red_left_pad + idx * c->size;
	if (addr - base >= c->object_size)
		return -1;	/* the slot's padding, red zone or free pointer */
	*out = (struct hm_slab_obj){c->name, c->addr, base, addr - base, c->size, c->object_size,
				    c->merged};
	return 0;
}

/* ---- Snapshots (core/kslab.h): every slab of the direct map, saved by record -k ---- */

struct snap {
	struct hm_slab *s;
	struct hm_kslab *k;
	size_t cap_runs, cap_caches;
	struct hm_map64 idx;		/* kmem_cache address + 1 -> index + 1 in k->caches */
	uint64_t head;			/* the last head page's pfn + 1, and its cache index */
	int64_t head_cache;		/* -1: that head is no slab of a cache kept */
};

static void *grow(void *v, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return v;
	*cap = *cap ? *cap * 2 : 256;
	if (!(v = realloc(v, *cap * size)))
		hm_oom();
	return v;
}

/* The index of the cache at kc in the snapshot, or -1 (damaged, or a name too long). */
static int64_t snap_cache(struct snap *n, uint64_t kc)
{
	uintptr_t i = (uintptr_t)hm_map64_get(&n->idx, kc + 1);
	const struct slab_cache *c;
	struct hm_kslab_cache *o;

	if (i)
		return (int64_t)i - 1;
	if (!(c = cache_at(n->s, kc)) || strlen(c->name) >= HM_KSLAB_NAME)
		return -1;
	n->k->caches = grow(n->k->caches, &n->cap_caches, n->k->nr_caches + 1, sizeof(*o));
	o = &n->k->caches[n->k->nr_caches];
	memset(o, 0, sizeof(*o));
	*o = (struct hm_kslab_cache){c->addr, c->size, c->object_size, c->red_left_pad, c->merged,
				     {0}};
	strcpy(o->name, c->name);
	hm_map64_put(&n->idx, kc + 1, (void *)(uintptr_t)(n->k->nr_caches + 1));
	return n->k->nr_caches++;
}

/* Head page at pfn hp: its cache's index when it is a slab, else -1; once per head. */
static int64_t snap_head(struct snap *n, uint64_t hp)
{
	const struct hm_slab_offs *o = &n->s->o;
	uint64_t at = n->s->b.vmemmap + hp * o->page_size, kc;

	if (n->head == hp + 1)
		return n->head_cache;
	n->head = hp + 1;
	n->head_cache = -1;
	if (slab_head(n->s, at) && !rd64(n->s, at + o->slab_cache, &kc))
		n->head_cache = snap_cache(n, kc);
	return n->head_cache;
}

/* The page at pfn, whose compound_head word is ch. */
static void snap_page(struct snap *n, uint64_t pfn, uint64_t ch)
{
	const struct hm_slab_offs *o = &n->s->o;
	struct hm_kslab *k = n->k;
	struct hm_kslab_run *r = k->nr_runs ? &k->runs[k->nr_runs - 1] : NULL;
	uint64_t hp = pfn, start;
	int64_t ci;

	if (ch & 1) {
		uint64_t head = ch - 1, page = n->s->b.vmemmap + pfn * o->page_size;

		if (head > page || head < n->s->b.vmemmap || (page - head) / o->page_size >= MAX_TAIL ||
		    (head - n->s->b.vmemmap) % o->page_size)
			return;
		hp = (head - n->s->b.vmemmap) / o->page_size;
	}
	if ((ci = snap_head(n, hp)) < 0)
		return;
	start = n->s->b.page_offset + (hp << PAGE_SHIFT);
	if (r && r->start == start && start + ((uint64_t)r->pages << PAGE_SHIFT) ==
					      n->s->b.page_offset + (pfn << PAGE_SHIFT)) {
		r->pages++;
		return;
	}
	if (hp != pfn)
		return;		/* a tail apart from its head: nothing to attach it to */
	k->runs = grow(k->runs, &n->cap_runs, k->nr_runs + 1, sizeof(*k->runs));
	k->runs[k->nr_runs++] = (struct hm_kslab_run){start, 1, (uint32_t)ci};
}

#define SNAP_CHUNK 1024			/* struct pages read at once */

int hm_slab_snapshot(struct hm_slab *s, uint64_t nr_pfns, struct hm_kslab *out)
{
	const struct hm_slab_offs *o = &s->o;
	struct snap n = {s, out, 0, 0, {0}, 0, -1};
	uint64_t max = (s->b.direct_end - s->b.page_offset) >> PAGE_SHIFT;
	uint8_t *buf = malloc(SNAP_CHUNK * o->page_size);

	if (!buf)
		hm_oom();
	memset(out, 0, sizeof(*out));
	out->page_offset = s->b.page_offset;
	out->direct_end = s->b.direct_end;
	hm_map64_init(&n.idx);
	for (uint64_t pfn = 0; pfn < nr_pfns && pfn < max; pfn += SNAP_CHUNK) {
		uint64_t nr = nr_pfns - pfn < SNAP_CHUNK ? nr_pfns - pfn : SNAP_CHUNK;
		size_t want = (size_t)(nr * o->page_size);
		int whole = s->read(s->ctx, s->b.vmemmap + pfn * o->page_size, buf, want) == want;

		for (uint64_t i = 0; i < nr && pfn + i < max; i++) {
			uint64_t ch;

			/* a short read (a hole in the vmemmap): page by page */
			if (whole)
				memcpy(&ch, buf + i * o->page_size + o->page_head, 8);
			else if (rd64(s, s->b.vmemmap + (pfn + i) * o->page_size + o->page_head, &ch))
				continue;
			snap_page(&n, pfn + i, ch);
		}
	}
	free(buf);
	hm_map64_free(&n.idx);
	return out->nr_runs ? 0 : -1;
}

struct hm_slab *hm_slab_open_table(const struct hm_kslab *k)
{
	struct hm_slab *s = hm_slab_open(&(struct hm_slab_bases){k->page_offset, 0, k->direct_end},
					 &(struct hm_slab_offs){0}, NULL, NULL);
	struct slab_cache *c = hm_arena_alloc(&s->arena, (k->nr_caches + 1) * sizeof(*c));

	for (uint32_t i = 0; i < k->nr_caches; i++) {
		const struct hm_kslab_cache *kc = &k->caches[i];

		c[i] = (struct slab_cache){1, kc->addr, hm_arena_strdup(&s->arena, kc->name),
					   kc->size, kc->object_size, kc->red_left_pad, kc->merged};
	}
	if (!(s->runs = calloc(k->nr_runs + 1, sizeof(*s->runs))))
		hm_oom();
	for (uint32_t i = 0; i < k->nr_runs; i++)
		s->runs[i] = (struct slab_run){k->runs[i].start,
					       k->runs[i].start + ((uint64_t)k->runs[i].pages
								   << PAGE_SHIFT),
					       &c[k->runs[i].cache]};
	s->nr_runs = k->nr_runs;
	return s;
}

/* Debian 6.1's caches whose name is not their type's (mm/, fs/, fs/xfs/). */
static const char *const NAMES[][2] = {
	{"filp", "file"},
	{"inode_cache", "inode"},
	{"radix_tree_node", "xa_node"},
	{"xfs_ili", "xfs_inode_log_item"},
	{"cred_jar", "cred"},
	{"sock_inode_cache", "socket_alias"},
	{"skbuff_head_cache", "sk_buff"},
	{"mnt_cache", "mount"},
	{"bdev_cache", "bdev_inode"},
	{"uid_cache", "user_struct"},
	{"jbd2_journal_head", "journal_head"},
	{"ext4_groupinfo_4k", "ext4_group_info"},
	{"ext4_extent_status", "extent_status"},
	{"xfs_efi_item", "xfs_efi_log_item"},
	{"xfs_efd_item", "xfs_efd_log_item"},
	{"xfs_buf_item", "xfs_buf_log_item"},
	{"xfs_trans", "xfs_trans"},
	{"xfs_log_ticket", "xlog_ticket"},
	{"eventpoll_epi", "epitem"},
	{"eventpoll_pwq", "eppoll_entry"},
	{"kernfs_node_cache", "kernfs_node"},
	{"proc_inode_cache", "proc_inode"},
};

/* Types whose objects are not sizeof long: task_struct ends in thread.fpu, whose register
 * state the cache sizes at boot for the CPU's xsave features (arch_task_struct_size: 8384
 * bytes of a 9728-byte type under QEMU's -cpu max); the object ends inside the last
 * member. */
static const char *const VARSIZE[] = {"task_struct"};

/* The object's whole type: its size is object_size, give or take alignment slack; or a
 * type whose last member is an array the cache cuts short (kmem_cache's node[], sized
 * by nr_node_ids), the object ending inside that array; or one of VARSIZE. */
static const struct hm_type *fitting(struct hm_layout *lay, const char *name,
				     uint32_t object_size)
{
	const struct hm_type *t = hm_layout_find(lay, name);
	const struct hm_member *m;
	uint32_t nr = 0;

	if (!t || !t->size)
		return NULL;
	if (t->size <= object_size && object_size - t->size <= 8)
		return t;
	m = hm_type_members(t, &nr);
	for (size_t i = 0; nr && i < sizeof(VARSIZE) / sizeof(VARSIZE[0]); i++)
		if (!strcmp(name, VARSIZE[i]) && object_size > m[nr - 1].bit_offset / 8)
			return t;
	if (nr && object_size < t->size) {
		const struct hm_type *a = hm_type_strip(m[nr - 1].type);
		uint64_t off = m[nr - 1].bit_offset / 8, esize = a->ref ? a->ref->size : 0;

		/* an array of MAX_NUMNODES-like length, cut at an element boundary */
		if (a->kind == HM_T_ARRAY && a->nelems >= 64 && esize && object_size > off &&
		    (object_size - off) % esize == 0)
			return t;
	}
	return NULL;
}

const struct hm_type *hm_slab_type(struct hm_layout *lay, const char *cache,
				   uint32_t object_size)
{
	static const char *const strip[] = {"_cachep", "_cache", "_jar"};
	static const char *const add[] = {"", "_info", "_struct"};
	char base[NAME_MAX_LEN + 16], buf[NAME_MAX_LEN + 24];
	const struct hm_type *t;
	size_t n;

	if (!lay || !cache || strlen(cache) > NAME_MAX_LEN || strstr(cache, "kmalloc-") ||
	    cache[0] == ':')
		return NULL;
	for (size_t i = 0; i < sizeof(NAMES) / sizeof(NAMES[0]); i++)
		if (!strcmp(cache, NAMES[i][0]))
			return fitting(lay, NAMES[i][1], object_size);
	if ((t = fitting(lay, cache, object_size)))
		return t;
	strcpy(base, cache);
	n = strlen(base);
	for (size_t i = 0; i < sizeof(strip) / sizeof(strip[0]); i++) {
		size_t k = strlen(strip[i]);

		if (n > k && !strcmp(base + n - k, strip[i])) {
			base[n - k] = '\0';
			break;
		}
	}
	for (size_t i = 0; i < sizeof(add) / sizeof(add[0]); i++) {
		snprintf(buf, sizeof(buf), "%s%s", base, add[i]);
		if ((t = fitting(lay, buf, object_size)))
			return t;
	}
	return NULL;
}
