/* Snapshots the way real code takes them: each thread fills its calloc'd record_t through
 * a typed pointer, then copies its used part into its calloc'd snapshot with memcpy, which
 * a reader checks; the size
 * is known only at run time, so the copy is libc's (__memmove_*: 32-byte vector loads
 * and stores over the record). libc has no types
 * for those accesses; the report names them from the record_t objects the thread's own
 * stores (cur) and check's loads (the snapshots) typed, base and size known, and credits
 * each member a copy covers: seq, sum, used, vals[k].
 *
 * usage: lib_copy [ITERATIONS]   (default 20000000) */
#define _GNU_SOURCE
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pin.h"

#define NVALS 30

typedef struct {
	unsigned long seq;
	unsigned long sum;
	unsigned long used;		/* vals filled so far */
	long vals[NVALS];
} record_t;

static unsigned long iterations = 20000000UL;

/* A snapshot read back: its sequence number and first and last values. */
static __attribute__((noinline)) unsigned long check(const record_t *h)
{
	return h->seq + h->sum + (unsigned long)h->vals[0] + (unsigned long)h->vals[NVALS - 1];
}

/* Fills the next value of cur, snapshots it into snap and reads the snapshot back. */
static __attribute__((noinline)) unsigned long take(record_t *cur, record_t *snap,
						      unsigned long i)
{
	cur->seq++;
	cur->sum += i;
	cur->vals[i % NVALS] = (long)i;
	if (cur->used < NVALS)
		cur->used++;
	memcpy(snap, cur, offsetof(record_t, vals) + cur->used * sizeof(cur->vals[0]));
	return check(snap);
}

static void *work(void *p)
{
	record_t *cur = calloc(1, sizeof(*cur)), *snap = calloc(1, sizeof(*snap));
	unsigned long check = 0;

	(void)p;
	if (!cur || !snap)
		return NULL;
	for (unsigned long i = 0; i < iterations; i++)
		check += take(cur, snap, i);
	free(snap);
	free(cur);
	return (void *)check;
}

int main(int argc, char **argv)
{
	pthread_t t[2];
	void *r[2];

	if (argc > 1)
		iterations = strtoul(argv[1], NULL, 0);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, work, NULL);
	for (int i = 0; i < 2; i++)
		pin(t[i], i);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], &r[i]);
	printf("%lu %lu\n", (unsigned long)r[0], (unsigned long)r[1]);
	return 0;
}
