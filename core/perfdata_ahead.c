#include "core/perfdata_ahead.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/perfdata_int.h"

#define BLOCK_EVENTS 1024
#define BLOCK_BYTES (1u << 20)	/* records' bytes; more than the largest record (64 KiB) */
#define BLOCKS 8		/* 12 MB in flight with the events */

struct block {
	struct hm_perf_event ev[BLOCK_EVENTS];
	uint8_t *bytes;
	size_t nev, used;
	int last, last_rc;	/* last: the read ended after these events, with last_rc */
	struct hm_err err;
};

struct hm_pd_ahead {
	struct hm_perfdata *pd;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t filled, freed;
	struct block *blk;
	size_t head, tail;	/* next to fill, next to read: tail <= head <= tail + BLOCKS */
	int stop;
	struct block *cur;	/* blk[tail] once filled, being read; NULL before */
	size_t at;		/* the next event in cur */
};

/* Points what pointed into the reader's copy of the record [from, from + len) at to. */
static const void *moved(const void *p, const uint8_t *from, size_t len, uint8_t *to)
{
	const uint8_t *q = p;

	return q && q >= from && q < from + len ? to + (q - from) : p;
}

#define MOVE(field) ((field) = moved((field), from, len, to))

static void rebase(struct hm_perf_event *ev, const uint8_t *from, size_t len, uint8_t *to)
{
	if (ev->type == PERF_RECORD_SAMPLE) {
		struct hm_perf_sample *s = &ev->sample;

		MOVE(s->read.values);
		MOVE(s->callchain);
		MOVE(s->raw);
		MOVE(s->branch);
		MOVE(s->branch_counters);
		MOVE(s->regs_user.regs);
		MOVE(s->regs_intr.regs);
		MOVE(s->stack);
		MOVE(s->aux);
	} else if (ev->type == PERF_RECORD_MMAP || ev->type == PERF_RECORD_MMAP2) {
		MOVE(ev->mmap.filename);
		MOVE(ev->mmap.extra);
	} else if (ev->type == PERF_RECORD_COMM) {
		MOVE(ev->comm.comm);
	}
}

/* One block from the file: full, or the last. */
static void fill(struct hm_pd_ahead *a, struct block *b)
{
	b->nev = b->used = 0;
	b->last = 0;
	while (b->nev < BLOCK_EVENTS && BLOCK_BYTES - b->used >= HM_PD_REC_MAX) {
		struct hm_perf_event *ev = &b->ev[b->nev];
		int rc = hm_perfdata_next(a->pd, ev, &b->err);
		size_t len;

		if (rc <= 0) {
			b->last = 1;
			b->last_rc = rc;
			return;
		}
		len = ev->size + 8u;	/* the record and its 8 zero bytes */
		memcpy(b->bytes + b->used, a->pd->rec, len);
		rebase(ev, (const uint8_t *)a->pd->rec, len, b->bytes + b->used);
		b->used += (len + 7) & ~(size_t)7;
		b->nev++;
	}
}

static void *read_ahead(void *p)
{
	struct hm_pd_ahead *a = p;

	for (;;) {
		struct block *b;

		pthread_mutex_lock(&a->mu);
		while (a->head - a->tail == BLOCKS && !a->stop)
			pthread_cond_wait(&a->freed, &a->mu);
		if (a->stop) {
			pthread_mutex_unlock(&a->mu);
			return NULL;
		}
		b = &a->blk[a->head % BLOCKS];	/* the thread's until head moves past it */
		pthread_mutex_unlock(&a->mu);
		fill(a, b);
		pthread_mutex_lock(&a->mu);
		a->head++;
		pthread_cond_signal(&a->filled);
		pthread_mutex_unlock(&a->mu);
		if (b->last)
			return NULL;
	}
}

struct hm_pd_ahead *hm_pd_ahead_start(struct hm_perfdata *pd)
{
	struct hm_pd_ahead *a;
	size_t i;

	if (hm_perfdata_is_pipe(pd) || !(a = calloc(1, sizeof(*a))))
		return NULL;
	a->pd = pd;
	if (!(a->blk = calloc(BLOCKS, sizeof(*a->blk))))
		goto fail;
	for (i = 0; i < BLOCKS; i++)
		if (!(a->blk[i].bytes = malloc(BLOCK_BYTES)))
			goto fail;
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->filled, NULL);
	pthread_cond_init(&a->freed, NULL);
	if (pthread_create(&a->th, NULL, read_ahead, a) == 0)
		return a;
	pthread_mutex_destroy(&a->mu);
	pthread_cond_destroy(&a->filled);
	pthread_cond_destroy(&a->freed);
fail:
	for (i = 0; a->blk && i < BLOCKS; i++)
		free(a->blk[i].bytes);
	free(a->blk);
	free(a);
	return NULL;
}

int hm_pd_ahead_next(struct hm_pd_ahead *a, const struct hm_perf_event **ev,
		     struct hm_err *err)
{
	for (;;) {
		struct block *b = a->cur;

		if (b && a->at < b->nev) {	/* the reader's block: no lock */
			*ev = &b->ev[a->at++];
			return 1;
		}
		if (b && b->last) {
			if (b->last_rc < 0 && err)
				*err = b->err;
			return b->last_rc;	/* again on every later call */
		}
		pthread_mutex_lock(&a->mu);
		if (b) {	/* done with it: the thread's again */
			a->tail++;
			pthread_cond_signal(&a->freed);
		}
		while (a->tail == a->head)
			pthread_cond_wait(&a->filled, &a->mu);
		pthread_mutex_unlock(&a->mu);
		a->cur = &a->blk[a->tail % BLOCKS];	/* filled: ours until tail moves */
		a->at = 0;
	}
}

void hm_pd_ahead_end(struct hm_pd_ahead *a)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->mu);
	a->stop = 1;
	pthread_cond_signal(&a->freed);
	pthread_mutex_unlock(&a->mu);
	pthread_join(a->th, NULL);
	pthread_mutex_destroy(&a->mu);
	pthread_cond_destroy(&a->filled);
	pthread_cond_destroy(&a->freed);
	for (size_t i = 0; i < BLOCKS; i++)
		free(a->blk[i].bytes);
	free(a->blk);
	free(a);
}
