/* Builds the struct heat map: rows are the leaf members of the type (hm_layout_walk)
 * plus the holes between them; each access of the type counts toward the row at its
 * offset, and the accesses replayed in time order give the cross-thread conflicts. */
#include "analyzer/heatmap.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "symbolize/shape.h"
#include "core/sort.h"
#include "core/oom.h"

struct rows {
	struct hm_heat_field *v;	/* in declaration order; hole 2: a fold's bytes */
	size_t n, cap;
	struct hm_heat_fold *folds;
	size_t nr_folds, cap_folds;
	struct hm_arena *a;
	int all_elems;
};

static void *xrealloc(void *p, size_t size)
{
	void *q = realloc(p, size ? size : 1);

	if (!q) {
		hm_oom();
	}
	return q;
}

static struct hm_heat_field *rows_push(struct rows *r)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 32;
		r->v = xrealloc(r->v, r->cap * sizeof(*r->v));
	}
	memset(&r->v[r->n], 0, sizeof(r->v[r->n]));
	return &r->v[r->n++];
}

/* hm_layout_walk names only elements of arrays of structs ("pts[0].v"); when those are
 * folded, the row stands for every element. */
static const char *fold_path(struct hm_arena *a, const char *path, int all_elems)
{
	char *p = hm_arena_strdup(a, path), *at = p;

	while (!all_elems && (at = strstr(at, "[0]")))
		at[1] = '*';
	return p;
}

static int add_leaf(const struct hm_field *f, void *ctx)
{
	struct rows *r = ctx;
	const struct hm_member *m = f->m;
	struct hm_heat_field *row;

	if (m->bit_size && !m->name)
		return 0;	/* unnamed bitfields are padding the compiler placed */
	row = rows_push(r);
	row->m = m;
	row->path = fold_path(r->a, f->path, r->all_elems);
	hm_type_decl(r->a, m->type, row->path, &row->type_col, &row->name_col);
	if (m->bit_size) {
		const struct hm_type *ut = hm_type_strip(m->type);
		uint64_t ub = ut && ut->size ? ut->size : 1;
		uint64_t base = (f->bit_offset - m->bit_offset) / 8;

		/* pahole places a bitfield at its storage unit (symbolize/shape.c) */
		row->offset = base + m->bit_offset / (ub * 8) * ub;
		row->size = ub;
		row->bit_in_unit = (uint32_t)(f->bit_offset - row->offset * 8);
		row->bit_size = m->bit_size;
		row->name_col = hm_arena_printf(r->a, "%s:%u", row->name_col, m->bit_size);
	} else {
		row->offset = f->bit_offset / 8;
		row->size = f->size;
	}
	return 0;
}

static void push_fold(struct rows *r, const char *path, uint64_t off, const struct hm_type *arr,
		      uint64_t elem_size)
{
	struct hm_heat_field *ph = rows_push(r);

	ph->hole = 2;	/* not a row: only keeps the bytes from reading as a hole */
	ph->offset = off + elem_size;
	ph->size = arr->size - elem_size;
	if (r->nr_folds == r->cap_folds) {
		r->cap_folds = r->cap_folds ? 2 * r->cap_folds : 8;
		r->folds = xrealloc(r->folds, r->cap_folds * sizeof(*r->folds));
	}
	r->folds[r->nr_folds++] = (struct hm_heat_fold){
		.path = path,
		.offset = ph->offset,
		.size = ph->size,
		.first = 1,
		.last = arr->size / elem_size - 1,
	};
}

/* Records the bytes of elements 1.. of every array of structs that the walk folds onto
 * element 0, so they are neither holes nor missing from the drawing. */
static void add_folds(struct rows *r, const struct hm_type *t, uint64_t base, const char *path,
		      int depth)
{
	uint32_t nr;
	const struct hm_member *m = hm_type_members(t, &nr);

	for (uint32_t i = 0; i < nr && depth < 64; i++) {
		const struct hm_type *s = hm_type_strip(m[i].type);
		const struct hm_type *e = s && s->kind == HM_T_ARRAY ? hm_type_strip(s->ref) : NULL;
		uint64_t off = base + m[i].bit_offset / 8;
		const char *sub = !m[i].name ? path
				  : *path ? hm_arena_printf(r->a, "%s.%s", path, m[i].name)
					  : m[i].name;

		if (m[i].bit_size)
			continue;
		if (hm_type_is_aggregate(s)) {
			add_folds(r, s, off, sub, depth + 1);
		} else if (e && hm_type_is_aggregate(e) && e->size) {
			if (s->size > e->size)
				push_fold(r, sub, off, s, e->size);
			add_folds(r, e, off, hm_arena_printf(r->a, "%s[*]", sub), depth + 1);
		}
	}
}

struct sort_key {
	uint64_t offset;
	size_t seq;			/* declaration order keeps union members in order */
};

static int cmp_rows(const void *pa, const void *pb)
{
	const struct sort_key *x = pa, *y = pb;

	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Rows in offset order with a "(hole)" row for every byte range no member covers. */
static void layout_rows(struct hm_heat *h, struct rows *r)
{
	struct sort_key *idx = xrealloc(NULL, r->n * sizeof(*idx));
	uint64_t cursor = 0;
	size_t k = 0;

	for (size_t i = 0; i < r->n; i++)
		idx[i] = (struct sort_key){.offset = r->v[i].offset, .seq = i};
	hm_sort(idx, r->n, sizeof(*idx), cmp_rows);
	h->fields = hm_arena_alloc(r->a, (2 * r->n + 1) * sizeof(*h->fields));
	for (size_t i = 0; i <= r->n; i++) {
		const struct hm_heat_field *f = i < r->n ? &r->v[idx[i].seq] : NULL;
		uint64_t at = f ? f->offset : h->size;

		if (at > cursor && cursor < h->size) {
			struct hm_heat_field *g = &h->fields[k++];

			g->path = "(hole)";
			g->type_col = "";
			g->name_col = "";
			g->hole = 1;
			g->offset = cursor;
			g->size = (at < h->size ? at : h->size) - cursor;
		}
		if (!f)
			break;
		if (f->hole != 2)
			h->fields[k++] = *f;
		if (f->offset + f->size > cursor)
			cursor = f->offset + f->size;
	}
	h->nr_fields = (uint32_t)k;
	for (uint32_t i = 0; i < h->nr_fields; i++) {
		struct hm_heat_field *f = &h->fields[i];

		f->line = f->offset / h->line_size;
		f->straddles = f->size && f->line != (f->offset + f->size - 1) / h->line_size;
	}
	free(idx);
}

/* Offset inside an element of an array of structs -> the same offset in element 0,
 * mirroring which arrays hm_layout_walk expands. */
static uint64_t fold_offset(const struct hm_type *t, uint64_t off)
{
	uint64_t base = 0, rel = off;

	for (int depth = 0; depth < 64 && hm_type_is_aggregate(t); depth++) {
		uint32_t nr;
		const struct hm_member *m = hm_type_members(t, &nr);
		const struct hm_member *in = NULL;

		/* in a union, a member to descend into wins over a scalar on the same bytes */
		for (uint32_t i = 0; i < nr; i++) {
			const struct hm_type *s = hm_type_strip(m[i].type);
			uint64_t lo = m[i].bit_offset / 8;

			if (m[i].bit_size || !s || rel < lo || rel >= lo + s->size)
				continue;
			if (!in)
				in = &m[i];
			if (hm_type_is_aggregate(s) || s->kind == HM_T_ARRAY) {
				in = &m[i];
				break;
			}
		}
		if (!in)
			break;
		const struct hm_type *s = hm_type_strip(in->type);
		const struct hm_type *elem = s->kind == HM_T_ARRAY ? hm_type_strip(s->ref) : NULL;

		base += in->bit_offset / 8;
		rel -= in->bit_offset / 8;
		if (elem && hm_type_is_aggregate(elem) && elem->size) {
			rel %= elem->size;
			t = elem;
		} else {
			t = s;
		}
	}
	return base + rel;
}

/* An access names the leaf by path ("worker_stats.u.as_int"): it decides between
 * union members that cover the same byte. */
static int path_matches(const char *field, const char *path)
{
	size_t fl, pl;

	if (!field)
		return 0;
	fl = strlen(field);
	pl = strlen(path);
	return fl >= pl && !strcmp(field + fl - pl, path) &&
	       (fl == pl || field[fl - pl - 1] == '.');
}

static int covers(const struct hm_heat_field *f, uint64_t off, int precise)
{
	uint64_t lo = f->offset, hi = f->offset + f->size;

	if (precise && f->bit_size) {
		uint64_t bits = f->offset * 8 + f->bit_in_unit;

		lo = bits / 8;
		hi = (bits + f->bit_size + 7) / 8;
	}
	return off >= lo && off < hi;
}

/* The row for a byte: the first member whose bytes hold it, else the first bitfield
 * whose storage unit does, else the hole around it. ends[i] is the largest end of
 * rows 0..i, which bounds the backward scan. */
static int32_t row_at(const struct hm_heat *h, const uint64_t *ends, uint64_t off,
		      const char *field)
{
	uint32_t lo = 0, hi = h->nr_fields;
	int32_t best = -1, unit = -1;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (h->fields[mid].offset <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* backwards, so the earliest row wins unless a later one matches the path */
	for (uint32_t i = lo; i-- > 0 && ends[i] > off;) {
		const struct hm_heat_field *f = &h->fields[i];

		if (covers(f, off, 1)) {
			if (best < 0 || !path_matches(field, h->fields[best].path))
				best = (int32_t)i;
		} else if (covers(f, off, 0)) {
			unit = (int32_t)i;
		}
	}
	return best >= 0 ? best : unit;
}

int hm_heat_type_matches(const struct hm_type *t, const struct hm_type *u)
{
	u = hm_type_agg(u, NULL);	/* an array of t is made of t */
	if (u == t)
		return 1;
	/* the same struct seen through another module's debug info */
	return u && u->kind == t->kind && hm_type_name(u) && hm_type_name(t) &&
	       u->size == t->size && !strcmp(hm_type_name(u), hm_type_name(t));
}

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
		p->folded = h->all_elems ? off : fold_offset(h->type, off);
		p->row = row_at(h, c->ends, p->folded, field);
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

/* Counting reads the members of t and of every aggregate in it (fold_offset): they are
 * loaded here, where the map is laid out, so that counting never loads them through
 * libdw (it may run on another thread than the resolver's). The walk above loads most;
 * this makes it all, as deep as fold_offset goes. */
static void preload(const struct hm_type *t, struct hm_map64 *seen, int depth)
{
	uint32_t nr;
	const struct hm_member *m;

	t = hm_type_strip(t);
	while (t && t->kind == HM_T_ARRAY && depth++ < 64)
		t = hm_type_strip(t->ref);
	if (!t || depth >= 64 || !hm_type_is_aggregate(t) || hm_map64_get(seen, (uintptr_t)t))
		return;
	hm_map64_put(seen, (uintptr_t)t, (void *)t);
	m = hm_type_members(t, &nr);
	for (uint32_t i = 0; i < nr; i++)
		preload(m[i].type, seen, depth + 1);
}

int hm_heat_begin(struct hm_arena *a, const struct hm_type *t, const struct hm_heat_opts *o,
		  struct hm_heat *out, struct hm_heat_acc **acc, struct hm_err *err)
{
	uint32_t ls = o && o->line_size ? o->line_size : 64;
	struct rows r = {.a = a, .all_elems = o && o->all_elems};
	struct hm_heat *h = out;
	struct hm_heat_acc *c;
	struct hm_map64 seen;

	memset(h, 0, sizeof(*h));
	*acc = NULL;
	t = hm_type_agg(t, NULL) ? hm_type_agg(t, NULL) : hm_type_strip(t);
	if (!hm_type_is_aggregate(t) || !t->size) {
		hm_err_set(err, HM_EXIT_INPUT,
			   "heat map of %s: not a struct, union or class with a size; name a "
			   "defined aggregate type",
			   hm_type_name(t) ? hm_type_name(t) : "(anonymous)");
		return -EINVAL;
	}
	if (ls & (ls - 1)) {
		hm_err_set(err, HM_EXIT_USAGE,
			   "heat map: line size %u is not a power of two; use 64 or 128", ls);
		return -EINVAL;
	}
	h->type = t;
	h->name = hm_type_name(t) ? hm_type_name(t) : "(anonymous)";
	h->size = t->size;
	h->line_size = ls;
	h->all_elems = r.all_elems;
	hm_layout_walk(t, r.all_elems, add_leaf, &r);
	if (!r.all_elems)
		add_folds(&r, t, 0, "", 0);
	layout_rows(h, &r);
	h->nr_folds = (uint32_t)r.nr_folds;
	h->folds = hm_arena_alloc(a, (r.nr_folds + 1) * sizeof(*h->folds));
	if (r.nr_folds)
		memcpy(h->folds, r.folds, r.nr_folds * sizeof(*h->folds));
	free(r.v);
	free(r.folds);
	h->nr_lines = (h->size + ls - 1) / ls;
	h->lines = hm_arena_alloc(a, h->nr_lines * sizeof(*h->lines));
	for (uint64_t i = 0; i < h->nr_lines; i++)
		h->lines[i].line = i;
	hm_map64_init(&seen);
	preload(t, &seen, 0);
	hm_map64_free(&seen);
	c = xrealloc(NULL, sizeof(*c));
	memset(c->place, 0, sizeof(c->place));
	hm_arena_init(&c->a);
	c->h = h;
	c->ends = xrealloc(NULL, (h->nr_fields + 1) * sizeof(*c->ends));
	for (uint32_t i = 0; i < h->nr_fields; i++) {
		uint64_t end = h->fields[i].offset + h->fields[i].size;

		c->ends[i] = i && c->ends[i - 1] > end ? c->ends[i - 1] : end;
	}
	hm_map64_init(&c->seen);
	hm_map64_init(&c->lastmap);
	*acc = c;
	return 0;
}

static void add(struct hm_heat_acc *c, const struct hm_access *acc, size_t n,
		const int8_t *pick, int8_t mine)
{
	struct hm_heat *h = c->h;
	struct ent *e = xrealloc(NULL, (n + 1) * sizeof(*e));
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
	add(c, acc, n, NULL, 0);
}

void hm_heat_add_picked(struct hm_heat_acc *c, const struct hm_access *acc, size_t n,
			const int8_t *pick, int8_t mine)
{
	add(c, acc, n, pick, mine);
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
