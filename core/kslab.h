/* The kernel's slab pages at the end of a recording, as `hitmap record -k` stores them in
 * a feature section of perf.data (HM_PERF_FEAT_HITMAP_KSLAB): which direct-map pages were
 * slabs of which kmem_cache, with each cache's name and object geometry. A report on
 * another machine (the -dbg vmlinux on the host) has no kernel memory to read, so without
 * these it cannot tell that a heap address is the third xfs_inode of a slab page.
 * perf skips feature bits it does not know, so perf report/script read the file as before.
 *
 * Layout (little-endian): "hitmap.kslab/1" NUL-padded to 16 bytes; u64 page_offset,
 * u64 direct_end (the direct map's extent); u32 nr_caches, u32 nr_runs; nr_caches times
 * { u64 kmem_cache address, u32 size, u32 object_size, u32 red_left_pad, u32 flags (bit 0:
 * merged), name NUL-padded to HM_KSLAB_NAME bytes }; nr_runs times { u64 first byte of
 * the slab, u32 pages, u32 cache index }, sorted by address, not overlapping. */
#ifndef HM_KSLAB_H
#define HM_KSLAB_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

#define HM_KSLAB_MAGIC "hitmap.kslab/1"
#define HM_KSLAB_NAME 48
#define HM_KSLAB_MAX_PAGES (1u << 18)	/* pages of one slab at most (1 GiB) */

struct hm_kslab_cache {
	uint64_t addr;
	uint32_t size, object_size, red_left_pad;
	int merged;
	char name[HM_KSLAB_NAME];
};

struct hm_kslab_run {
	uint64_t start;			/* the slab's first byte (its head page) */
	uint32_t pages;
	uint32_t cache;			/* index in caches */
};

struct hm_kslab {
	uint64_t page_offset, direct_end;
	uint32_t nr_caches, nr_runs;
	struct hm_kslab_cache *caches;
	struct hm_kslab_run *runs;
};

/* The encoded bytes (malloc'd, *len set). */
uint8_t *hm_kslab_encode(const struct hm_kslab *k, size_t *len);
/* Decodes and checks p (name used in messages); 0 with *out (free with hm_kslab_free),
 * else -1 with err (HM_EXIT_INPUT) naming what is damaged. */
int hm_kslab_decode(const uint8_t *p, size_t len, const char *name, struct hm_kslab *out,
		    struct hm_err *err);
void hm_kslab_free(struct hm_kslab *k);

#endif
