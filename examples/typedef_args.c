/* Written the common C way: a typedef'd anonymous struct, a global array of it, one
 * element per thread, each thread bumping its own element's counter. The elements are
 * 16 bytes, so both sit on one cache line: false sharing between gargs[0].hits and
 * gargs[1].hits. The fix is to give each element its own line (align the type to 64),
 * which no reordering of its members can do.
 *
 * usage: typedef_args [ITERATIONS]   (default 100000000) */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "pin.h"

typedef struct {
	long hits;
	long misses;
} lreg_args;

lreg_args gargs[2];
static unsigned long iterations = 100000000UL;

static void *work(void *p)
{
	volatile lreg_args *a = p;

	for (unsigned long i = 0; i < iterations; i++)
		a->hits++;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[2];

	if (argc > 1)
		iterations = strtoul(argv[1], NULL, 0);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, work, &gargs[i]);
	for (int i = 0; i < 2; i++)
		pin(t[i], i);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("%ld %ld\n", gargs[0].hits, gargs[1].hits);
	return 0;
}
