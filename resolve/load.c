#include "resolve/load.h"

#include "resolve/alloc.h"
#include "resolve/handoff.h"
#include "resolve/maps.h"
#include "resolve/order.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/arena.h"
#include "core/hash.h"
#include "core/huge.h"
#include "core/sort.h"
#include "core/oom.h"
#include "core/perfdata_ahead.h"
#include "symbolize/data.h"
#include "symbolize/debugfile.h"

/* A handoff slot holds one run between prep and flush (hm_recording_stream). */
_Static_assert(HM_HANDOFF_MAX_SLOTS <= HM_STREAM_PREP_AHEAD, "prep may run further ahead");

static void track_map(const struct hm_perf_event *ev, void *r)
{
	hm_resolver_track(r, ev);
}

/* Names the batch's accesses again from the objects typed since they were read
 * (resolve_enclose.c); those that now cover several members become one access each, as
 * far as cap allows (a streamed batch stays within its size). Returns rec->n. */
static size_t enclose(struct hm_recording *rec, size_t cap)
{
	struct hm_access parts[HM_RESOLVE_MAX_PARTS], *out = NULL;
	size_t n = rec->n, m = 0, ocap = 0, room = cap - (cap > n ? n : cap);

	for (size_t i = 0; i < n; i++) {
		size_t np = hm_resolver_enclose(rec->resolver, &rec->acc[i], parts,
						HM_RESOLVE_MAX_PARTS);

		if (np >= 2 && np - 1 > room)
			np = 1;	/* no room: renamed, not split */
		if (np >= 2 && !out) {	/* the first split: the batch is copied from here */
			ocap = n + np + 64;
			if (!(out = malloc(ocap * sizeof(*out))))
				hm_oom();
			memcpy(out, rec->acc, i * sizeof(*out));
			m = i;
		}
		if (out && m + (np >= 2 ? np : 1) > ocap) {
			ocap = 2 * ocap + np;
			if (!(out = realloc(out, ocap * sizeof(*out))))
				hm_oom();
		}
		if (np >= 2) {
			memcpy(&out[m], parts, np * sizeof(*out));
			m += np;
			room -= np - 1;
		} else if (out) {
			out[m++] = rec->acc[i];
		}
	}
	if (!out)
		return n;
	if (rec->order)
		hm_order_moved(rec->order);	/* positions shifted */
	if (rec->batch) {	/* the batch's arrays are of its size, which m fits */
		memcpy(rec->acc, out, m * sizeof(*out));
		free(out);
	} else {
		free(rec->acc);
		rec->acc = out;
	}
	return rec->n = m;
}

/* The last steps before flush, on accesses in time order. */
static void name_cut(struct hm_recording *rec, struct hm_access *acc, size_t n)
{
	if (n && rec->alloc)
		hm_alloc_name(rec->alloc, hm_resolver_code(rec->resolver), acc, n, 64);
	hm_resolver_count_names(rec->resolver, acc, n);
}

/* With flush on its own thread: the cut is gathered in time order straight into the
 * handoff's slots (one copy of each access, not a permutation of the batch and then a
 * copy), and the rest is moved to the front in its order in the batch. That is not time
 * order, but the next sort puts it there the same way: keys are (time, position), and
 * both orders rank equal times of the rest alike and before every later access. */
static int gather_cut(struct hm_recording *rec, const struct hm_okey *k, size_t n, size_t cut)
{
	for (size_t i = 0; i < cut; i += HM_HANDOFF_CHUNK) {
		size_t m = cut - i < HM_HANDOFF_CHUNK ? cut - i : HM_HANDOFF_CHUNK;
		struct hm_access *s = hm_handoff_slot(rec->handoff);

		if (!s)
			return -1;
		for (size_t x = 0; x < m; x++)
			s[x] = rec->acc[k[i + x].idx];
		name_cut(rec, s, m);
		if (rec->prep)
			rec->prep(s, m, rec->flush_arg);
		hm_handoff_commit(rec->handoff, m);
	}
	hm_order_compact(rec->order, rec->acc, rec->acc, k, n, cut);
	return 0;
}

/* A streamed batch's array: 2 MB pages where the kernel allows (core/huge.h). */
static struct hm_access *batch_array(size_t n)
{
	struct hm_access *a = malloc(n * sizeof(*a));

	hm_huge_hint(a, n * sizeof(*a));
	return a;
}

/* With flush on its own thread and no prep (which wants the cut as an array): the cut is
 * named where it lies in the batch, in time order as name_cut would, and handed on
 * uncopied; the flush's thread gathers it while this one reads on into the batch's
 * other array, which takes the rest first. The copy was this thread's costliest loop
 * (a cache miss for each 192-byte access). */
#define AHEAD 8

static int hand_gathered(struct hm_recording *rec, const struct hm_okey *k, size_t n,
			 size_t cut, int final)
{
	struct hm_access *next;

	if (!final && !rec->spare && !(rec->spare = batch_array(rec->batch)))
		return -1;	/* reading goes on there */
	for (size_t i = 0; i < cut; i++) {
		struct hm_access *x = &rec->acc[k[i].idx];

		if (i + AHEAD < cut) {	/* a miss each: the keys are in time, not batch, order */
			const char *y = (const char *)&rec->acc[k[i + AHEAD].idx];

			__builtin_prefetch(y, 1);
			__builtin_prefetch(y + 64, 1);
			__builtin_prefetch(y + 128, 1);
		}
		if (rec->alloc)
			hm_alloc_name_one(rec->alloc, hm_resolver_code(rec->resolver), x, 64);
		hm_resolver_count_names(rec->resolver, x, 1);
	}
	if (hm_handoff_gather(rec->handoff, rec->acc, k, cut))
		return -1;
	if (final)
		return 0;
	hm_order_compact(rec->order, rec->spare, rec->acc, k, n, cut);
	next = rec->spare;
	rec->spare = rec->acc;
	rec->acc = next;
	return 0;
}

/* Hands the batch on in time order; all of it when final. */
static int flush_ordered(struct hm_recording *rec, int final)
{
	struct hm_order *o = rec->order;
	int gathered = rec->handoff && !rec->prep;
	struct hm_okey *k;
	size_t n, cut;

	/* gathered: the keys and the other array are free once the last cut is gathered */
	if (gathered && hm_handoff_idle(rec->handoff))
		return -1;
	n = enclose(rec, rec->batch);
	k = hm_order_sort(o, rec->acc, n);
	cut = hm_order_cut(o, k, n, final);	/* from the keys' times alone */
	if (rec->handoff) {
		if (gathered ? hand_gathered(rec, k, n, cut, final) : gather_cut(rec, k, n, cut))
			return -1;
		rec->total += cut;
		rec->n = n - cut;
		return 0;
	}
	hm_order_permute(rec->acc, k, n);
	hm_order_moved(o);
	name_cut(rec, rec->acc, cut);
	if (cut && rec->prep)
		rec->prep(rec->acc, cut, rec->flush_arg);
	if (cut && rec->flush(rec->acc, cut, rec->flush_arg))
		return -1;
	rec->total += cut;
	rec->n = n - cut;
	memmove(rec->acc, rec->acc + cut, rec->n * sizeof(*rec->acc));
	return 0;
}

static struct hm_access *push(struct hm_recording *rec, size_t *cap)
{
	if (rec->batch && rec->n == rec->batch && flush_ordered(rec, 0))
		return NULL;
	if (rec->batch && !*cap) {
		*cap = rec->batch;
		if (!(rec->acc = batch_array(*cap)) || !(rec->order = hm_order_new(*cap)))
			return NULL;
	}
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
	struct hm_access parts[HM_RESOLVE_MAX_PARTS];
	struct hm_perf_event own;
	const struct hm_perf_event *ev = &own;
	const struct hm_perf_attr *last = NULL;
	size_t cap = 0, np;
	int rc, alloc = 0;

	while ((rc = rec->ahead ? hm_pd_ahead_next(rec->ahead, &ev, err)
				: hm_perfdata_next(rec->pd, &own, err)) > 0) {
		struct hm_access *x;

		if (ev->type != PERF_RECORD_SAMPLE) {
			if (stream)
				hm_resolver_track(rec->resolver, ev);
			continue;
		}
		if (hm_watched_is_mark(ev->attr)) {	/* what was armed when, not an access */
			hm_watched_mark(&rec->watched, ev->sample.time, ev->sample.addr,
					(uint32_t)ev->sample.period);
			continue;
		}
		if (ev->attr != last) {	/* asked by name: once per run of one event */
			last = ev->attr;
			alloc = hm_alloc_is_sample(ev);
		}
		if (alloc)
			continue;	/* a malloc-family probe: rec->alloc has it */
		/* a wide access is one access per member it covers (resolve_wide.c) */
		np = hm_resolver_sample_parts(rec->resolver, ev, parts, HM_RESOLVE_MAX_PARTS);
		for (size_t i = 0; i < np; i++) {
			if (!(x = push(rec, &cap)))
				return hm_err_set(err, HM_EXIT_ENV, "%s: out of memory at %zu "
						  "samples: report with a smaller --batch",
						  rec->path, rec->total + rec->n);
			*x = parts[i];
			if (keep && !keep(x, ctx))
				rec->n--;
			else if (rec->order)
				hm_order_note(rec->order, x, rec->n - 1);
		}
	}
	if (rc >= 0 && rec->order && rec->n && flush_ordered(rec, 1))
		rc = hm_err_set(err, HM_EXIT_ENV, "%s: out of memory", rec->path);
	if (!rec->order) {
		enclose(rec, SIZE_MAX);
		if (rec->alloc)
			hm_alloc_name(rec->alloc, hm_resolver_code(rec->resolver), rec->acc, rec->n,
				      64);
		hm_resolver_count_names(rec->resolver, rec->acc, rec->n);
		rec->total += rec->n;
	}
	return rc < 0 ? -1 : 0;
}

static void warn(struct hm_recording *rec, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void warn(struct hm_recording *rec, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	hm_msg_vappend(rec->warn, sizeof(rec->warn), fmt, ap);
	va_end(ap);
	rec->warning = rec->warn;
}

/* What a partial result left out, in one line: the reader's warning, samples of events
 * the file does not declare, samples in files that could not be opened. */
static void warnings(struct hm_recording *rec)
{
	const struct hm_resolve_stats *st = hm_resolver_stats(rec->resolver);
	const char *w = hm_perfdata_warning(rec->pd);
	char more[64] = "";
	uint64_t n;
	size_t files;

	if (w)
		warn(rec, "%s", w);
	if (rec->unknown_id)
		warn(rec, "%s: %" PRIu64 " samples name an event id that no event of the file "
		     "has: skipped (perf stops at the first, 'Can't parse sample'); the file is "
		     "damaged or was merged from several recordings", rec->path, rec->unknown_id);
	if ((w = hm_data_damage(hm_resolver_data(rec->resolver))))
		warn(rec, "names from a damaged file are missing: %s", w);
	if ((w = hm_data_symbol_only(hm_resolver_data(rec->resolver), &n, &files))) {
		if (files > 1)
			snprintf(more, sizeof(more), "; %zu other files likewise", files - 1);
		warn(rec, "no debug info in %s: named by symbol only (%" PRIu64 " samples: no "
		     "fields, so no field advice%s); rebuild it with -g, or install its debug "
		     "file", w, n, more);
	}
	if (st->unreadable)
		warn(rec, "%" PRIu64 " samples are in %" PRIu64 " file%s that could not be read, "
		     "so their code and data are not named: %s", st->unreadable,
		     st->unreadable_files, st->unreadable_files == 1 ? "" : "s",
		     st->unreadable_hint ? st->unreadable_hint : "");
	if (st->kernel_no_ksyms)
		warn(rec, "%" PRIu64 " kernel samples have no function name: %s",
		     st->kernel_no_ksyms, st->kernel_no_ksyms_hint);
	if ((w = hm_data_slab_damage(hm_resolver_data(rec->resolver))))
		warn(rec, "%s", w);
}

/* Fills rec; on failure rec holds what was opened, for the caller to free. */
static int load_file(const char *path, const struct hm_resolve_opts *o,
		     int (*keep)(const struct hm_access *a, void *ctx), void *ctx,
		     struct hm_recording *rec, struct hm_err *err)
{
	struct hm_resolve_opts ro = *o;
	const struct hm_perfdata_stats *ps;
	struct hm_err perr = {0};
	int stream = !strcmp(path, "-"), rc;

	rec->path = path;
	ro.input = path;
	if (hm_perfdata_open(path, &rec->pd, err))
		return -1;
	if (!ro.osrelease)
		ro.osrelease = hm_perfdata_features(rec->pd)->osrelease;
	if (hm_resolver_open(&ro, &rec->resolver, err))
		return -1;
	hm_resolver_features(rec->resolver, hm_perfdata_features(rec->pd));
	/* the files the samples hit: their compressed debug files inflate during the maps pass */
	rec->prefetch = hm_debugfile_prefetch(NULL, hm_perfdata_features(rec->pd)->build_ids,
					      hm_perfdata_features(rec->pd)->nr_build_ids);
	/* with the maps, heap objects by allocation (resolve/alloc.h) */
	if (!stream && (rc = hm_maps_pass(path, track_map, rec->resolver, &rec->alloc, &perr)) < 0)
		stream = 1;	/* the sample pass reports what is wrong with the file */
	else if (!stream && rc && rec->alloc) {	/* allocations cut short would misname */
		if (hm_first_damage(path, err) == 0)
			*err = perr;
		return -1;
	}
	if (hm_resolver_verify(rec->resolver, &rec->kernel_warning, err))
		return -1;
	if (o->jobs > 2)	/* NULL for a pipe: read here */
		rec->ahead = hm_pd_ahead_start(rec->pd);
	rc = read_samples(rec, stream, keep, ctx, err);
	hm_pd_ahead_end(rec->ahead);	/* the reader's stats are read below */
	rec->ahead = NULL;
	if (rc)
		return -1;
	ps = hm_perfdata_stats(rec->pd);
	rec->lost = ps->lost + ps->lost_samples;
	rec->unknown_id = ps->unknown_id;
	warnings(rec);
	return 0;
}

/* load_file, with the debug files' prefetch ended on every way out */
static int load(const char *path, const struct hm_resolve_opts *o,
		int (*keep)(const struct hm_access *a, void *ctx), void *ctx,
		struct hm_recording *rec, struct hm_err *err)
{
	int rc = load_file(path, o, keep, ctx, rec, err);

	hm_debugfile_prefetch_end(rec->prefetch);
	rec->prefetch = NULL;
	return rc;
}

int hm_recording_load(const char *path, const struct hm_resolve_opts *o,
		      int (*keep)(const struct hm_access *a, void *ctx), void *ctx,
		      struct hm_recording *rec, struct hm_err *err)
{
	memset(rec, 0, sizeof(*rec));
	if (load(path, o, keep, ctx, rec, err)) {
		hm_recording_free(rec);
		return -1;
	}
	return 0;
}

int hm_recording_stream(const char *path, const struct hm_resolve_opts *o,
			int (*keep)(const struct hm_access *a, void *ctx), void *ctx,
			size_t batch, int (*flush)(const struct hm_access *acc, size_t n, void *arg),
			void *arg, struct hm_recording *rec, struct hm_err *err)
{
	int rc;

	memset(rec, 0, sizeof(*rec));
	rec->batch = batch ? batch : 1;
	rec->flush = flush;
	rec->prep = o->prep;
	rec->flush_arg = arg;
	if (o->jobs > 1 && o->flush_apart)
		rec->handoff = hm_handoff_start(rec->batch, flush, arg);	/* NULL: on this thread */
	rc = load(path, o, keep, ctx, rec, err);
	/* flush has seen everything before this returns: the caller frees what it kept */
	if (hm_handoff_end(rec->handoff) && !rc)
		rc = hm_err_set(err, HM_EXIT_ENV, "%s: out of memory", path);
	rec->handoff = NULL;
	return rc;
}

void hm_recording_free(struct hm_recording *rec)
{
	hm_order_free(rec->order);
	free(rec->acc);
	free(rec->spare);
	hm_watched_free(&rec->watched);
	hm_alloc_map_free(rec->alloc);
	if (rec->resolver)
		hm_resolver_close(rec->resolver);
	if (rec->pd)
		hm_perfdata_close(rec->pd);
	memset(rec, 0, sizeof(*rec));
}
