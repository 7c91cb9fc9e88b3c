/* perf.data's file header: the attrs with their ids, the feature sections, the data
 * section's bounds (perfdata_read.c opens the file and walks the records). Every offset
 * and size read from the file is checked against the bytes that exist before it is used. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/perfdata_int.h"

uint32_t hm_pd_attr_copy(const uint8_t *p, size_t avail, struct perf_event_attr *out)
{
	uint32_t sz;

	if (avail < PERF_ATTR_SIZE_VER0)
		return 0;
	memcpy(&sz, p + offsetof(struct perf_event_attr, size), 4);
	if (sz == 0)
		sz = PERF_ATTR_SIZE_VER0;	/* perf's first ABI left size 0 */
	if (sz < PERF_ATTR_SIZE_VER0 || sz > avail)
		return 0;
	memset(out, 0, sizeof(*out));
	/* A newer recorder's extra fields are ignored; an older one's missing fields are 0. */
	memcpy(out, p, sz < sizeof(*out) ? sz : sizeof(*out));
	out->size = sz;
	return sz;
}

static int check_id_layout(struct hm_perfdata *pd, const struct hm_perf_attr *a,
			   struct hm_err *err)
{
	uint64_t t = a->attr.sample_type;

	if (pd->nr_attrs == 1) {
		pd->id_pos = hm_pd_id_pos(t);
		pd->is_pos = hm_pd_is_pos(t);
		return 0;
	}
	if (pd->id_pos >= 0 && hm_pd_id_pos(t) == pd->id_pos && hm_pd_is_pos(t) == pd->is_pos)
		return 0;
	/* perf refuses such files too ("non matching sample_type"): samples cannot be routed. */
	return hm_err_set(err, HM_EXIT_INPUT, "%s: events '%s' and '%s' do not both carry a "
			  "sample id at the same position (sample_type 0x%" PRIx64 " vs 0x%" PRIx64
			  "): samples cannot be assigned to events; re-record with the same sample "
			  "fields (and ids) for every event", pd->name, pd->attrs[0]->name, a->name,
			  (uint64_t)pd->attrs[0]->attr.sample_type, t);
}

int hm_pd_add_attr(struct hm_perfdata *pd, const uint8_t *p, size_t len, const void *ids,
		   uint32_t nr_ids, uint64_t off, struct hm_err *err)
{
	struct hm_perf_attr *a = hm_arena_alloc(&pd->arena, sizeof(*a));
	uint64_t *idv = hm_arena_alloc(&pd->arena, (size_t)nr_ids * 8 + 8);
	char name[128];

	if (!hm_pd_attr_copy(p, len, &a->attr))
		return hm_pd_corrupt(pd, off, "event attribute (size field)", err);
	memcpy(idv, ids, (size_t)nr_ids * 8);
	a->ids = idv;
	a->nr_ids = nr_ids;
	a->index = pd->nr_attrs;
	hm_perf_attr_default_name(&a->attr, name, sizeof(name));
	a->name = hm_arena_strdup(&pd->arena, name);
	if (pd->nr_attrs == pd->cap_attrs) {
		uint32_t cap = pd->cap_attrs ? pd->cap_attrs * 2 : 8;
		struct hm_perf_attr **na = realloc(pd->attrs, cap * sizeof(*na));

		if (!na)
			return hm_err_set(err, HM_EXIT_ENV, "%s: out of memory for %u events",
					  pd->name, cap);
		pd->attrs = na;
		pd->cap_attrs = cap;
	}
	pd->attrs[pd->nr_attrs++] = a;
	for (uint32_t i = 0; i < nr_ids; i++)
		if (idv[i] && !hm_map64_get(&pd->id2attr, idv[i]))
			hm_map64_put(&pd->id2attr, idv[i], a);
	return check_id_layout(pd, a, err);
}

/* The section [off, off + size) must lie inside the file. */
static int section_ok(struct hm_perfdata *pd, uint64_t off, uint64_t size, const char *what,
		      struct hm_err *err)
{
	char why[160];

	if (off <= pd->mem_len && size <= pd->mem_len - off)
		return 0;
	snprintf(why, sizeof(why), "%s ends at byte %" PRIu64 ", past the end of the file", what,
		 off + size < off ? UINT64_MAX : off + size);
	return hm_pd_truncated(pd, pd->mem_len, why, err);
}

static uint64_t mem_u64(const struct hm_perfdata *pd, uint64_t off)
{
	uint64_t v;

	memcpy(&v, pd->mem + off, 8);
	return v;
}

static int read_attrs(struct hm_perfdata *pd, uint64_t attr_size, uint64_t off, uint64_t size,
		      struct hm_err *err)
{
	uint64_t nr;

	if (attr_size < PERF_ATTR_SIZE_VER0 + 16 || attr_size > HM_PD_SIZE_MAX)
		return hm_pd_corrupt(pd, 16, "header (attr entry size)", err);
	if (section_ok(pd, off, size, "the attrs section", err) < 0)
		return -1;
	if (size % attr_size)
		return hm_pd_corrupt(pd, 24, "header (attrs section size)", err);
	nr = size / attr_size;
	if (nr == 0)
		return hm_err_set(err, HM_EXIT_INPUT, "%s: the recording has no events (empty attrs "
				  "section): re-record", pd->name);
	for (uint64_t i = 0; i < nr; i++) {
		uint64_t at = off + i * attr_size, ids_at = at + attr_size - 16;
		uint64_t ids_off = mem_u64(pd, ids_at), ids_size = mem_u64(pd, ids_at + 8);

		if (section_ok(pd, ids_off, ids_size, "an event's id list", err) < 0)
			return -1;
		if (ids_size % 8 || ids_size / 8 > UINT32_MAX)
			return hm_pd_corrupt(pd, ids_at, "event id list size", err);
		if (hm_pd_add_attr(pd, pd->mem + at, attr_size - 16, pd->mem + ids_off,
				   (uint32_t)(ids_size / 8), at, err) < 0)
			return -1;
	}
	return 0;
}

static int read_features(struct hm_perfdata *pd, const uint64_t bits[4], uint64_t table,
			 struct hm_err *err)
{
	uint64_t nr = 0, at = table;

	for (int i = 0; i < 4; i++)
		nr += (uint64_t)__builtin_popcountll(bits[i]);
	if (section_ok(pd, table, nr * 16, "the feature section table", err) < 0)
		return -1;
	for (int f = 0; f < HM_PERF_FEAT_BITS; f++) {
		uint64_t off, size;
		char what[64];

		if (!(bits[f / 64] >> (f % 64) & 1))
			continue;
		off = mem_u64(pd, at);
		size = mem_u64(pd, at + 8);
		at += 16;
		hm_pd_feat_what(f, what, sizeof(what));
		if (section_ok(pd, off, size, what, err) < 0)
			return -1;
		if (hm_pd_feat_parse(pd, f, pd->mem + off, (size_t)size, off, err) < 0)
			return -1;
	}
	return 0;
}

int hm_pd_read_file_header(struct hm_perfdata *pd, uint64_t hsize, struct hm_err *err)
{
	uint64_t bits[4] = {0}, data_off, data_size;

	if (hsize != HM_PERF_FILE_HEADER_SIZE && hsize != HM_PERF_FILE_HEADER_OLD)
		return hm_pd_corrupt(pd, 8, "header (size field)", err);
	if (section_ok(pd, 0, hsize, "the file header", err) < 0)
		return -1;
	if (hsize == HM_PERF_FILE_HEADER_SIZE)
		memcpy(bits, pd->mem + 72, sizeof(bits));
	if (read_attrs(pd, mem_u64(pd, 16), mem_u64(pd, 24), mem_u64(pd, 32), err) < 0)
		return -1;
	data_off = mem_u64(pd, 40);
	data_size = mem_u64(pd, 48);
	pd->pos = pd->data_off = data_off;
	if (data_size == 0) {
		/* perf record was killed before it wrote the size: the events run to EOF. */
		if (section_ok(pd, data_off, 0, "the data section", err) < 0)
			return -1;
		pd->end = pd->mem_len;
		pd->tolerant_tail = 1;
		hm_pd_warn(pd, "%s: the header's data size is 0 (the recorder did not finish): "
			   "reading events to the end of the file; features are missing", pd->name);
		return 0;
	}
	if (section_ok(pd, data_off, data_size, "the data section", err) < 0)
		return -1;
	pd->end = data_off + data_size;
	if (read_features(pd, bits, pd->end, err) < 0)
		return -1;
	hm_pd_apply_names(pd);
	return 0;
}
