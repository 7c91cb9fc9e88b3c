/* Two threads update different counters of one struct: the counters share a cache line,
 * so every increment steals the line from the other core (false sharing).
 * Build with -DPADDED to give each thread's counters their own 64-byte line.
 *
 * usage: false_sharing [ITERATIONS]   (default 200000000) */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "pin.h"

#ifdef PADDED
#define LINE_ALIGNED __attribute__((aligned(64)))
#else
#define LINE_ALIGNED
#endif

struct worker_stats {
	unsigned long ops;		/* written by thread 0 */
	unsigned long errors LINE_ALIGNED; /* written by thread 1 */
	unsigned long bytes;		/* written by thread 1 */
	unsigned int flags;		/* read by both */
};

struct worker_stats stats;
static unsigned long iterations = 200000000UL;

static void *count_ops(void *arg)
{
	volatile unsigned long *p = &stats.ops;

	(void)arg;
	for (unsigned long i = 0; i < iterations; i++)
		*p += 1;
	return NULL;
}

static void *count_errors(void *arg)
{
	volatile unsigned long *e = &stats.errors;
	volatile unsigned long *b = &stats.bytes;

	(void)arg;
	for (unsigned long i = 0; i < iterations; i++) {
		*e += 1;
		*b += i & 7;
	}
	return NULL;
}


int main(int argc, char **argv)
{
	pthread_t a, b;

	if (argc > 1)
		iterations = strtoul(argv[1], NULL, 0);
	pthread_create(&a, NULL, count_ops, NULL);
	pthread_create(&b, NULL, count_errors, NULL);
	pin(a, 0);
	pin(b, 1);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("ops=%lu errors=%lu bytes=%lu flags=%u\n", stats.ops, stats.errors, stats.bytes,
	       stats.flags);
	return 0;
}
