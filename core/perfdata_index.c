/* hitmap's record index (HM_PERF_FEAT_HITMAP_INDEX, core/perfdata.h): where the records a
 * reader of the maps alone needs lie in the data section, so that resolve/load.c's maps
 * pass reads those and not the whole file again. The writer notes every record as it
 * appends it; the reader checks that the index describes the file's own data section and
 * says nothing when it does not (another tool rewrote the file), so the caller reads the
 * whole data section as before.
 *
 * Layout (little-endian): "hitmap.index/1" NUL-padded to 16 bytes; u64 data offset, u64
 * data size (the data section the index describes); u32 nr_attrs, u32 zero; nr_attrs
 * bytes, 1 where that event's samples are listed, NUL-padded to a multiple of 8; u64 nr;
 * nr u64 file offsets, ascending. Listed: every record but samples and FINISHED_ROUND,
 * and the samples of the events marked 1. */
#include <stdlib.h>

#include "core/oom.h"
#include "core/perfdata_int.h"

#define INDEX_MAGIC "hitmap.index/1"
#define INDEX_MAX (1u << 22)	/* entries: past this (32 MB) the file is read whole */

struct hm_pd_index {
	uint8_t *of;			/* by attr: its samples are listed */
	uint32_t nr_attrs;
	int any;			/* some event's samples are listed */
	int id_pos;			/* a sample's id: u64s after its header; -1: one event */
	struct hm_map64 id2attr;	/* id -> attr index + 1 */
	uint64_t *off;
	size_t n, cap;
	int unusable;			/* no index: too many entries, or a sample of no event */
};

struct hm_pd_index *hm_pd_index_new(const struct hm_perf_attr *attrs, uint32_t nr,
				    const uint8_t *of)
{
	struct hm_pd_index *x = calloc(1, sizeof(*x));

	if (!x || !(x->of = calloc(nr ? nr : 1, 1)))
		hm_oom();
	x->nr_attrs = nr;
	x->id_pos = -1;
	hm_map64_init(&x->id2attr);
	for (uint32_t i = 0; i < nr; i++)
		x->any |= x->of[i] = of && of[i];
	if (x->any && nr > 1) {	/* a raw sample's event is told by its id */
		x->id_pos = hm_pd_id_pos(attrs[0].attr.sample_type);
		for (uint32_t i = 0; i < nr; i++) {
			if (hm_pd_id_pos(attrs[i].attr.sample_type) != x->id_pos)
				x->id_pos = -1;
			for (uint32_t k = 0; k < attrs[i].nr_ids; k++)
				if (attrs[i].ids[k])
					hm_map64_put(&x->id2attr, attrs[i].ids[k],
						     (void *)(uintptr_t)(i + 1));
		}
		x->unusable = x->id_pos < 0;	/* perf's rule too: one place for every id */
	}
	return x;
}

void hm_pd_index_free(struct hm_pd_index *x)
{
	if (!x)
		return;
	free(x->of);
	free(x->off);
	hm_map64_free(&x->id2attr);
	free(x);
}

/* The event of a sample record: attr, when the writer was told it (-1: read its id). */
static int listed_sample(struct hm_pd_index *x, const uint8_t *rec, size_t size, int attr)
{
	uint64_t id;
	uintptr_t v;

	if (attr < 0 && x->nr_attrs == 1)
		attr = 0;
	if (attr < 0) {
		if (x->id_pos < 0 || 8 + 8 * (size_t)x->id_pos + 8 > size) {
			x->unusable = 1;
			return 0;
		}
		memcpy(&id, rec + 8 + 8 * x->id_pos, 8);
		if (!(v = (uintptr_t)hm_map64_get(&x->id2attr, id))) {
			x->unusable = 1;	/* perf cannot place it either */
			return 0;
		}
		attr = (int)(v - 1);
	}
	return (uint32_t)attr < x->nr_attrs && x->of[attr];
}

void hm_pd_index_note(struct hm_pd_index *x, uint64_t off, const void *rec, size_t size,
		      int attr)
{
	struct perf_event_header h;

	if (!x || x->unusable)
		return;
	memcpy(&h, rec, sizeof(h));
	if (h.type == HM_PERF_RECORD_FINISHED_ROUND)
		return;
	if (h.type == PERF_RECORD_SAMPLE && (!x->any || !listed_sample(x, rec, size, attr)))
		return;
	if (x->unusable)
		return;
	if (x->n == INDEX_MAX) {	/* no index: its memory goes back at once */
		x->unusable = 1;
		free(x->off);
		x->off = NULL;
		x->n = x->cap = 0;
		return;
	}
	if (x->n == x->cap && !(x->off = realloc(x->off, (x->cap = x->cap ? 2 * x->cap : 256) *
						 sizeof(*x->off))))
		hm_oom();
	x->off[x->n++] = off;
}

void hm_pd_index_cut(struct hm_pd_index *x, uint64_t end)
{
	while (x && x->n && x->off[x->n - 1] >= end)
		x->n--;
}

int hm_pd_index_build(const struct hm_pd_index *x, uint64_t data_off, uint64_t data_size,
		      struct hm_pbuf *b)
{
	char magic[16] = INDEX_MAGIC;

	if (!x || x->unusable)
		return 0;
	hm_pbuf_put(b, magic, sizeof(magic));
	hm_pbuf_u64(b, data_off);
	hm_pbuf_u64(b, data_size);
	hm_pbuf_u32(b, x->nr_attrs);
	hm_pbuf_u32(b, 0);
	hm_pbuf_put(b, x->of, x->nr_attrs);
	hm_pbuf_zero(b, (8 - x->nr_attrs % 8) % 8);
	hm_pbuf_u64(b, x->n);
	for (size_t i = 0; i < x->n; i++)
		hm_pbuf_u64(b, x->off[i]);
	return 1;
}

/* Reads the section into pd->index: 1 when it describes this file's data section and
 * lists ascending offsets inside it; 0 otherwise. Sets pd->index_pays (below). */
static int load_index(struct hm_perfdata *pd)
{
	struct hm_pcur c;
	const char *magic;
	uint64_t data_off, data_size, n, prev = 0, reads = 0;
	uint32_t na;

	if (!pd->feat.index || pd->pipe || !pd->mem)
		return 0;
	hm_pcur_init(&c, pd->feat.index, pd->feat.index_len);
	magic = hm_pcur_take(&c, 16);
	data_off = hm_pcur_u64(&c);
	data_size = hm_pcur_u64(&c);
	na = hm_pcur_u32(&c);
	hm_pcur_u32(&c);
	if (!magic || memcmp(magic, INDEX_MAGIC, sizeof(INDEX_MAGIC)) || c.bad ||
	    data_off != pd->data_off || data_size != pd->end - pd->data_off || na != pd->nr_attrs)
		return 0;
	pd->index_of = hm_pcur_take(&c, na + (8 - na % 8) % 8);
	n = hm_pcur_u64(&c);
	if (c.bad || n > hm_pcur_left(&c) / 8)
		return 0;
	if (!(pd->index = malloc((n ? n : 1) * sizeof(*pd->index))))
		hm_oom();
	for (uint64_t i = 0; i < n; i++) {
		uint64_t o = hm_pcur_u64(&c);

		if (o < data_off || o + 8 > pd->end || (i && o <= prev))
			return 0;
		pd->index[i] = prev = o;
	}
	/* a read of HM_PD_SEEK_WIN for each record past the last read's bytes (about 2 us
	 * here, mostly the call): where those would read more than a quarter of the data
	 * section, reading it whole (0.1 s a GB) costs less */
	for (uint64_t i = 0, end = 0; i < n; i++)
		if (pd->index[i] + 8 > end) {
			reads++;
			end = pd->index[i] + HM_PD_SEEK_WIN;
		}
	pd->index_pays = reads <= data_size / (4 * HM_PD_SEEK_WIN);
	pd->nr_index = n;
	return 1;
}

int hm_perfdata_index(struct hm_perfdata *pd, const uint64_t **off, uint64_t *nr)
{
	if (!pd->index_state && (pd->index_state = load_index(pd) ? 1 : -1) < 0) {
		free(pd->index);
		pd->index = NULL;
	}
	*off = pd->index_state > 0 ? pd->index : NULL;
	*nr = pd->index_state > 0 ? pd->nr_index : 0;
	return pd->index_state > 0;
}

int hm_perfdata_index_pays(struct hm_perfdata *pd)
{
	const uint64_t *off;
	uint64_t nr;

	return hm_perfdata_index(pd, &off, &nr) && pd->index_pays;
}

int hm_perfdata_index_lists(const struct hm_perfdata *pd, uint32_t attr)
{
	return pd->index_state > 0 && attr < pd->nr_attrs && pd->index_of[attr];
}
