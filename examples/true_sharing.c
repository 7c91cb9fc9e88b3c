/* Two threads increment the same counter: the bytes themselves are shared (true
 * sharing). Padding cannot help; per-thread counters summed at the end can.
 * usage: true_sharing [ITERATIONS] */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "pin.h"

struct shared_counter {
	unsigned long hits;	/* written by both threads */
	unsigned long pad[7];
};

struct shared_counter counter;
static unsigned long iterations = 200000000UL;

static void *bump(void *arg)
{
	volatile unsigned long *h = &counter.hits;

	(void)arg;
	for (unsigned long i = 0; i < iterations; i++)
		*h += 1;
	return NULL;
}


int main(int argc, char **argv)
{
	pthread_t a, b;

	if (argc > 1)
		iterations = strtoul(argv[1], NULL, 0);
	pthread_create(&a, NULL, bump, NULL);
	pthread_create(&b, NULL, bump, NULL);
	pin(a, 0);
	pin(b, 1);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("hits=%lu\n", counter.hits);
	return 0;
}
