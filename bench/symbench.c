/* symbench FILE: symbolization throughput on one thread. It opens a resolver as
 * hm_recording_load does (the address spaces from every MMAP record first, in time
 * order), then resolves every sample of FILE twice with that one resolver: cold (empty
 * caches, so each distinct ip and module is looked up once) and warm (caches filled).
 * Samples are read in batches with their registers copied; only the loop of
 * hm_resolver_sample calls over a batch is timed, not the reading. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "resolve/load.h"
#include "resolve/resolve.h"
#include "core/hash.h"

#define BATCH 4096
#define MAX_REGS 64

struct batch {
	struct hm_perf_event ev[BATCH];
	uint64_t regs[BATCH][2][MAX_REGS];	/* user, intr */
	struct hm_access acc[BATCH];
	size_t n;
};

struct pass {
	uint64_t samples, named, with_addr;
	double wall, cpu;			/* seconds inside hm_resolver_sample */
};

static double now(clockid_t clk)
{
	struct timespec t;

	clock_gettime(clk, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static void track_map(const struct hm_perf_event *ev, void *r)
{
	hm_resolver_track(r, ev);
}

static void copy_regs(struct hm_perf_regs *r, uint64_t *to)
{
	uint32_t nr = r->nr < MAX_REGS ? r->nr : MAX_REGS;

	if (r->regs)
		memcpy(to, r->regs, nr * sizeof(*to));
	r->nr = nr;
	r->regs = r->regs ? to : NULL;
}

/* A copy that outlives the reader's record: registers kept, other arrays dropped (the
 * resolver reads none of them). */
static void keep_sample(struct batch *b, const struct hm_perf_event *ev)
{
	struct hm_perf_event *e = &b->ev[b->n];
	struct hm_perf_sample *s = &e->sample;

	*e = *ev;
	copy_regs(&s->regs_user, b->regs[b->n][0]);
	copy_regs(&s->regs_intr, b->regs[b->n][1]);
	s->read.nr = 0, s->read.values = NULL;
	s->nr_callchain = 0, s->callchain = NULL;
	s->raw_size = 0, s->raw = NULL;
	s->nr_branch = 0, s->branch = NULL, s->branch_counters = NULL;
	s->stack_size = s->stack_dyn_size = 0, s->stack = NULL;
	s->aux_size = 0, s->aux = NULL;
	b->n++;
}

static void resolve_batch(struct hm_resolver *r, struct batch *b, struct pass *p)
{
	double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_THREAD_CPUTIME_ID);

	for (size_t i = 0; i < b->n; i++)
		hm_resolver_sample(r, &b->ev[i], &b->acc[i]);
	p->cpu += now(CLOCK_THREAD_CPUTIME_ID) - c0;
	p->wall += now(CLOCK_MONOTONIC) - w0;
	for (size_t i = 0; i < b->n; i++) {
		enum hm_method m = b->acc[i].method;

		p->with_addr += b->acc[i].s.addr != 0;
		p->named += m == HM_M_GLOBAL || m == HM_M_TLS || m == HM_M_STACK || m == HM_M_HEAP;
	}
	p->samples += b->n;
	b->n = 0;
}

/* Resolves every sample of path; ips (may be NULL) collects the distinct ones. */
static int run_pass(const char *path, struct hm_resolver *r, struct batch *b,
		    struct hm_map64 *ips, struct pass *p, struct hm_err *err)
{
	struct hm_perfdata *pd;
	struct hm_perf_event ev;
	int rc;

	if (hm_perfdata_open(path, &pd, err))
		return -1;
	while ((rc = hm_perfdata_next(pd, &ev, err)) > 0) {
		if (ev.type != PERF_RECORD_SAMPLE)
			continue;
		if (ips && !hm_map64_get(ips, ev.sample.ip + 1))
			hm_map64_put(ips, ev.sample.ip + 1, (void *)1);
		keep_sample(b, &ev);
		if (b->n == BATCH)
			resolve_batch(r, b, p);
	}
	if (b->n)
		resolve_batch(r, b, p);
	hm_perfdata_close(pd);
	return rc;
}

static int open_resolver(const char *path, struct hm_resolver **r, struct hm_err *err)
{
	struct hm_resolve_opts ro = {0};
	struct hm_perfdata *pd;
	int rc;

	if (hm_perfdata_open(path, &pd, err))
		return -1;
	ro.osrelease = hm_perfdata_features(pd)->osrelease;
	rc = hm_resolver_open(&ro, r, err);
	if (rc == 0)
		hm_resolver_features(*r, hm_perfdata_features(pd));
	hm_perfdata_close(pd);
	return rc == 0 && hm_recording_maps(path, track_map, *r, err) >= 0 ? 0 : -1;
}

static void print_pass(const char *name, const struct pass *p)
{
	char key[32];

	snprintf(key, sizeof(key), "%s_s", name);
	printf("%-14s %.3f\n", key, p->cpu);
	snprintf(key, sizeof(key), "%s_wall_s", name);
	printf("%-14s %.3f\n", key, p->wall);
	snprintf(key, sizeof(key), "%s_per_s", name);
	printf("%-14s %.0f\n", key, p->cpu > 0 ? p->samples / p->cpu : 0);
}

static int bench(const char *path, struct hm_err *err)
{
	struct hm_resolver *r = NULL;
	struct batch *b = calloc(1, sizeof(*b));
	struct pass cold = {0}, warm = {0};
	struct hm_map64 ips;
	double t0 = now(CLOCK_MONOTONIC), setup;
	int rc;

	hm_map64_init(&ips);
	if (!b)
		return hm_err_set(err, HM_EXIT_ENV, "out of memory");
	rc = open_resolver(path, &r, err);
	setup = now(CLOCK_MONOTONIC) - t0;
	if (rc == 0)
		rc = run_pass(path, r, b, &ips, &cold, err);
	if (rc == 0)
		rc = run_pass(path, r, b, NULL, &warm, err);
	if (rc == 0 && !cold.samples)
		rc = hm_err_set(err, HM_EXIT_INPUT, "%s: no samples: record a workload that runs "
				"long enough to be sampled", path);
	if (rc == 0) {
		printf("file           %s\n", path);
		printf("samples        %" PRIu64 "\n", cold.samples);
		printf("distinct_ips   %zu\n", ips.len);
		printf("setup_s        %.3f\n", setup);
		print_pass("cold", &cold);
		print_pass("warm", &warm);
		printf("with_addr      %.4f\n", (double)warm.with_addr / warm.samples);
		printf("named          %.4f\n", (double)warm.named / warm.samples);
		/* Timer samples whose access is the instruction before ip, found by decoding the
		 * function from its start (both passes count). */
		printf("skid           %.4f\n", (double)hm_resolver_stats(r)->skid /
		       (cold.samples + warm.samples));
	}
	hm_resolver_close(r);
	hm_map64_free(&ips);
	free(b);
	return rc;
}

int main(int argc, char **argv)
{
	struct hm_err err = {0};

	if (argc != 2 || !strcmp(argv[1], "-")) {
		fprintf(stderr, "usage: symbench FILE  (a perf.data file, read three times)\n");
		return 1;
	}
	if (bench(argv[1], &err)) {
		fprintf(stderr, "symbench: %s\n", err.msg);
		return err.code ? err.code : 2;
	}
	return 0;
}
