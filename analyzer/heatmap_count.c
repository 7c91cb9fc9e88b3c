/* Counting a heat map's accesses (heatmap.h hm_heat_add): each access at its row and
 * line, its line's last access and writers kept between batches, the maxima at the end.
 * The rows and the type's layout are heatmap.c's. */
#include "analyzer/heatmap.h"
#include "analyzer/heatmap_int.h"

#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "core/oom.h"
#include "core/sort.h"

struct ent {
	uint64_t time, seq, key;
	uint32_t tid;
	int32_t row;
	uint64_t line;
	uint8_t op;
	uint8_t part;			/* a wide access's member after its first */
};

static int cmp_ent(const void *pa, const void *pb)
{
	const struct ent *a = pa, *b = pb;

	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Conflicts are judged on the line the bytes really occupy: the object's address plus
 * the offset (or the sampled address); without either, on the type's own line. */
static uint64_t line_key(const struct hm_access *x, uint64_t line, uint32_t ls)
{
	uint64_t addr = x->obj_base ? x->obj_base + x->field_off : x->s.addr;

	return addr ? (addr / ls) << 1 | 1 : (line + 1) << 1;
}

/* First sighting of (what, index, tid): distinct thread counts without per-row sets. */
static int first_seen(struct hm_map64 *seen, unsigned what, uint64_t index, uint32_t tid)
{
	uint64_t key = (index + 1) << 34 | (uint64_t)what << 32 | tid;

	if (hm_map64_get(seen, key))
		return 0;
	hm_map64_put(seen, key, seen);
	return 1;
}

/* A real cache line's last access, and the threads that stored to it (few: grown in the
 * arena), so that a type line folded over instances is judged per instance. */
struct last {
	uint32_t tid;
	uint8_t store;
	uint32_t nr_w, cap_w;
	uint32_t *w;
};

/* tid stores to the real line of prev: its distinct writers so far. */
static uint32_t line_writer(struct hm_arena *a, struct last *prev, uint32_t tid)
{
	for (uint32_t i = 0; i < prev->nr_w; i++)
		if (prev->w[i] == tid)
			return prev->nr_w;
	if (prev->nr_w == prev->cap_w) {
		uint32_t cap = prev->cap_w ? 2 * prev->cap_w : 4;
		uint32_t *w = hm_arena_alloc(a, cap * sizeof(*w));

		if (prev->nr_w)
			memcpy(w, prev->w, prev->nr_w * sizeof(*w));
		prev->w = w;
		prev->cap_w = cap;
	}
	prev->w[prev->nr_w++] = tid;
	return prev->nr_w;
}

/* Where an offset of the type counts: its offset folded onto element 0 and its row;
 * both follow from the offset and the access's field name alone, and a run of accesses
 * repeats a few of them. */
#define PLACE_BITS 8

struct place {
	uint64_t off;
	const char *field;
	uint64_t folded;
	int32_t row;
	uint8_t used;
};

/* What counting keeps between batches: distinct threads seen and each line's last
 * access, so that batches added in time order count as one run. Its own arena, not the
 * rows': counting may run on another thread than the one laying out the next map. */
struct hm_heat_acc {
	struct hm_arena a;
	struct hm_heat *h;
	uint64_t *ends;			/* end of the furthest row so far, per row */
	struct hm_map64 seen, lastmap;
	struct place place[1u << PLACE_BITS];
};

static const struct place *place_of(struct hm_heat_acc *c, uint64_t off, const char *field)
{
	struct place *p = &c->place[hm_slot64(off ^ (uintptr_t)field, PLACE_BITS)];
	const struct hm_heat *h = c->h;

	if (!p->used || p->off != off || p->field != field) {
		p->used = 1;
		p->off = off;
		p->field = field;
		p->folded = h->all_elems ? off : hm_heat_fold_offset(h->type, off);
		p->row = hm_heat_row_at(h, c->ends, p->folded, field);
	}
	return p;
}

/* The accesses of h's type: those pick names with mine (hm_heat_set_prepare matched
 * them on the resolving thread), or without pick those whose type matches. */
static size_t collect(struct hm_heat_acc *c, const struct hm_access *acc, size_t n,
		      const int8_t *pick, int8_t mine, struct ent *e, uint64_t *outside)
{
	const struct hm_heat *h = c->h;
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		const struct hm_access *x = &acc[i];
		uint64_t off = x->field_off;

		if (pick ? pick[i] != mine || !x->type
			 : !x->type || !hm_heat_type_matches(h->type, x->type))
			continue;
		if (hm_type_strip(x->type) != h->type && off >= h->size)
			off %= h->size;	/* an element of an array of the type */
		if (off >= h->size) {
			(*outside)++;
			continue;
		}
		const struct place *pl = place_of(c, off, x->field);

		off = pl->folded;
		e[k] = (struct ent){
			.time = x->s.time,
			.seq = i,
			.tid = x->s.tid,
			.op = x->s.op,
			.part = x->part != 0,
			.line = off / h->line_size,
			.key = line_key(x, off / h->line_size, h->line_size),
			.row = pl->row,
		};
		k++;
	}
	return k;
}

static void count(struct hm_heat_acc *c, const struct ent *e, size_t n)
{
	struct hm_heat *h = c->h;
	uint64_t wide_key = 0;
	int wide_conflict = 0;

	for (size_t i = 0; i < n; i++) {
		struct hm_heat_field *f = e[i].row >= 0 ? &h->fields[e[i].row] : NULL;
		struct hm_heat_line *l = &h->lines[e[i].line];
		struct last *prev = hm_map64_get(&c->lastmap, e[i].key);
		int store = e[i].op == HM_OP_STORE;
		int conflict = prev && prev->tid != e[i].tid && (prev->store || store);
		/* A wide access's later members on the same line conflict as its first did
		 * (the same instruction, after the same other thread's access); the line
		 * counts that conflict once. */
		int same = e[i].part && e[i].key == wide_key;

		if (same)
			conflict = wide_conflict;
		wide_key = e[i].key;
		wide_conflict = conflict;

		if (f) {
			f->loads += e[i].op == HM_OP_LOAD;
			f->stores += store;
			f->other += e[i].op != HM_OP_LOAD && !store;
			f->conflicts += conflict;
			f->threads += first_seen(&c->seen, 0, (uint64_t)e[i].row, e[i].tid);
		}
		l->loads += e[i].op == HM_OP_LOAD;
		l->stores += store;
		l->other += e[i].op != HM_OP_LOAD && !store;
		l->conflicts += conflict && !same;
		l->threads += first_seen(&c->seen, 1, e[i].line, e[i].tid);
		if (e[i].op == HM_OP_LOAD)
			l->readers += first_seen(&c->seen, 2, e[i].line, e[i].tid);
		if (store)
			l->writers += first_seen(&c->seen, 3, e[i].line, e[i].tid);
		if (!prev) {
			prev = hm_arena_alloc(&c->a, sizeof(*prev));
			memset(prev, 0, sizeof(*prev));
			hm_map64_put(&c->lastmap, e[i].key, prev);
		}
		if (store) {
			uint32_t w = line_writer(&c->a, prev, e[i].tid);

			if (w > l->line_writers)
				l->line_writers = w;
		}
		prev->tid = e[i].tid;
		prev->store = (uint8_t)store;
	}
}

static void maxima(struct hm_heat *h)
{
	for (uint32_t i = 0; i < h->nr_fields; i++) {
		const struct hm_heat_field *f = &h->fields[i];
		uint64_t heat = f->loads + f->stores + f->other;

		if (heat > h->max_heat)
			h->max_heat = heat;
	}
	for (uint64_t i = 0; i < h->nr_lines; i++)
		if (h->lines[i].conflicts > h->max_conflicts)
			h->max_conflicts = h->lines[i].conflicts;
}

struct hm_heat_acc *hm_heat_acc_new(struct hm_heat *h)
{
	struct hm_heat_acc *c = hm_xrealloc(NULL, sizeof(*c));

	memset(c->place, 0, sizeof(c->place));
	hm_arena_init(&c->a);
	c->h = h;
	c->ends = hm_xrealloc(NULL, (h->nr_fields + 1) * sizeof(*c->ends));
	for (uint32_t i = 0; i < h->nr_fields; i++) {
		uint64_t end = h->fields[i].offset + h->fields[i].size;

		c->ends[i] = i && c->ends[i - 1] > end ? c->ends[i - 1] : end;
	}
	hm_map64_init(&c->seen);
	hm_map64_init(&c->lastmap);
	return c;
}

void hm_heat_add_picked(struct hm_heat_acc *c, const struct hm_access *acc, size_t n,
			const int8_t *pick, int8_t mine)
{
	struct hm_heat *h = c->h;
	struct ent *e = hm_xrealloc(NULL, (n + 1) * sizeof(*e));
	uint64_t outside = 0;
	size_t ne = collect(c, acc, n, pick, mine, e, &outside), i;

	h->outside += outside;
	h->accesses += ne + outside;
	for (i = 1; i < ne && cmp_ent(&e[i - 1], &e[i]) <= 0; i++)
		;
	if (i < ne)	/* a streamed report's runs come in time order already */
		hm_sort(e, ne, sizeof(*e), cmp_ent);
	count(c, e, ne);
	free(e);
}

void hm_heat_add(struct hm_heat_acc *c, const struct hm_access *acc, size_t n)
{
	hm_heat_add_picked(c, acc, n, NULL, 0);
}

void hm_heat_end(struct hm_heat_acc *c)
{
	if (!c)
		return;
	maxima(c->h);
	hm_arena_free(&c->a);
	hm_map64_free(&c->seen);
	hm_map64_free(&c->lastmap);
	free(c->ends);
	free(c);
}

int hm_heat_build_opts(struct hm_arena *a, const struct hm_type *t, const struct hm_access *acc,
		       size_t n, const struct hm_heat_opts *o, struct hm_heat *out,
		       struct hm_err *err)
{
	struct hm_heat_acc *c;
	int rc = hm_heat_begin(a, t, o, out, &c, err);

	if (rc)
		return rc;
	hm_heat_add(c, acc, n);
	hm_heat_end(c);
	return 0;
}

int hm_heat_build(struct hm_arena *a, const struct hm_type *t, const struct hm_access *acc,
		  size_t n, uint32_t line_size, struct hm_heat *out)
{
	struct hm_heat_opts o = {.line_size = line_size};

	return hm_heat_build_opts(a, t, acc, n, &o, out, NULL);
}
