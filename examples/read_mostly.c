/* Two threads read the same configuration on every iteration and write only their own
 * counters, each on its own cache line: read-mostly sharing, nothing to fix.
 * usage: read_mostly [ITERATIONS] */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "pin.h"

struct config {
	unsigned long limit;
	unsigned long scale;
	unsigned int mode;
};

struct per_thread {
	unsigned long sum;
} __attribute__((aligned(64)));

struct config cfg = {1000, 3, 1};
struct per_thread results[2];
static unsigned long iterations = 200000000UL;

static void *work(void *arg)
{
	volatile struct config *c = &cfg;
	volatile unsigned long *sum = &results[(long)arg].sum;

	unsigned long acc = 0;

	/* Mostly reads of the shared config; the private sum is written now and then. */
	for (unsigned long i = 0; i < iterations; i++) {
		acc += c->limit;
		acc ^= c->scale;
		acc += c->mode;
		if ((i & 1023) == 0)
			*sum = acc;
	}
	return NULL;
}


int main(int argc, char **argv)
{
	pthread_t a, b;

	if (argc > 1)
		iterations = strtoul(argv[1], NULL, 0);
	pthread_create(&a, NULL, work, (void *)0L);
	pthread_create(&b, NULL, work, (void *)1L);
	pin(a, 0);
	pin(b, 1);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("%lu %lu\n", results[0].sum, results[1].sum);
	return 0;
}
