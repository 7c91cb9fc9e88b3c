/* --suggest TYPE: group the members by who uses them, one group per line (or run of
 * lines), and fill the slack with members nobody touched.
 *
 * Two members may share a line when, in every recorded object, either one thread uses
 * both, or no one writes either: that is exactly when hm_sharing_line() finds no pair
 * on their line. A member that one thread writes and another uses in the same object is
 * true sharing; no layout removes it, so it gets a line of its own and the prediction
 * names it. Groups are formed greedily, busiest member first. */
#include "analyzer/whatif.h"

#include <stdlib.h>
#include <string.h>

#include "symbolize/shape.h"
#include "core/sort.h"
#include "core/oom.h"

/* One member, or the bitfields of one storage unit. */
struct piece {
	uint32_t *members;		/* old indexes */
	uint32_t nr;
	uint64_t off, size;
	uint32_t align;
	uint64_t records;		/* accesses */
	size_t tuples;			/* records of the summary: states at most */
	struct state *st;		/* per object, by object */
	size_t nst;
	int group;
};

/* Who used a piece (or a group) in one object. */
struct state {
	uint32_t obj;
	uint64_t thread;		/* pid << 32 | tid: the first seen */
	uint8_t multi, write;
};

struct rec {
	uint32_t space;
	uint64_t base, elem;		/* the object: base and array element */
	uint32_t piece;
	uint64_t thread;
	uint8_t write;
};

struct grp {
	struct state *st;
	size_t nst;
	uint32_t *pieces;
	uint32_t nr;
	uint64_t records;
	int alone;			/* true sharing: its own line */
};

static int cmp_rec(const void *x, const void *y)
{
	const struct rec *a = x, *b = y;

	if (a->space != b->space)
		return a->space < b->space ? -1 : 1;
	if (a->base != b->base)
		return a->base < b->base ? -1 : 1;
	if (a->elem != b->elem)
		return a->elem < b->elem ? -1 : 1;
	if (a->piece != b->piece)
		return a->piece < b->piece ? -1 : 1;
	return a->thread < b->thread ? -1 : a->thread > b->thread;
}

static uint64_t round_up(uint64_t x, uint64_t a)
{
	return a > 1 ? (x + a - 1) / a * a : x;
}

static uint32_t pieces_of(struct hm_arena *a, const struct hm_type *t, uint32_t line_size,
			  struct piece **out)
{
	struct hm_shape sh;
	struct piece *p;
	uint32_t n = 0;

	hm_shape_compute(a, t, line_size, &sh);
	p = hm_arena_alloc(a, (sh.nr + 1) * sizeof(*p));
	for (uint32_t i = 0; i < sh.nr; i++) {
		const struct hm_member_shape *ms = &sh.ms[i];
		uint32_t al = ms->m->align ? ms->m->align : sh.packed ? 1 : ms->align;
		struct piece *q = n ? &p[n - 1] : NULL;

		if (!q || ms->offset >= q->off + q->size) {
			q = &p[n++];
			q->members = hm_arena_alloc(a, (sh.nr - i) * sizeof(*q->members));
			q->off = ms->offset;
			q->group = -1;
		}
		q->members[q->nr++] = i;
		if (ms->offset + ms->size > q->off + q->size)
			q->size = ms->offset + ms->size - q->off;
		q->align = al > q->align ? al : q->align;
	}
	*out = p;
	return n;
}

/* Pieces are by offset: the last one starting at or before in, if in lies inside it. */
static int32_t piece_at(const struct piece *p, uint32_t n, uint64_t in)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (p[mid].off <= in)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || in >= p[lo - 1].off + (p[lo - 1].size ? p[lo - 1].size : 1))
		return -1;
	return (int32_t)(lo - 1);
}

/* The accesses to objects of type t as records, sorted by object, piece and thread. */
static size_t records(const struct hm_wi_sum *sum, const struct hm_type *t,
		      struct piece *p, uint32_t np, struct rec **out)
{
	const struct hm_access *acc = sum->acc;
	size_t n = sum->n;
	struct rec *r = malloc((n ? n : 1) * sizeof(*r));
	size_t m = 0;

	if (!r)
		hm_oom();	/* as the arena does */
	for (size_t i = 0; i < n; i++) {
		const struct hm_access *x = &acc[i];
		const struct hm_type *e = hm_wi_elem(x->type, NULL);
		int32_t k;

		if (!e || !hm_type_name(e) || strcmp(hm_type_name(e), hm_type_name(t)) || !e->size || !x->obj_base ||
		    !x->s.addr || (k = piece_at(p, np, x->field_off % e->size)) < 0)
			continue;
		r[m++] = (struct rec){
			.space = hm_lines_space(x),
			.base = x->obj_base, .elem = x->field_off / e->size, .piece = (uint32_t)k,
			.thread = (uint64_t)x->s.pid << 32 | x->s.tid, .write = (uint8_t)hm_lines_writes(x),
		};
		p[k].records += sum->w[i];
		p[k].tuples++;
	}
	hm_sort(r, m, sizeof(*r), cmp_rec);
	*out = r;
	return m;
}

/* Each piece's state per object, in object order. */
static void states(struct hm_arena *a, const struct rec *r, size_t m, struct piece *p, uint32_t np)
{
	uint32_t obj = 0;

	for (uint32_t k = 0; k < np; k++)
		p[k].st = hm_arena_alloc(a, (p[k].tuples + 1) * sizeof(*p[k].st));
	for (size_t i = 0; i < m; i++) {
		struct piece *q = &p[r[i].piece];
		struct state *s;

		if (i && (r[i].space != r[i - 1].space || r[i].base != r[i - 1].base ||
			  r[i].elem != r[i - 1].elem))
			obj++;
		s = q->nst ? &q->st[q->nst - 1] : NULL;
		if (!s || s->obj != obj) {
			s = &q->st[q->nst++];
			*s = (struct state){obj, r[i].thread, 0, 0};
		}
		s->multi |= s->thread != r[i].thread;
		s->write |= r[i].write;
	}
}

/* The union of two state lists into out; without out, a check: -1 when some object would
 * have a writer and another thread on one line. */
static int merge(const struct state *a, size_t na, const struct state *b, size_t nb,
		 struct state *out, size_t *nout)
{
	size_t i = 0, j = 0, k = 0;

	while (i < na || j < nb) {
		struct state s;

		if (j == nb || (i < na && a[i].obj < b[j].obj)) {
			s = a[i++];
		} else if (i == na || b[j].obj < a[i].obj) {
			s = b[j++];
		} else {
			s = a[i];
			s.multi |= b[j].multi || b[j].thread != a[i].thread;
			s.write |= b[j].write;
			i++;
			j++;
		}
		if (!out && s.multi && s.write)
			return -1;
		if (out)
			out[k] = s;
		k++;
	}
	*nout = k;
	return 0;
}

static int alone(const struct piece *q)
{
	for (size_t i = 0; i < q->nst; i++)
		if (q->st[i].multi && q->st[i].write)
			return 1;
	return 0;
}

static int cmp_busy(const void *x, const void *y, void *arg)
{
	const struct piece *p = arg;
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	if (p[a].records != p[b].records)
		return p[a].records > p[b].records ? -1 : 1;
	return a < b ? -1 : a > b;
}

static void join(struct grp *g, struct piece *p, uint32_t k)
{
	size_t nn;
	struct state *st = malloc((g->nst + p[k].nst + 1) * sizeof(*st));

	if (!st)
		hm_oom();
	merge(g->st, g->nst, p[k].st, p[k].nst, st, &nn);
	free(g->st);
	g->st = st;
	g->nst = nn;
	g->pieces[g->nr++] = k;
	g->records += p[k].records;
}

/* Greedy: the busiest piece first, into the first group it can share lines with. */
static uint32_t form_groups(struct piece *p, uint32_t np, struct grp *g)
{
	uint32_t *by = malloc((np + 1) * sizeof(*by)), ng = 0;

	if (!by)
		hm_oom();
	for (uint32_t k = 0; k < np; k++)
		by[k] = k;
	qsort_r(by, np, sizeof(*by), cmp_busy, p);
	for (uint32_t i = 0; i < np && p[by[i]].records; i++) {
		uint32_t k = by[i], j;
		size_t nn;

		for (j = 0; !alone(&p[k]) && j < ng; j++)
			if (!g[j].alone && merge(g[j].st, g[j].nst, p[k].st, p[k].nst, NULL, &nn) == 0)
				break;
		if (alone(&p[k]) || j == ng) {
			j = ng++;
			g[j].alone = alone(&p[k]);
		}
		join(&g[j], p, k);
		p[k].group = (int)j;
	}
	free(by);
	return ng;
}

static uint64_t group_size(const struct piece *p, const uint32_t *pieces, uint32_t nr,
			   const struct piece *extra)
{
	uint64_t off = 0;

	for (uint32_t i = 0; i < nr; i++)
		off = round_up(off, p[pieces[i]].align) + p[pieces[i]].size;
	if (extra)
		off = round_up(off, extra->align) + extra->size;
	return off;
}

static int cmp_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return a < b ? -1 : a > b;
}

static int cmp_first(const void *x, const void *y)
{
	const struct grp *a = x, *b = y;

	if (!a->nr || !b->nr)
		return !a->nr - !b->nr;
	return a->pieces[0] < b->pieces[0] ? -1 : a->pieces[0] > b->pieces[0];
}

static int cmp_size(const void *x, const void *y, void *arg)
{
	const struct piece *p = arg;
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	if (p[a].size != p[b].size)
		return p[a].size > p[b].size ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* Groups in the order of their first member, busy pieces in old order; then untouched
 * pieces, largest first, into the first group whose last line has room, the rest into
 * the last group. */
static void place_cold(struct piece *p, uint32_t np, struct grp *g, uint32_t ng, uint32_t L)
{
	uint32_t *cold = malloc((np + 1) * sizeof(*cold)), nc = 0;

	if (!cold)
		hm_oom();
	for (uint32_t j = 0; j < ng; j++)
		hm_sort(g[j].pieces, g[j].nr, sizeof(*g[j].pieces), cmp_u32);
	hm_sort(g, ng, sizeof(*g), cmp_first);
	for (uint32_t k = 0; k < np; k++)
		if (p[k].group < 0 && !p[k].records)
			cold[nc++] = k;
	qsort_r(cold, nc, sizeof(*cold), cmp_size, p);
	for (uint32_t i = 0; i < nc; i++) {
		uint32_t k = cold[i], j;

		for (j = 0; j < ng; j++) {
			uint64_t now = group_size(p, g[j].pieces, g[j].nr, NULL);

			if (group_size(p, g[j].pieces, g[j].nr, &p[k]) <= round_up(now ? now : 1, L))
				break;
		}
		if (j == ng)
			j = ng - 1;
		g[j].pieces[g[j].nr++] = k;
		p[k].group = (int)j;
	}
	free(cold);
}

static enum hm_wi_gkind kind_of(const struct grp *g, uint32_t *nr_threads, uint64_t *tid)
{
	int write = 0, same = 1;

	*nr_threads = 0;
	for (size_t i = 0; i < g->nst; i++) {
		write |= g->st[i].write;
		same &= !g->st[i].multi && g->st[i].thread == g->st[0].thread;
	}
	if (g->nst)
		*tid = g->st[0].thread;
	if (!g->nst)
		return HM_WG_COLD;
	if (g->alone)
		return HM_WG_SHARED;
	if (!write)
		return HM_WG_READ;
	return same ? HM_WG_WRITER : HM_WG_PER_OBJECT;
}

/* Distinct threads of a group, from the records. */
static uint32_t threads_of(const struct rec *r, size_t m, const struct piece *p, int gi)
{
	uint64_t seen[64];
	uint32_t n = 0;

	for (size_t i = 0; i < m; i++) {
		uint32_t k;

		if (p[r[i].piece].group != gi)
			continue;
		for (k = 0; k < n && seen[k] != r[i].thread; k++)
			;
		if (k == n && n < 64)
			seen[n++] = r[i].thread;
	}
	return n;
}

static const char *member_name(struct hm_arena *a, const struct hm_type *t, uint32_t idx)
{
	uint32_t nr;
	const struct hm_member *m = hm_type_members(t, &nr);

	return m[idx].name ? m[idx].name : hm_arena_printf(a, "#%u", idx);
}

static void to_edits(struct hm_arena *a, const struct hm_type *t, const struct piece *p,
		     const struct grp *g, uint32_t ng, struct hm_wi_suggestion *out)
{
	uint32_t nr, k = 0;
	const char **order;

	hm_type_members(t, &nr);
	order = hm_arena_alloc(a, (nr + 1) * sizeof(*order));
	out->edits = hm_arena_alloc(a, (ng + 1) * sizeof(*out->edits));
	out->edits[0] = (struct hm_wi_edit){.kind = HM_WI_ORDER, .type = hm_type_name(t), .order = order};
	out->nr_edits = 1;
	for (uint32_t j = 0; j < ng; j++) {
		const struct piece *first = &p[g[j].pieces[0]];

		for (uint32_t i = 0; i < g[j].nr; i++)
			for (uint32_t q = 0; q < p[g[j].pieces[i]].nr; q++)
				order[k++] = member_name(a, t, p[g[j].pieces[i]].members[q]);
		if (j && out->needed)
			out->edits[out->nr_edits++] = (struct hm_wi_edit){
				.kind = HM_WI_ALIGN, .type = hm_type_name(t),
				.field = member_name(a, t, first->members[0]),
				.value = out->line_size,
			};
	}
	out->edits[0].nr_order = k;
	if (!out->needed)	/* nothing to separate: the layout as it is */
		for (uint32_t i = 0; i < nr; i++)
			order[i] = member_name(a, t, i);
	if (out->per_instance && k)	/* the first member aligned aligns the type */
		out->edits[out->nr_edits++] = (struct hm_wi_edit){
			.kind = HM_WI_ALIGN, .type = hm_type_name(t), .field = order[0],
			.value = out->line_size,
		};
}

static void describe(struct hm_arena *a, const struct rec *r, size_t m, struct piece *p,
		     uint32_t np, struct grp *g, uint32_t ng, struct hm_wi_suggestion *out)
{
	uint32_t real = 0;

	out->groups = hm_arena_alloc(a, (ng + 1) * sizeof(*out->groups));
	out->nr_groups = ng;
	for (uint32_t j = 0; j < ng; j++) {
		struct hm_wi_group *o = &out->groups[j];
		uint64_t th = 0;

		for (uint32_t i = 0; i < g[j].nr; i++)
			p[g[j].pieces[i]].group = (int)j;
		o->kind = kind_of(&g[j], &o->nr_threads, &th);
		o->pid = (uint32_t)(th >> 32);
		o->tid = (uint32_t)th;
		o->records = g[j].records;
		o->members = hm_arena_alloc(a, (out->nr_members + 1) * sizeof(*o->members));
		for (uint32_t i = 0; i < g[j].nr; i++)
			for (uint32_t q = 0; q < p[g[j].pieces[i]].nr; q++) {
				o->members[o->nr++] = p[g[j].pieces[i]].members[q];
				out->group_of[p[g[j].pieces[i]].members[q]] = (int32_t)j;
			}
		real += o->kind != HM_WG_COLD;
	}
	for (uint32_t j = 0; j < ng; j++) {
		out->groups[j].nr_threads = threads_of(r, m, p, (int)j);
		/* Objects smaller than a line, or not aligned to one, sit beside each other
		 * (array elements, neighbouring allocations): each written by its own thread,
		 * they share lines that no reordering of members separates. */
		if (out->groups[j].kind == HM_WG_PER_OBJECT && out->groups[j].nr_threads > 1 &&
		    (out->t->size % out->line_size || hm_type_align(out->t) < out->line_size))
			out->per_instance = 1;
	}
	(void)np;
	out->needed = real > 1 || out->per_instance;
}

int hm_whatif_suggest(struct hm_arena *a, const struct hm_access *acc, size_t n,
		      const char *type, uint32_t line_size, struct hm_wi_suggestion *out,
		      struct hm_err *err)
{
	struct hm_wi_sum sum;
	int rc;

	hm_wi_sum_init(&sum, line_size);
	hm_wi_sum_add(&sum, acc, n);
	rc = hm_whatif_suggest_sum(a, &sum, type, line_size, out, err);
	hm_wi_sum_free(&sum);
	return rc;
}

int hm_whatif_suggest_sum(struct hm_arena *a, const struct hm_wi_sum *sum, const char *type,
			  uint32_t line_size, struct hm_wi_suggestion *out, struct hm_err *err)
{
	const struct hm_type *t = hm_wi_find_type(a, sum, type, err);
	struct piece *p;
	struct rec *r;
	struct grp *g;
	uint32_t np, ng;
	size_t m;

	memset(out, 0, sizeof(*out));
	if (!t)
		return -1;
	if (t->kind == HM_T_UNION)
		return hm_err_set(err, HM_EXIT_INPUT,
				  "%s is a union: its members share offset 0; suggest a layout "
				  "for the struct that holds it", type);
	out->type = hm_type_name(t);
	out->t = t;
	out->line_size = line_size ? line_size : 64;
	hm_type_members(t, &out->nr_members);
	out->group_of = hm_arena_alloc(a, (out->nr_members + 1) * sizeof(*out->group_of));
	np = pieces_of(a, t, out->line_size, &p);
	m = records(sum, t, p, np, &r);
	states(a, r, m, p, np);
	g = hm_arena_alloc(a, (np + 2) * sizeof(*g));
	for (uint32_t k = 0; k < np + 1; k++)
		g[k].pieces = hm_arena_alloc(a, (np + 1) * sizeof(*g[k].pieces));
	ng = form_groups(p, np, g);
	if (!ng)
		ng = 1;	/* nothing recorded: one cold group */
	place_cold(p, np, g, ng, out->line_size);
	describe(a, r, m, p, np, g, ng, out);
	to_edits(a, t, p, g, ng, out);
	for (uint32_t j = 0; j < ng; j++)
		free(g[j].st);
	free(r);
	return 0;
}

const char *hm_wi_gkind_name(enum hm_wi_gkind k)
{
	switch (k) {
	case HM_WG_WRITER: return "writer";
	case HM_WG_PER_OBJECT: return "per_object";
	case HM_WG_READ: return "read_mostly";
	case HM_WG_SHARED: return "true_sharing";
	case HM_WG_COLD: break;
	}
	return "cold";
}
