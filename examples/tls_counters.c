/* Per-thread counters in thread-local storage, as real code keeps statistics: each
 * thread bumps its own __thread nr_reads or nr_writes. Every thread has its own copy,
 * so nothing is shared; a report must never put two threads' copies on one line (a
 * timer sample knows only the offset from the thread pointer, %fs:-8, not the address).
 *
 * usage: tls_counters [ITERATIONS]   (default 100000000) */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "pin.h"

__thread long nr_reads, nr_writes;
static unsigned long iterations = 100000000UL;

static void *work(void *p)
{
	long writer = (long)p;

	for (unsigned long i = 0; i < iterations; i++) {
		__asm__ volatile("" ::: "memory");	/* one store per iteration */
		if (writer)
			nr_writes++;
		else
			nr_reads++;
	}
	return (void *)(writer ? nr_writes : nr_reads);
}

int main(int argc, char **argv)
{
	pthread_t t[2];
	void *ret[2];

	if (argc > 1)
		iterations = strtoul(argv[1], NULL, 0);
	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, work, (void *)i);
	for (int i = 0; i < 2; i++)
		pin(t[i], i);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], &ret[i]);
	printf("%ld %ld\n", (long)ret[0], (long)ret[1]);
	return 0;
}
