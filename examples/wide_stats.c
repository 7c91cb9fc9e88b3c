/* Per-thread statistics written the way real code is: a typedef'd struct, an array of
 * them calloc'd with one element per thread, each thread counting the packets it handles
 * and their bytes. gcc -O2 (12.2 here) turns `s->ops++; s->bytes += n;` into one 16-byte
 * load and one 16-byte store (movdqu, paddq, movups): a single access that covers both
 * members. Its report must show ops and bytes, each with its own count, not ops alone.
 * The elements are 24 bytes, so the two threads' elements share a line: false sharing
 * between stats[0].{ops,bytes} and stats[1].{ops,bytes}.
 *
 * usage: wide_stats [ITERATIONS]   (default 50000000) */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "pin.h"

typedef struct {
	unsigned long ops;
	unsigned long bytes;
	unsigned long errors;
} worker_stats;

static unsigned long iterations = 50000000UL;

/* A stand-in for parsing one packet: its length, from a few bytes of it. */
static __attribute__((noinline)) unsigned long handle(unsigned char *pkt, unsigned long i)
{
	pkt[i & 15] = (unsigned char)i;
	return 64 + (pkt[(i + 3) & 15] & 63);
}

static void *work(void *p)
{
	worker_stats *s = p;
	unsigned char pkt[16] = {0};

	for (unsigned long i = 0; i < iterations; i++) {
		unsigned long n = handle(pkt, i);

		s->ops++;
		s->bytes += n;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	worker_stats *stats;
	pthread_t t[2];

	if (argc > 1)
		iterations = strtoul(argv[1], NULL, 0);
	stats = calloc(2, sizeof(*stats));
	if (!stats)
		return 1;
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, work, &stats[i]);
	for (int i = 0; i < 2; i++)
		pin(t[i], i);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("%lu ops %lu bytes, %lu ops %lu bytes\n", stats[0].ops, stats[0].bytes,
	       stats[1].ops, stats[1].bytes);
	free(stats);
	return 0;
}
