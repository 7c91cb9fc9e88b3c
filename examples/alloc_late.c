/* A worker thread allocates the object the others share, after the program started:
 * the first worker callocs a 16-byte stats block and publishes it, then it counts into
 * `produced` while the second worker counts into `consumed`, the next 8 bytes of the same
 * line (false sharing). The allocation happens in a thread created after recording
 * starts, so only probes that follow new threads see it (docs/alloc.md, Which threads).
 * tests/e2e/alloc.sh checks that the block is named by this calloc.
 *
 * usage: alloc_late [ITERATIONS]   (default 50000000); prints the block's address */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "pin.h"

struct queue_stats {
	long produced;
	long consumed;
};

static struct queue_stats *_Atomic shared;
static unsigned long iterations = 50000000UL;

/* Not inlined, as counters in another file would be: q is a typed parameter. */
__attribute__((noinline)) static void produce(struct queue_stats *q)
{
	q->produced++;
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void consume(struct queue_stats *q)
{
	q->consumed++;
	__asm__ volatile("" ::: "memory");
}

static void *producer(void *p)
{
	struct queue_stats *q = calloc(1, sizeof(*q));

	(void)p;
	if (!q)
		exit(1);
	printf("stats %p size %zu\n", (void *)q, sizeof(*q));
	fflush(stdout);
	atomic_store(&shared, q);
	for (unsigned long i = 0; i < iterations; i++)
		produce(q);
	return NULL;
}

static void *consumer(void *p)
{
	struct queue_stats *q;

	(void)p;
	while (!(q = atomic_load(&shared)))
		;
	for (unsigned long i = 0; i < iterations; i++)
		consume(q);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[2];

	if (argc > 1)
		iterations = strtoul(argv[1], NULL, 0);
	pthread_create(&t[0], NULL, producer, NULL);
	pthread_create(&t[1], NULL, consumer, NULL);
	for (int i = 0; i < 2; i++)
		pin(t[i], i);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("%ld %ld\n", shared->produced, shared->consumed);
	free(shared);
	return 0;
}
