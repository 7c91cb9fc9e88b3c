/* A fix is printed only when its replay shows it works. For each shared line (the first
 * HM_FIX_CHECK_LINES), the candidate changes are replayed through whatif on accesses
 * rebuilt from the recorded rows of every line that holds the line's objects; the first
 * candidate after which no line holding the type is falsely shared is kept, with what the
 * replay showed. Candidates, in order: align the later member to the line (or, for two
 * objects or array elements, align the type); the same with aligned_alloc for heap objects
 * (malloc only aligns to 16); the layout --suggest proposes, likewise. Rows are rebuilt at
 * up to FC_CAP accesses per (row, thread, direction), round-robin in time, which keeps
 * every side above the verdicts' sample minimums without holding the samples. */
#include "analyzer/fixcheck.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/whatif.h"
#include "symbolize/shape.h"
#include "core/oom.h"

#define FC_CAP 64

struct fc {
	struct hm_arena *a;
	const struct hm_lines *l;
	struct hm_access *acc;
	size_t n, cap;
};

static void fc_push(struct fc *c, const struct hm_line *ln, const struct hm_lfield *f,
		    const struct hm_count *t, int op, uint64_t time)
{
	struct hm_access *x;

	if (c->n == c->cap && !(c->acc = realloc(c->acc, (c->cap = c->cap ? 2 * c->cap : 256) *
						     sizeof(*c->acc))))
		hm_oom();	/* as the arena does */
	x = &c->acc[c->n++];
	memset(x, 0, sizeof(*x));
	x->s.addr = ln->addr + f->offset;
	x->s.size = f->size;
	x->s.op = (uint8_t)op;
	x->s.pid = t->pid;
	x->s.tid = t->id;
	x->s.cpu = t->id;	/* threads apart: the fix is judged as if they ran apart */
	x->s.time = time;
	x->s.source = (uint8_t)c->l->source;
	x->method = f->method;
	x->object = f->object;
	x->type = f->type;
	x->obj_base = f->obj_base;
	x->field_off = f->field_off;
	x->field = f->field;
}

static int holds_object(const struct hm_line *ln, const struct hm_line *target)
{
	if (ln->pid != target->pid)
		return 0;
	for (uint32_t i = 0; i < ln->nr_fields; i++)
		for (uint32_t j = 0; ln->fields[i].obj_base && j < target->nr_fields; j++)
			if (ln->fields[i].obj_base == target->fields[j].obj_base)
				return 1;
	return 0;
}

/* Every row of every line that holds one of target's objects, as accesses. The lines
 * are found once (a scan of the whole report), then walked FC_CAP times. */
static void rebuild(struct fc *c, const struct hm_line *target)
{
	const struct hm_line **hold = malloc((c->l->nr + 1) * sizeof(*hold));
	uint64_t time = 0;
	size_t nh = 0;

	if (!hold)
		hm_oom();
	for (size_t i = 0; i < c->l->nr; i++)
		if (&c->l->lines[i] == target || holds_object(&c->l->lines[i], target))
			hold[nh++] = &c->l->lines[i];
	c->n = 0;
	for (uint32_t round = 0; round < FC_CAP; round++) {
		for (size_t i = 0; i < nh; i++) {
			const struct hm_line *ln = hold[i];

			for (uint32_t j = 0; j < ln->nr_fields; j++) {
				const struct hm_lfield *f = &ln->fields[j];

				for (uint32_t k = 0; k < f->nr_threads; k++) {
					const struct hm_count *t = &f->threads[k];
					uint64_t st = t->writes;	/* a locked store once */

					if (round < st)
						fc_push(c, ln, f, t, HM_OP_STORE, time += 1000);
					if (round < t->records - (st < t->records ? st : t->records))
						fc_push(c, ln, f, t, HM_OP_LOAD, time += 1000);
				}
			}
		}
	}
	free(hold);
}

/* The top-level member of t holding byte `in` of it. */
static const char *member_at(struct hm_arena *a, const struct hm_type *t, uint64_t in)
{
	uint32_t nr;
	const struct hm_member *m = hm_type_members(t, &nr);

	for (uint32_t i = nr; i-- > 0;) {
		if (m[i].bit_offset / 8 > in)
			continue;
		return m[i].name ? m[i].name : hm_arena_printf(a, "#%u", i);
	}
	return NULL;
}

struct cand {
	struct hm_wi_edit edit;		/* kind HM_WI_SUGGEST: take the suggestion's edits */
	int aligned_alloc;
	const char *text;
};

/* The suggestion as a sentence: the member order and the members aligned to the line. */
static const char *suggest_text(struct hm_arena *a, const struct hm_type *t,
				const struct hm_wi_suggestion *sug)
{
	const char *order = "", *al = "";

	for (uint32_t i = 0; i < sug->nr_edits; i++) {
		const struct hm_wi_edit *e = &sug->edits[i];

		for (uint32_t j = 0; e->kind == HM_WI_ORDER && j < e->nr_order; j++)
			order = hm_arena_printf(a, "%s%s%s", order, j ? ", " : "", e->order[j]);
		if (e->kind == HM_WI_ALIGN)
			al = hm_arena_printf(a, "%s%s%s", al, *al ? " and " : "", e->field);
	}
	return hm_arena_printf(a, "lay %s out as %s, aligning %s to %u "
			       "(__attribute__((aligned(%u)))): each thread's members on their own "
			       "cache line, as `hitmap whatif --suggest %s` shows", hm_type_name(t),
			       order, al, sug->line_size, sug->line_size, hm_type_name(t));
}

/* Replays one candidate; 1 when no line holding the type is falsely shared after. tname
 * names the type in the sentence (an array's element type for SPLIT). */
static int replay_ok(struct fc *c, const struct hm_type *t, const char *tname, struct cand *k,
		     const char **what)
{
	struct hm_wi_spec spec = {.kind = k->edit.kind, .edits = &k->edit, .nr_edits = 1,
				  .line_size = c->l->line_size, .aligned_alloc = k->aligned_alloc};
	struct hm_wi_suggestion sug;
	struct hm_wi_plan plan;
	struct hm_whatif w = {0};
	struct hm_err err = {0};
	int ok = 0;

	if (k->edit.kind == HM_WI_SUGGEST) {
		if (hm_whatif_suggest(c->a, c->acc, c->n, hm_type_name(t), c->l->line_size, &sug,
				      &err) || !sug.needed)
			return 0;
		spec.edits = sug.edits;
		spec.nr_edits = sug.nr_edits;
		k->text = suggest_text(c->a, t, &sug);
	}
	if (hm_whatif_plan(c->a, c->acc, c->n, &spec, &plan, &err))
		return 0;
	if (hm_whatif_run(c->a, c->acc, c->n, &plan, c->l->window_ns, &w, &err) == 0) {
		ok = w.false_after == 0;
		*what = hm_arena_printf(c->a, "%" PRIu64 " falsely shared line%s holding %s before, "
					"%" PRIu64 " after", w.tb.false_sharing,
					w.tb.false_sharing == 1 ? "" : "s", tname, w.false_after);
		hm_whatif_free(&w);
	}
	hm_whatif_plan_free(&plan);
	return ok;
}

/* The heap variant of a fix: the allocation must be aligned too. With allocation records
 * (record's malloc-family probes) the sentence names the call to replace. */
static const char *heap_text(struct hm_arena *a, const struct hm_line *ln, const char *fix,
			     uint32_t L)
{
	const struct hm_pair *p = &ln->pairs[0];
	const char *site = ln->fields[p->a].alloc_site ? ln->fields[p->a].alloc_site
							: ln->fields[p->b].alloc_site;

	if (site)
		return hm_arena_printf(a, "%s; it is on the heap, where malloc aligns only to 16: "
				       "allocate it with aligned_alloc(%u, size) or posix_memalign "
				       "instead of the %s", fix, L, site);
	return hm_arena_printf(a, "%s; it is on the heap, where malloc aligns only to 16: "
			       "allocate it with aligned_alloc(%u, size) or posix_memalign", fix, L);
}

/* Two elements of one array object: its element type, else NULL. */
static const struct hm_type *array_elem(const struct hm_lfield *fa, const struct hm_lfield *fb)
{
	const struct hm_type *arr = hm_type_strip(fa->type), *e;

	if (!fa->obj_base || fa->obj_base != fb->obj_base || !arr || arr->kind != HM_T_ARRAY ||
	    !(e = hm_type_strip(arr->ref)) || !e->size || !hm_type_name(e) ||
	    fa->field_off / e->size == fb->field_off / e->size)
		return NULL;
	return e;
}

static struct cand split_cand(struct hm_arena *a, const struct hm_lfield *f,
			      const struct hm_type *e, uint32_t L)
{
	const char *arr = f->object ? f->object : "the array";

	return (struct cand){{.kind = HM_WI_SPLIT, .type = hm_type_name(e)}, 0,
			     hm_arena_printf(a, "give each thread its own copy of %s: one %u-byte "
					     "line per element (an array of struct { %s v; } "
					     "__attribute__((aligned(%u))), or a per-thread "
					     "variable), not padding between two elements",
					     arr, L, hm_type_name(e), L)};
}

/* Candidates for a false-sharing pair; returns how many were written to k. */
static int candidates(struct hm_arena *a, const struct hm_line *ln, const struct hm_type *t,
		      uint32_t L, struct cand *k)
{
	const struct hm_pair *p = &ln->pairs[0];
	const struct hm_lfield *fa = &ln->fields[p->a], *fb = &ln->fields[p->b];
	const struct hm_lfield *mover = fa->field_off > fb->field_off ? fa : fb;
	uint32_t nk = 0;
	int heap = fa->method == HM_M_HEAP || fb->method == HM_M_HEAP;
	int apart = fa->obj_base != fb->obj_base || fa->field_off / t->size != fb->field_off / t->size;
	const char *ma = member_at(a, t, fa->field_off % t->size);
	const char *mb = member_at(a, t, fb->field_off % t->size);
	const char *mm = member_at(a, t, mover->field_off % t->size), *first = member_at(a, t, 0);
	struct hm_shape sh;
	const struct hm_type *e = array_elem(fa, fb);

	if (!ma || !mb || !first)
		return 0;
	if (!apart && !strcmp(ma, mb))
		return 0;	/* two parts of one member: no order of members parts them */
	hm_shape_compute(a, t, L, &sh);
	if (sh.packed && !apart)	/* what a person does first with a packed struct */
		k[nk++] = (struct cand){{.kind = HM_WI_UNPACK, .type = hm_type_name(t)}, 0,
					hm_arena_printf(a, "unpack %s (drop __attribute__((packed))): "
							"at their natural alignment %s and %s are "
							"on different cache lines", hm_type_name(t),
							fa->field, fb->field)};
	k[nk] = (struct cand){{.kind = HM_WI_ALIGN, .type = hm_type_name(t),
			       .field = apart ? first : mm, .value = 0}, 0, ln->fix};
	k[nk + 1] = k[nk];
	k[nk + 1].aligned_alloc = 1;
	nk += heap ? 2 : 1;
	k[nk] = (struct cand){{.kind = HM_WI_SUGGEST, .type = hm_type_name(t)}, 0, NULL};
	k[nk + 1] = k[nk];
	k[nk + 1].aligned_alloc = 1;
	nk += heap ? 2 : 1;
	if (e)
		k[nk++] = split_cand(a, fa, e, L);
	return (int)nk;
}

static const char *tried_text(struct fc *c, const struct cand *k, const char *tname)
{
	switch (k->edit.kind) {
	case HM_WI_SUGGEST: return hm_arena_printf(c->a, "--suggest %s", tname);
	case HM_WI_SPLIT: return hm_arena_printf(c->a, "a copy of each %s per thread", tname);
	case HM_WI_UNPACK: return hm_arena_printf(c->a, "%s unpacked", tname);
	default: return hm_arena_printf(c->a, "--align %s.%s=%u", tname, k->edit.field,
					c->l->line_size);
	}
}

/* The line's candidates: for a named struct, those of candidates(); for an array of
 * scalars (int counts[2]), the per-thread copy alone. 0: no layout change applies. */
static int line_candidates(struct fc *c, const struct hm_line *ln, const struct hm_type **t,
			   const char **tname, struct cand *k)
{
	const struct hm_lfield *fa = &ln->fields[ln->pairs[0].a], *fb = &ln->fields[ln->pairs[0].b];
	const struct hm_type *e;

	*t = hm_type_agg(fa->type, NULL);
	*tname = hm_type_name(*t);
	if (ln->verdict != HM_V_FALSE_SHARING || !fa->obj_base || !fb->obj_base)
		return 0;
	if (!*t && (e = array_elem(fa, fb))) {
		*tname = fa->object ? fa->object : hm_type_name(e);
		k[0] = split_cand(c->a, fa, e, c->l->line_size);
		return 1;
	}
	if (!*t || !(*t)->size || !*tname || hm_type_agg(fb->type, NULL) != *t)
		return 0;
	return candidates(c->a, ln, *t, c->l->line_size, k);
}

static void check_line(struct fc *c, struct hm_line *ln)
{
	const struct hm_type *t;
	const char *tname, *what = NULL, *tried = "";
	struct cand k[8];
	int nk;

	if ((nk = line_candidates(c, ln, &t, &tname, k)) == 0) {
		ln->fix_check = HM_FIX_NOT_LAYOUT;
		ln->fix_replay = ln->verdict == HM_V_TRUE_SHARING
			? "not replayed: true sharing is not removed by any layout"
			: "not replayed: no layout change of one named type expresses this fix";
		return;
	}
	rebuild(c, ln);
	for (int i = 0; i < nk; i++) {
		k[i].edit.value = k[i].edit.kind == HM_WI_ALIGN ? c->l->line_size : 0;
		if (replay_ok(c, t, tname, &k[i], &what)) {
			ln->fix_check = HM_FIX_REPLAYED;
			ln->fix = k[i].aligned_alloc ? heap_text(c->a, ln, k[i].text, c->l->line_size)
						     : k[i].text;
			ln->fix_replay = hm_arena_printf(c->a, "replayed on this recording: %s", what);
			return;
		}
		tried = hm_arena_printf(c->a, "%s%s%s (%s)", tried, *tried ? "; " : "",
					tried_text(c, &k[i], tname), what ? what : "no replay");
	}
	ln->fix_check = HM_FIX_FAILED;
	ln->fix = NULL;
	ln->fix_replay = hm_arena_printf(c->a, "no fix printed: no change tried removes the false "
					 "sharing in replay (tried %s); explore with hitmap "
					 "whatif --pad/--align/--order", tried);
}

void hm_fixcheck_lines(struct hm_arena *a, struct hm_lines *l, size_t max_lines)
{
	struct fc c = {.a = a, .l = l};
	size_t done = 0;

	for (size_t i = 0; i < l->nr && done < max_lines; i++) {
		struct hm_line *ln = &l->lines[i];

		if (!hm_verdict_shared(ln->verdict) || !ln->nr_pairs)
			continue;
		check_line(&c, ln);
		done++;
	}
	free(c.acc);
}

const char *hm_fix_check_name(enum hm_fix_check k)
{
	switch (k) {
	case HM_FIX_REPLAYED: return "replayed";
	case HM_FIX_FAILED: return "failed";
	case HM_FIX_NOT_LAYOUT: return "not_layout";
	case HM_FIX_UNCHECKED: break;
	}
	return "unchecked";
}
