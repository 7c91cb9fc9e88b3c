/* hm_lines_acc_set_max: a report of more distinct lines than fit in memory keeps the top
 * max_lines by contention so far and drops the rest. The lines' tables live in the merge's
 * own arena, so dropping frees something only when the kept lines are copied into a fresh
 * arena and the old one is freed: that copy is the prune. A dropped line is remembered by
 * an 8-byte fingerprint of (address space, line), so that it stays dropped: a kept line
 * is exact, never a line counted from the middle of the run. docs/report.md, Memory. */
#include "analyzer/lines.h"

#include <stdlib.h>
#include <string.h>

#include "analyzer/lines_int.h"
#include "core/oom.h"
#include "core/sort.h"

/* Never 0, the empty slot. Two distinct lines share one with probability about
 * 2^-64 per pair: at 10^8 dropped lines, 3 in 10^4 runs drop one access too many. */
static uint64_t fingerprint(uint32_t pid, uint64_t addr)
{
	uint64_t h = hm_lines_mix(pid, addr) ^ ((uint64_t)pid * 0xff51afd7ed558ccdull);

	return h ? h : 1;
}

int hm_lines_acc_gone(const struct hm_lines_acc *m, uint32_t pid, uint64_t addr)
{
	uint64_t f = fingerprint(pid, addr);

	for (size_t j = f & (m->cap_gone - 1); m->gone[j]; j = (j + 1) & (m->cap_gone - 1))
		if (m->gone[j] == f)
			return 1;
	return 0;
}

static void gone_put(struct hm_lines_acc *m, uint64_t f)
{
	size_t j;

	for (j = f & (m->cap_gone - 1); m->gone[j]; j = (j + 1) & (m->cap_gone - 1))
		if (m->gone[j] == f)
			return;
	m->gone[j] = f;
	m->nr_gone++;
}

static void gone_reserve(struct hm_lines_acc *m, size_t add)
{
	uint64_t *old = m->gone;
	size_t ocap = m->cap_gone, cap = ocap ? ocap : 1024;

	while (2 * (m->nr_gone + add) > cap)
		cap <<= 1;
	if (cap == ocap)
		return;
	if (!(m->gone = calloc(cap, sizeof(*m->gone))))
		hm_oom();
	m->cap_gone = cap;
	m->nr_gone = 0;
	for (size_t i = 0; i < ocap; i++)
		if (old[i])
			gone_put(m, old[i]);
	free(old);
}

/* --- copying a kept line into the fresh arena --- */

static void *dup_cap(struct hm_arena *a, const void *p, size_t n, size_t size)
{
	void *q;

	if (!p || !n)
		return NULL;
	/* the capacity lines_merge.c's grow() assumes of an array of n */
	q = hm_arena_alloc(a, hm_lines_pow2cap(n) * size);
	memcpy(q, p, n * size);
	return q;
}

static void *dup1(struct hm_arena *a, const void *p, size_t size)
{
	return p ? memcpy(hm_arena_alloc(a, size), p, size) : NULL;
}

/* Every pointer a merged line or row holds into the merge's arena must be copied here
 * (a new one added to struct hm_line or hm_lfield in lines_merge.c too): the old arena
 * is freed after the prune. Strings of the resolver (named fields, objects, sites) are
 * not the arena's. tests/unit/test_lines_prune.c under ASan catches one left behind. */
static void copy_line(struct hm_arena *a, struct hm_line *ln)
{
	ln->c2c = dup1(a, ln->c2c, sizeof(*ln->c2c));
	ln->lat = ln->lat ? dup1(a, ln->lat, HM_LVL__COUNT * sizeof(*ln->lat)) : NULL;
	ln->threads = dup_cap(a, ln->threads, ln->nr_threads, sizeof(*ln->threads));
	ln->cpus = dup_cap(a, ln->cpus, ln->nr_cpus, sizeof(*ln->cpus));
	ln->inter = dup_cap(a, ln->inter, ln->nr_inter, sizeof(*ln->inter));
	ln->carry = dup1(a, ln->carry, sizeof(*ln->carry));
	ln->fields = dup_cap(a, ln->fields, ln->nr_fields, sizeof(*ln->fields));
	for (uint32_t i = 0; i < ln->nr_fields; i++) {
		struct hm_lfield *f = &ln->fields[i];

		if (!f->named && f->field)	/* printed into the arena (name_row) */
			f->field = hm_arena_strdup(a, f->field);
		f->c2c = dup1(a, f->c2c, sizeof(*f->c2c));
		f->threads = dup_cap(a, f->threads, f->nr_threads, sizeof(*f->threads));
		f->cpus = dup_cap(a, f->cpus, f->nr_cpus, sizeof(*f->cpus));
		f->sites = dup_cap(a, f->sites, f->nr_sites, sizeof(*f->sites));
	}
}

/* --- which lines stay --- */

struct pkey {
	uint64_t contention, records, addr;
	uint32_t pid, idx;
	int multi;			/* several threads: the kind that can be shared */
};

static int cmp_pkey(const void *x, const void *y)
{
	const struct pkey *a = x, *b = y;

	if (a->contention != b->contention)
		return a->contention > b->contention ? -1 : 1;
	if (a->multi != b->multi)
		return a->multi ? -1 : 1;
	if (a->records != b->records)
		return a->records > b->records ? -1 : 1;
	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

static int cmp_idx(const void *x, const void *y)
{
	const struct pkey *a = x, *b = y;

	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

void hm_lines_acc_prune(struct hm_lines_acc *m)
{
	struct hm_lines *l = &m->l;
	enum hm_source src = hm_lines_majority(l);
	struct pkey *k = malloc(l->nr * sizeof(*k));
	struct hm_arena fresh;
	size_t keep = m->max_lines;

	if (!k)
		hm_oom();	/* as the arena does */
	for (size_t i = 0; i < l->nr; i++) {
		const struct hm_line *ln = &l->lines[i];

		k[i] = (struct pkey){ hm_lines_measure(src, ln->c2c, ln->conflicts, ln->transfers),
				      ln->records, ln->addr, ln->pid, (uint32_t)i,
				      ln->nr_threads > 1 };
	}
	hm_sort(k, l->nr, sizeof(*k), cmp_pkey);
	gone_reserve(m, l->nr - keep);
	for (size_t i = keep; i < l->nr; i++) {
		gone_put(m, fingerprint(k[i].pid, k[i].addr));
		l->dropped_records += k[i].records;
	}
	l->dropped_lines += l->nr - keep;
	/* the kept lines in their old order, so that the result does not depend on when
	 * the prunes came (the final ranking sorts them anyway) */
	hm_sort(k, keep, sizeof(*k), cmp_idx);
	hm_arena_init(&fresh);
	for (size_t i = 0; i < keep; i++) {
		l->lines[i] = l->lines[k[i].idx];
		copy_line(&fresh, &l->lines[i]);
	}
	hm_arena_free(&m->own);
	m->own = fresh;
	l->nr = keep;
	free(k);
	hm_lines_acc_reindex(m);
}
