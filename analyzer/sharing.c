/* Each line's verdict: which rows are touched by different threads with at least one of
 * them writing, whether their bytes overlap (true sharing) or not (false sharing), and
 * the one-sentence fix computed from the rows' offsets. */
#include "analyzer/lines.h"
#include "analyzer/lines_int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "analyzer/c2c.h"
#include "analyzer/sharing_fix.h"
#include "resolve/watched.h"
#include "core/sort.h"
#include "core/oom.h"

#define MAX_ROWS 128	/* rows examined per line, by records: pairs grow as the square */

/* --- interleavings --- */

/* Who holds the line, as watch samples (every access to the watched bytes) show it, with
 * one cache per thread: a writer holds it modified; readers share a clean copy. Only the
 * first two distinct sharers are kept: two are enough to know another thread has one.
 * (struct hm_own, lines.h: a streamed build carries it from batch to batch.) */
static void own_share(struct hm_own *o, uint32_t tid, uint32_t row)
{
	for (uint32_t i = 0; i < o->ns && i < 2; i++) {
		if (o->s[i] == tid) {
			o->s_row[i] = row;
			return;
		}
	}
	if (o->ns < 2) {
		o->s[o->ns] = tid;
		o->s_row[o->ns] = row;
	}
	o->ns++;
}

/* One access; returns 1 when it moves the line out of another thread's cache (a load of
 * a line another thread modified, or a store to a line another thread holds), with the
 * row that thread last used in *from. */
static int own_step(struct hm_own *o, uint32_t tid, int wr, uint32_t row, uint32_t *from)
{
	int moved = 0;

	if (!wr) {
		if (o->has_w && o->w == tid)
			return 0;
		if (o->has_w) {
			moved = 1;
			*from = o->w_row;
			o->has_w = 0;
			o->ns = 0;
			own_share(o, o->w, o->w_row);
		}
		own_share(o, tid, row);
		return moved;
	}
	if (o->has_w && o->w != tid) {
		moved = 1;
		*from = o->w_row;
	}
	for (uint32_t i = 0; !o->has_w && i < o->ns && i < 2 && !moved; i++) {
		if (o->s[i] != tid) {
			moved = 1;
			*from = o->s_row[i];
		}
	}
	o->has_w = 1;
	o->w = tid;
	o->w_row = row;
	o->ns = 0;
	return moved;
}

static int cmp_rowpair(const void *x, const void *y)
{
	const struct hm_rowpair *a = x, *b = y;

	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	return a->b < b->b ? -1 : a->b > b->b;
}

/* ln->inter from one entry per event. */
static void line_events(struct hm_arena *a, struct hm_line *ln, struct hm_rowpair *ev,
			size_t nev)
{
	hm_sort(ev, nev, sizeof(*ev), cmp_rowpair);
	ln->nr_inter = 0;
	for (size_t i = 0; i < nev; i++)
		ln->nr_inter += !i || cmp_rowpair(&ev[i], &ev[i - 1]);
	ln->inter = hm_arena_alloc(a, ln->nr_inter * sizeof(*ln->inter));
	ln->nr_inter = 0;
	for (size_t i = 0; i < nev; i++) {
		if (!i || cmp_rowpair(&ev[i], &ev[i - 1]))
			ln->inter[ln->nr_inter++] = (struct hm_rowpair){ ev[i].a, ev[i].b, 0 };
		ln->inter[ln->nr_inter - 1].n++;
	}
}

/* Each source on its own. Timer: a conflict is two consecutive timer samples of the line
 * from different threads, at least one writing, at most window_ns apart. Watch: a
 * transfer is an own_step() move. */
/* Events are counted in a matrix when the line has few rows (the usual case), else listed
 * and sorted. */
#define MAT_ROWS 32

struct events {
	uint64_t mat[MAT_ROWS * MAT_ROWS];	/* [a * n + b], a <= b, n rows */
	uint32_t n;
	struct hm_rowpair *ev;
	size_t nev;
	int use_mat;
};

static void add_event(struct events *e, uint32_t r1, uint32_t r2)
{
	uint32_t a = r1 < r2 ? r1 : r2, b = r1 < r2 ? r2 : r1;

	if (e->use_mat)
		e->mat[a * e->n + b]++;
	else
		e->ev[e->nev++] = (struct hm_rowpair){ a, b, 1 };
}

static void mat_events(struct hm_arena *a, struct hm_line *ln, const struct events *e)
{
	uint32_t n = ln->nr_fields, k = 0;

	for (uint32_t i = 0; i < n; i++)
		for (uint32_t j = i; j < n; j++)
			k += e->mat[i * n + j] != 0;
	ln->inter = hm_arena_alloc(a, k * sizeof(*ln->inter));
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t j = i; j < n; j++)
			if (e->mat[i * n + j])
				ln->inter[ln->nr_inter++] = (struct hm_rowpair){ i, j, e->mat[i * n + j] };
}

/* An event one of whose rows came in with the carried state: the merge applies it once
 * it knows the batch row's merged row (lines_merge.c). */
static void add_edge(struct hm_arena *a, struct hm_line *ln, uint32_t from, uint32_t to,
		     int conflict)
{
	ln->edges = hm_lines_grow(a, ln->edges, ln->nr_edges, 1, sizeof(*ln->edges));
	ln->edges[ln->nr_edges++] = (struct hm_iedge){ from & ~HM_ROW_CARRIED, to, (uint8_t)conflict };
}

void hm_sharing_interleave(struct hm_arena *a, struct hm_line *ln, const struct hm_lrec *r,
			   const uint32_t *rows, size_t m, uint64_t window_ns,
			   struct hm_rowpair *scratch, const struct hm_icarry *in, int carry)
{
	struct hm_icarry st = { 0 };
	uint32_t from = 0;
	struct events e;
	uint64_t total = 0;

	if (in) {	/* the merged line's rows: tagged, they are not this batch's */
		st = *in;
		st.prev_row |= HM_ROW_CARRIED;
		st.own.w_row |= HM_ROW_CARRIED;
		st.own.s_row[0] |= HM_ROW_CARRIED;
		st.own.s_row[1] |= HM_ROW_CARRIED;
	}
	e.use_mat = ln->nr_fields <= MAT_ROWS;
	e.n = ln->nr_fields;
	e.ev = scratch;
	e.nev = 0;
	if (e.use_mat)
		memset(e.mat, 0, e.n * e.n * sizeof(e.mat[0]));
	for (size_t i = 0; i < m; i++) {
		const struct hm_lrec *x = &r[i];
		struct hm_lfield *f = &ln->fields[rows[i]];

		if (x->source == HM_SRC_WATCH &&
		    own_step(&st.own, x->tid, x->writes, rows[i], &from)) {
			ln->transfers++;
			f->transfers++;
			if (from & HM_ROW_CARRIED) {
				add_edge(a, ln, from, rows[i], 0);
			} else {
				add_event(&e, from, rows[i]);
				total++;
			}
		}
		if (x->source != HM_SRC_TIMER)
			continue;
		/* Which of two samples a tick apart comes first says little (CPUs tick
		 * together), so a conflict counts for both rows. */
		if (st.has_prev && st.prev_tid != x->tid && (st.prev_writes || x->writes) &&
		    x->time - st.prev_time <= window_ns) {
			ln->conflicts++;
			f->conflicts++;
			if (st.prev_row & HM_ROW_CARRIED) {
				add_edge(a, ln, st.prev_row, rows[i], 1);
			} else {
				if (st.prev_row != rows[i])
					ln->fields[st.prev_row].conflicts++;
				add_event(&e, st.prev_row, rows[i]);
				total++;
			}
		}
		st.has_prev = 1;
		st.prev_tid = x->tid;
		st.prev_writes = x->writes;
		st.prev_time = x->time;
		st.prev_row = rows[i];
	}
	if (total && e.use_mat)
		mat_events(a, ln, &e);
	else if (total)
		line_events(a, ln, e.ev, e.nev);
	if (carry)
		ln->carry = memcpy(hm_arena_alloc(a, sizeof(st)), &st, sizeof(st));
}

/* --- verdicts --- */

static int same_thread(const struct hm_count *a, const struct hm_count *b)
{
	return a->id == b->id && a->pid == b->pid;
}

static int is_writer(const struct hm_count *t)
{
	return t->stores || t->locked;
}

/* A writer of row w and a different thread of row r, the busiest such pair. */
static int find_pair(const struct hm_lfield *w, const struct hm_lfield *r, uint32_t *tw,
		     uint32_t *tr)
{
	for (uint32_t i = 0; i < w->nr_threads; i++) {
		if (!is_writer(&w->threads[i]))
			continue;
		for (uint32_t j = 0; j < r->nr_threads; j++) {
			if (same_thread(&w->threads[i], &r->threads[j]))
				continue;
			*tw = w->threads[i].id;
			*tr = r->threads[j].id;
			return 1;
		}
	}
	return 0;
}

static uint32_t extent(const struct hm_lfield *f)
{
	return f->size ? f->size : 1;	/* unknown size: at least the first byte */
}

static int overlaps(const struct hm_lfield *a, const struct hm_lfield *b)
{
	return a->offset < b->offset + extent(b) && b->offset < a->offset + extent(a);
}

static uint64_t inter_events(const struct hm_line *ln, uint32_t a, uint32_t b)
{
	for (uint32_t i = 0; i < ln->nr_inter; i++)
		if (ln->inter[i].a == a && ln->inter[i].b == b)
			return ln->inter[i].n;
	return 0;
}

/* Heaviest first: interleavings seen, then the lesser side's records. */
static int cmp_pair(const void *x, const void *y)
{
	const struct hm_pair *a = x, *b = y;

	if (a->events != b->events)
		return a->events > b->events ? -1 : 1;
	if (a->weight != b->weight)
		return a->weight > b->weight ? -1 : 1;
	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	return a->b < b->b ? -1 : a->b > b->b;
}

static int cmp_rows_by_records(const void *x, const void *y, void *arg)
{
	const struct hm_lfield *f = arg;
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	if (f[a].records != f[b].records)
		return f[a].records > f[b].records ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* Rows a <= b, when a thread writes one and another thread touches the other. */
static int make_pair(const struct hm_line *ln, uint32_t a, uint32_t b, struct hm_pair *p)
{
	const struct hm_lfield *fa = &ln->fields[a], *fb = &ln->fields[b];
	uint32_t ta, tb;

	if (find_pair(fa, fb, &ta, &tb)) {
		p->tid_a = ta;
		p->tid_b = tb;
	} else if (find_pair(fb, fa, &tb, &ta)) {
		p->tid_a = ta;
		p->tid_b = tb;
	} else {
		return 0;
	}
	p->a = a;
	p->b = b;
	p->kind = a == b || overlaps(fa, fb) ? HM_V_TRUE_SHARING : HM_V_FALSE_SHARING;
	p->events = inter_events(ln, a, b);
	p->weight = fa->records < fb->records ? fa->records : fb->records;
	return 1;
}

static void line_pairs(struct hm_arena *a, struct hm_line *ln)
{
	uint32_t nr = ln->nr_fields < MAX_ROWS ? ln->nr_fields : MAX_ROWS;
	uint32_t rows[MAX_ROWS], cap = 16, n = 0;
	struct hm_pair *all = malloc(cap * sizeof(*all));

	if (!all)
		hm_oom();
	for (uint32_t i = 0; i < ln->nr_fields; i++)
		if (i < MAX_ROWS)
			rows[i] = i;
	if (ln->nr_fields > MAX_ROWS) {
		uint32_t *tmp = malloc(ln->nr_fields * sizeof(*tmp));

		if (!tmp)
			hm_oom();
		for (uint32_t i = 0; i < ln->nr_fields; i++)
			tmp[i] = i;
		qsort_r(tmp, ln->nr_fields, sizeof(*tmp), cmp_rows_by_records, ln->fields);
		memcpy(rows, tmp, sizeof(rows));
		free(tmp);
	}
	for (uint32_t i = 0; i < nr; i++) {
		for (uint32_t j = i; j < nr; j++) {
			uint32_t x = rows[i] < rows[j] ? rows[i] : rows[j];
			uint32_t y = rows[i] < rows[j] ? rows[j] : rows[i];

			if (n == cap && !(all = realloc(all, (cap *= 2) * sizeof(*all))))
				hm_oom();
			n += make_pair(ln, x, y, &all[n]);
		}
	}
	hm_sort(all, n, sizeof(*all), cmp_pair);
	ln->nr_pairs = n < HM_LINES_MAX_PAIRS ? n : HM_LINES_MAX_PAIRS;
	ln->pairs = hm_arena_alloc(a, ln->nr_pairs * sizeof(*ln->pairs));
	memcpy(ln->pairs, all, ln->nr_pairs * sizeof(*ln->pairs));
	free(all);
}

static const struct hm_pair *top_of_kind(const struct hm_line *ln, enum hm_verdict kind)
{
	for (uint32_t i = 0; i < ln->nr_pairs; i++)
		if (ln->pairs[i].kind == kind)
			return &ln->pairs[i];
	return NULL;
}

/* The top pair's two sides: what the pair's threads did on its rows. */
static void pair_sides(struct hm_line *ln, const struct hm_pair *p)
{
	const uint32_t row[2] = { p->a, p->b }, tid[2] = { p->tid_a, p->tid_b };

	for (int s = 0; s < 2; s++) {
		const struct hm_lfield *f = &ln->fields[row[s]];

		ln->ev_records[s] = ln->ev_writes[s] = 0;
		for (uint32_t i = 0; i < f->nr_threads; i++) {
			if (f->threads[i].id != tid[s])
				continue;
			ln->ev_records[s] = f->threads[i].records;
			ln->ev_writes[s] = f->threads[i].writes;	/* a locked store once */
		}
	}
}

/* Sampled evidence needs a minimum; watch counts every access, so one store is a fact.
 * HITM loads are the hardware seeing the line move: they stand on their own. */
static enum hm_confidence confidence(const struct hm_line *ln, const struct hm_pair *p,
				     int exact)
{
	uint64_t least = ln->ev_records[0] < ln->ev_records[1] ? ln->ev_records[0]
							       : ln->ev_records[1];
	uint64_t stores = ln->ev_writes[0] > ln->ev_writes[1] ? ln->ev_writes[0]
							      : ln->ev_writes[1];
	int moved = p->events || (ln->c2c && hm_c2c_hitm(ln->c2c));

	if (exact)	/* counts, not samples: only a one-off side falls short */
		return least <= HM_ONE_OFF ? HM_CONF_LOW : HM_CONF_HIGH;
	if (ln->c2c && hm_c2c_hitm(ln->c2c))
		return HM_CONF_HIGH;
	if (least < HM_MIN_RECORDS || stores < HM_MIN_STORES)
		return HM_CONF_LOW;
	return least >= HM_HIGH_RECORDS && moved ? HM_CONF_HIGH : HM_CONF_MEDIUM;
}

static const char *side_text(struct hm_arena *a, const struct hm_line *ln, uint32_t row,
			     uint32_t tid, int s)
{
	return hm_arena_printf(a, "thread %u %s %s (%" PRIu64 " record%s, %" PRIu64 " write%s)",
			       tid, ln->ev_writes[s] ? "writes" : "reads", ln->fields[row].field,
			       ln->ev_records[s], ln->ev_records[s] == 1 ? "" : "s",
			       ln->ev_writes[s], ln->ev_writes[s] == 1 ? "" : "s");
}

static const char *evidence(struct hm_arena *a, const struct hm_line *ln,
			    const struct hm_pair *p, enum hm_source src)
{
	const char *what = src == HM_SRC_WATCH ? "transfer" : src == HM_SRC_PMU ? "HITM load"
										 : "conflict";
	uint64_t n = src == HM_SRC_PMU ? (ln->c2c ? hm_c2c_hitm(ln->c2c) : 0) : p->events;

	return hm_arena_printf(a, "%s; %s; %" PRIu64 " %s%s %s, on %u CPU%s",
			       side_text(a, ln, p->a, p->tid_a, 0),
			       side_text(a, ln, p->b, p->tid_b, 1), n, what, n == 1 ? "" : "s",
			       src == HM_SRC_PMU ? "on the line" : "between them", ln->nr_cpus,
			       ln->nr_cpus == 1 ? "" : "s");
}

/* "confirmed: N transfers in T s (watched X% of the time)"; pct < 0: armed the whole
 * time, T the line's first to last access. */
static const char *watch_evidence(struct hm_arena *a, const struct hm_line *ln,
				  const struct hm_pair *top, double secs, double pct)
{
	const char *watched = pct < 0 ? " of watching"
				      : hm_arena_printf(a, " (watched %.0f%% of the time)", pct);

	return hm_arena_printf(a, "%s: %s%" PRIu64 " transfer%s in %.2f s%s; %s",
			       top->events ? "confirmed" : "not confirmed",
			       top->events ? "" : "threads touched both, but ", top->events,
			       top->events == 1 ? "" : "s", secs, watched,
			       evidence(a, ln, top, HM_SRC_WATCH));
}

void hm_sharing_watched(struct hm_arena *a, struct hm_lines *l, const struct hm_watched *w)
{
	if (!w->nr || l->source != HM_SRC_WATCH)
		return;
	for (size_t i = 0; i < l->nr; i++) {
		struct hm_line *ln = &l->lines[i];
		const struct hm_pair *top = ln->nr_pairs ? &ln->pairs[0] : NULL;
		const struct hm_lfield *fa, *fb;
		uint64_t both, span;

		if (!top || !ln->evidence || ln->confidence == HM_CONF_LOW)
			continue;
		fa = &ln->fields[top->a];
		fb = &ln->fields[top->b];
		both = hm_watched_both(w, ln->addr + fa->offset, extent(fa), ln->addr + fb->offset,
				       extent(fb), &span);
		if (span)
			ln->evidence = watch_evidence(a, ln, top, (double)span / 1e9,
						      100.0 * (double)both / (double)span);
	}
}

void hm_sharing_line(struct hm_arena *a, struct hm_line *ln, uint32_t line_size,
		     int cpus_known, enum hm_source src)
{
	const struct hm_pair *top;

	ln->verdict = HM_V_PRIVATE;
	ln->confidence = HM_CONF_NONE;
	ln->latent = 0;
	ln->evidence = ln->advice = NULL;
	ln->nr_pairs = 0;
	ln->pairs = NULL;
	ln->fix = NULL;
	if (hm_sharing_percpu_local(a, ln) || hm_sharing_spin(a, ln))
		return;
	if (ln->nr_threads < 2)
		return;
	if (!ln->stores && !ln->locked) {
		ln->verdict = HM_V_READ_ONLY;
		return;
	}
	line_pairs(a, ln);
	if (!ln->nr_pairs)
		return;
	top = &ln->pairs[0];
	pair_sides(ln, top);
	/* Threads time-sliced on one CPU hand the line over inside one cache: nothing moves
	 * in this recording, but it will as soon as they run apart. */
	if (cpus_known && ln->nr_cpus < 2) {
		ln->latent = 1;
		ln->latent_cpu = ln->nr_cpus ? ln->cpus[0].id : 0;
	}
	ln->confidence = confidence(ln, top, src == HM_SRC_WATCH);
	ln->evidence = evidence(a, ln, top, src);
	if (src == HM_SRC_WATCH && ln->confidence != HM_CONF_LOW)	/* every access trapped */
		ln->evidence = watch_evidence(a, ln, top, (double)(ln->t_last - ln->t_first) / 1e9,
					      -1);
	if (ln->latent)
		ln->advice = hm_arena_printf(a, "latent: every access to this line ran on CPU %u "
					     "in this recording, so the line never moved; it "
					     "will as soon as threads %u and %u run on different "
					     "CPUs", ln->latent_cpu, top->tid_a, top->tid_b);
	if (ln->confidence == HM_CONF_LOW && src == HM_SRC_WATCH) {
		ln->verdict = HM_V_FEW_SAMPLES;
		ln->advice = hm_arena_printf(a, "a one-off, not contention: one side made at "
					     "most %d accesses in the whole run, and watch counts "
					     "every access", HM_ONE_OFF);
		return;
	}
	if (ln->confidence == HM_CONF_LOW) {
		ln->verdict = HM_V_FEW_SAMPLES;
		ln->advice = hm_arena_printf(a, "too few samples to call it %s (each side needs "
					     "%d records and the writer %d stores): record "
					     "longer, raise the rate (-F 20000), or count every "
					     "access: hitmap record --confirm THIS.data",
					     top->kind == HM_V_TRUE_SHARING ? "true sharing"
									  : "false sharing",
					     HM_MIN_RECORDS, HM_MIN_STORES);
		return;
	}
	ln->verdict = top->kind;
	if (top->kind == HM_V_TRUE_SHARING)
		ln->fix = hm_sharing_fix_true(a, ln, top, line_size);
	else
		ln->fix = hm_sharing_fix_false(a, ln, top_of_kind(ln, HM_V_FALSE_SHARING), line_size);
}

void hm_sharing_classify(struct hm_arena *a, struct hm_lines *l)
{
	for (size_t i = 0; i < l->nr; i++)
		hm_sharing_line(a, &l->lines[i], l->line_size, l->cpus_known, l->source);
	hm_lines_rank(l);
}
