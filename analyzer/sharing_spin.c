/* Two kinds of line that the pairing of threads in sharing.c misjudges.
 *
 * A per-CPU variable's copy (HM_LINES_IS_PERCPU) is meant to be touched by whatever
 * thread runs on its CPU: __preempt_count, current_task, runqueues. Threads taking turns
 * on one CPU's copy share no cache line; only an access from another CPU would move it.
 *
 * A lock word that waiters spin on: each waiter loads it in a pause loop until the
 * holder's store changes it (mutex_spin_on_owner, rwsem_spin_on_owner, a queued
 * spinlock's wait, a user spinlock). The holder stores once per hand-over, so a timer
 * seldom lands on that store, and without it the line reads "read only" although every
 * hand-over moves it to the waiters. The spinning loads (struct hm_access.spin, found
 * by resolve_addr.c from the code) are that evidence: such a line is true sharing of
 * the lock word, which no layout removes. */
#include <string.h>

#include "analyzer/lines.h"
#include "analyzer/sharing_fix.h"

int hm_sharing_percpu_local(struct hm_arena *a, struct hm_line *ln)
{
	uint32_t cpu;

	if (!HM_LINES_IS_PERCPU(ln->pid) || ln->nr_cpus > 1)
		return 0;
	cpu = HM_LINES_PERCPU_CPU(ln->pid);
	if (ln->nr_cpus == 1 && ln->cpus[0].id != cpu)
		return 0;	/* one CPU, but another's copy: a remote per_cpu() access */
	ln->verdict = HM_V_PRIVATE;
	if (ln->nr_threads > 1)
		ln->evidence = hm_arena_printf(a, "CPU %u's copy of a per-CPU variable, touched "
					       "only on CPU %u (%u threads in turn): not shared",
					       cpu, cpu, ln->nr_threads);
	return 1;
}

/* The row most spun on, and the function of its top site. */
static uint32_t spun_row(const struct hm_line *ln)
{
	uint32_t best = 0;

	for (uint32_t i = 1; i < ln->nr_fields; i++)
		if (ln->fields[i].spin > ln->fields[best].spin)
			best = i;
	return best;
}

static const char *spinners(struct hm_arena *a, const struct hm_lfield *f)
{
	if (f->nr_threads == 1)
		return hm_arena_printf(a, "thread %u", f->threads[0].id);
	if (f->nr_threads == 2)
		return hm_arena_printf(a, "threads %u and %u", f->threads[0].id,
				       f->threads[1].id);
	return hm_arena_printf(a, "threads %u, %u and %u more", f->threads[0].id,
			       f->threads[1].id, f->nr_threads - 2);
}

int hm_sharing_spin(struct hm_arena *a, struct hm_line *ln)
{
	const struct hm_lfield *f;
	const char *func;

	if (ln->spin < HM_MIN_RECORDS)
		return 0;
	f = &ln->fields[spun_row(ln)];
	func = f->nr_sites && f->sites[0].func ? f->sites[0].func : "a pause loop";
	ln->verdict = HM_V_TRUE_SHARING;
	ln->confidence = ln->spin >= HM_HIGH_RECORDS ? HM_CONF_HIGH : HM_CONF_MEDIUM;
	ln->evidence = hm_arena_printf(
		a, "%s spin%s on %s in %s (%llu loads in a pause loop, on %u CPU%s): they wait "
		"for another CPU's store to it, the holder's (%llu stores and %llu locked "
		"operations on it sampled: one per hand-over, where the waiters load it the "
		"whole time)", spinners(a, f), f->nr_threads == 1 ? "s" : "",
		f->field ? f->field : "the line", func, (unsigned long long)ln->spin,
		ln->nr_cpus, ln->nr_cpus == 1 ? "" : "s", (unsigned long long)f->stores,
		(unsigned long long)f->locked);
	ln->fix = hm_arena_printf(
		a, "waiters spin on %s until another CPU stores to it (a contended lock or a "
		"completion flag), and no layout removes that: hold the lock for less time, "
		"split it (per object or per CPU), or wait without spinning",
		f->field ? f->field : "its word");
	if (ln->nr_cpus < 2 && ln->nr_threads > 1)
		ln->advice = hm_arena_printf(a, "every spinning load ran on CPU %u in this "
					     "recording", ln->nr_cpus ? ln->cpus[0].id : 0);
	return 1;
}
