/* Kernel heap objects by their slab cache, as drgn's slab_object_info and crash's
 * `kmem -s ADDR` find them: a direct-map address lies in one page; the page's struct
 * page (vmemmap) leads to its head page, which for a slab page is a struct slab naming
 * its kmem_cache; the cache's name, size and object_size give the object's type, index
 * and base. Memory is read through a callback (kcore in the guest; synthesized memory in
 * tests), struct offsets come from the kernel's own types (BTF or DWARF), never constants.
 * Nothing here prints; damaged memory (a page that is no slab page, a cache pointer into
 * nowhere, an unreadable name) is a lookup that finds nothing. */
#ifndef HM_SLAB_H
#define HM_SLAB_H

#include <stddef.h>
#include <stdint.h>

struct hm_layout;

/* Reads len bytes of kernel memory at addr; returns the bytes read (short: unreadable). */
typedef size_t (*hm_slab_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

/* Where the x86-64 kernel put its direct map and struct pages (KASLR moves both). */
struct hm_slab_bases {
	uint64_t page_offset;		/* page_offset_base: the direct map of physical 0 */
	uint64_t vmemmap;		/* vmemmap_base: struct page of pfn 0 */
	uint64_t direct_end;		/* end of the direct map (vmalloc_base) */
};

/* How the kernel marks a slab's head page: up to 6.9 the PG_slab bit of page->flags
 * (enum pageflags); from 6.12 the top byte of page->page_type equal to PGTY_slab (enum
 * pagetype). 6.10 and 6.11 kept PG_slab as a page_type bit: not read here. */
enum hm_slab_mark { HM_SLAB_PG_FLAG, HM_SLAB_PAGE_TYPE };

/* Offsets in the kernel's struct page, struct slab, struct kmem_cache. */
struct hm_slab_offs {
	uint64_t page_size;		/* sizeof(struct page) */
	uint64_t page_flags, page_head;	/* flags, compound_head */
	enum hm_slab_mark mark;
	uint32_t pg_slab;		/* PG_FLAG: the bit in the head's flags; PAGE_TYPE: the
					 * PGTY_slab value of page_type's top byte */
	uint64_t page_type;		/* PAGE_TYPE: struct page.page_type */
	uint64_t slab_cache;		/* struct slab.slab_cache */
	uint64_t kc_size, kc_object_size, kc_name;
	uint64_t kc_red_left_pad;	/* UINT64_MAX when the kernel has none */
	uint64_t kc_refcount;		/* UINT64_MAX when unknown */
};

/* Fills o from the kernel's types (struct page, slab, kmem_cache), the mark and its value
 * (the PG_slab or PGTY_slab enumerator, which the caller reads: layouts keep no
 * enumerators). Returns 0, or -1 naming in *why the type or member missing. */
int hm_slab_offs_from(struct hm_layout *lay, enum hm_slab_mark mark, uint32_t value,
		      struct hm_slab_offs *o, const char **why);

/* One slab object holding an address. */
struct hm_slab_obj {
	const char *cache;		/* the kmem_cache's name: "dentry", "kmalloc-192" */
	uint64_t cache_addr;		/* the struct kmem_cache's address */
	uint64_t base;			/* the object's first byte */
	uint64_t offset;		/* addr - base, < object_size */
	uint32_t size, object_size;	/* slot stride, and the object's own bytes */
	int merged;			/* refcount > 1: the cache serves several creators
					 * (slab merging), so its name may not be its type */
};

struct hm_slab;

struct hm_slab *hm_slab_open(const struct hm_slab_bases *b, const struct hm_slab_offs *o,
			     hm_slab_read_fn read, void *ctx);
void hm_slab_close(struct hm_slab *s);
/* The slab object holding addr: 0 with *out, else -1 (not in the direct map, not a slab
 * page, damaged, or in a slot's padding). Memoised per page and per cache. */
int hm_slab_lookup(struct hm_slab *s, uint64_t addr, struct hm_slab_obj *out);

struct hm_kslab;
/* Every slab among the direct map's first nr_pfns pages (max_pfn), read through s's
 * memory: 0 with *out (core/kslab.h; free with hm_kslab_free), -1 when none was found. */
int hm_slab_snapshot(struct hm_slab *s, uint64_t nr_pfns, struct hm_kslab *out);
/* A lookup over a recorded snapshot instead of memory (decoded and checked by
 * hm_kslab_decode): the same objects as hm_slab_lookup found when it was taken. */
struct hm_slab *hm_slab_open_table(const struct hm_kslab *k);

/* The kernel type a cache's objects have, by name: the cache name itself ("dentry",
 * "xfs_inode"), without _cache/_cachep/_jar, then with _info or _struct added, then a
 * short table of Debian 6.1 names (filp: file). Accepted only when the type's size fits
 * object_size (equal, or up to 8 bytes of slack for alignment; shorter when the type ends
 * in an array the cache cuts, as kmem_cache's node[]; task_struct of any length past
 * its last member's start, its FPU state being sized at boot). NULL for kmalloc-* and
 * every cache that names no type. */
const struct hm_type *hm_slab_type(struct hm_layout *lay, const char *cache,
				   uint32_t object_size);

#endif
