#include "analyzer/load.h"

#include <stdlib.h>
#include <string.h>
#include "core/sort.h"

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

/* perf writes each CPU's ring in turn, so a sample can come before the MMAP record of its
 * code in file order (perf sorts by time as it reads). The address spaces are therefore
 * built in a first pass, in time order, before any sample is resolved. */
static int track_maps(const char *path, struct hm_resolver *r)
{
	struct hm_perfdata *pd;
	struct hm_perf_event ev;
	struct hm_err err = {0};
	struct map_rec *v = NULL;
	size_t n = 0, cap = 0;

	if (hm_perfdata_open(path, &pd, &err))
		return -1;
	while (hm_perfdata_next(pd, &ev, &err) > 0) {
		if (ev.type != PERF_RECORD_MMAP && ev.type != PERF_RECORD_MMAP2)
			continue;
		if (n == cap && !(v = realloc(v, (cap = cap ? cap * 2 : 256) * sizeof(*v))))
			abort();
		v[n].ev = ev;
		v[n].ev.mmap.filename = strdup(ev.mmap.filename ? ev.mmap.filename : "");
		v[n].time = ev.has_sid ? ev.sid.time : 0;
		v[n].seq = n;
		n++;
	}
	hm_perfdata_close(pd);
	if (n)
		hm_sort(v, n, sizeof(*v), cmp_map_time);
	for (size_t i = 0; i < n; i++) {
		hm_resolver_track(r, &v[i].ev);
		free((char *)v[i].ev.mmap.filename);
	}
	free(v);
	return 0;
}

static struct hm_access *push(struct hm_recording *rec, size_t *cap)
{
	if (rec->n == *cap) {
		*cap = *cap ? *cap * 2 : 4096;
		rec->acc = realloc(rec->acc, *cap * sizeof(*rec->acc));
		if (!rec->acc)
			return NULL;
	}
	return &rec->acc[rec->n++];
}

static int read_samples(struct hm_recording *rec, int stream,
			int (*keep)(const struct hm_access *a, void *ctx), void *ctx,
			struct hm_err *err)
{
	struct hm_perf_event ev;
	size_t cap = 0;
	int rc;

	while ((rc = hm_perfdata_next(rec->pd, &ev, err)) > 0) {
		struct hm_access *x;

		if (ev.type != PERF_RECORD_SAMPLE) {
			if (stream)
				hm_resolver_track(rec->resolver, &ev);
			continue;
		}
		if (!(x = push(rec, &cap)))
			return hm_err_set(err, HM_EXIT_ENV, "%s: out of memory at %zu samples",
					  rec->path, rec->n);
		hm_resolver_sample(rec->resolver, &ev, x);
		if (keep && !keep(x, ctx))
			rec->n--;
	}
	return rc < 0 ? -1 : 0;
}

int hm_recording_load(const char *path, const struct hm_resolve_opts *o,
		      int (*keep)(const struct hm_access *a, void *ctx), void *ctx,
		      struct hm_recording *rec, struct hm_err *err)
{
	struct hm_resolve_opts ro = *o;
	const struct hm_perfdata_stats *ps;
	int stream = !strcmp(path, "-");

	memset(rec, 0, sizeof(*rec));
	rec->path = path;
	if (hm_perfdata_open(path, &rec->pd, err))
		return -1;
	if (!ro.osrelease)
		ro.osrelease = hm_perfdata_features(rec->pd)->osrelease;
	if (hm_resolver_open(&ro, &rec->resolver, err)) {
		hm_recording_free(rec);
		return -1;
	}
	hm_resolver_features(rec->resolver, hm_perfdata_features(rec->pd));
	if (!stream && track_maps(path, rec->resolver))
		stream = 1;
	if (read_samples(rec, stream, keep, ctx, err)) {
		hm_recording_free(rec);
		return -1;
	}
	ps = hm_perfdata_stats(rec->pd);
	rec->lost = ps->lost + ps->lost_samples;
	rec->warning = hm_perfdata_warning(rec->pd);
	return 0;
}

void hm_recording_free(struct hm_recording *rec)
{
	free(rec->acc);
	if (rec->resolver)
		hm_resolver_close(rec->resolver);
	if (rec->pd)
		hm_perfdata_close(rec->pd);
	memset(rec, 0, sizeof(*rec));
}
