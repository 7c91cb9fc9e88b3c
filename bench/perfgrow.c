/* perfgrow IN OUT N [--span-ns NS]: a recording grown to exactly N samples, to measure
 * what large recordings cost. OUT holds IN's non-sample records once, then IN's samples
 * in file order, repeated until N are written; repetition k's sample times are shifted by
 * k spans, so time keeps increasing. EXIT records go last, shifted into the last
 * repetition, so that no sample comes after its thread's exit (a reader may forget an
 * exited thread). A FINISHED_ROUND ends each repetition so that perf, which sorts by time,
 * holds at most two repetitions in memory. Memory stays constant whatever N: when one
 * repetition's records take at most CACHE_MAX bytes, the first one written is read back
 * from OUT and copied with its times patched (reopening a small IN per repetition costs
 * more than the copy); otherwise IN is read again for every repetition. A hitmap
 * recording's record index (core/perfdata_index.c) is written anew for OUT. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/perfdata.h"

#define CACHE_MAX (256u << 20)

enum pass { PASS_PREFIX, PASS_SAMPLES, PASS_EXITS };

/* Repetition 0's sample records as written, and where each one's time field is. */
struct cache {
	uint8_t *buf;
	size_t len;
	uint8_t *time_off;		/* per sample: offset of its time, 0 without TIME */
	uint64_t nr, cap;
	int off;			/* too large, or no room: read IN again instead */
};

struct grow {
	const char *in, *out;
	uint64_t n, span;
	uint64_t nr_in, nr_exit, tmin, tmax;	/* IN's samples, EXITs and sample times */
	uint64_t written, reps;
	struct hm_perfdata *pd;		/* the scan's reader: attrs and features for OUT */
	struct hm_perfdata_writer *w;
	struct cache c;
};

static int usage(void)
{
	fprintf(stderr, "usage: perfgrow IN OUT N [--span-ns NS]  (N: samples to write, >= 1)\n");
	return 1;
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || end == s || *end || *s == '-' ? -1 : 0;
}

static int parse_args(int argc, char **argv, struct grow *g)
{
	int pos = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--span-ns")) {
			if (++i == argc || parse_u64(argv[i], &g->span) || !g->span)
				return -1;
		} else if (pos == 0) {
			g->in = argv[i], pos++;
		} else if (pos == 1) {
			g->out = argv[i], pos++;
		} else if (pos == 2 && !parse_u64(argv[i], &g->n) && g->n) {
			pos++;
		} else {
			return -1;
		}
	}
	return pos == 3 ? 0 : -1;
}

/* Counts IN's samples and EXITs and finds the time span; keeps the reader open, since in
 * pipe mode the attrs are known only once every record has been read. */
static int scan(struct grow *g, struct hm_err *err)
{
	struct hm_perf_event ev;
	int rc;

	if (hm_perfdata_open(g->in, &g->pd, err))
		return -1;
	g->tmin = UINT64_MAX;
	while ((rc = hm_perfdata_next(g->pd, &ev, err)) > 0) {
		if (ev.type == PERF_RECORD_EXIT)
			g->nr_exit++;
		if (ev.type != PERF_RECORD_SAMPLE)
			continue;
		g->nr_in++;
		if (ev.sample.time < g->tmin)
			g->tmin = ev.sample.time;
		if (ev.sample.time > g->tmax)
			g->tmax = ev.sample.time;
	}
	if (rc < 0)
		return -1;
	if (!g->nr_in)
		return hm_err_set(err, HM_EXIT_INPUT, "%s: no samples to repeat: record a workload "
				  "that runs long enough to be sampled", g->in);
	/* One mean sample interval beyond the last sample, so repetitions do not overlap. */
	if (!g->span) {
		uint64_t range = g->tmax - g->tmin;

		g->span = range + (g->nr_in > 1 ? range / (g->nr_in - 1) : 0) + 1;
	}
	return 0;
}

static int create_out(struct grow *g, struct hm_err *err)
{
	uint32_t nr = hm_perfdata_nr_attrs(g->pd);
	struct hm_perf_attr *attrs;
	const uint64_t *off;
	uint64_t nr_off;
	struct stat a, b;
	int rc;

	if (!stat(g->in, &a) && !stat(g->out, &b) && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
		return hm_err_set(err, HM_EXIT_USAGE, "%s: OUT is IN: pass another output file",
				  g->out);
	if (!(attrs = calloc(nr ? nr : 1, sizeof(*attrs))))
		return hm_err_set(err, HM_EXIT_ENV, "%s: out of memory", g->out);
	for (uint32_t i = 0; i < nr; i++)
		attrs[i] = *hm_perfdata_attr(g->pd, i);
	rc = hm_perfdata_create(g->out, attrs, nr, 0, &g->w, err);
	free(attrs);
	/* OUT keeps IN's record index (a hitmap recording's), listing the same events' samples */
	if (rc == 0 && hm_perfdata_index(g->pd, &off, &nr_off)) {
		uint8_t *listed = calloc(nr ? nr : 1, 1);

		if (!listed)
			return hm_err_set(err, HM_EXIT_ENV, "%s: out of memory", g->out);
		for (uint32_t i = 0; i < nr; i++)
			listed[i] = (uint8_t)hm_perfdata_index_lists(g->pd, i);
		hm_perfdata_index_samples(g->w, listed);
		free(listed);
	}
	return rc;
}

/* Where the writer puts a sample's time: after the header and the IDENTIFIER, IP and TID
 * fields, the ones that precede TIME in the kernel's order. */
static uint8_t time_offset(const struct hm_perf_attr *a)
{
	uint64_t t = a ? a->attr.sample_type : 0;
	uint64_t before = t & (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID);

	return t & PERF_SAMPLE_TIME ? (uint8_t)(8 + 8 * __builtin_popcountll(before)) : 0;
}

static void cache_note(struct cache *c, const struct hm_perf_attr *a)
{
	if (c->off)
		return;
	if (c->nr == c->cap) {
		uint64_t cap = c->cap ? c->cap * 2 : 4096;
		uint8_t *p = cap <= CACHE_MAX / 16 ? realloc(c->time_off, cap) : NULL;

		if (!p) {
			c->off = 1;
			return;
		}
		c->time_off = p;
		c->cap = cap;
	}
	c->time_off[c->nr++] = time_offset(a);
}

/* One record of pass p, or none; 1 when N samples are written. */
static int copy_event(struct grow *g, enum pass p, uint64_t shift, struct hm_perf_event *ev,
		      struct hm_err *err)
{
	int is_sample = ev->type == PERF_RECORD_SAMPLE, is_exit = ev->type == PERF_RECORD_EXIT;

	if (p == PASS_PREFIX ? is_sample || is_exit : p == PASS_SAMPLES ? !is_sample : !is_exit)
		return 0;
	if (is_sample) {
		ev->sample.time += shift;
		if (g->reps == 0)
			cache_note(&g->c, ev->attr);
	} else if (is_exit) {
		ev->task.time += shift;
		ev->sid.time += ev->has_sid ? shift : 0;
	}
	if (hm_perfdata_write(g->w, ev, err))
		return -1;
	return is_sample && ++g->written == g->n;
}

/* Reads IN once more and writes what pass p takes from it. */
static int copy_pass(struct grow *g, enum pass p, uint64_t shift, struct hm_err *err)
{
	struct hm_perfdata *pd;
	struct hm_perf_event ev;
	int rc;

	if (hm_perfdata_open(g->in, &pd, err))
		return -1;
	while ((rc = hm_perfdata_next(pd, &ev, err)) > 0)
		if ((rc = copy_event(g, p, shift, &ev, err)) != 0)
			break;
	hm_perfdata_close(pd);
	return rc < 0 ? -1 : 0;
}

/* Reads back the records written since data byte `from`: they end the file once synced.
 * Any failure only means IN is read again for each repetition. */
static int cache_load(struct grow *g, uint64_t from, struct hm_err *err)
{
	struct cache *c = &g->c;
	struct stat st;
	int fd;

	if (hm_perfdata_sync(g->w, err))
		return -1;
	c->len = hm_perfdata_written(g->w) - from;
	if (c->off || c->nr != g->nr_in || c->len > CACHE_MAX || stat(g->out, &st) ||
	    (uint64_t)st.st_size < c->len || !(c->buf = malloc(c->len ? c->len : 1)))
		return 0;
	fd = open(g->out, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || pread(fd, c->buf, c->len, st.st_size - (off_t)c->len) != (ssize_t)c->len) {
		free(c->buf);
		c->buf = NULL;
	}
	if (fd >= 0)
		close(fd);
	return 0;
}

/* The cached repetition, each time one span later than the last. */
static int cache_rep(struct grow *g, struct hm_err *err)
{
	struct cache *c = &g->c;
	uint64_t i = 0;

	for (size_t at = 0; at + 8 <= c->len && g->written < g->n;) {
		struct perf_event_header h;

		memcpy(&h, c->buf + at, sizeof(h));
		if (h.size < sizeof(h) || h.size > c->len - at)
			return hm_err_set(err, HM_EXIT_ENV, "%s: records read back are corrupt: "
					  "check that nothing else writes the file", g->out);
		if (h.type == PERF_RECORD_SAMPLE && i < c->nr) {
			uint8_t o = c->time_off[i++];
			uint64_t t;

			if (o && o + 8u <= h.size) {
				memcpy(&t, c->buf + at + o, 8);
				t += g->span;
				memcpy(c->buf + at + o, &t, 8);
			}
			g->written++;
		}
		if (hm_perfdata_write_raw(g->w, c->buf + at, h.size, err))
			return -1;
		at += h.size;
	}
	return 0;
}

static int first_rep(struct grow *g, struct hm_err *err)
{
	uint64_t from;

	if (hm_perfdata_sync(g->w, err))
		return -1;
	from = hm_perfdata_written(g->w);
	if (copy_pass(g, PASS_SAMPLES, 0, err))
		return -1;
	return g->written < g->n ? cache_load(g, from, err) : 0;
}

static int finished_round(struct grow *g, struct hm_err *err)
{
	struct perf_event_header h = {HM_PERF_RECORD_FINISHED_ROUND, 0, sizeof(h)};

	return hm_perfdata_write_raw(g->w, &h, sizeof(h), err);
}

static int next_rep(struct grow *g, struct hm_err *err)
{
	uint64_t before = g->written;
	int rc;

	if (g->reps && g->span > (UINT64_MAX - g->tmax) / g->reps)
		return hm_err_set(err, HM_EXIT_USAGE, "%s: times overflow after %" PRIu64
				  " repetitions: pass a smaller N or --span-ns", g->out, g->reps);
	if (g->reps == 0)
		rc = first_rep(g, err);
	else if (g->c.buf)
		rc = cache_rep(g, err);
	else
		rc = copy_pass(g, PASS_SAMPLES, g->reps * g->span, err);
	if (rc || finished_round(g, err))
		return -1;
	if (g->written == before)
		return hm_err_set(err, HM_EXIT_INPUT, "%s: changed while being read: copy it "
				  "somewhere stable first", g->in);
	return 0;
}

static int grow(struct grow *g, struct hm_err *err)
{
	if (scan(g, err) || create_out(g, err) || copy_pass(g, PASS_PREFIX, 0, err))
		return -1;
	for (g->reps = 0; g->written < g->n; g->reps++)
		if (next_rep(g, err))
			return -1;
	if (g->nr_exit && copy_pass(g, PASS_EXITS, (g->reps - 1) * g->span, err))
		return -1;
	return hm_perfdata_finish(g->w, hm_perfdata_features(g->pd), err);
}

int main(int argc, char **argv)
{
	struct grow g = {0};
	struct hm_err err = {0};
	struct timespec t0, t1;
	struct stat st;
	int rc;

	if (parse_args(argc, argv, &g))
		return usage();
	if (!strcmp(g.in, "-") || !strcmp(g.out, "-")) {
		fprintf(stderr, "perfgrow: IN and OUT must be files, not '-': IN is read several "
			"times and OUT read back; save a pipe to a file first\n");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = grow(&g, &err);
	hm_perfdata_writer_close(g.w);
	hm_perfdata_close(g.pd);
	free(g.c.buf);
	free(g.c.time_off);
	if (rc) {
		fprintf(stderr, "perfgrow: %s\n", err.msg);
		return err.code ? err.code : 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (stat(g.out, &st))
		st.st_size = 0;
	printf("perfgrow: %s: %" PRIu64 " samples (%" PRIu64 " repetitions of %" PRIu64
	       ", span %" PRIu64 " ns), %lld bytes, %.2f s\n", g.out, g.written, g.reps, g.nr_in,
	       g.span, (long long)st.st_size,
	       (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	return 0;
}
