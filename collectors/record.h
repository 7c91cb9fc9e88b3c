/* A recording session: open the events on the workload, drain their rings into a
 * perf.data file, stop cleanly on workload exit or a signal. */
#ifndef HM_RECORD_H
#define HM_RECORD_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "collectors/events.h"
#include "core/err.h"

#define HM_MAX_WATCH 4		/* x86 has four debug registers */
#define HM_MAX_EVENTS 32	/* timer or PMU events, 4 watchpoints, 17 allocation probes */
#define HM_WATCH_SLICE_EVENT "hitmap:watch-slice"	/* a dummy event: when what was armed */

struct hm_record_opts {
	int timer;			/* cpu-clock samples with registers */
	unsigned freq;			/* timer samples per second */
	int kernel;			/* also sample kernel mode */
	struct hm_watch *watches;	/* filled by resolve() when it is given */
	int nr_watches;
	unsigned duty_pct;		/* watchpoints armed this share of every 100 ms */
	/* Rotation (record --confirm): nr_groups >= 1 arms watches[i] only in the slices
	 * of its group watch_group[i], one group of at most HM_MAX_WATCH per slice_ms, in
	 * turn, and marks each slice in the file as HM_WATCH_SLICE_EVENT samples. */
	const int *watch_group;
	int nr_groups;
	unsigned slice_ms;
	const struct perf_event_attr *extra;	/* PMU events, already encoded */
	const char *const *extra_names;
	const int *extra_leader;	/* group leader's index in extra, -1 for none */
	int nr_extra;
	pid_t pid;			/* -p: a running process */
	int system_wide;		/* -a */
	int alloc;			/* also probe the malloc family (collectors/alloc.h);
					 * not with -a */
	unsigned alloc_budget;		/* allocation events before the probes are closed;
					 * 0: HM_ALLOC_BUDGET */
	char *const *argv;		/* the command, or NULL */
	const char *output;
	const char *const *cmdline;	/* hitmap's own command line, for the CMDLINE feature */
	int nr_cmdline;
	unsigned mmap_pages;		/* ring data pages per CPU, a power of two */
	volatile sig_atomic_t *stop;	/* the caller's signal handler stores the signal here */
	/* Called once the workload exists (stopped before its first instruction) and
	 * before any event is opened: resolves watch addresses in its address space. */
	int (*resolve)(void *ctx, pid_t pid, struct hm_err *err);
	void *resolve_ctx;
	/* With kernel: called once the workload is over, before the file's features are
	 * written: hitmap's kernel slab section (core/kslab.h), malloc'd with *len set, or
	 * NULL with *why. Collectors read no kernel memory themselves (cli/ gives this). */
	uint8_t *(*kernel_slab)(size_t *len, const char **why);
};

struct hm_record_stats {
	uint64_t samples, lost, records, bytes;
	pid_t pid;
	int exited;			/* the workload exited (status valid) */
	int status;			/* waitpid status */
	int stopped_by;			/* signal that ended the recording, 0 if none */
	uint64_t alloc_events;		/* allocation-family samples recorded */
	int alloc_stopped;		/* the allocation budget was spent: probes closed */
	char alloc_note[640];		/* allocation tracking off or incomplete: why, once */
	uint64_t kslab_bytes;		/* the kernel slab section's size, 0 when none */
	const char *kslab_why;		/* why none, when kernel_slab was given */
	unsigned selftest_lost;		/* watchpoint self-test tries that lost traps before
					 * one counted them all (hm_watch_selftest): 0 normally */
};

int hm_record(const struct hm_record_opts *o, struct hm_record_stats *st, struct hm_err *err);

#endif
