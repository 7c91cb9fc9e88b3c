/* The what-if run: the accesses replayed (whatif_replay.c) in batches into the lines of
 * both sides with their timings as recorded, and each shared line matched with the lines
 * its accesses go to (or come from). */
#include "analyzer/whatif_int.h"
#include "resolve/handoff.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "core/oom.h"

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
	struct hm_wi_bline *was;	/* lines before of the batch being placed */
	hm_wi_feed feed;		/* hands out the run's batches, once per pass */
	void *feed_arg;
	struct hm_wi_before *before;	/* the recorded side, built already, or NULL */
};

/* A held run as a feed: batches of r->batch accesses. */
struct afeed {
	const struct hm_access *acc;
	size_t n, batch;
};

static int array_feed(void *arg, const struct hm_wi_sink *sink, struct hm_err *err)
{
	const struct afeed *f = arg;

	(void)err;
	for (size_t off = 0; off < f->n; off += f->batch)
		if (sink->fn(f->acc + off, f->n - off < f->batch ? f->n - off : f->batch,
			     sink->fa))
			return -1;
	return 0;
}

struct pstate {
	struct wrun *r;
	struct hm_lines_acc *bl, *al;
	struct hm_handoff *apart;	/* the after side's thread, or NULL: all here */
	struct hm_wi_lpairs *t;
	const struct hm_lines *after;
	const struct hm_wi_lref *ia;
	struct hm_wi_counts *c;
	struct hm_err *err, aerr;	/* aerr: the after side's, on its thread */
	int dropped;
	struct hm_access *lent;		/* the after side's slot lent to the feed, or NULL */
	size_t fed;			/* accesses handed on through lent slots */
	int placed;			/* this thread places, the after side's only builds */
};

/* A chunk replayed into out (x itself: in place), HITMs dropped against ia, pairs
 * linked. The new layouts load through libdw: one thread places a pass's accesses,
 * the reading one when it lends the slots, else the after side's. */
static void place_chunk(struct pstate *ps, const struct hm_access *x, struct hm_access *out,
			size_t k)
{
	struct wrun *r = ps->r;

	if (ps->t)
		hm_wi_lines_of(r->was, x, k, r->plan->line_size);
	hm_wi_replay_batch(r->plan, r->ob, r->nob, x, k, out, r->flags, ps->c);
	if (ps->ia)
		ps->dropped |= hm_wi_drop_hitm(out, k, ps->after, ps->ia);
	if (ps->t)
		hm_wi_link_batch(ps->t, r->was, out, r->flags, k, r->plan->line_size);
}

/* The after side of a chunk: placed unless this pass's reading thread placed it, and its
 * lines added. */
static int after_chunk(struct pstate *ps, const struct hm_access *x, size_t k,
		       struct hm_err *err)
{
	if (ps->placed)
		return hm_lines_acc_add(ps->al, x, k, err);
	place_chunk(ps, x, ps->r->rep, k);
	return hm_lines_acc_add(ps->al, ps->r->rep, k, err);
}

static int after_apart(const struct hm_access *acc, size_t n, void *arg)
{
	struct pstate *ps = arg;

	return after_chunk(ps, acc, n, &ps->aerr);
}

/* Where this thread places (ps->placed), a chunk of at most HM_HANDOFF_CHUNK in the
 * after side's slot it was written into, handed on placed. */
static void hand_placed(struct pstate *ps, struct hm_access *s, size_t k)
{
	place_chunk(ps, s, s, k);
	hm_handoff_commit(ps->apart, k);
}

/* Where this thread places, a batch the feed wrote elsewhere: copied into slots in the
 * chunks hm_handoff_copy makes, each placed there before it is handed on. */
static int hand_copies(struct pstate *ps, const struct hm_access *x, size_t k)
{
	for (size_t i = 0; i < k; i += HM_HANDOFF_CHUNK) {
		size_t m = k - i < HM_HANDOFF_CHUNK ? k - i : HM_HANDOFF_CHUNK;
		struct hm_access *s = hm_handoff_slot(ps->apart);

		if (!s)
			return -1;
		memcpy(s, x + i, m * sizeof(*s));
		hand_placed(ps, s, m);
	}
	return 0;
}

/* With two threads the after side takes a copy of each chunk (the feed reuses its
 * buffer), while this thread reads the run and builds the before side from the recorded
 * accesses as they are, unless the first read built it (whatif_before.c): then this
 * thread places the copies, as the slots it lends. The sides' tables touch no type
 * (lines_merge.c), and each side builds in an arena of its own until it ends. */
static int pass_chunk(struct pstate *ps, const struct hm_access *x, size_t k)
{
	if (ps->placed)
		return hand_copies(ps, x, k);
	if (ps->apart ? hm_handoff_copy(ps->apart, x, k) : after_chunk(ps, x, k, ps->err))
		return -1;
	return ps->bl && hm_lines_acc_add(ps->bl, x, k, ps->err) ? -1 : 0;
}

/* A batch the feed hands out, replayed r->batch accesses at a time. */
static int pass_batch(const struct hm_access *x, size_t k, void *arg)
{
	struct pstate *ps = arg;
	struct hm_access *lent = ps->lent;

	ps->lent = NULL;
	if (lent && x == lent) {	/* written in the slot: placed there */
		ps->fed += k;
		hand_placed(ps, lent, k);
		return 0;
	}
	for (size_t off = 0; off < k; off += ps->r->batch)
		if (pass_chunk(ps, x + off, k - off < ps->r->batch ? k - off : ps->r->batch))
			return -1;
	return 0;
}

/* The after side's next slot, lent to a feed that writes its accesses one by one (when
 * this thread builds no side). It holds the chunk a copy would: at most HM_HANDOFF_CHUNK,
 * never past the end of an r->batch piece of the feed's HM_WI_BATCH batches, so the after
 * side's tables are built from the same chunks. */
static struct hm_access *pass_room(void *arg, size_t *max)
{
	struct pstate *ps = arg;
	size_t in_feed = ps->fed % HM_WI_BATCH, in_batch = in_feed % ps->r->batch;
	size_t m = HM_HANDOFF_CHUNK;

	if (ps->r->batch - in_batch < m)
		m = ps->r->batch - in_batch;
	if (HM_WI_BATCH - in_feed < m)
		m = HM_WI_BATCH - in_feed;
	*max = m;
	return ps->lent = hm_handoff_slot(ps->apart);
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
		struct hm_wi_lpairs *t, const struct hm_lines *after, const struct hm_wi_lref *ia,
		struct hm_wi_counts *c, struct hm_err *err)
{
	struct pstate ps = {.r = r, .bl = bl, .al = al, .t = t, .after = after, .ia = ia,
			    .c = c, .err = err};
	struct hm_wi_sink sink = {pass_batch, NULL, &ps};
	int rc;

	/* the after side beside the reading; room for 4 chunks in flight */
	if (r->plan->jobs > 1)
		ps.apart = hm_handoff_start(8 * HM_HANDOFF_CHUNK, after_apart, &ps);
	if (ps.apart && !bl) {	/* this thread only reads: it places, the other builds */
		sink.room = pass_room;
		ps.placed = 1;
	}
	rc = r->feed(r->feed_arg, &sink, err);
	if (hm_handoff_end(ps.apart) && (!rc || !err->msg[0])) {
		*err = ps.aerr;	/* the after side failed: the pass stopped there */
		rc = -1;
	}
	return rc ? -1 : ps.dropped;
}

/* One build of each side over the whole run (r->batch == r->n): exact, and cheaper per
 * distinct line than the batches' merged tables, at the cost of the replayed copy. */
static int run_whole(struct wrun *r, struct hm_whatif *out, struct hm_wi_lpairs *t,
		     struct hm_err *err)
{
	uint32_t L = r->plan->line_size;
	struct hm_wi_lref *ia;
	int dropped;

	hm_wi_lines_of(r->was, r->acc, r->n, L);
	hm_wi_replay_batch(r->plan, r->ob, r->nob, r->acc, r->n, r->rep, r->flags, &out->counts);
	hm_wi_link_batch(t, r->was, r->rep, r->flags, r->n, L);
	if (hm_lines_build(r->a, r->acc, r->n, L, r->window_ns, &out->before, err) ||
	    hm_lines_build(r->a, r->rep, r->n, L, r->window_ns, &out->after, err))
		return -1;
	if (out->before.source != HM_SRC_PMU)
		return 0;
	ia = hm_wi_index_lines(&out->after);
	dropped = hm_wi_drop_hitm(r->rep, r->n, &out->after, ia);
	free(ia);
	return dropped ? hm_lines_build(r->a, r->rep, r->n, L, r->window_ns, &out->after, err)
		       : 0;
}

static int run_lines(struct wrun *r, struct hm_whatif *out, struct hm_wi_lpairs *t,
		     struct hm_err *err)
{
	uint32_t L = r->plan->line_size;
	struct hm_lines_acc *bl, *al;
	struct hm_wi_counts scratch = {0};
	struct hm_lines after2;
	struct hm_arena b_arena, a_arena;
	struct hm_wi_lref *ia;
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
	ia = hm_wi_index_lines(&out->after);
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
	struct hm_wi_lpairs t = {0};
	int rc;

	r->rep = malloc(r->batch * sizeof(*r->rep));
	r->flags = malloc(r->batch);
	r->was = malloc(r->batch * sizeof(*r->was));
	if (!r->rep || !r->flags || !r->was) {
		free(r->rep);
		free(r->flags);
		free(r->was);
		return hm_err_set(err, HM_EXIT_ENV, "out of memory replaying %llu accesses: %s",
				  (unsigned long long)sum->accesses, strerror(ENOMEM));
	}
	r->ob = hm_wi_objects(r->plan, sum, &out->counts, &r->nob);
	rc = run_lines(r, out, &t, err);
	free(r->ob);
	free(r->flags);
	free(r->was);
	if (rc) {
		free(r->rep);
		free(t.v);
		return -1;
	}
	hm_wi_match(r->a, out, &t);
	hm_wi_count_totals(&out->before, &out->tb);
	hm_wi_count_totals(&out->after, &out->ta);
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
