/* Decoding one record of the data section: kernel records for the caller, perf's own
 * header records (attrs, features, build-ids, names) into the reader's state. */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>

#include "core/perfdata_int.h"

static const uint8_t *rec_bytes(const struct hm_perfdata *pd)
{
	return (const uint8_t *)pd->rec;
}

static uint16_t rec_size(const struct hm_perfdata *pd)
{
	struct perf_event_header h;

	memcpy(&h, pd->rec, sizeof(h));
	return h.size;
}

/* perf's rule (evlist__id2evsel): one event, or id 0, means the first; an unknown id in a
 * file without sample_id_all also means the first; otherwise the record names no event. */
static const struct hm_perf_attr *attr_by_id(struct hm_perfdata *pd, uint64_t id)
{
	const struct hm_perf_attr *a;

	if (pd->nr_attrs == 1 || id == 0)
		return pd->attrs[0];
	if (pd->last_attr && pd->last_id == id)	/* an id's event never changes */
		return pd->last_attr;
	a = hm_map64_get(&pd->id2attr, id);
	if (a) {
		pd->last_id = id;
		pd->last_attr = a;
		return a;
	}
	return pd->attrs[0]->attr.sample_id_all ? NULL : pd->attrs[0];
}

static uint64_t rec_u64(const struct hm_perfdata *pd, uint64_t idx)
{
	uint64_t v;

	memcpy(&v, rec_bytes(pd) + 8 + idx * 8, 8);
	return v;
}

/* The attr of the sample record rec (size bytes): pd->rec's, or one not yet copied. */
static const struct hm_perf_attr *sample_attr_of(struct hm_perfdata *pd,
						 const uint8_t *rec, uint16_t size)
{
	uint64_t id;

	if (pd->nr_attrs == 1 || pd->id_pos < 0)
		return pd->attrs[0];
	if ((uint64_t)pd->id_pos >= (size - 8u) / 8)
		return NULL;
	memcpy(&id, rec + 8 + (uint64_t)pd->id_pos * 8, 8);
	return attr_by_id(pd, id);
}

static const struct hm_perf_attr *sample_attr(struct hm_perfdata *pd)
{
	return sample_attr_of(pd, rec_bytes(pd), rec_size(pd));
}

static const struct hm_perf_attr *trailer_attr(struct hm_perfdata *pd)
{
	uint64_t n = (rec_size(pd) - 8u) / 8;

	if (pd->nr_attrs == 0)
		return NULL;
	if (pd->nr_attrs == 1 || !pd->attrs[0]->attr.sample_id_all || pd->is_pos < 0)
		return pd->attrs[0];
	if ((uint64_t)pd->is_pos > n)
		return NULL;
	return attr_by_id(pd, rec_u64(pd, n - (uint64_t)pd->is_pos));
}

static int bad_record(struct hm_perfdata *pd, const char *kind, struct hm_err *err)
{
	char what[96];

	snprintf(what, sizeof(what), "%s record (%u bytes, shorter than its fields)", kind,
		 rec_size(pd));
	return hm_pd_corrupt(pd, pd->rec_off, what, err);
}

static int read_sample(struct hm_perfdata *pd, struct hm_perf_event *ev, struct hm_err *err)
{
	const struct hm_perf_attr *a;
	int rc;

	if (!pd->nr_attrs)
		return hm_pd_corrupt(pd, pd->rec_off, "stream (a sample before any event "
				     "attribute)", err);
	a = sample_attr(pd);
	if (!a) {
		pd->stats.unknown_id++;
		pd->stats.skipped++;
		return 0;
	}
	rc = hm_pd_decode_sample(a, rec_bytes(pd), rec_size(pd), &ev->sample);
	if (rc == -2)
		return hm_err_set(err, HM_EXIT_INPUT, "%s: event '%s' samples fields this hitmap does "
				  "not know (sample_type 0x%" PRIx64 "): update hitmap", pd->name,
				  a->name, (uint64_t)a->attr.sample_type);
	if (rc == -3) {
		char what[160];

		snprintf(what, sizeof(what), "sample record (%u bytes, longer than the fields of "
			 "event '%s', sample_type 0x%" PRIx64 ")", rec_size(pd), a->name,
			 (uint64_t)a->attr.sample_type);
		return hm_pd_corrupt(pd, pd->rec_off, what, err);
	}
	if (rc < 0)
		return bad_record(pd, "sample", err);
	ev->attr = a;
	return 1;
}

/* Body of a non-sample record without its sample_id_all trailer; fills ev->sid. */
static int body_cursor(struct hm_perfdata *pd, struct hm_perf_event *ev, struct hm_pcur *c,
		       struct hm_err *err)
{
	const struct hm_perf_attr *a = trailer_attr(pd);
	size_t size = rec_size(pd), end8 = 8 + (size - 8) / 8 * 8, sid = 0;

	ev->attr = a;
	if (a && a->attr.sample_id_all) {
		sid = hm_pd_sid_size(&a->attr);
		if (sid > end8 - 8)
			return bad_record(pd, "event", err);
		hm_pd_decode_sid(&a->attr, rec_bytes(pd) + end8 - sid, &ev->sid);
		ev->has_sid = 1;
		size = end8 - sid;
	}
	hm_pcur_init(c, rec_bytes(pd) + 8, size - 8);
	return 0;
}

/* The rest of the body as a NUL-terminated string. */
static const char *take_str(struct hm_pcur *c)
{
	size_t left = hm_pcur_left(c);
	const char *s = (const char *)c->p + c->off;

	if (!left || strnlen(s, left) == left) {
		c->bad = 1;
		return "";
	}
	c->off += left;
	return s;
}

static void read_mmap2_ids(struct hm_pcur *c, uint16_t misc, struct hm_perf_mmap *m)
{
	const uint8_t *b;

	if (!(misc & PERF_RECORD_MISC_MMAP_BUILD_ID)) {
		m->maj = hm_pcur_u32(c);
		m->min = hm_pcur_u32(c);
		m->ino = hm_pcur_u64(c);
		m->ino_generation = hm_pcur_u64(c);
		return;
	}
	b = hm_pcur_take(c, 24);	/* size, 3 reserved bytes, 20 bytes of id */
	if (!b)
		return;
	m->build_id_size = b[0] > 20 ? 20 : b[0];
	memcpy(m->build_id, b + 4, 20);
}

static int read_mmap(struct hm_perfdata *pd, struct hm_perf_event *ev, struct hm_err *err)
{
	struct hm_perf_mmap *m = &ev->mmap;
	struct hm_pcur c;

	if (body_cursor(pd, ev, &c, err) < 0)
		return -1;
	m->pid = hm_pcur_u32(&c);
	m->tid = hm_pcur_u32(&c);
	m->start = hm_pcur_u64(&c);
	m->len = hm_pcur_u64(&c);
	m->pgoff = hm_pcur_u64(&c);
	if (ev->type == PERF_RECORD_MMAP2) {
		read_mmap2_ids(&c, ev->misc, m);
		m->prot = hm_pcur_u32(&c);
		m->flags = hm_pcur_u32(&c);
	}
	{
		size_t left = hm_pcur_left(&c), used;

		m->filename = take_str(&c);
		used = (strlen(m->filename) + 8) & ~(size_t)7;
		m->extra = !c.bad && left > used ? (const uint8_t *)m->filename + used : NULL;
		m->extra_len = m->extra ? left - used : 0;
	}
	return c.bad ? bad_record(pd, "mmap", err) : 1;
}

static int read_comm(struct hm_perfdata *pd, struct hm_perf_event *ev, struct hm_err *err)
{
	struct hm_pcur c;

	if (body_cursor(pd, ev, &c, err) < 0)
		return -1;
	ev->comm.pid = hm_pcur_u32(&c);
	ev->comm.tid = hm_pcur_u32(&c);
	ev->comm.comm = take_str(&c);
	return c.bad ? bad_record(pd, "comm", err) : 1;
}

static int read_task(struct hm_perfdata *pd, struct hm_perf_event *ev, struct hm_err *err)
{
	struct hm_pcur c;

	if (body_cursor(pd, ev, &c, err) < 0)
		return -1;
	ev->task.pid = hm_pcur_u32(&c);
	ev->task.ppid = hm_pcur_u32(&c);
	ev->task.tid = hm_pcur_u32(&c);
	ev->task.ptid = hm_pcur_u32(&c);
	ev->task.time = hm_pcur_u64(&c);
	return c.bad ? bad_record(pd, "fork/exit", err) : 1;
}

static int read_lost(struct hm_perfdata *pd, struct hm_perf_event *ev, struct hm_err *err)
{
	struct hm_pcur c;

	if (body_cursor(pd, ev, &c, err) < 0)
		return -1;
	if (ev->type == PERF_RECORD_LOST)
		ev->lost.id = hm_pcur_u64(&c);
	ev->lost.lost = hm_pcur_u64(&c);
	if (c.bad)
		return bad_record(pd, "lost", err);
	if (ev->type == PERF_RECORD_LOST)
		pd->stats.lost += ev->lost.lost;
	else
		pd->stats.lost_samples += ev->lost.lost;
	return 1;
}

/* Pipe mode: {header, perf_event_attr (attr.size bytes), u64 ids[]}. */
static int read_header_attr(struct hm_perfdata *pd, struct hm_err *err)
{
	const uint8_t *p = rec_bytes(pd) + 8;
	size_t len = rec_size(pd) - 8u;
	struct perf_event_attr tmp;
	uint32_t sz = hm_pd_attr_copy(p, len, &tmp);

	if (!sz)
		return bad_record(pd, "attr", err);
	if (hm_pd_add_attr(pd, p, len, p + sz, (uint32_t)((len - sz) / 8), pd->rec_off, err) < 0)
		return -1;
	hm_pd_apply_names(pd);
	return 0;
}

static int read_header_feature(struct hm_perfdata *pd, struct hm_err *err)
{
	size_t size = rec_size(pd);
	uint64_t feat;

	if (size < 16)
		return bad_record(pd, "feature", err);
	memcpy(&feat, rec_bytes(pd) + 8, 8);
	/* the record buffer is reused: hitmap never writes its slab facts or its index to a pipe */
	if (feat >= HM_PERF_FEAT_BITS || feat == HM_PERF_FEAT_HITMAP_KSLAB ||
	    feat == HM_PERF_FEAT_HITMAP_INDEX)
		return 0;
	if (hm_pd_feat_parse(pd, (int)feat, rec_bytes(pd) + 16, size - 16, pd->rec_off + 16,
			     err) < 0)
		return -1;
	hm_pd_apply_names(pd);
	return 0;
}

/* {header, u64 type, u64 id, ...}: only NAME (type 2) matters here. */
static int read_event_update(struct hm_perfdata *pd, struct hm_err *err)
{
	struct hm_pcur c;
	uint64_t type, *id;
	const char *name;

	hm_pcur_init(&c, rec_bytes(pd) + 8, rec_size(pd) - 8u);
	type = hm_pcur_u64(&c);
	id = hm_arena_alloc(&pd->arena, sizeof(*id));
	*id = hm_pcur_u64(&c);
	if (c.bad)
		return bad_record(pd, "event update", err);
	if (type != 2)
		return 0;
	name = take_str(&c);
	if (c.bad)
		return bad_record(pd, "event update", err);
	/* The name points into the current record, which the next read overwrites. */
	hm_pd_desc_add(pd, hm_arena_strdup(&pd->arena, name), id, 1, UINT32_MAX);
	hm_pd_apply_names(pd);
	return 0;
}

uint64_t hm_pd_extra_bytes(const struct hm_perfdata *pd)
{
	struct perf_event_header h;
	uint64_t v = 0;

	memcpy(&h, pd->rec, sizeof(h));
	if (h.type == HM_PERF_RECORD_HEADER_TRACING_DATA && h.size >= 12) {
		uint32_t sz;

		memcpy(&sz, rec_bytes(pd) + 8, 4);
		v = ((uint64_t)sz + 7) & ~7ull;
	} else if (h.type == HM_PERF_RECORD_AUXTRACE && h.size >= 16) {
		memcpy(&v, rec_bytes(pd) + 8, 8);
	}
	return v;
}

static int read_perf_record(struct hm_perfdata *pd, uint32_t type, struct hm_err *err)
{
	switch (type) {
	case HM_PERF_RECORD_HEADER_ATTR:
		return read_header_attr(pd, err);
	case HM_PERF_RECORD_HEADER_FEATURE:
		return read_header_feature(pd, err);
	case HM_PERF_RECORD_HEADER_BUILD_ID:
		if (hm_pd_build_id_add(pd, rec_bytes(pd), rec_size(pd), 0) < 0)
			return bad_record(pd, "build-id", err);
		return 0;
	case HM_PERF_RECORD_EVENT_UPDATE:
		return read_event_update(pd, err);
	case HM_PERF_RECORD_COMPRESSED:
		return hm_err_set(err, HM_EXIT_INPUT, "%s: the record at byte %" PRIu64 " is "
				  "compressed (perf record -z): re-record without -z, or "
				  "decompress with 'perf inject -i FILE -o NEW'", pd->name,
				  pd->rec_off);
	default:
		pd->stats.skipped++;
		return 0;
	}
}

/* A sample of an event the caller does not want (hm_perfdata_want_samples). */
static int unwanted(struct hm_perfdata *pd)
{
	const struct hm_perf_attr *a;

	if (!pd->want || !pd->nr_attrs || !(a = sample_attr(pd)))
		return 0;	/* read_sample says what is wrong */
	return !pd->want(a, pd->want_arg);
}

int hm_pd_skip_unwanted(struct hm_perfdata *pd, const uint8_t *rec, uint16_t size)
{
	const struct hm_perf_attr *a;

	if (!pd->want || !pd->nr_attrs || !(a = sample_attr_of(pd, rec, size)) ||
	    pd->want(a, pd->want_arg))
		return 0;	/* wanted; or read_sample says what is wrong */
	pd->stats.records[PERF_RECORD_SAMPLE]++;
	pd->stats.skipped++;
	return 1;
}

int hm_pd_dispatch(struct hm_perfdata *pd, struct hm_perf_event *ev, struct hm_err *err)
{
	struct perf_event_header h;

	memcpy(&h, pd->rec, sizeof(h));
	if (h.type < HM_PERF_RECORD_MAX_TYPE)
		pd->stats.records[h.type]++;
	if (h.type == PERF_RECORD_SAMPLE && unwanted(pd)) {
		pd->stats.skipped++;
		return 0;
	}
	/* a sample's own fields are zeroed by its decoder (hm_pd_decode_sample) */
	memset(ev, 0, h.type == PERF_RECORD_SAMPLE ? offsetof(struct hm_perf_event, sample)
						   : sizeof(*ev));
	ev->type = h.type;
	ev->misc = h.misc;
	ev->size = h.size;
	ev->offset = pd->rec_off;
	switch (h.type) {
	case PERF_RECORD_SAMPLE:
		return read_sample(pd, ev, err);
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return read_mmap(pd, ev, err);
	case PERF_RECORD_COMM:
		return read_comm(pd, ev, err);
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		return read_task(pd, ev, err);
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
		return read_lost(pd, ev, err);
	default:
		return read_perf_record(pd, h.type, err);
	}
}
