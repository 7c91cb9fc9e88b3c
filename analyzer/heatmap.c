/* Builds the struct heat map: rows are the leaf members of the type (hm_layout_walk)
 * plus the holes between them; each access of the type counts toward the row at its
 * offset (heatmap_count.c), and the accesses replayed in time order give the
 * cross-thread conflicts. */
#include "analyzer/heatmap.h"
#include "analyzer/heatmap_int.h"

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

static struct hm_heat_field *rows_push(struct rows *r)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 32;
		r->v = hm_xrealloc(r->v, r->cap * sizeof(*r->v));
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
		r->folds = hm_xrealloc(r->folds, r->cap_folds * sizeof(*r->folds));
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
	struct sort_key *idx = hm_xrealloc(NULL, r->n * sizeof(*idx));
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
uint64_t hm_heat_fold_offset(const struct hm_type *t, uint64_t off)
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
int32_t hm_heat_row_at(const struct hm_heat *h, const uint64_t *ends, uint64_t off,
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
	*acc = hm_heat_acc_new(h);
	return 0;
}
