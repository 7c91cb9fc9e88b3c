/* hitmap's kernel slab feature section (kslab.h), written and read with the perf.data
 * code's buffer and bounds-checked cursor. */
#include "core/kslab.h"

#include <stdlib.h>
#include <string.h>

#include "core/perfdata_int.h"

#define MAGIC_LEN 16
#define CACHE_REC (24 + HM_KSLAB_NAME)
#define RUN_REC 16
#define MAX_SLOT (1u << 24)		/* larger slots are no slab cache's */

uint8_t *hm_kslab_encode(const struct hm_kslab *k, size_t *len)
{
	struct hm_pbuf b = {0};

	hm_pbuf_put(&b, HM_KSLAB_MAGIC, sizeof(HM_KSLAB_MAGIC));
	hm_pbuf_zero(&b, MAGIC_LEN - sizeof(HM_KSLAB_MAGIC));
	hm_pbuf_u64(&b, k->page_offset);
	hm_pbuf_u64(&b, k->direct_end);
	hm_pbuf_u32(&b, k->nr_caches);
	hm_pbuf_u32(&b, k->nr_runs);
	for (uint32_t i = 0; i < k->nr_caches; i++) {
		const struct hm_kslab_cache *c = &k->caches[i];
		size_t n = strnlen(c->name, HM_KSLAB_NAME - 1);

		hm_pbuf_u64(&b, c->addr);
		hm_pbuf_u32(&b, c->size);
		hm_pbuf_u32(&b, c->object_size);
		hm_pbuf_u32(&b, c->red_left_pad);
		hm_pbuf_u32(&b, c->merged ? 1 : 0);
		hm_pbuf_put(&b, c->name, n);
		hm_pbuf_zero(&b, HM_KSLAB_NAME - n);
	}
	for (uint32_t i = 0; i < k->nr_runs; i++) {
		hm_pbuf_u64(&b, k->runs[i].start);
		hm_pbuf_u32(&b, k->runs[i].pages);
		hm_pbuf_u32(&b, k->runs[i].cache);
	}
	*len = b.len;
	return b.p;
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
	const void *magic;
	struct hm_pcur c;

	memset(out, 0, sizeof(*out));
	hm_pcur_init(&c, p, p ? len : 0);
	if (!(magic = hm_pcur_take(&c, MAGIC_LEN)) ||
	    memcmp(magic, HM_KSLAB_MAGIC, sizeof(HM_KSLAB_MAGIC)))
		return bad(out, err, name, "no hitmap.kslab/1 header");
	out->page_offset = hm_pcur_u64(&c);
	out->direct_end = hm_pcur_u64(&c);
	out->nr_caches = hm_pcur_u32(&c);
	out->nr_runs = hm_pcur_u32(&c);
	/* the counts are checked against the bytes before anything is allocated */
	if (c.bad || hm_pcur_left(&c) / CACHE_REC < out->nr_caches ||
	    (hm_pcur_left(&c) - (size_t)out->nr_caches * CACHE_REC) / RUN_REC < out->nr_runs)
		return bad(out, err, name, "counts past the section's end");
	if (out->direct_end <= out->page_offset)
		return bad(out, err, name, "an empty direct map");
	out->caches = calloc(out->nr_caches ? out->nr_caches : 1, sizeof(*out->caches));
	out->runs = calloc(out->nr_runs ? out->nr_runs : 1, sizeof(*out->runs));
	if (!out->caches || !out->runs)
		return bad(out, err, name, "out of memory");
	for (uint32_t i = 0; i < out->nr_caches; i++) {
		struct hm_kslab_cache *k = &out->caches[i];

		k->addr = hm_pcur_u64(&c);
		k->size = hm_pcur_u32(&c);
		k->object_size = hm_pcur_u32(&c);
		k->red_left_pad = hm_pcur_u32(&c);
		k->merged = hm_pcur_u32(&c) & 1;
		memcpy(k->name, hm_pcur_take(&c, HM_KSLAB_NAME), HM_KSLAB_NAME);
		if (!cache_ok(k))
			return bad(out, err, name, "a cache with a bad name or sizes");
	}
	for (uint32_t i = 0; i < out->nr_runs; i++) {
		struct hm_kslab_run *r = &out->runs[i];
		uint64_t end;

		r->start = hm_pcur_u64(&c);
		r->pages = hm_pcur_u32(&c);
		r->cache = hm_pcur_u32(&c);
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
