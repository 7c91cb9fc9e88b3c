/* Per-thread slots of a malloc'd int array behind a global pointer, as counters are
 * often kept: `int *slots = malloc(...)` at start, each thread doing `slots[tid]++`.
 * The slots are 4 bytes apart, so both threads write one cache line (false sharing);
 * no struct type says whose slot is whose, only the allocation and the index do.
 * docs/symbolize-data.md (the --stats table) and tests/e2e/alloc.sh use it.
 *
 * usage: heap_slots [ITERATIONS]   (default 100000000); prints the array's address */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "pin.h"

#define NTHREADS 2

int *slots;
static unsigned long iterations = 100000000UL;

static void *work(void *p)
{
	long tid = (long)p;

	for (unsigned long i = 0; i < iterations; i++) {
		slots[tid]++;
		__asm__ volatile("" ::: "memory");	/* a store per iteration */
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[NTHREADS];

	if (argc > 1)
		iterations = strtoul(argv[1], NULL, 0);
	slots = malloc(NTHREADS * sizeof(*slots));
	if (!slots)
		return 1;
	for (int i = 0; i < NTHREADS; i++)
		slots[i] = 0;
	printf("slots %p size %zu\n", (void *)slots, NTHREADS * sizeof(*slots));
	fflush(stdout);
	for (long i = 0; i < NTHREADS; i++) {
		pthread_create(&t[i], NULL, work, (void *)i);
		pin(t[i], (int)i);
	}
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	printf("%d %d\n", slots[0], slots[1]);
	free(slots);
	return 0;
}
