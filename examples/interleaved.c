/* A 4-field struct whose fields alternate between two threads: thread 0 writes f0 and f2,
 * thread 1 writes f1 and f3, all on one cache line. Moving one field (the one-pair fix)
 * leaves the line shared; the layout that fixes it groups each thread's fields and puts
 * the groups on separate lines (whatif --suggest).
 *
 * Build with -DFIXED for the fix the report prints: f0, f2, f1, f3 with f1 aligned to 64.
 *
 * usage: interleaved [ITERATIONS]   (default 100000000) */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "pin.h"

#ifdef FIXED
struct interleaved {
	unsigned long f0;		/* thread 0 */
	unsigned long f2;		/* thread 0 */
	unsigned long f1 __attribute__((aligned(64)));	/* thread 1 */
	unsigned long f3;		/* thread 1 */
};
#else
struct interleaved {
	unsigned long f0;		/* thread 0 */
	unsigned long f1;		/* thread 1 */
	unsigned long f2;		/* thread 0 */
	unsigned long f3;		/* thread 1 */
};
#endif

struct interleaved il;
static unsigned long iterations = 100000000UL;

static void *t0(void *arg)
{
	volatile struct interleaved *p = &il;

	(void)arg;
	for (unsigned long i = 0; i < iterations; i++) {
		p->f0 += 1;
		p->f2 += i;
	}
	return NULL;
}

static void *t1(void *arg)
{
	volatile struct interleaved *p = &il;

	(void)arg;
	for (unsigned long i = 0; i < iterations; i++) {
		p->f1 += 1;
		p->f3 += i;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b;

	if (argc > 1)
		iterations = strtoul(argv[1], NULL, 0);
	pthread_create(&a, NULL, t0, NULL);
	pthread_create(&b, NULL, t1, NULL);
	pin(a, 0);
	pin(b, 1);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("%lu %lu %lu %lu\n", il.f0, il.f1, il.f2, il.f3);
	return 0;
}
