#include "resolve/handoff.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/huge.h"

/* A flush hands on at least half a batch at once (load.c): slots for that much let the
 * reader go on while the consumer works through it. */
#define MAX_SLOTS HM_HANDOFF_MAX_SLOTS

struct slot {
	struct hm_access *acc;
	size_t n;
	const struct hm_access *src;	/* a gathered batch: src[k[i].idx], i < n; else NULL */
	const struct hm_okey *k;
};

struct hm_handoff {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t filled, freed;
	struct slot slot[MAX_SLOTS];
	struct hm_access *all;		/* the slots' accesses, made on first use */
	struct hm_access *own;		/* the consumer's chunk of a gathered batch */
	size_t nslots;
	size_t head, tail;	/* next to fill, next to consume: tail <= head <= tail + nslots */
	int ending, failed;
	hm_handoff_fn fn;
	void *arg;
};

/* A gathered batch to fn in chunks, as the producer would have handed it on */
static int gather(struct hm_handoff *h, const struct slot *s)
{
	if (!h->own && !(h->own = malloc(HM_HANDOFF_CHUNK * sizeof(*h->own))))
		return -1;
	for (size_t i = 0; i < s->n; i += HM_HANDOFF_CHUNK) {
		size_t m = s->n - i < HM_HANDOFF_CHUNK ? s->n - i : HM_HANDOFF_CHUNK;

		for (size_t x = 0; x < m; x++) {
			if (i + x + 8 < s->n)	/* the keys are in time, not batch, order */
				__builtin_prefetch(&s->src[s->k[i + x + 8].idx]);
			h->own[x] = s->src[s->k[i + x].idx];
		}
		if (h->fn(h->own, m, h->arg))
			return -1;
	}
	return 0;
}

static void *consume(void *p)
{
	struct hm_handoff *h = p;

	pthread_mutex_lock(&h->mu);
	for (;;) {
		while (h->tail == h->head && !h->ending)
			pthread_cond_wait(&h->filled, &h->mu);
		if (h->tail == h->head)
			break;	/* ending, and nothing left */
		struct slot *s = &h->slot[h->tail % h->nslots];
		int failed = h->failed;

		pthread_mutex_unlock(&h->mu);
		/* after a failure the rest is dropped, as the one-thread read stops there */
		if (!failed && (s->src ? gather(h, s) : h->fn(s->acc, s->n, h->arg)))
			failed = 1;
		pthread_mutex_lock(&h->mu);
		h->failed |= failed;
		h->tail++;
		pthread_cond_broadcast(&h->freed);
	}
	pthread_mutex_unlock(&h->mu);
	return NULL;
}

struct hm_handoff *hm_handoff_start(size_t batch, hm_handoff_fn fn, void *arg)
{
	struct hm_handoff *h = calloc(1, sizeof(*h));
	size_t want = (batch / 2 + HM_HANDOFF_CHUNK - 1) / HM_HANDOFF_CHUNK;

	if (!h)
		return NULL;
	h->nslots = want < 2 ? 2 : want > MAX_SLOTS ? MAX_SLOTS : want;
	h->fn = fn;
	h->arg = arg;
	pthread_mutex_init(&h->mu, NULL);
	pthread_cond_init(&h->filled, NULL);
	pthread_cond_init(&h->freed, NULL);
	if (pthread_create(&h->th, NULL, consume, h) == 0)
		return h;
	pthread_mutex_destroy(&h->mu);
	pthread_cond_destroy(&h->filled);
	pthread_cond_destroy(&h->freed);
	free(h);
	return NULL;
}

/* Waits for a free slot; 0 when there is one, -1 when fn has failed. */
static int wait_free(struct hm_handoff *h)
{
	int failed;

	pthread_mutex_lock(&h->mu);
	while (h->head - h->tail == h->nslots && !h->failed)
		pthread_cond_wait(&h->freed, &h->mu);
	failed = h->failed;
	pthread_mutex_unlock(&h->mu);
	return failed ? -1 : 0;
}

struct hm_access *hm_handoff_slot(struct hm_handoff *h)
{
	size_t bytes = h->nslots * HM_HANDOFF_CHUNK * sizeof(struct hm_access);

	if (!h->all) {	/* one array for all slots: big enough for 2 MB pages */
		if (!(h->all = malloc(bytes)))
			return NULL;
		hm_huge_hint(h->all, bytes);
		for (size_t i = 0; i < h->nslots; i++)
			h->slot[i].acc = h->all + i * HM_HANDOFF_CHUNK;
	}
	if (wait_free(h))
		return NULL;
	/* the slot is the producer's until head moves past it */
	return h->slot[h->head % h->nslots].acc;
}

static void post(struct hm_handoff *h)
{
	pthread_mutex_lock(&h->mu);
	h->head++;
	pthread_cond_signal(&h->filled);
	pthread_mutex_unlock(&h->mu);
}

void hm_handoff_commit(struct hm_handoff *h, size_t n)
{
	struct slot *s = &h->slot[h->head % h->nslots];

	s->n = n;
	s->src = NULL;
	post(h);
}

int hm_handoff_gather(struct hm_handoff *h, const struct hm_access *acc,
		      const struct hm_okey *k, size_t n)
{
	struct slot *s;

	if (!n)
		return 0;
	if (wait_free(h))
		return -1;
	s = &h->slot[h->head % h->nslots];
	s->src = acc;
	s->k = k;
	s->n = n;
	post(h);
	return 0;
}

int hm_handoff_idle(struct hm_handoff *h)
{
	int failed;

	pthread_mutex_lock(&h->mu);
	while (h->tail != h->head && !h->failed)
		pthread_cond_wait(&h->freed, &h->mu);
	failed = h->failed;
	pthread_mutex_unlock(&h->mu);
	return failed ? -1 : 0;
}

int hm_handoff_copy(struct hm_handoff *h, const struct hm_access *acc, size_t n)
{
	for (size_t i = 0; i < n; i += HM_HANDOFF_CHUNK) {
		size_t m = n - i < HM_HANDOFF_CHUNK ? n - i : HM_HANDOFF_CHUNK;
		struct hm_access *s = hm_handoff_slot(h);

		if (!s)
			return -1;
		memcpy(s, acc + i, m * sizeof(*s));
		hm_handoff_commit(h, m);
	}
	return 0;
}

int hm_handoff_end(struct hm_handoff *h)
{
	int failed;

	if (!h)
		return 0;
	pthread_mutex_lock(&h->mu);
	h->ending = 1;
	pthread_cond_signal(&h->filled);
	pthread_mutex_unlock(&h->mu);
	pthread_join(h->th, NULL);
	failed = h->failed;
	pthread_mutex_destroy(&h->mu);
	pthread_cond_destroy(&h->filled);
	pthread_cond_destroy(&h->freed);
	free(h->all);
	free(h->own);
	free(h);
	return failed ? -1 : 0;
}
