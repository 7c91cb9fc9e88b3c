/* Edits (--pad, --align, --order and --suggest's layout) computed the way a C compiler lays
 * out a struct: each member at the next offset that is a multiple of its alignment, the
 * size a multiple of the largest alignment. Members before the first edited one keep their
 * offsets. Types that embed an edited one by value, directly or in arrays, are laid out
 * again from the first member whose size or alignment changed. */
#include "analyzer/whatif.h"

#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "symbolize/shape.h"
#include "core/sort.h"

#define MAX_NEST 32

/* One member, or the members sharing a bitfield storage unit: what moves as one piece. */
struct unit {
	uint32_t first, count;		/* rel.perm[first .. first + count) */
	uint64_t old_off, old_size;
	uint64_t new_off, new_size;
	uint32_t align;			/* natural or explicit; 1 in a packed struct */
	uint32_t forced;		/* alignment an edit adds */
	uint64_t pad;			/* bytes an edit inserts before it */
	const struct hm_type *sub;	/* its type, when that embeds an edited type */
};

/* The new layout of one aggregate. */
struct rel {
	const struct hm_type *t;
	struct hm_shape sh;		/* the old layout */
	uint32_t *perm;			/* member indexes by offset */
	struct unit *u;			/* by old offset */
	uint32_t nr;
	uint32_t *order;		/* unit indexes in the new order */
	uint64_t new_size;
	uint32_t new_align;
	int edited, is_union;
	int unpack;			/* an UNPACK edit names it: natural alignments */
};

struct emap {
	struct hm_wi_map ops;
	struct hm_arena *a;
	const struct hm_wi_spec *spec;
	struct hm_map64 rels;		/* stripped type -> struct rel, or &unchanged */
};

static struct rel unchanged;

static uint64_t round_up(uint64_t x, uint64_t a)
{
	return a > 1 ? (x + a - 1) / a * a : x;
}

static const char *bare(const char *name)
{
	static const char *const kw[] = {"struct ", "union ", "class "};

	for (size_t i = 0; i < 3; i++)
		if (!strncmp(name, kw[i], strlen(kw[i])))
			return name + strlen(kw[i]);
	return name;
}

static int is_edited(const struct emap *m, const struct hm_type *t)
{
	for (uint32_t i = 0; hm_type_name(t) && i < m->spec->nr_edits; i++)
		if (!strcmp(bare(m->spec->edits[i].type), hm_type_name(t)))
			return 1;
	return 0;
}

static int edited_as(const struct emap *m, const struct hm_type *t, enum hm_wi_kind kind)
{
	for (uint32_t i = 0; hm_type_name(t) && i < m->spec->nr_edits; i++)
		if (m->spec->edits[i].kind == kind &&
		    !strcmp(bare(m->spec->edits[i].type), hm_type_name(t)))
			return 1;
	return 0;
}

/* An array split into per-thread slots: its elements' stride, rounded up to the line. */
static int split_stride(const struct emap *m, const struct hm_type *arr, uint64_t esize,
			uint64_t *stride)
{
	const struct hm_type *e = hm_type_strip(arr->ref);

	if (!e || !edited_as(m, e, HM_WI_SPLIT) || !m->spec->line_size)
		return 0;
	*stride = round_up(esize, m->spec->line_size);
	return 1;
}

static const struct rel *rel_of(struct emap *m, const struct hm_type *t, int depth);

/* New size and alignment of t when it holds an edited type; 1 when it does not. */
static int obj_new(struct emap *m, const struct hm_type *t, uint64_t *size, uint32_t *align,
		   int depth)
{
	const struct rel *r;

	t = hm_type_strip(t);
	if (!t || depth > MAX_NEST)
		return 1;
	if (t->kind == HM_T_ARRAY) {
		const struct hm_type *e = hm_type_strip(t->ref);
		uint64_t es, stride;
		int same = obj_new(m, t->ref, &es, align, depth + 1);

		if (same && e && split_stride(m, t, e->size, &stride)) {
			*size = t->nelems * stride;
			*align = m->spec->line_size;
			return 0;
		}
		if (same)
			return 1;
		if (split_stride(m, t, es, &stride)) {
			es = stride;
			*align = m->spec->line_size;
		}
		*size = t->nelems * es;
		return 0;
	}
	if (!(r = rel_of(m, t, depth)))
		return 1;
	*size = r->new_size;
	*align = r->new_align;
	return 0;
}

static void sort_perm(struct rel *r)
{
	for (uint32_t i = 0; i < r->sh.nr; i++) {
		uint32_t v = i, j = i;

		while (j > 0 && r->sh.ms[r->perm[j - 1]].offset > r->sh.ms[v].offset) {
			r->perm[j] = r->perm[j - 1];
			j--;
		}
		r->perm[j] = v;
	}
}

/* Units by offset; members overlapping in bytes (bitfields in one storage unit) join. */
static void make_units(struct emap *m, struct rel *r, int depth)
{
	for (uint32_t k = 0; k < r->sh.nr; k++) {
		const struct hm_member_shape *s = &r->sh.ms[r->perm[k]];
		uint32_t al = s->m->align ? s->m->align : r->sh.packed && !r->unpack ? 1 : s->align;
		struct unit *u = r->nr ? &r->u[r->nr - 1] : NULL;

		if (u && !r->is_union && s->offset < u->old_off + u->old_size) {
			u->count++;
			if (s->offset + s->size > u->old_off + u->old_size)
				u->old_size = s->offset + s->size - u->old_off;
			u->align = al > u->align ? al : u->align;
			continue;
		}
		u = &r->u[r->nr++];
		*u = (struct unit){.first = k, .count = 1, .old_off = s->offset,
				   .old_size = s->size, .align = al};
	}
	for (uint32_t i = 0; i < r->nr; i++) {
		struct unit *u = &r->u[i];
		const struct hm_member *mm = r->sh.ms[r->perm[u->first]].m;
		uint64_t size;
		uint32_t al = 1;

		u->new_size = u->old_size;
		if (u->count != 1 || mm->bit_size || obj_new(m, mm->type, &size, &al, depth + 1))
			continue;
		u->sub = hm_type_strip(mm->type);
		u->new_size = size;
		if (!r->sh.packed && al > u->align)
			u->align = al;
	}
}

static int32_t unit_of_member(const struct rel *r, uint32_t idx)
{
	for (uint32_t i = 0; i < r->nr; i++)
		for (uint32_t k = r->u[i].first; k < r->u[i].first + r->u[i].count; k++)
			if (r->perm[k] == idx)
				return (int32_t)i;
	return -1;
}

/* Member name or "#N" -> index in t, -1 when absent. */
static int32_t member_index(const struct hm_type *t, const char *name)
{
	uint32_t nr;
	const struct hm_member *mm = hm_type_members(t, &nr);
	char *end;

	if (name[0] == '#') {
		unsigned long i = strtoul(name + 1, &end, 10);

		return !*end && end != name + 1 && i < nr ? (int32_t)i : -1;
	}
	for (uint32_t i = 0; i < nr; i++)
		if (mm[i].name && !strcmp(mm[i].name, name))
			return (int32_t)i;
	return -1;
}

/* Applies the edits naming t; returns the first order position that changes. */
static uint32_t apply_edits(struct emap *m, struct rel *r)
{
	uint32_t from = r->nr;
	uint8_t *placed = hm_arena_alloc(m->a, r->nr + 1);

	for (uint32_t i = 0; i < m->spec->nr_edits; i++) {
		const struct hm_wi_edit *e = &m->spec->edits[i];
		int32_t k;

		if (!r->edited || strcmp(bare(e->type), hm_type_name(r->t)))
			continue;
		if (e->kind == HM_WI_ORDER) {
			uint32_t pos = 0;

			for (uint32_t j = 0; j < e->nr_order; j++) {
				k = unit_of_member(r, (uint32_t)member_index(r->t, e->order[j]));
				if (k >= 0 && !placed[k]) {
					placed[k] = 1;
					r->order[pos++] = (uint32_t)k;
				}
			}
			for (uint32_t j = 0; j < r->nr; j++)
				if (!placed[j])
					r->order[pos++] = j;
			from = 0;
			continue;
		}
		k = e->field ? unit_of_member(r, (uint32_t)member_index(r->t, e->field)) : -1;
		if (k < 0)
			continue;
		if (e->kind == HM_WI_PAD)
			r->u[k].pad += e->value;
		else if (e->value > r->u[k].forced)
			r->u[k].forced = (uint32_t)e->value;
	}
	if (r->unpack)
		from = 0;	/* every member may move to its natural alignment */
	for (uint32_t pos = 0; pos < r->nr && pos < from; pos++) {
		const struct unit *u = &r->u[r->order[pos]];

		if (u->pad || u->forced > u->align || u->sub || r->order[pos] != pos)
			from = pos;
	}
	return from;
}

static void compute(struct rel *r, uint32_t from)
{
	uint64_t off = 0, end = 0;
	uint32_t maxal = r->t->align ? r->t->align : 1;

	for (uint32_t pos = 0; pos < r->nr; pos++) {
		struct unit *u = &r->u[r->order[pos]];
		uint32_t al = u->forced > u->align ? u->forced : u->align;

		if (al > maxal)
			maxal = al;
		if (r->is_union)
			u->new_off = 0;
		else if (pos < from)
			u->new_off = u->old_off;
		else
			u->new_off = round_up(off + u->pad, al);
		off = u->new_off + u->new_size;
		if (off > end)
			end = off;
	}
	if (from >= r->nr) {
		r->new_size = r->t->size;
		r->new_align = (uint32_t)r->sh.align;
		return;
	}
	r->new_align = maxal;
	r->new_size = round_up(end, maxal);
}

static const struct rel *rel_of(struct emap *m, const struct hm_type *t, int depth)
{
	struct rel *r;
	void *v;
	int any_sub = 0;

	t = hm_type_strip(t);
	if (!t || !hm_type_is_aggregate(t) || depth > MAX_NEST)
		return NULL;
	if ((v = hm_map64_get(&m->rels, (uintptr_t)t)))
		return v == &unchanged ? NULL : v;
	hm_map64_put(&m->rels, (uintptr_t)t, &unchanged);
	r = hm_arena_alloc(m->a, sizeof(*r));
	r->t = t;
	r->is_union = t->kind == HM_T_UNION;
	r->edited = !r->is_union && is_edited(m, t);
	r->unpack = r->edited && edited_as(m, t, HM_WI_UNPACK);
	hm_shape_compute(m->a, t, m->spec->line_size, &r->sh);
	r->perm = hm_arena_alloc(m->a, (r->sh.nr + 1) * sizeof(*r->perm));
	r->u = hm_arena_alloc(m->a, (r->sh.nr + 1) * sizeof(*r->u));
	r->order = hm_arena_alloc(m->a, (r->sh.nr + 1) * sizeof(*r->order));
	sort_perm(r);
	make_units(m, r, depth);
	for (uint32_t i = 0; i < r->nr; i++) {
		r->order[i] = i;
		any_sub |= r->u[i].sub != NULL;
	}
	if (!r->edited && !any_sub)
		return NULL;
	compute(r, apply_edits(m, r));
	hm_map64_put(&m->rels, (uintptr_t)t, r);
	return r;
}

/* The unit holding byte off: the last one starting at or before it; in a union, the one
 * that embeds an edited type. */
static const struct unit *unit_at(const struct rel *r, uint64_t off)
{
	uint32_t lo = 0, hi = r->nr;

	if (r->is_union) {
		for (uint32_t i = 0; i < r->nr; i++)
			if (r->u[i].sub && off < r->u[i].old_size)
				return &r->u[i];
		return r->nr ? &r->u[0] : NULL;
	}
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (r->u[mid].old_off <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &r->u[lo - 1] : NULL;
}

static int map_type(struct emap *m, const struct hm_type *t, uint64_t off, uint64_t *out,
		    int depth)
{
	const struct rel *r;
	const struct unit *u;
	uint64_t in, sub;

	t = hm_type_strip(t);
	if (!t || depth > MAX_NEST)
		return 1;
	if (t->kind == HM_T_ARRAY) {
		const struct hm_type *e = hm_type_strip(t->ref);
		uint64_t nes;
		uint32_t al;

		int same;

		if (!e || !e->size)
			return 1;
		if ((same = obj_new(m, e, &nes, &al, depth + 1)))
			nes = e->size;
		if (!split_stride(m, t, nes, &nes) && same)
			return 1;
		if (map_type(m, e, off % e->size, &in, depth + 1))
			in = off % e->size;
		*out = off / e->size * nes + in;
		return 0;
	}
	if (!(r = rel_of(m, t, depth)))
		return 1;
	if (!(u = unit_at(r, off))) {
		*out = off;
		return 0;
	}
	in = off - u->old_off;
	if (u->sub && map_type(m, u->sub, in, &sub, depth + 1) == 0)
		in = sub;
	*out = u->new_off + in;
	return 0;
}

static int emap_map(struct hm_wi_map *mp, const struct hm_type *t, uint64_t off,
		    uint64_t *new_off, const char **absent)
{
	(void)absent;
	return map_type((struct emap *)mp, t, off, new_off, 0);
}

static int emap_object(struct hm_wi_map *mp, const struct hm_type *t, uint64_t *size,
		       uint32_t *align)
{
	return obj_new((struct emap *)mp, t, size, align, 0);
}

static void emap_free(struct hm_wi_map *mp)
{
	hm_map64_free(&((struct emap *)mp)->rels);
}

/* --- the plan: checked edits, and the changed types as rows --- */

static void to_type(const struct rel *r, struct hm_arena *a, struct hm_wi_type *wt)
{
	wt->name = hm_type_name(r->t);
	wt->old_t = r->t;
	wt->old_size = r->t->size;
	wt->old_align = (uint32_t)r->sh.align;
	wt->new_size = r->new_size;
	wt->new_align = r->new_align;
	wt->edited = r->edited;
	wt->m = hm_arena_alloc(a, (r->sh.nr + 1) * sizeof(*wt->m));
	wt->changed = wt->old_size != wt->new_size || wt->old_align != wt->new_align;
	for (uint32_t pos = 0; pos < r->nr; pos++) {
		const struct unit *u = &r->u[r->order[pos]];

		for (uint32_t k = u->first; k < u->first + u->count; k++) {
			const struct hm_member_shape *ms = &r->sh.ms[r->perm[k]];
			struct hm_wi_member *w = &wt->m[wt->nr++];

			w->name = ms->m->name;
			w->old_m = ms->m;
			w->old_off = ms->offset;
			w->new_off = u->new_off + (ms->offset - u->old_off);
			w->old_size = ms->size;
			w->new_size = u->sub ? u->new_size : ms->size;
			w->align = u->forced > u->align ? u->forced : u->align;
			w->forced = k == u->first ? u->forced : 0;
			w->pad_before = k == u->first ? u->pad : 0;
			w->group = -1;
			wt->changed |= w->new_off != w->old_off || w->new_size != w->old_size;
		}
	}
}

static int check_edit(struct hm_arena *a, const struct hm_wi_sum *sum,
		      const struct hm_wi_edit *e, struct hm_err *err)
{
	const struct hm_type *t;

	if (e->kind == HM_WI_SPLIT)
		return 0;	/* names an element type, which may be a scalar: any array of it */
	if (!(t = hm_wi_find_type(a, sum, e->type, err)))
		return -1;
	if (e->kind == HM_WI_UNPACK)
		return 0;
	if (t->kind == HM_T_UNION)
		return hm_err_set(err, HM_EXIT_INPUT,
				  "%s is a union: its members share offset 0, so padding, "
				  "alignment and order do not apply; edit the struct that holds it",
				  e->type);
	if (e->kind == HM_WI_ALIGN && (!e->value || (e->value & (e->value - 1)) || e->value > 4096))
		return hm_err_set(err, HM_EXIT_INPUT,
				  "--align %s.%s=%llu: give a power of two from 1 to 4096, "
				  "e.g. 64", e->type, e->field, (unsigned long long)e->value);
	if (e->kind == HM_WI_PAD && e->value > (1u << 20))
		return hm_err_set(err, HM_EXIT_INPUT,
				  "--pad %s.%s=%llu: more than 1 MiB of padding; give the bytes "
				  "to insert, e.g. 56", e->type, e->field,
				  (unsigned long long)e->value);
	if (e->kind != HM_WI_ORDER)
		return hm_wi_find_member(a, t, e->field, err) < 0 ? -1 : 0;
	for (uint32_t i = 0; i < e->nr_order; i++) {
		if (hm_wi_find_member(a, t, e->order[i], err) < 0)
			return -1;
		for (uint32_t j = 0; j < i; j++)
			if (!strcmp(e->order[i], e->order[j]))
				return hm_err_set(err, HM_EXIT_INPUT,
						  "--order %s: %s is named twice; name each "
						  "member once", e->type, e->order[i]);
	}
	return 0;
}

static struct hm_wi_type *find_row(struct hm_wi_plan *p, const char *name)
{
	for (uint32_t i = 0; i < p->nr_types; i++)
		if (!strcmp(p->types[i].name, name))
			return &p->types[i];
	return NULL;
}

static int cmp_rows(const void *x, const void *y)
{
	const struct hm_wi_type *a = x, *b = y;

	if (a->edited != b->edited)
		return a->edited ? -1 : 1;
	if (a->accesses != b->accesses)
		return a->accesses > b->accesses ? -1 : 1;
	return strcmp(a->name, b->name);
}

int hm_wi_edit_plan(struct hm_arena *a, const struct hm_wi_sum *sum,
		    const struct hm_wi_spec *spec, struct hm_wi_plan *out, struct hm_err *err)
{
	struct emap *m;
	uint32_t cap = spec->nr_edits + 16;

	for (uint32_t i = 0; i < spec->nr_edits; i++)
		if (check_edit(a, sum, &spec->edits[i], err))
			return -1;
	m = hm_arena_alloc(a, sizeof(*m));
	m->ops = (struct hm_wi_map){emap_map, emap_object, emap_free};
	m->a = a;
	m->spec = spec;
	out->map = &m->ops;
	out->types = hm_arena_alloc(a, cap * sizeof(*out->types));
	for (uint32_t i = 0; i < spec->nr_edits; i++) {
		const struct hm_type *t = spec->edits[i].kind == HM_WI_SPLIT ? NULL
			: hm_wi_find_type(a, sum, spec->edits[i].type, err);
		const struct rel *r = t ? rel_of(m, t, 0) : NULL;

		if (r && !find_row(out, hm_type_name(t)))
			to_type(r, a, &out->types[out->nr_types++]);
	}
	/* Recorded objects whose type embeds an edited one. */
	for (size_t i = 0; i < sum->n; i++) {
		const struct hm_type *t = hm_wi_elem(sum->acc[i].type, NULL);
		const struct rel *r = t ? rel_of(m, t, 0) : NULL;
		struct hm_wi_type *row;

		if (!r || !hm_type_name(t))
			continue;
		if (!(row = find_row(out, hm_type_name(t)))) {
			if (out->nr_types == cap) {
				struct hm_wi_type *nt = hm_arena_alloc(a, 2 * cap * sizeof(*nt));

				memcpy(nt, out->types, cap * sizeof(*nt));
				out->types = nt;
				cap *= 2;
			}
			row = &out->types[out->nr_types++];
			to_type(r, a, row);
		}
		row->accesses += sum->w[i];
	}
	hm_sort(out->types, out->nr_types, sizeof(*out->types), cmp_rows);
	return 0;
}
