/* Shared by the multi-threaded examples: each worker on its own CPU (when there are two),
 * so that a shared line really moves between caches even on a busy machine. */
#ifndef EXAMPLES_PIN_H
#define EXAMPLES_PIN_H

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

static inline void pin(pthread_t t, int i)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	if (n < 2)
		return;
	CPU_ZERO(&set);
	CPU_SET(i % n, &set);
	pthread_setaffinity_np(t, sizeof(set), &set);
}

#endif
