/* A packed struct: `head` (thread 0) at offset 65 and `tail` (thread 1) at 121, which
 * straddles the line boundary at 128, share line 1. Without packed, head is aligned to
 * 72 (line 1) and tail to 128 (line 2): unpacking is the fix, and a person's first one.
 *
 * Build with -DFIXED for the fix the report prints: the same struct, not packed.
 *
 * usage: packed [ITERATIONS]   (default 100000000) */
#define _GNU_SOURCE
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "pin.h"

struct wire_record {
	char name[65];
	unsigned long head;		/* thread 0: bytes 65..72 */
	char body[48];
	unsigned long tail;		/* thread 1: bytes 121..128, across a line boundary */
}
#ifndef FIXED
__attribute__((packed))
#endif
;

struct wire_record rec __attribute__((aligned(64)));
static unsigned long iterations = 100000000UL;

/* the member's address, which a packed member does not give without a warning */
#define MEMBER(m) ((volatile unsigned long *)((char *)&rec + offsetof(struct wire_record, m)))

static void *t0(void *arg)
{
	volatile unsigned long *p = MEMBER(head);

	(void)arg;
	for (unsigned long i = 0; i < iterations; i++)
		*p += 1;
	return NULL;
}

static void *t1(void *arg)
{
	volatile unsigned long *p = MEMBER(tail);

	(void)arg;
	for (unsigned long i = 0; i < iterations; i++)
		*p += 1;
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
	printf("%lu %lu\n", rec.head, rec.tail);
	return 0;
}
