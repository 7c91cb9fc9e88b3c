/* Shared by the lab's workloads: run body(tid) on N threads for SECONDS seconds.
 * Each workload is modeled on one kernel regression; the lab asserts names, verdicts and
 * counts from what they make the kernel do, never their speed (TCG has no cache model). */
#ifndef HM_LAB_WL_H
#define HM_LAB_WL_H
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static atomic_int wl_stop;
static unsigned long wl_ops[64];

struct wl_arg { int tid; void (*body)(int tid, unsigned long i); };

static void *wl_thread(void *p)
{
	struct wl_arg *a = p;
	unsigned long i = 0;
	while (!atomic_load_explicit(&wl_stop, memory_order_relaxed))
		a->body(a->tid, i++);
	wl_ops[a->tid] = i;
	return NULL;
}

/* argv: [threads] [seconds]; prints the operation count so the log shows it ran. */
static int wl_run(int argc, char **argv, int def_threads, void (*body)(int, unsigned long))
{
	int n = argc > 1 ? atoi(argv[1]) : def_threads;
	double secs = argc > 2 ? atof(argv[2]) : 2.0;
	pthread_t th[64];
	struct wl_arg args[64];
	if (n < 1 || n > 64) {
		fprintf(stderr, "%s: threads must be 1..64\n", argv[0]);
		return 1;
	}
	for (int t = 0; t < n; t++) {
		args[t] = (struct wl_arg){ t, body };
		if (pthread_create(&th[t], NULL, wl_thread, &args[t]) != 0) {
			perror("pthread_create");
			return 1;
		}
	}
	struct timespec ts = { (time_t)secs, (long)((secs - (time_t)secs) * 1e9) };
	nanosleep(&ts, NULL);
	atomic_store(&wl_stop, 1);
	unsigned long total = 0;
	for (int t = 0; t < n; t++) {
		pthread_join(th[t], NULL);
		total += wl_ops[t];
	}
	printf("%s: %d threads, %lu ops\n", argv[0], n, total);
	return 0;
}
#endif
