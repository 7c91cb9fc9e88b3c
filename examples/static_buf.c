/* A function-static pointer to heap memory, allocated on the first call and reused by
 * every later one, as lazily built scratch tables are: tally(tid) bumps its thread's
 * element of one calloc'd array of 16-byte structs. Both elements lie on one cache line:
 * the threads' writes to hits of [0] and [1] are false sharing. The pointer is a local
 * static (tally::table), its memory a heap block only the allocation names.
 * docs/symbolize-data.md (the --stats table) and tests/e2e/alloc.sh use it.
 *
 * usage: static_buf [ITERATIONS]   (default 50000000); prints the block's address */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "pin.h"

#define NTHREADS 2

struct tally_slot {
	long hits;
	long last;
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct tally_slot *first;
static unsigned long iterations = 50000000UL;

__attribute__((noinline)) static struct tally_slot *tally(long tid, long v)
{
	static struct tally_slot *table;

	if (!table) {
		table = calloc(NTHREADS, sizeof(*table));
		first = table;
	}
	table[tid].hits++;
	table[tid].last = v;
	return table;
}

static void init(void)
{
	tally(0, 0);
	printf("table %p size %zu\n", (void *)first, NTHREADS * sizeof(*first));
	fflush(stdout);
}

static void *work(void *p)
{
	long tid = (long)p;

	pthread_once(&once, init);
	for (unsigned long i = 0; i < iterations; i++)
		tally(tid, (long)i);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[NTHREADS];

	if (argc > 1)
		iterations = strtoul(argv[1], NULL, 0);
	pthread_once(&once, init);
	for (long i = 0; i < NTHREADS; i++) {
		pthread_create(&t[i], NULL, work, (void *)i);
		pin(t[i], (int)i);
	}
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	printf("%ld %ld\n", first[0].hits, first[1].hits);
	free(first);
	return 0;
}
