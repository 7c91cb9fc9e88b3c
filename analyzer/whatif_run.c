/* The what-if run: the accesses replayed (whatif_replay.c) in batches into the lines of
 * both sides with their timings as recorded, and each shared line matched with the lines
 * its accesses go to (or come from). */
#include "analyzer/whatif.h"
#include "resolve/handoff.h"

#include <errno.h>
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

struct lref {
	uint32_t pid;
	uint64_t addr;
	uint32_t idx;
};

static int cmp_lref(const void *x, const void *y)
{
	const struct lref *a = x, *b = y;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

static struct lref *index_lines(const struct hm_lines *l)
{
	struct lref *v = malloc((l->nr ? l->nr : 1) * sizeof(*v));

	if (!v)
		hm_oom();
	for (size_t i = 0; i < l->nr; i++)
		v[i] = (struct lref){l->lines[i].pid, l->lines[i].addr, (uint32_t)i};
	hm_sort(v, l->nr, sizeof(*v), cmp_lref);
	return v;
}

static uint32_t line_of(const struct lref *v, size_t nr, const struct hm_access *x,
			uint32_t line_size)
{
	struct lref key = {space_of(x), x->s.addr & ~(uint64_t)(line_size - 1), 0};
	const struct lref *f = bsearch(&key, v, nr, sizeof(*v), cmp_lref);

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

static void totals(const struct hm_lines *l, struct hm_wi_totals *t)
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

/* --- the replay in batches: per-line tables on both sides and the distinct (line before,
 * line after) pairs, never a second copy of the run --- */

/* A line before and a line after that one access links; flag: to a changed object. */
struct lpair {
	uint64_t b, a;			/* line addresses */
	uint32_t space_b, space_a;	/* their address spaces (hm_lines_space) */
	uint8_t used, flag;
};

struct lpairs {
	struct lpair *v;
	size_t cap, nr;
};

static size_t lp_slot(const struct lpairs *t, const struct lpair *k)
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

static void lp_add(struct lpairs *t, const struct lpair *k)
{
	size_t j;

	if (2 * (t->nr + 1) > t->cap) {
		struct lpairs g = {calloc(t->cap ? 2 * t->cap : 1024, sizeof(*t->v)),
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

static void link_batch(struct lpairs *t, const struct hm_access *acc,
		       const struct hm_access *rep, const uint8_t *flags, size_t n, uint32_t L)
{
	for (size_t i = 0; i < n; i++) {
		struct lpair k = {acc[i].s.addr & ~(uint64_t)(L - 1),
				  rep[i].s.addr & ~(uint64_t)(L - 1), space_of(&acc[i]),
				  space_of(&rep[i]), 0, flags[i]};

		if (acc[i].s.addr && rep[i].s.addr)
			lp_add(t, &k);
	}
}

static uint32_t find_line(const struct lref *v, size_t nr, uint32_t space, uint64_t addr)
{
	struct lref key = {space, addr, 0};
	const struct lref *f = bsearch(&key, v, nr, sizeof(*v), cmp_lref);

	return f ? f->idx : UINT32_MAX;
}

static void match(struct hm_arena *a, struct hm_whatif *w, const struct lpairs *t)
{
	struct lref *ib = index_lines(&w->before), *ia = index_lines(&w->after);
	struct link *l = malloc((t->nr ? t->nr : 1) * sizeof(*l));
	uint8_t *aff_b = hm_arena_alloc(a, w->before.nr + 1);
	uint8_t *aff_a = hm_arena_alloc(a, w->after.nr + 1);
	size_t nl = 0;

	if (!l)
		hm_oom();
	for (size_t i = 0; i < t->cap; i++) {
		const struct lpair *p = &t->v[i];
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
static int drop_hitm(struct hm_access *rep, size_t n, const struct hm_lines *after,
		     const struct lref *ia)
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

struct wrun {
	struct hm_arena *a;
	const struct hm_wi_plan *plan;
	const struct hm_access *acc;	/* the run, when held (one build, or array batches) */
	size_t n, batch;
	int whole;			/* one build per side (acc held, batch == n) */
	uint64_t window_ns;
	struct hm_wi_obj *ob;
	size_t nob;
	struct hm_access *rep;
	uint8_t *flags;
	hm_wi_feed feed;		/* hands out the run's batches, once per pass */
	void *feed_arg;
	struct hm_wi_before *before;	/* the recorded side, built already, or NULL */
};

/* A held run as a feed: batches of r->batch accesses. */
struct afeed {
	const struct hm_access *acc;
	size_t n, batch;
};

static int array_feed(void *arg, int (*fn)(const struct hm_access *acc, size_t n, void *fa),
		      void *fa, struct hm_err *err)
{
	const struct afeed *f = arg;

	(void)err;
	for (size_t off = 0; off < f->n; off += f->batch)
		if (fn(f->acc + off, f->n - off < f->batch ? f->n - off : f->batch, fa))
			return -1;
	return 0;
}

struct pstate {
	struct wrun *r;
	struct hm_lines_acc *bl, *al;
	struct hm_handoff *apart;	/* the after side's thread, or NULL: all here */
	struct lpairs *t;
	const struct hm_lines *after;
	const struct lref *ia;
	struct hm_wi_counts *c;
	struct hm_err *err, aerr;	/* aerr: the after side's, on its thread */
	int dropped;
};

/* The after side of a chunk: replayed (the new layouts load through libdw, so this is
 * the only thread that may touch types while a pass runs), HITMs dropped against ia,
 * pairs linked, and its lines added. */
static int after_chunk(struct pstate *ps, const struct hm_access *x, size_t k,
		       struct hm_err *err)
{
	struct wrun *r = ps->r;

	hm_wi_replay_batch(r->plan, r->ob, r->nob, x, k, r->rep, r->flags, ps->c);
	if (ps->ia)
		ps->dropped |= drop_hitm(r->rep, k, ps->after, ps->ia);
	if (ps->t)
		link_batch(ps->t, x, r->rep, r->flags, k, r->plan->line_size);
	return hm_lines_acc_add(ps->al, r->rep, k, err);
}

static int after_apart(const struct hm_access *acc, size_t n, void *arg)
{
	struct pstate *ps = arg;

	return after_chunk(ps, acc, n, &ps->aerr);
}

/* With two threads the after side takes a copy of each chunk (the feed reuses its
 * buffer), while this thread reads the run and builds the before side from the recorded
 * accesses as they are, unless the first read built it (whatif_before.c). The sides'
 * tables touch no type (lines_merge.c), and each side builds in an arena of its own
 * until it ends. */
static int pass_chunk(struct pstate *ps, const struct hm_access *x, size_t k)
{
	if (ps->apart ? hm_handoff_copy(ps->apart, x, k) : after_chunk(ps, x, k, ps->err))
		return -1;
	return ps->bl && hm_lines_acc_add(ps->bl, x, k, ps->err) ? -1 : 0;
}

/* A batch the feed hands out, replayed r->batch accesses at a time. */
static int pass_batch(const struct hm_access *x, size_t k, void *arg)
{
	struct pstate *ps = arg;

	for (size_t off = 0; off < k; off += ps->r->batch)
		if (pass_chunk(ps, x + off, k - off < ps->r->batch ? k - off : ps->r->batch))
			return -1;
	return 0;
}

/* Accesses replayed at once in batches. Past the line bound each batch's new lines are
 * built in scratch tables before they are merged and pruned: a quarter of max_lines
 * keeps that scratch within the bound (2^18 new lines cost about 500 MB per side). */
static size_t batch_of(const struct hm_wi_plan *p, const struct hm_wi_sum *sum)
{
	size_t b = p->max_lines / 4;

	if (!p->max_lines || sum->nlines <= p->max_lines || b >= HM_WI_BATCH)
		return HM_WI_BATCH;
	return b < 4096 ? 4096 : b;
}

/* One pass over the run: before (when bl), after (al), pairs (t), HITMs dropped against
 * the after side ia (when given). 1 when some HITM was dropped. */
static int pass(struct wrun *r, struct hm_lines_acc *bl, struct hm_lines_acc *al,
		struct lpairs *t, const struct hm_lines *after, const struct lref *ia,
		struct hm_wi_counts *c, struct hm_err *err)
{
	struct pstate ps = {.r = r, .bl = bl, .al = al, .t = t, .after = after, .ia = ia,
			    .c = c, .err = err};
	int rc;

	/* the after side beside the reading; room for 4 chunks in flight */
	if (r->plan->jobs > 1)
		ps.apart = hm_handoff_start(8 * HM_HANDOFF_CHUNK, after_apart, &ps);
	rc = r->feed(r->feed_arg, pass_batch, &ps, err);
	if (hm_handoff_end(ps.apart) && (!rc || !err->msg[0])) {
		*err = ps.aerr;	/* the after side failed: the pass stopped there */
		rc = -1;
	}
	return rc ? -1 : ps.dropped;
}

/* One build of each side over the whole run (r->batch == r->n): exact, and cheaper per
 * distinct line than the batches' merged tables, at the cost of the replayed copy. */
static int run_whole(struct wrun *r, struct hm_whatif *out, struct lpairs *t,
		     struct hm_err *err)
{
	uint32_t L = r->plan->line_size;
	struct lref *ia;
	int dropped;

	hm_wi_replay_batch(r->plan, r->ob, r->nob, r->acc, r->n, r->rep, r->flags, &out->counts);
	link_batch(t, r->acc, r->rep, r->flags, r->n, L);
	if (hm_lines_build(r->a, r->acc, r->n, L, r->window_ns, &out->before, err) ||
	    hm_lines_build(r->a, r->rep, r->n, L, r->window_ns, &out->after, err))
		return -1;
	if (out->before.source != HM_SRC_PMU)
		return 0;
	ia = index_lines(&out->after);
	dropped = drop_hitm(r->rep, r->n, &out->after, ia);
	free(ia);
	return dropped ? hm_lines_build(r->a, r->rep, r->n, L, r->window_ns, &out->after, err)
		       : 0;
}

static int run_lines(struct wrun *r, struct hm_whatif *out, struct lpairs *t,
		     struct hm_err *err)
{
	uint32_t L = r->plan->line_size;
	struct hm_lines_acc *bl, *al;
	struct hm_wi_counts scratch = {0};
	struct hm_lines after2;
	struct hm_arena b_arena, a_arena;
	struct lref *ia;
	int rc;

	if (r->whole)
		return run_whole(r, out, t, err);
	hm_arena_init(&b_arena);
	hm_arena_init(&a_arena);
	bl = NULL;
	if (hm_wi_before_end(r->before, r->a, r->plan, r->window_ns, r->batch, &out->before)) {
		bl = hm_lines_acc_new(&b_arena, L, r->window_ns);
		hm_lines_acc_set_max(bl, r->plan->max_lines);
	}
	al = hm_lines_acc_new(&a_arena, L, r->window_ns);
	hm_lines_acc_set_max(al, r->plan->max_lines);
	rc = pass(r, bl, al, t, NULL, NULL, &out->counts, err);
	if (bl)
		hm_lines_acc_end(bl, &out->before);
	hm_lines_acc_end(al, &out->after);
	hm_arena_adopt(r->a, &b_arena);
	hm_arena_adopt(r->a, &a_arena);
	if (rc < 0 || out->before.source != HM_SRC_PMU)
		return rc < 0 ? -1 : 0;
	/* PMU: the after side again with the HITMs its own lines no longer explain */
	ia = index_lines(&out->after);
	al = hm_lines_acc_new(r->a, L, r->window_ns);
	hm_lines_acc_set_max(al, r->plan->max_lines);
	rc = pass(r, NULL, al, NULL, &out->after, ia, &scratch, err);
	hm_lines_acc_end(al, &after2);
	free(ia);
	if (rc > 0)
		out->after = after2;
	return rc < 0 ? -1 : 0;
}

/* Objects placed, the replay buffers, both sides built and matched. */
static int run_common(struct wrun *r, const struct hm_wi_sum *sum, struct hm_whatif *out,
		      struct hm_err *err)
{
	struct lpairs t = {0};
	int rc;

	r->rep = malloc(r->batch * sizeof(*r->rep));
	r->flags = malloc(r->batch);
	if (!r->rep || !r->flags) {
		free(r->rep);
		free(r->flags);
		return hm_err_set(err, HM_EXIT_ENV, "out of memory replaying %llu accesses: %s",
				  (unsigned long long)sum->accesses, strerror(ENOMEM));
	}
	r->ob = hm_wi_objects(r->plan, sum, &out->counts, &r->nob);
	rc = run_lines(r, out, &t, err);
	free(r->ob);
	free(r->flags);
	if (rc) {
		free(r->rep);
		free(t.v);
		return -1;
	}
	match(r->a, out, &t);
	totals(&out->before, &out->tb);
	totals(&out->after, &out->ta);
	free(t.v);
	if (r->whole)
		out->replayed = r->rep;	/* one build: the whole replay, as tests read it */
	else
		free(r->rep);
	return 0;
}

int hm_whatif_run(struct hm_arena *a, const struct hm_access *acc, size_t n,
		  const struct hm_wi_plan *plan, uint64_t window_ns, struct hm_whatif *out,
		  struct hm_err *err)
{
	struct wrun r = {.a = a, .plan = plan, .acc = acc, .n = n, .batch = n ? n : 1,
			 .whole = 1, .window_ns = window_ns, .feed = array_feed};
	struct hm_wi_sum sum;
	struct afeed f;
	int rc;

	memset(out, 0, sizeof(*out));
	out->plan = plan;
	hm_wi_sum_init(&sum, plan->line_size);
	hm_wi_sum_add(&sum, acc, n);
	/* batches when they pay off, or when one build would exceed the line bound */
	if (hm_wi_sum_batched(&sum) || (plan->max_lines && sum.nlines > plan->max_lines)) {
		size_t b = batch_of(plan, &sum);

		r.whole = 0;
		r.batch = n < b ? n : b;
	}
	f = (struct afeed){acc, n, r.batch};
	r.feed_arg = &f;
	rc = run_common(&r, &sum, out, err);
	hm_wi_sum_free(&sum);
	return rc;
}

int hm_whatif_run_feed(struct hm_arena *a, const struct hm_wi_sum *sum,
		       const struct hm_wi_plan *plan, uint64_t window_ns, hm_wi_feed feed,
		       void *feed_arg, struct hm_wi_before *before, struct hm_whatif *out,
		       struct hm_err *err)
{
	struct wrun r = {.a = a, .plan = plan, .batch = HM_WI_BATCH, .window_ns = window_ns,
			 .feed = feed, .feed_arg = feed_arg, .before = before};

	memset(out, 0, sizeof(*out));
	out->plan = plan;
	r.batch = batch_of(plan, sum);
	return run_common(&r, sum, out, err);
}

void hm_whatif_free(struct hm_whatif *w)
{
	free((void *)w->replayed);
	w->replayed = NULL;
}

const char *hm_wi_change_name(enum hm_wi_change_kind k)
{
	return k == HM_WI_STOPS ? "stops" : k == HM_WI_STARTS ? "starts" : "stays";
}
