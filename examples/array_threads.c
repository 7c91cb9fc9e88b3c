/* An int array where thread i writes a[i]: the elements are 4 bytes, so all of them
 * share one cache line. Padding before one element does not help (there is one line of
 * them); the fix is a copy per thread on its own line (an array of line-sized slots).
 *
 * Build with -DFIXED for the fix the report prints: a copy per thread, each on its line.
 *
 * usage: array_threads [ITERATIONS]   (default 100000000) */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "pin.h"

#define THREADS 2

#ifdef FIXED
struct slot {
	int v;
} __attribute__((aligned(64)));
struct slot counts[THREADS];
#define COUNT(i) counts[i].v
#else
int counts[THREADS] __attribute__((aligned(64)));
#define COUNT(i) counts[i]
#endif
static unsigned long iterations = 100000000UL;

static void *worker(void *arg)
{
	volatile int *p = &COUNT((long)arg);

	for (unsigned long i = 0; i < iterations; i++)
		*p += 1;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[THREADS];

	if (argc > 1)
		iterations = strtoul(argv[1], NULL, 0);
	for (long i = 0; i < THREADS; i++) {
		pthread_create(&t[i], NULL, worker, (void *)i);
		pin(t[i], (int)i);
	}
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	printf("%d %d\n", COUNT(0), COUNT(1));
	return 0;
}
