/* Per-thread statistics in one calloc'd array, as benchmarks and servers write them:
 * a typedef'd struct of 24 bytes, one element per worker, each worker counting into its
 * own element through a pointer. malloc aligns to 16 bytes, not to a cache line, so the
 * array starts wherever the heap puts it (often mid-line) and neighbouring elements
 * share lines: threads 0 and 1 write disjoint bytes of one line (false sharing). Only
 * the allocation says which element is whose: the type alone names both
 * "thread_arg_t.ops". docs/alloc.md uses it; tests/e2e/alloc.sh checks its names.
 *
 * usage: alloc_array [ITERATIONS]   (default 50000000); prints the array's address */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "pin.h"

#define NTHREADS 2

typedef struct {
	long ops;
	long bytes;
	int id;
} thread_arg_t;

static unsigned long iterations = 50000000UL;

/* Not inlined, as a statistics helper in another file would be: its stores happen on
 * every call. */
__attribute__((noinline)) static void account(thread_arg_t *st, long n)
{
	st->ops++;
	st->bytes += n;
}

static void *worker(void *p)
{
	thread_arg_t *st = p;

	for (unsigned long i = 0; i < iterations; i++)
		account(st, (long)(i & 63));
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[NTHREADS];
	thread_arg_t *args;

	if (argc > 1)
		iterations = strtoul(argv[1], NULL, 0);
	args = calloc(NTHREADS, sizeof(thread_arg_t));
	if (!args)
		return 1;
	printf("args %p size %zu\n", (void *)args, NTHREADS * sizeof(thread_arg_t));
	fflush(stdout);
	for (int i = 0; i < NTHREADS; i++) {
		args[i].id = i;
		pthread_create(&t[i], NULL, worker, &args[i]);
		pin(t[i], i);
	}
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	printf("%ld %ld\n", args[0].ops, args[1].ops);
	free(args);
	return 0;
}
