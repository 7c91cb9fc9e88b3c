/* A known number of accesses per field per thread, for checking watchpoint counts
 * exactly: thread "hits" (pinned to CPU 0) stores STORES times to counters.hits and then
 * loads it LOADS times; thread "misses" (pinned to CPU 1) does the same to the adjacent
 * counters.misses. Nothing else touches either field (main prints only what the threads
 * return), so a watch on counters.hits:rw sees exactly STORES stores and LOADS loads, all
 * in hits_thread, and one on counters.misses the same in misses_thread. The two fields
 * share a cache line and each is written by its own thread: false sharing, whatever the
 * schedule. Each thread pins itself before its first access.
 *
 * usage: watch_counts [STORES [LOADS]]   (default 100000 50000); prints &counters */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct counters {
	unsigned long hits;		/* thread hits_thread only */
	unsigned long misses;		/* thread misses_thread only */
};

struct counters counters;
static unsigned long stores = 100000, loads = 50000;

static void pin_self(int cpu)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	if (n < 2)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu % n, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* Each thread: one plain store per iteration, then one plain load per iteration, written
 * out in its own function so that every access's code site is that function, stores on
 * one line and loads on the next. volatile keeps the compiler from merging or dropping
 * any of them. */
static void *hits_thread(void *out)
{
	volatile unsigned long *p = &counters.hits;
	unsigned long sum = 0;

	pin_self(0);
	for (unsigned long i = 0; i < stores; i++)
		*p = i;					/* hits: store */
	for (unsigned long i = 0; i < loads; i++)
		sum += *p;				/* hits: load */
	*(unsigned long *)out = sum;
	return NULL;
}

static void *misses_thread(void *out)
{
	volatile unsigned long *p = &counters.misses;
	unsigned long sum = 0;

	pin_self(1);
	for (unsigned long i = 0; i < stores; i++)
		*p = i;					/* misses: store */
	for (unsigned long i = 0; i < loads; i++)
		sum += *p;				/* misses: load */
	*(unsigned long *)out = sum;
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long sum_hits = 0, sum_misses = 0;
	pthread_t a, b;

	if (argc > 1)
		stores = strtoul(argv[1], NULL, 0);
	if (argc > 2)
		loads = strtoul(argv[2], NULL, 0);
	pthread_create(&a, NULL, hits_thread, &sum_hits);
	pthread_create(&b, NULL, misses_thread, &sum_misses);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	/* The address lets a second tool watch the same bytes: perf stat -e mem:ADDR/8:w:u
	 * under setarch -R, where it is the same from run to run. */
	printf("counters=%p stores=%lu loads=%lu sums=%lu,%lu\n", (void *)&counters, stores,
	       loads, sum_hits, sum_misses);
	return 0;
}
