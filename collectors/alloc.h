/* Allocation tracking: uprobes on the malloc family of the libc the workload maps, so
 * that the report can name heap objects by allocation site, size and element. The
 * probes go into the same perf.data as the other events, as events named hitmap:FN
 * (entry) and hitmap:FN_ret (return); docs/alloc.md and docs/perfdata.md say what
 * each sample holds. */
#ifndef HM_ALLOC_H
#define HM_ALLOC_H

#include <linux/perf_event.h>
#include <stdint.h>
#include <sys/types.h>

#define HM_ALLOC_MAX_PROBES 25

/* Allocation events recorded before the probes are closed for the rest of the run: the
 * bound on what tracking costs. Each probe hit is a trap, 9 to 25 us in this VM
 * (bench/alloc.sh), so 50000 cost at most about 1.3 s of the workload's time. */
#define HM_ALLOC_BUDGET 50000

struct hm_alloc_probes {
	char path[4096];		/* the file probed: the workload's libc */
	char path_cxx[4096];		/* its libstdc++ (operator new), or "" */
	int n;
	struct perf_event_attr attrs[HM_ALLOC_MAX_PROBES];
	const char *names[HM_ALLOC_MAX_PROBES];	/* "hitmap:malloc", "hitmap:malloc_ret" */
	char why[512];			/* n == 0: why tracking is off, and the fix */
	/* the same probes as tracefs uprobe events (alloc_tracefs.c), opened inherited */
	char tp_group[32];		/* "hitmap_PID", or "" for none */
	uint64_t tp_id[HM_ALLOC_MAX_PROBES];
};

/* Fills p with one event per probe for workload pid (spawned: stopped at exec, its libc
 * not mapped yet). These uprobe-PMU events describe the probes in the file; record
 * opens them as tracefs events, inherited, where it can (hm_alloc_tracefs_create). As
 * uprobe-PMU events they are not inherited: they probe the threads that exist when
 * they are opened (a command's main thread, the threads of -p), and follow them across
 * exec. Inherited uprobe-PMU events cost each new thread one uprobe registration per
 * probe, each exiting thread about 100 ms per probe here (the unregistration waits for
 * a grace period), and one thread's exit removed the other threads' breakpoints
 * (kernel 6.18: the main thread's mallocs after a pthread_join went unrecorded; perf's
 * tracefs uprobes recorded them). docs/alloc.md has the measurements. 0 with p->n > 0, or -1 with
 * p->why. HITMAP_ALLOC_FAIL=1 in the environment makes it fail as on a kernel without the uprobe PMU (a test hook). */
int hm_alloc_probes_build(struct hm_alloc_probes *p, pid_t pid, int spawned);

/* The file offset of symbol name's code in the ELF file path (.dynsym, then .symtab;
 * the address converted through the PT_LOAD segment holding it); 0 when not found. */
uint64_t hm_alloc_sym_offset(const char *path, const char *name);

/* Closes the probes' fds, in parallel (each close waits for a grace period), then
 * removes p's tracefs events (when it has them) once nothing holds them. */
void hm_alloc_close_fds(const int *fds, int n, struct hm_alloc_probes *p);

/* Defines p's probes as tracefs uprobe events in a group of this process's own
 * (removing the groups of recorders that were killed before they removed theirs), so
 * that they can be opened inherited: a workload's threads created after recording
 * starts are probed too. 0 with p->tp_id set, or -1 (no writable tracefs, a path with
 * blanks; HITMAP_ALLOC_NO_TRACEFS=1 is a test hook): then the events of the uprobe PMU,
 * per thread, are the fallback. */
int hm_alloc_tracefs_create(struct hm_alloc_probes *p);
/* Removes them (they must not be open). */
void hm_alloc_tracefs_remove(struct hm_alloc_probes *p);
/* Turns a probe's attr into the tracefs event id's, inherited. */
void hm_alloc_tracefs_attr(struct perf_event_attr *a, uint64_t id);

/* The allocation-family event names, for the record loop's budget. */
int hm_alloc_is_name(const char *name);

#endif
