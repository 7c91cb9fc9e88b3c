/* The maps pass of resolve/load.c: the address spaces (MMAP records, in time order) and
 * the heap's allocations, read before any sample is resolved, from the record index of a
 * hitmap recording (core/perfdata_index.c) where it has one, else from the whole file. */
#include "resolve/maps.h"

#include <stdlib.h>
#include <string.h>

#include "core/oom.h"
#include "core/sort.h"
#include "resolve/load.h"

struct map_rec {
	struct hm_perf_event ev;
	uint64_t time;
	size_t seq;
};

static int cmp_map_time(const void *x, const void *y)
{
	const struct map_rec *a = x, *b = y;

	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* The allocation-family events' samples: the only ones the first pass decodes. */
struct alloc_attrs {
	uint8_t *is;		/* by attr index */
	uint32_t n;
};

static int want_alloc(const struct hm_perf_attr *a, void *arg)
{
	const struct alloc_attrs *aa = arg;
	int ret;

	if (a->index < aa->n)
		return aa->is[a->index];
	return hm_alloc_event_kind(a->name, &ret) >= 0;
}

/* Marks pd's allocation events in aa; 1 when there is one. */
static int alloc_attrs_of(struct hm_perfdata *pd, struct alloc_attrs *aa)
{
	int any = 0, ret;

	aa->n = hm_perfdata_nr_attrs(pd);
	if (!(aa->is = calloc(aa->n ? aa->n : 1, 1)))
		hm_oom();
	for (uint32_t i = 0; i < aa->n; i++)
		any |= aa->is[i] = hm_alloc_event_kind(hm_perfdata_attr(pd, i)->name, &ret) >= 0;
	return any;
}

/* The maps pass's records so far: the MMAP records, in file order. */
struct maps_taken {
	struct map_rec *v;
	size_t n, cap;
	struct hm_alloc_map *alloc;	/* NULL: allocations not asked for, or none */
};

static void take(struct maps_taken *m, const struct hm_perf_event *ev)
{
	struct map_rec *r;

	if (m->alloc && hm_alloc_is_sample(ev))
		hm_alloc_map_add(m->alloc, ev);
	if (ev->type != PERF_RECORD_MMAP && ev->type != PERF_RECORD_MMAP2)
		return;
	if (m->n == m->cap && !(m->v = realloc(m->v, (m->cap = m->cap ? m->cap * 2 : 256) *
					       sizeof(*m->v))))
		hm_oom();	/* as the arena does */
	r = &m->v[m->n];
	r->ev = *ev;
	r->ev.mmap.filename = strdup(ev->mmap.filename ? ev->mmap.filename : "");
	if (ev->mmap.extra_len) {	/* module section addresses: the file closes */
		uint8_t *x = malloc(ev->mmap.extra_len);

		if (!x)
			hm_oom();
		r->ev.mmap.extra = memcpy(x, ev->mmap.extra, ev->mmap.extra_len);
	}
	r->time = ev->has_sid ? ev->sid.time : 0;
	r->seq = m->n++;
}

/* The copies take() made of a record's strings. */
static void rec_free(struct map_rec *r)
{
	free((char *)r->ev.mmap.filename);
	free((void *)r->ev.mmap.extra);
}

/* Forgets what was taken, keeping the array; the allocation map starts anew. */
static void taken_drop(struct maps_taken *m)
{
	for (size_t i = 0; i < m->n; i++)
		rec_free(&m->v[i]);
	m->n = 0;
	if (m->alloc) {
		hm_alloc_map_free(m->alloc);
		m->alloc = hm_alloc_map_new();
	}
}

/* The pass through the record index a hitmap recording carries (core/perfdata_index.c):
 * only the records it lists are read, which are all the pass takes when the index lists
 * every allocation event's samples. 1 done; 0 no such index, or one whose records are
 * so many that reading the file costs less; -1 the index is wrong (a
 * listed record is damaged or is not one): nothing taken, the file is read whole, which
 * finds what is wrong as it did without an index. */
static int by_index(struct hm_perfdata *pd, struct alloc_attrs *aa, struct maps_taken *m)
{
	const uint64_t *off;
	uint64_t nr;
	struct hm_perf_event ev;
	struct hm_err ignore = {0};
	int rc;

	if (!hm_perfdata_index(pd, &off, &nr) || !hm_perfdata_index_pays(pd))
		return 0;
	for (uint32_t i = 0; i < aa->n; i++)
		if (aa->is[i] && !hm_perfdata_index_lists(pd, i))
			return 0;
	hm_perfdata_want_samples(pd, want_alloc, aa);	/* an index lists no others */
	for (uint64_t i = 0; i < nr; i++) {
		if ((rc = hm_perfdata_next_at(pd, off[i], &ev, &ignore)) < 0) {
			taken_drop(m);
			return -1;
		}
		if (rc > 0)
			take(m, &ev);
	}
	return 1;
}

/* perf writes each CPU's ring in turn, so a sample can come before the MMAP record of its
 * code in file order (perf sorts by time as it reads). The address spaces are therefore
 * built in a first pass, in time order, before any sample is resolved. The same pass
 * reads the allocation samples when alloc is given (resolve/alloc.h); other samples are
 * skipped undecoded, so it costs little beside the samples' pass, and a recording with
 * hitmap's record index reads only the records the index lists. */
int hm_maps_pass(const char *path, void (*fn)(const struct hm_perf_event *ev, void *arg),
		 void *arg, struct hm_alloc_map **alloc, struct hm_err *err)
{
	struct hm_perfdata *pd;
	struct hm_perf_event ev;
	struct alloc_attrs aa = {0};
	struct maps_taken m = {0};
	int rc = 0, indexed;

	if (hm_perfdata_open(path, &pd, err))
		return -1;
	if (alloc_attrs_of(pd, &aa) && alloc)
		m.alloc = hm_alloc_map_new();	/* *alloc once taking is over: a drop renews it */
	indexed = by_index(pd, &aa, &m);
	if (indexed < 0) {	/* read again from the start, as if there were no index */
		hm_perfdata_close(pd);
		if (hm_perfdata_open(path, &pd, err)) {
			free(aa.is);
			free(m.v);
			hm_alloc_map_free(m.alloc);
			return -1;
		}
	}
	if (indexed <= 0) {
		if (m.alloc)
			hm_perfdata_want_samples(pd, want_alloc, &aa);
		else
			hm_perfdata_want_no_samples(pd);	/* maps only */
		while ((rc = hm_perfdata_next(pd, &ev, err)) > 0)
			take(&m, &ev);
	}
	hm_perfdata_close(pd);
	free(aa.is);
	if (m.n)
		hm_sort(m.v, m.n, sizeof(*m.v), cmp_map_time);
	for (size_t i = 0; i < m.n; i++) {
		fn(&m.v[i].ev, arg);
		rec_free(&m.v[i]);
	}
	free(m.v);
	if (m.alloc) {
		hm_alloc_map_seal(m.alloc);
		*alloc = m.alloc;
	}
	return rc < 0;
}

/* The file's first damage as a pass that decodes every sample finds it: maps_pass skips
 * samples, so it may trip on what follows a damaged one instead. Error path only. */
int hm_first_damage(const char *path, struct hm_err *err)
{
	struct hm_perfdata *pd;
	struct hm_perf_event ev;
	int rc;

	if (hm_perfdata_open(path, &pd, err))
		return -1;
	while ((rc = hm_perfdata_next(pd, &ev, err)) > 0)
		;
	hm_perfdata_close(pd);
	return rc < 0 ? -1 : 0;
}

int hm_recording_maps(const char *path, void (*fn)(const struct hm_perf_event *ev, void *arg),
		      void *arg, struct hm_err *err)
{
	return hm_maps_pass(path, fn, arg, NULL, err);
}

