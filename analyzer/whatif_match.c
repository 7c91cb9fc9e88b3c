/* The what-if run's two sides matched (whatif_run.c builds them): the distinct pairs of
 * a line before and a line after that the replay's accesses link, and from them which
 * shared lines stop, start or stay shared; the PMU HITMs the new lines no longer
 * explain. */
#include "analyzer/whatif_int.h"

#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include "core/sort.h"
#include "core/oom.h"

static uint32_t space_of(const struct hm_access *x)
{
	return hm_lines_space(x);
}

/* --- matching lines --- */

struct hm_wi_lref {
	uint32_t pid;
	uint64_t addr;
	uint32_t idx;
};

static int cmp_lref(const void *x, const void *y)
{
	const struct hm_wi_lref *a = x, *b = y;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

struct hm_wi_lref *hm_wi_index_lines(const struct hm_lines *l)
{
	struct hm_wi_lref *v = malloc((l->nr ? l->nr : 1) * sizeof(*v));

	if (!v)
		hm_oom();
	for (size_t i = 0; i < l->nr; i++)
		v[i] = (struct hm_wi_lref){l->lines[i].pid, l->lines[i].addr, (uint32_t)i};
	hm_sort(v, l->nr, sizeof(*v), cmp_lref);
	return v;
}

static uint32_t line_of(const struct hm_wi_lref *v, size_t nr, const struct hm_access *x,
			uint32_t line_size)
{
	struct hm_wi_lref key = {space_of(x), x->s.addr & ~(uint64_t)(line_size - 1), 0};
	const struct hm_wi_lref *f = bsearch(&key, v, nr, sizeof(*v), cmp_lref);

	return f ? f->idx : UINT32_MAX;
}

static int shared(const struct hm_line *ln)
{
	return ln->verdict == HM_V_FALSE_SHARING || ln->verdict == HM_V_TRUE_SHARING;
}

struct link {
	uint32_t b, a;			/* line before, line after */
};

static int cmp_ba(const void *x, const void *y)
{
	const struct link *p = x, *q = y;

	if (p->b != q->b)
		return p->b < q->b ? -1 : 1;
	return p->a < q->a ? -1 : p->a > q->a;
}

static int cmp_ab(const void *x, const void *y)
{
	const struct link *p = x, *q = y;

	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	return p->b < q->b ? -1 : p->b > q->b;
}

/* Links sorted by one side: the lines of the other side linked to line k. */
static const struct hm_line **linked(struct hm_arena *a, const struct link *l, size_t nl,
				     uint32_t k, int by_after, const struct hm_lines *other,
				     uint32_t *nr)
{
	size_t lo = 0, hi = nl, cnt = 0;
	const struct hm_line **v;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if ((by_after ? l[mid].a : l[mid].b) < k)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (hi = lo; hi < nl && (by_after ? l[hi].a : l[hi].b) == k; hi++)
		cnt++;
	v = hm_arena_alloc(a, (cnt + 1) * sizeof(*v));
	*nr = 0;
	for (size_t i = lo; i < hi; i++)
		v[(*nr)++] = &other->lines[by_after ? l[i].b : l[i].a];
	return v;
}

/* links[] holds distinct (before, after) pairs of lines; aff_b/aff_a mark lines holding
 * accesses to changed objects. */
static void changes(struct hm_arena *a, struct hm_whatif *w, struct link *l, size_t nl,
		    const uint8_t *aff_b, const uint8_t *aff_a)
{
	const struct hm_lines *B = &w->before, *A = &w->after;
	uint8_t *reached = hm_arena_alloc(a, A->nr + 1);
	size_t cap = 16;

	w->changes = hm_arena_alloc(a, cap * sizeof(*w->changes));
	for (int pass = 0; pass < 2; pass++) {
		hm_sort(l, nl, sizeof(*l), pass ? cmp_ab : cmp_ba);
		for (uint32_t k = 0; k < (pass ? A->nr : B->nr); k++) {
			struct hm_wi_change ch = {0};
			const struct hm_line *self = pass ? &A->lines[k] : &B->lines[k];

			if (!shared(self) || !(pass ? aff_a[k] : aff_b[k]) || (pass && reached[k]))
				continue;
			if (!pass) {
				ch.before = hm_arena_alloc(a, sizeof(*ch.before));
				ch.before[0] = self;
				ch.nr_before = 1;
				ch.after = linked(a, l, nl, k, 0, A, &ch.nr_after);
				ch.kind = HM_WI_STOPS;
				for (uint32_t j = 0; j < ch.nr_after; j++) {
					reached[ch.after[j] - A->lines] = 1;
					if (shared(ch.after[j]))
						ch.kind = HM_WI_STAYS;
				}
			} else {
				ch.after = hm_arena_alloc(a, sizeof(*ch.after));
				ch.after[0] = self;
				ch.nr_after = 1;
				ch.before = linked(a, l, nl, k, 1, B, &ch.nr_before);
				ch.kind = HM_WI_STARTS;
			}
			if (w->nr_changes == cap) {
				struct hm_wi_change *nc = hm_arena_alloc(a, 2 * cap * sizeof(*nc));

				memcpy(nc, w->changes, cap * sizeof(*nc));
				w->changes = nc;
				cap *= 2;
			}
			w->changes[w->nr_changes++] = ch;
			w->stops += ch.kind == HM_WI_STOPS;
			w->stays += ch.kind == HM_WI_STAYS;
			w->starts += ch.kind == HM_WI_STARTS;
		}
	}
}

static int cmp_change(const void *x, const void *y)
{
	const struct hm_wi_change *a = x, *b = y;
	uint64_t ca, cb;

	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	ca = a->kind == HM_WI_STARTS ? a->after[0]->contention : a->before[0]->contention;
	cb = b->kind == HM_WI_STARTS ? b->after[0]->contention : b->before[0]->contention;
	return ca > cb ? -1 : ca < cb;
}

void hm_wi_count_totals(const struct hm_lines *l, struct hm_wi_totals *t)
{
	memset(t, 0, sizeof(*t));
	t->lines = l->nr;
	t->dropped_lines = l->dropped_lines;
	t->dropped_samples = l->dropped_records;
	for (size_t i = 0; i < l->nr; i++) {
		if (!shared(&l->lines[i]))
			continue;
		t->shared++;
		t->false_sharing += l->lines[i].verdict == HM_V_FALSE_SHARING;
		t->true_sharing += l->lines[i].verdict == HM_V_TRUE_SHARING;
		t->contention += l->lines[i].contention;
	}
}

/* --- the distinct (line before, line after) pairs the replay links, batch by batch:
 * never a second copy of the run --- */

static size_t lp_slot(const struct hm_wi_lpairs *t, const struct hm_wi_lpair *k)
{
	uint64_t h = (k->b * 0x9e3779b97f4a7c15ull) ^ (k->a * 0xc2b2ae3d27d4eb4full) ^
		     ((uint64_t)k->space_b << 32 | k->space_a);
	size_t j;

	h ^= h >> 29;
	for (j = h & (t->cap - 1); t->v[j].used; j = (j + 1) & (t->cap - 1))
		if (t->v[j].b == k->b && t->v[j].a == k->a && t->v[j].space_b == k->space_b &&
		    t->v[j].space_a == k->space_a)
			break;
	return j;
}

static void lp_add(struct hm_wi_lpairs *t, const struct hm_wi_lpair *k)
{
	size_t j;

	if (2 * (t->nr + 1) > t->cap) {
		struct hm_wi_lpairs g = {calloc(t->cap ? 2 * t->cap : 1024, sizeof(*t->v)),
					 t->cap ? 2 * t->cap : 1024, 0};

		if (!g.v)
			hm_oom();
		for (size_t i = 0; i < t->cap; i++)
			if (t->v[i].used)
				g.v[lp_slot(&g, &t->v[i])] = t->v[i];
		g.nr = t->nr;
		free(t->v);
		*t = g;
	}
	j = lp_slot(t, k);
	if (!t->v[j].used) {
		t->v[j] = *k;
		t->v[j].used = 1;
		t->nr++;
	}
	t->v[j].flag |= k->flag;
}

void hm_wi_lines_of(struct hm_wi_bline *b, const struct hm_access *acc, size_t n, uint32_t L)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (struct hm_wi_bline){acc[i].s.addr & ~(uint64_t)(L - 1),
					    space_of(&acc[i]), acc[i].s.addr != 0};
}

void hm_wi_link_batch(struct hm_wi_lpairs *t, const struct hm_wi_bline *b,
		      const struct hm_access *rep, const uint8_t *flags, size_t n, uint32_t L)
{
	for (size_t i = 0; i < n; i++) {
		struct hm_wi_lpair k = {b[i].line, rep[i].s.addr & ~(uint64_t)(L - 1), b[i].space,
					space_of(&rep[i]), 0, flags[i]};

		if (b[i].ok && rep[i].s.addr)
			lp_add(t, &k);
	}
}

static uint32_t find_line(const struct hm_wi_lref *v, size_t nr, uint32_t space, uint64_t addr)
{
	struct hm_wi_lref key = {space, addr, 0};
	const struct hm_wi_lref *f = bsearch(&key, v, nr, sizeof(*v), cmp_lref);

	return f ? f->idx : UINT32_MAX;
}

void hm_wi_match(struct hm_arena *a, struct hm_whatif *w, const struct hm_wi_lpairs *t)
{
	struct hm_wi_lref *ib = hm_wi_index_lines(&w->before), *ia = hm_wi_index_lines(&w->after);
	struct link *l = malloc((t->nr ? t->nr : 1) * sizeof(*l));
	uint8_t *aff_b = hm_arena_alloc(a, w->before.nr + 1);
	uint8_t *aff_a = hm_arena_alloc(a, w->after.nr + 1);
	size_t nl = 0;

	if (!l)
		hm_oom();
	for (size_t i = 0; i < t->cap; i++) {
		const struct hm_wi_lpair *p = &t->v[i];
		uint32_t b, af;

		if (!p->used)
			continue;
		b = find_line(ib, w->before.nr, p->space_b, p->b);
		af = find_line(ia, w->after.nr, p->space_a, p->a);
		if (b == UINT32_MAX || af == UINT32_MAX)
			continue;
		aff_b[b] |= p->flag;
		aff_a[af] |= p->flag;
		l[nl++] = (struct link){b, af};
	}
	changes(a, w, l, nl, aff_b, aff_a);
	hm_sort(w->changes, w->nr_changes, sizeof(*w->changes), cmp_change);
	for (size_t i = 0; i < w->after.nr; i++) {
		if (!aff_a[i] || !shared(&w->after.lines[i]))
			continue;
		w->false_after += w->after.lines[i].verdict == HM_V_FALSE_SHARING;
		w->true_after += w->after.lines[i].verdict == HM_V_TRUE_SHARING;
	}
	free(l);
	free(ib);
	free(ia);
}

/* A PMU load that hit a modified line in another cache keeps that HITM only when its new
 * line is still shared: otherwise another core no longer writes that line. */
int hm_wi_drop_hitm(struct hm_access *rep, size_t n, const struct hm_lines *after,
		     const struct hm_wi_lref *ia)
{
	const uint64_t hitm = (uint64_t)PERF_MEM_SNOOP_HITM << PERF_MEM_SNOOP_SHIFT;
	const uint64_t hit = (uint64_t)PERF_MEM_SNOOP_HIT << PERF_MEM_SNOOP_SHIFT;
	int changed = 0;

	for (size_t i = 0; i < n; i++) {
		uint32_t k;

		if (rep[i].s.source != HM_SRC_PMU || !(rep[i].s.data_src & hitm) || !rep[i].s.addr)
			continue;
		k = line_of(ia, after->nr, &rep[i], after->line_size);
		if (k != UINT32_MAX && !shared(&after->lines[k])) {
			rep[i].s.data_src = (rep[i].s.data_src & ~hitm) | hit;
			changed = 1;
		}
	}
	return changed;
}
