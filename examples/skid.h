/* Shared by the skid_* examples (docs/decode.md, Skid): READ_ONCE/WRITE_ONCE as the
 * kernel spells them, so that each access is one instruction the compiler keeps, and
 * the two-thread skeleton: thread 0 runs the pattern under test, thread 1 the writer
 * that makes its line move between the CPUs. */
#ifndef EXAMPLES_SKID_H
#define EXAMPLES_SKID_H

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <sched.h>
#include <unistd.h>

/* -DPADDED: each field on a line of its own (the fix of skid_load_store's sharing). */
#ifdef PADDED
#define SKID_ALIGNED __attribute__((aligned(64)))
#else
#define SKID_ALIGNED
#endif

#define READ_ONCE(x) (*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))

static unsigned long iterations = 5000000UL;
static pthread_barrier_t skid_start;

/* Each thread calls this first: both start their loops together, pinned, so that the
 * line moves between the CPUs for as long as both run. */
static inline void skid_begin(int cpu)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	if (n > 1) {
		CPU_ZERO(&set);
		CPU_SET(cpu % n, &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	pthread_barrier_wait(&skid_start);
}

/* The line as the other CPU's write leaves it: no longer in this CPU's cache. This VM's
 * two vCPUs share their caches (a load next to another vCPU's stores costs 0.8 ns
 * instead of 0.5, not a transfer), so a write from the other thread does not take the
 * line away; each thread evicts it before its access instead, and every access to the
 * line then waits for memory as it waits for the other core on real hardware. clflush
 * is no data access: it changes no count of watch or timer. */
static inline void line_stolen(const void *p)
{
	__builtin_ia32_clflush(p);
}

/* Runs reader and writer (each starting with skid_begin(0) / skid_begin(1)),
 * ITERATIONS (argv[1]) each. */
static inline void skid_run(int argc, char **argv, void *(*reader)(void *),
			    void *(*writer)(void *))
{
	pthread_t a, b;

	if (argc > 1)
		iterations = strtoul(argv[1], NULL, 0);
	pthread_barrier_init(&skid_start, NULL, 2);
	pthread_create(&a, NULL, reader, NULL);
	pthread_create(&b, NULL, writer, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
}

#endif
