/* Per-thread argument blocks in one calloc'd array, written the way real code is: a
 * typedef'd struct of exactly 64 bytes, reached through a pointer into the array. Each
 * thread updates the first and last member of its own element. malloc aligns only to 16,
 * so when the array starts mid-line, element 0's last member and element 1's first share
 * a line: false sharing that "align the type to 64" alone cannot fix (the allocation must
 * be aligned too: aligned_alloc or posix_memalign). tests/unit/test_fixcheck.c uses its
 * types; the skew below puts the array where the published case had it.
 *
 * usage: heap_args [ITERATIONS] [SKEW|calloc]   (defaults 100000000, 48; calloc: the
 * array is calloc(2, 64) itself, mid-line where malloc puts it); prints the array's
 * address (tests/e2e/heap_fix.sh watches its elements there under setarch -R) */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pin.h"

typedef struct {
	long count;
	char name[48];
	long total;
} lreg_args;

static unsigned long iterations = 100000000UL;

static void *work(void *p)
{
	lreg_args *a = p;

	for (unsigned long i = 0; i < iterations; i++) {
		__atomic_fetch_add(&a->count, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&a->total, (long)i, __ATOMIC_RELAXED);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	/* SKEW "calloc": the array is the allocation itself, where malloc puts it */
	int direct = argc > 2 && !strcmp(argv[2], "calloc");
	unsigned long skew = argc > 2 && !direct ? strtoul(argv[2], NULL, 0) % 64 : 48;
	char *raw;
	lreg_args *args;
	pthread_t t[2];

	if (argc > 1)
		iterations = strtoul(argv[1], NULL, 0);
	/* calloc, then the array at `skew` bytes into a line, as a chunk header puts it */
	raw = direct ? calloc(2, sizeof(lreg_args)) : calloc(1, 2 * sizeof(lreg_args) + 128);
	if (!raw)
		return 1;
	args = direct ? (lreg_args *)raw
		      : (lreg_args *)(raw + ((64 - (uintptr_t)raw % 64) % 64) + skew);
	printf("args %p\n", (void *)args);
	fflush(stdout);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, work, &args[i]);
	for (int i = 0; i < 2; i++)
		pin(t[i], i);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("%ld %ld\n", args[0].count, args[1].count);
	free(raw);
	return 0;
}
