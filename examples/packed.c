/* A packed struct: `head` (thread 0) starts 57 bytes in and straddles the first line
 * boundary, so its last byte shares line 1 with `tail` (thread 1) at offset 120. Without
 * packed, head is aligned to 64 (line 1) and tail to 128 (line 2): unpacking is the fix,
 * where a padding edit on the packed layout is not.
 *
 * usage: packed [ITERATIONS]   (default 100000000) */
#define _GNU_SOURCE
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "pin.h"

struct wire_record {
	char name[57];
	unsigned long head;		/* thread 0: bytes 57..64 */
	char body[55];
	unsigned long tail;		/* thread 1: bytes 120..127 */
} __attribute__((packed));

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
