/* --layout NEWBUILD: the new offset of a recorded byte is found by its member path. The
 * path comes from the old type ("m.im_boffset", "pts[2].x") and is looked up in the type
 * of the same name in the new build, so members that moved inside embedded structs move
 * too; a path the new type lacks is an absent field. */
#include "analyzer/whatif.h"

#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "symbolize/shape.h"
#include "core/sort.h"

#define PATH_MAX_LEN 512

struct res {
	uint64_t new_in;		/* new offset inside the element */
	const char *absent;		/* the path, when the new type lacks it */
};

struct bmap {
	struct hm_wi_map ops;
	struct hm_arena *a;
	struct hm_layout *build;
	const char *only;
	struct hm_map64 newt;		/* old element type -> new type, or &gone */
	struct hm_map64 offs;		/* old element type -> struct hm_map64 (in + 1 -> res) */
};

static char gone;

static const struct hm_type *new_of(struct bmap *m, const struct hm_type *elem)
{
	void *v = hm_map64_get(&m->newt, (uintptr_t)elem);
	const struct hm_type *nt;

	if (v)
		return v == &gone ? NULL : v;
	nt = hm_layout_find(m->build, hm_type_name(elem));
	if (nt && (!hm_type_is_aggregate(nt) || !nt->size))
		nt = NULL;
	hm_map64_put(&m->newt, (uintptr_t)elem, nt ? (void *)nt : &gone);
	return nt;
}

/* A hole or padding byte: it follows the top-level member before it. */
static void map_hole(struct bmap *m, const struct hm_type *elem, const struct hm_type *nt,
		     uint64_t in, struct res *r)
{
	uint32_t nr;
	const struct hm_member *mm = hm_type_members(elem, &nr);
	const struct hm_member *prev = NULL;
	uint64_t noff, nsz;

	for (uint32_t i = 0; i < nr; i++)
		if (mm[i].bit_offset / 8 <= in && (!prev || mm[i].bit_offset >= prev->bit_offset))
			prev = &mm[i];
	r->new_in = in;
	if (!prev || !prev->name)
		return;
	if (hm_layout_member_offset(nt, prev->name, &noff, &nsz))
		r->absent = hm_arena_strdup(m->a, prev->name);
	else
		r->new_in = noff + (in - prev->bit_offset / 8);
}

static const struct res *lookup(struct bmap *m, const struct hm_type *elem,
				const struct hm_type *nt, uint64_t in)
{
	struct hm_map64 *c = hm_map64_get(&m->offs, (uintptr_t)elem);
	struct res *r;
	char path[PATH_MAX_LEN];
	uint64_t within = 0, noff, nsz;

	if (!c) {
		c = hm_arena_alloc(m->a, sizeof(*c));
		hm_map64_init(c);
		hm_map64_put(&m->offs, (uintptr_t)elem, c);
	}
	if ((r = hm_map64_get(c, in + 1)))
		return r;
	r = hm_arena_alloc(m->a, sizeof(*r));
	if (!hm_layout_field_at(elem, in, path, sizeof(path), &within))
		map_hole(m, elem, nt, in, r);
	else if (hm_layout_member_offset(nt, path, &noff, &nsz))
		r->absent = hm_arena_strdup(m->a, path);
	else
		r->new_in = noff + within;
	hm_map64_put(c, in + 1, r);
	return r;
}

static int bmap_map(struct hm_wi_map *mp, const struct hm_type *t, uint64_t off,
		    uint64_t *new_off, const char **absent)
{
	struct bmap *m = (struct bmap *)mp;
	const struct hm_type *elem = hm_wi_elem(t, NULL), *nt;
	const struct res *r;

	if (!elem || !hm_type_name(elem) || !elem->size || (m->only && strcmp(hm_type_name(elem), m->only)))
		return 1;
	if (!(nt = new_of(m, elem)))
		return 2;
	r = lookup(m, elem, nt, off % elem->size);
	if (r->absent) {
		*absent = r->absent;
		return -1;
	}
	*new_off = off / elem->size * nt->size + r->new_in;
	return 0;
}

static int bmap_object(struct hm_wi_map *mp, const struct hm_type *t, uint64_t *size,
		       uint32_t *align)
{
	struct bmap *m = (struct bmap *)mp;
	uint64_t nel = 1;
	const struct hm_type *elem = hm_wi_elem(t, &nel), *nt;

	if (!elem || !hm_type_name(elem) || !elem->size || (m->only && strcmp(hm_type_name(elem), m->only)) ||
	    !(nt = new_of(m, elem)))
		return 1;
	*size = nel * nt->size;
	*align = hm_type_align(nt);
	return 0;
}

static void bmap_free(struct hm_wi_map *mp)
{
	struct bmap *m = (struct bmap *)mp;

	for (size_t i = 0; i < m->offs.cap; i++)
		if (m->offs.slots[i].key)
			hm_map64_free(m->offs.slots[i].val);
	hm_map64_free(&m->offs);
	hm_map64_free(&m->newt);
}

/* --- the plan: types that changed, absent types and fields --- */

/* The k-th anonymous member of t, or the one called name. */
static int32_t match(const struct hm_type *t, const struct hm_member *om, uint32_t anon_k)
{
	uint32_t nr, k = 0;
	const struct hm_member *mm = hm_type_members(t, &nr);

	for (uint32_t i = 0; i < nr; i++) {
		if (om->name ? mm[i].name && !strcmp(mm[i].name, om->name) : !mm[i].name && k++ == anon_k)
			return (int32_t)i;
	}
	return -1;
}

static void row_of(struct hm_arena *a, const struct hm_type *ot, const struct hm_type *nt,
		   uint32_t line_size, struct hm_wi_type *wt)
{
	struct hm_shape os, ns;
	int32_t *old_of;
	uint8_t *used;
	uint32_t anon = 0;

	/* wt may be the slot of an unchanged type built before (collect reuses it) */
	memset(wt, 0, sizeof(*wt));
	hm_shape_compute(a, ot, line_size, &os);
	hm_shape_compute(a, nt, line_size, &ns);
	wt->name = hm_type_name(ot);
	wt->old_t = ot;
	wt->new_t = nt;
	wt->old_size = ot->size;
	wt->new_size = nt->size;
	wt->old_align = (uint32_t)os.align;
	wt->new_align = (uint32_t)ns.align;
	wt->edited = 1;
	wt->changed = wt->old_size != wt->new_size || wt->old_align != wt->new_align;
	wt->m = hm_arena_alloc(a, (os.nr + ns.nr + 1) * sizeof(*wt->m));
	old_of = hm_arena_alloc(a, (ns.nr + 1) * sizeof(*old_of));
	used = hm_arena_alloc(a, os.nr + 1);
	for (uint32_t i = 0; i < ns.nr; i++)
		old_of[i] = -1;
	for (uint32_t i = 0; i < os.nr; i++) {
		int32_t j = match(nt, os.ms[i].m, os.ms[i].m->name ? 0 : anon++);

		if (j >= 0 && old_of[j] < 0) {
			old_of[j] = (int32_t)i;
			used[i] = 1;
		}
	}
	for (uint32_t j = 0; j < ns.nr; j++) {
		struct hm_wi_member *w = &wt->m[wt->nr++];
		const struct hm_member_shape *o = old_of[j] >= 0 ? &os.ms[old_of[j]] : NULL;

		w->name = ns.ms[j].m->name;
		w->new_m = ns.ms[j].m;
		w->new_off = ns.ms[j].offset;
		w->new_size = ns.ms[j].size;
		w->align = ns.ms[j].align;
		w->forced = ns.ms[j].forced ? ns.ms[j].align : 0;
		w->old_m = o ? o->m : NULL;
		w->old_off = o ? o->offset : HM_WI_NONE;
		w->old_size = o ? o->size : 0;
		w->group = -1;
		wt->changed |= !o || o->offset != w->new_off || o->size != w->new_size;
	}
	for (uint32_t i = 0; i < os.nr; i++) {
		struct hm_wi_member *w;

		if (used[i])
			continue;
		w = &wt->m[wt->nr++];
		w->name = os.ms[i].m->name;
		w->old_m = os.ms[i].m;
		w->old_off = os.ms[i].offset;
		w->old_size = os.ms[i].size;
		w->new_off = HM_WI_NONE;
		w->align = os.ms[i].align;
		w->group = -1;
		wt->changed = 1;
	}
}

/* Per recorded element type (by name): its accesses and rows. */
struct seen {
	const struct hm_type *t;
	uint64_t accesses;
	int absent;
};

static const char *file_of(const struct hm_type *t)
{
	return t->src ? hm_layout_path(t->src) : NULL;
}

static void add_absent(struct hm_arena *a, struct hm_wi_plan *p, uint32_t *cap,
		       const char *type, const char *field, const char *file, int other,
		       uint64_t count)
{
	if (p->nr_absent == *cap) {
		struct hm_wi_absent *n = hm_arena_alloc(a, 2 * *cap * sizeof(*n));

		memcpy(n, p->absent, *cap * sizeof(*n));
		p->absent = n;
		*cap *= 2;
	}
	p->absent[p->nr_absent++] = (struct hm_wi_absent){type, field, file, other, count};
}

/* Counts accesses per type name and per absent path. */
static void survey(struct bmap *m, struct hm_arena *a, const struct hm_wi_sum *sum,
		   struct hm_hash *types, struct hm_hash *fields)
{
	const struct hm_access *acc = sum->acc;

	for (size_t i = 0; i < sum->n; i++) {
		const struct hm_type *elem = hm_wi_elem(acc[i].type, NULL);
		const char *absent = NULL, *key;
		uint64_t off;
		struct seen *s;
		uint64_t *cnt;

		if (!elem || !hm_type_name(elem) || !elem->size || !acc[i].obj_base)
			continue;
		if (!(s = hm_hash_get(types, hm_type_name(elem)))) {
			s = hm_arena_alloc(a, sizeof(*s));
			s->t = elem;
			hm_hash_put(types, hm_type_name(elem), s);
		}
		s->accesses += sum->w[i];
		s->absent = bmap_map(&m->ops, acc[i].type, acc[i].field_off, &off, &absent) == 2;
		if (!absent)
			continue;
		key = hm_arena_printf(a, "%s.%s", hm_type_name(elem), absent);
		if (!(cnt = hm_hash_get(fields, key))) {
			cnt = hm_arena_alloc(a, sizeof(*cnt));
			hm_hash_put(fields, key, cnt);
		}
		*cnt += sum->w[i];
	}
}

static int cmp_rows(const void *x, const void *y)
{
	const struct hm_wi_type *a = x, *b = y;

	if (a->accesses != b->accesses)
		return a->accesses > b->accesses ? -1 : 1;
	return strcmp(a->name, b->name);
}

static int cmp_absent(const void *x, const void *y)
{
	const struct hm_wi_absent *a = x, *b = y;

	if (a->other != b->other)
		return a->other ? 1 : -1;
	if (a->accesses != b->accesses)
		return a->accesses > b->accesses ? -1 : 1;
	return strcmp(a->field ? a->field : a->type, b->field ? b->field : b->type);
}

static void collect(struct hm_arena *a, const struct hm_wi_spec *spec, struct hm_hash *types,
		    struct hm_hash *fields, struct bmap *m, struct hm_wi_plan *out)
{
	uint32_t cap = 16;
	struct hm_hash files;	/* files with a recorded type the new build has */

	hm_hash_init(&files);
	for (size_t i = 0; i < types->cap; i++) {
		const struct seen *s = types->slots[i].val;

		if (types->slots[i].key && !s->absent && file_of(s->t))
			hm_hash_put(&files, file_of(s->t), (void *)s);
	}
	out->types = hm_arena_alloc(a, (types->len + 1) * sizeof(*out->types));
	out->absent = hm_arena_alloc(a, cap * sizeof(*out->absent));
	for (size_t i = 0; i < types->cap; i++) {
		const struct seen *s = types->slots[i].val;
		const struct hm_type *nt;

		if (!types->slots[i].key)
			continue;
		if (m->only && strcmp(hm_type_name(s->t), m->only))
			continue;
		if (!(nt = new_of(m, s->t))) {
			add_absent(a, out, &cap, hm_type_name(s->t), NULL, file_of(s->t),
				   !file_of(s->t) || !hm_hash_get(&files, file_of(s->t)),
				   s->accesses);
			continue;
		}
		row_of(a, s->t, nt, spec->line_size, &out->types[out->nr_types]);
		out->types[out->nr_types].accesses = s->accesses;
		if (out->types[out->nr_types].changed || m->only)
			out->nr_types++;
	}
	for (size_t i = 0; i < fields->cap; i++) {
		const char *key = fields->slots[i].key;
		const char *dot = key ? strchr(key, '.') : NULL;

		if (dot)
			add_absent(a, out, &cap, hm_arena_printf(a, "%.*s", (int)(dot - key), key),
				   dot + 1, NULL, 0, *(uint64_t *)fields->slots[i].val);
	}
	hm_hash_free(&files);
	hm_sort(out->types, out->nr_types, sizeof(*out->types), cmp_rows);
	hm_sort(out->absent, out->nr_absent, sizeof(*out->absent), cmp_absent);
}

int hm_wi_build_plan(struct hm_arena *a, const struct hm_wi_sum *sum,
		     const struct hm_wi_spec *spec, struct hm_wi_plan *out, struct hm_err *err)
{
	struct bmap *m = hm_arena_alloc(a, sizeof(*m));
	struct hm_hash types, fields;
	size_t in_build = 0;

	if (spec->only && !hm_wi_find_type(a, sum, spec->only, err))
		return -1;
	m->ops = (struct hm_wi_map){bmap_map, bmap_object, bmap_free};
	m->a = a;
	m->build = spec->build;
	m->only = spec->only;
	if (m->only) {
		const struct hm_type *t = hm_wi_find_type(a, sum, spec->only, err);

		m->only = hm_type_name(t);
		if (!hm_layout_find(spec->build, hm_type_name(t)))
			return hm_err_set(err, HM_EXIT_INPUT,
					  "%s has no type %s: check that it is the new build of "
					  "the recorded program, built with -g",
					  hm_layout_path(spec->build), hm_type_name(t));
	}
	out->map = &m->ops;
	out->build = hm_layout_path(spec->build);
	hm_hash_init(&types);
	hm_hash_init(&fields);
	survey(m, a, sum, &types, &fields);
	for (size_t i = 0; i < types.cap; i++)
		if (types.slots[i].key)
			in_build += !((struct seen *)types.slots[i].val)->absent;
	if (types.len && !in_build) {
		hm_hash_free(&types);
		hm_hash_free(&fields);
		return hm_err_set(err, HM_EXIT_INPUT,
				  "%s has none of the %zu struct types recorded: give the new "
				  "build of the recorded program, built with -g",
				  hm_layout_path(spec->build), types.len);
	}
	collect(a, spec, &types, &fields, m, out);
	hm_hash_free(&types);
	hm_hash_free(&fields);
	return 0;
}
