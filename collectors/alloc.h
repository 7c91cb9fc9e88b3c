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

#define HM_ALLOC_MAX_PROBES 13

/* Allocation events kept per window before the probes are switched off until the next
 * window: the bound on what tracking costs (each probe hit is a trap, docs/alloc.md). */
#define HM_ALLOC_WINDOW_NS 100000000LL
#define HM_ALLOC_BUDGET 20000

struct hm_alloc_probes {
	char path[4096];		/* the file probed: the workload's libc */
	int n;
	struct perf_event_attr attrs[HM_ALLOC_MAX_PROBES];
	const char *names[HM_ALLOC_MAX_PROBES];	/* "hitmap:malloc", "hitmap:malloc_ret" */
	char why[512];			/* n == 0: why tracking is off, and the fix */
	void *page;			/* the path where the workload has it too (alloc_place.c) */
};

/* Fills p with one event per probe for workload pid (spawned: stopped at exec, its libc
 * not mapped yet; its probes are inherited by its threads and children and removed at
 * its next exec. Else the threads of -p as they are: not inherited). 0 with p->n > 0, or -1 with p->why. HITMAP_ALLOC_FAIL=1 in the
 * environment makes it fail as on a kernel without the uprobe PMU (a test hook). */
int hm_alloc_probes_build(struct hm_alloc_probes *p, pid_t pid, int spawned);

/* Frees what hm_alloc_probes_build kept (the path's page): after the events are closed. */
void hm_alloc_probes_free(struct hm_alloc_probes *p);

/* alloc_place.c: a read-only page at one address in hitmap and in the workload pid
 * (stopped at exec under ptrace), holding path; NULL when it cannot be placed. */
void *hm_alloc_place_path(pid_t pid, const char *path);
void hm_alloc_place_free(void *page);

/* The file offset of symbol name's code in the ELF file path (.dynsym, then .symtab;
 * the address converted through the PT_LOAD segment holding it); 0 when not found. */
uint64_t hm_alloc_sym_offset(const char *path, const char *name);

/* The allocation-family event names, for the record loop's budget. */
int hm_alloc_is_name(const char *name);

#endif
