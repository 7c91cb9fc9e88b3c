/* Three structs, each on a cache line of its own, each shared by a pair of threads: the
 * first thread of pair k writes pairs[k].a, the second pairs[k].b (false sharing, three
 * times). Six ranges: more than x86's four debug registers, so `record --confirm`
 * rotates them (docs/report.md, "Confirmation by watchpoints").
 *
 * usage: confirm_rotate spin N    each thread stores N times as fast as it can
 *        confirm_rotate turns N   the two threads of a pair take turns, N stores each:
 *                                 a, b, a, b, ... (semaphores on other lines), so any
 *                                 stretch of time sees the two threads alternate, and
 *                                 every store after the first in it moves the line */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pin.h"

#define PAIRS 3

struct pair_stats {
	unsigned long a;		/* thread 2k */
	unsigned long b;		/* thread 2k+1 */
} __attribute__((aligned(64)));

struct pair_stats pairs[PAIRS];

struct turn {
	sem_t go[2];
} __attribute__((aligned(64)));

static struct turn turns[PAIRS];
static unsigned long n = 100000;
static int taking_turns;

static void *worker(void *arg)
{
	long id = (long)arg;
	int k = (int)(id / 2), side = (int)(id % 2);
	volatile unsigned long *p = side ? &pairs[k].b : &pairs[k].a;

	for (unsigned long i = 0; i < n; i++) {
		if (taking_turns)
			sem_wait(&turns[k].go[side]);
		*p += 1;
		if (taking_turns)
			sem_post(&turns[k].go[!side]);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[2 * PAIRS];

	if (argc > 1)
		taking_turns = !strcmp(argv[1], "turns");
	if (argc > 2)
		n = strtoul(argv[2], NULL, 0);
	for (int k = 0; k < PAIRS; k++) {
		sem_init(&turns[k].go[0], 0, 1);
		sem_init(&turns[k].go[1], 0, 0);
	}
	for (long i = 0; i < 2 * PAIRS; i++) {
		pthread_create(&t[i], NULL, worker, (void *)i);
		pin(t[i], (int)i);
	}
	for (int i = 0; i < 2 * PAIRS; i++)
		pthread_join(t[i], NULL);
	for (int k = 0; k < PAIRS; k++)
		printf("pair %d: a=%lu b=%lu\n", k, pairs[k].a, pairs[k].b);
	printf("pairs=%p\n", (void *)pairs);
	return 0;
}
