#include "core/kslab.h"

#include <stdlib.h>
#include <string.h>

#define HEAD 40				/* magic 16, two u64, two u32 */
#define CACHE_REC (24 + HM_KSLAB_NAME)
#define RUN_REC 16
#define MAX_SLOT (1u << 24)		/* larger slots are no slab cache's */

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
	return get32(p) | (uint64_t)get32(p + 4) << 32;
}

uint8_t *hm_kslab_encode(const struct hm_kslab *k, size_t *len)
{
	size_t n = HEAD + (size_t)k->nr_caches * CACHE_REC + (size_t)k->nr_runs * RUN_REC;
	uint8_t *b = calloc(1, n), *p;

	if (!b)
		return NULL;
	memcpy(b, HM_KSLAB_MAGIC, sizeof(HM_KSLAB_MAGIC));
	put64(b + 16, k->page_offset);
	put64(b + 24, k->direct_end);
	put32(b + 32, k->nr_caches);
	put32(b + 36, k->nr_runs);
	p = b + HEAD;
	for (uint32_t i = 0; i < k->nr_caches; i++, p += CACHE_REC) {
		const struct hm_kslab_cache *c = &k->caches[i];

		put64(p, c->addr);
		put32(p + 8, c->size);
		put32(p + 12, c->object_size);
		put32(p + 16, c->red_left_pad);
		put32(p + 20, c->merged ? 1 : 0);
		memcpy(p + 24, c->name, strnlen(c->name, HM_KSLAB_NAME - 1));
	}
	for (uint32_t i = 0; i < k->nr_runs; i++, p += RUN_REC) {
		put64(p, k->runs[i].start);
		put32(p + 8, k->runs[i].pages);
		put32(p + 12, k->runs[i].cache);
	}
	*len = n;
	return b;
}

static int bad(struct hm_kslab *k, struct hm_err *err, const char *name, const char *what)
{
	hm_kslab_free(k);
	return hm_err_set(err, HM_EXIT_INPUT, "%s: hitmap's slab section is damaged (%s); "
			  "kernel heap is not named by slab cache: record again with "
			  "`hitmap record -k`", name, what);
}

static int cache_ok(const struct hm_kslab_cache *c)
{
	size_t n = strnlen(c->name, HM_KSLAB_NAME);

	if (!n || n == HM_KSLAB_NAME || !c->object_size || c->object_size > c->size ||
	    c->size > MAX_SLOT || c->red_left_pad >= c->size)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (c->name[i] < 0x21 || c->name[i] > 0x7e)
			return 0;
	return 1;
}

int hm_kslab_decode(const uint8_t *p, size_t len, const char *name, struct hm_kslab *out,
		    struct hm_err *err)
{
	const uint8_t *q;

	memset(out, 0, sizeof(*out));
	if (!p || len < HEAD || memcmp(p, HM_KSLAB_MAGIC, sizeof(HM_KSLAB_MAGIC)))
		return bad(out, err, name, "no hitmap.kslab/1 header");
	out->page_offset = get64(p + 16);
	out->direct_end = get64(p + 24);
	out->nr_caches = get32(p + 32);
	out->nr_runs = get32(p + 36);
	if ((len - HEAD) / CACHE_REC < out->nr_caches ||
	    (len - HEAD - (size_t)out->nr_caches * CACHE_REC) / RUN_REC < out->nr_runs)
		return bad(out, err, name, "counts past the section's end");
	if (out->direct_end <= out->page_offset)
		return bad(out, err, name, "an empty direct map");
	out->caches = calloc(out->nr_caches ? out->nr_caches : 1, sizeof(*out->caches));
	out->runs = calloc(out->nr_runs ? out->nr_runs : 1, sizeof(*out->runs));
	if (!out->caches || !out->runs)
		return bad(out, err, name, "out of memory");
	q = p + HEAD;
	for (uint32_t i = 0; i < out->nr_caches; i++, q += CACHE_REC) {
		struct hm_kslab_cache *c = &out->caches[i];

		c->addr = get64(q);
		c->size = get32(q + 8);
		c->object_size = get32(q + 12);
		c->red_left_pad = get32(q + 16);
		c->merged = get32(q + 20) & 1;
		memcpy(c->name, q + 24, HM_KSLAB_NAME);
		if (!cache_ok(c))
			return bad(out, err, name, "a cache with a bad name or sizes");
	}
	for (uint32_t i = 0; i < out->nr_runs; i++, q += RUN_REC) {
		struct hm_kslab_run *r = &out->runs[i];
		uint64_t end;

		r->start = get64(q);
		r->pages = get32(q + 8);
		r->cache = get32(q + 12);
		end = r->start + ((uint64_t)r->pages << 12);
		if (r->cache >= out->nr_caches || !r->pages || r->pages > HM_KSLAB_MAX_PAGES ||
		    r->start & 4095 || r->start < out->page_offset || end > out->direct_end ||
		    end < r->start)
			return bad(out, err, name, "a slab outside the direct map or of no cache");
		if (i && r->start < out->runs[i - 1].start +
					      ((uint64_t)out->runs[i - 1].pages << 12))
			return bad(out, err, name, "slabs out of order or overlapping");
	}
	return 0;
}

void hm_kslab_free(struct hm_kslab *k)
{
	if (!k)
		return;
	free(k->caches);
	free(k->runs);
	k->caches = NULL;
	k->runs = NULL;
	k->nr_caches = k->nr_runs = 0;
}
