/* Type-by-type layout diff. Members are compared as leaves (hm_layout_walk paths), so
 * nested and anonymous members match by path, never by position or address. */
#include "analyzer/layoutdiff.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "symbolize/shape.h"
#include "core/sort.h"

static const char *const fkind_names[HM_F__COUNT] = {
	[HM_F_SIZE] = "size", [HM_F_ALIGN] = "align", [HM_F_LINE] = "line",
	[HM_F_STRADDLE] = "straddle", [HM_F_SHARED] = "shared", [HM_F_EMBEDS] = "embeds",
	[HM_F_HOLE] = "hole", [HM_F_MOVED] = "moved", [HM_F_ADDED] = "added",
	[HM_F_REMOVED] = "removed", [HM_F_RENAMED] = "renamed", [HM_F_RETYPED] = "retyped",
	[HM_F_UNSTRADDLE] = "unstraddle", [HM_F_UNSHARED] = "unshared",
	[HM_F_HOLE_GONE] = "hole_gone",
};

/* What a reviewer should read first: a size change shifts everything after it. */
static const int fkind_weight[HM_F__COUNT] = {
	[HM_F_SIZE] = 1000, [HM_F_ALIGN] = 100, [HM_F_LINE] = 50, [HM_F_STRADDLE] = 40,
	[HM_F_EMBEDS] = 30, [HM_F_SHARED] = 20, [HM_F_HOLE] = 10, [HM_F_MOVED] = 5,
	[HM_F_ADDED] = 5, [HM_F_REMOVED] = 5, [HM_F_RENAMED] = 5, [HM_F_RETYPED] = 5,
	[HM_F_UNSTRADDLE] = 2, [HM_F_UNSHARED] = 2, [HM_F_HOLE_GONE] = 2,
};

const char *hm_fkind_name(enum hm_fkind k)
{
	return k < HM_F__COUNT ? fkind_names[k] : "?";
}

int hm_fkind_mask(const char *list, unsigned *mask)
{
	char word[32];
	const char *p = list;

	*mask = 0;
	while (*p) {
		size_t n = strcspn(p, ",");
		int found = 0;

		if (n == 0 || n >= sizeof(word))
			return -1;
		memcpy(word, p, n);
		word[n] = '\0';
		for (int k = 0; k < HM_F__COUNT; k++)
			if (!strcmp(word, fkind_names[k])) {
				*mask |= 1u << k;
				found = 1;
			}
		if (!found)
			return -1;
		p += n + (p[n] == ',');
	}
	return 0;
}

#include "analyzer/layoutdiff_int.h"
#include "core/oom.h"

static struct hm_finding *add(struct hm_arena *a, struct hm_type_diff *td, enum hm_fkind k,
			      const char *member)
{
	struct hm_finding *f;

	if (td->nr == td->cap) {
		struct hm_finding *nf;

		td->cap = td->cap ? td->cap * 2 : 16;
		nf = hm_arena_alloc(a, td->cap * sizeof(*nf));
		if (td->nr)
			memcpy(nf, td->f, td->nr * sizeof(*nf));
		td->f = nf;
	}
	f = &td->f[td->nr++];
	memset(f, 0, sizeof(*f));
	f->kind = k;
	f->member = member;
	f->old_offset = f->new_offset = f->old_line = f->new_line = -1;
	td->impact += fkind_weight[k];
	return f;
}

static int straddles(const struct leaf *l) { return l->first_line != l->last_line; }

static int lines_meet(const struct leaf *x, const struct leaf *y)
{
	return x->first_line <= y->last_line && y->first_line <= x->last_line;
}

static void member_changes(struct hm_arena *a, struct hm_type_diff *td, const struct leaf *o,
			   const struct leaf *n)
{
	struct hm_finding *f;

	if (o->bit_off != n->bit_off) {
		f = add(a, td, o->first_line != n->first_line ? HM_F_LINE : HM_F_MOVED, n->path);
		f->old_offset = (int64_t)(o->bit_off / 8);
		f->new_offset = (int64_t)(n->bit_off / 8);
		f->old_line = (int64_t)o->first_line;
		f->new_line = (int64_t)n->first_line;
		f->detail = hm_arena_printf(a, "offset %lld -> %lld, line %lld -> %lld",
					    (long long)f->old_offset, (long long)f->new_offset,
					    (long long)f->old_line, (long long)f->new_line);
	}
	if (strcmp(o->type, n->type) || o->bits != n->bits) {
		f = add(a, td, HM_F_RETYPED, n->path);
		f->detail = hm_arena_printf(a, "%s (%llu bits) -> %s (%llu bits)", o->type,
					    (unsigned long long)o->bits, n->type,
					    (unsigned long long)n->bits);
	}
	if (straddles(o) != straddles(n)) {
		f = add(a, td, straddles(n) ? HM_F_STRADDLE : HM_F_UNSTRADDLE, n->path);
		f->new_offset = (int64_t)(n->bit_off / 8);
		f->detail = straddles(n)
			? hm_arena_printf(a, "now crosses the boundary of lines %llu and %llu",
					  (unsigned long long)n->first_line,
					  (unsigned long long)n->last_line)
			: hm_arena_printf(a, "no longer crosses a line boundary");
	}
}

static void sharing_changes(struct hm_arena *a, struct hm_type_diff *td, struct leaves *O,
			    struct leaves *N)
{
	for (size_t i = 0; i < N->n; i++) {
		const struct leaf *ni = &N->v[i], *oi = hm_hash_get(&O->by_path, ni->path);

		if (!oi)
			continue;
		for (size_t j = i + 1; j < N->n; j++) {
			const struct leaf *nj = &N->v[j], *oj = hm_hash_get(&O->by_path, nj->path);
			int now, before;
			struct hm_finding *f;

			if (!oj)
				continue;
			now = lines_meet(ni, nj);
			before = lines_meet(oi, oj);
			if (now == before)
				continue;
			f = add(a, td, now ? HM_F_SHARED : HM_F_UNSHARED, ni->path);
			f->other = nj->path;
			f->new_line = (int64_t)(now ? nj->first_line : ni->first_line);
			f->detail = now ? hm_arena_printf(a, "now shares line %llu with %s",
							  (unsigned long long)nj->first_line, nj->path)
					: hm_arena_printf(a, "no longer shares a line with %s", nj->path);
		}
	}
}

static void added_removed(struct hm_arena *a, struct hm_type_diff *td, struct leaves *O,
			  struct leaves *N)
{
	for (size_t i = 0; i < N->n; i++) {
		const struct leaf *n = &N->v[i];
		struct hm_finding *f;

		if (hm_hash_get(&O->by_path, n->path))
			continue;
		/* Same place, same type, new name: a rename, not an add and a remove. */
		for (size_t j = 0; j < O->n; j++) {
			const struct leaf *o = &O->v[j];

			if (o->bit_off == n->bit_off && o->bits == n->bits &&
			    !strcmp(o->type, n->type) && !hm_hash_get(&N->by_path, o->path)) {
				f = add(a, td, HM_F_RENAMED, n->path);
				f->other = o->path;
				f->new_offset = (int64_t)(n->bit_off / 8);
				f->detail = hm_arena_printf(a, "was %s", o->path);
				goto next;
			}
		}
		f = add(a, td, HM_F_ADDED, n->path);
		f->new_offset = (int64_t)(n->bit_off / 8);
		f->new_line = (int64_t)n->first_line;
		f->detail = hm_arena_printf(a, "%s at offset %llu, line %llu", n->type,
					    (unsigned long long)(n->bit_off / 8),
					    (unsigned long long)n->first_line);
next:;
	}
	for (size_t j = 0; j < O->n; j++) {
		const struct leaf *o = &O->v[j];
		int renamed = 0;

		if (hm_hash_get(&N->by_path, o->path))
			continue;
		for (uint32_t k = 0; k < td->nr; k++)
			renamed |= td->f[k].kind == HM_F_RENAMED && td->f[k].other == o->path;
		if (!renamed) {
			struct hm_finding *f = add(a, td, HM_F_REMOVED, o->path);

			f->old_offset = (int64_t)(o->bit_off / 8);
			f->detail = hm_arena_printf(a, "%s was at offset %llu", o->type,
						    (unsigned long long)(o->bit_off / 8));
		}
	}
}

/* A member as hole findings name it: its name, else what anonymous members are named by. */
static const char *hole_owner(struct hm_arena *a, const struct hm_shape *s, uint32_t i)
{
	const struct hm_member *m = s->ms[i].m;

	return m->name ? m->name : hm_ld_anon_path(a, "", hm_type_strip(m->type), i);
}

/* Each member of s by its hole-owner name (the first of a repeated name), once. */
static void index_owners(struct hm_arena *a, const struct hm_shape *s, const char **who,
			 struct hm_hash *by)
{
	hm_hash_init(by);
	for (uint32_t i = 0; i < s->nr; i++) {
		who[i] = hole_owner(a, s, i);
		if (!hm_hash_get(by, who[i]))
			hm_hash_put(by, who[i], (void *)&s->ms[i]);
	}
}

static uint64_t hole_after(const struct hm_hash *by, const char *name)
{
	const struct hm_member_shape *ms = hm_hash_get(by, name);

	return ms ? ms->hole_after : 0;
}

static void hole_changes(struct hm_arena *a, struct hm_type_diff *td, const struct hm_shape *so,
			 const struct hm_shape *sn)
{
	const char **wo = hm_arena_alloc(a, (so->nr + 1) * sizeof(*wo));
	const char **wn = hm_arena_alloc(a, (sn->nr + 1) * sizeof(*wn));
	struct hm_hash bo, bn;

	index_owners(a, so, wo, &bo);
	index_owners(a, sn, wn, &bn);
	for (uint32_t i = 0; i < sn->nr; i++) {
		uint64_t now = sn->ms[i].hole_after, was = hole_after(&bo, wn[i]);
		struct hm_finding *f;

		if (now > was) {
			f = add(a, td, HM_F_HOLE, wn[i]);
			f->new_offset = (int64_t)(sn->ms[i].offset + sn->ms[i].size);
			f->detail = hm_arena_printf(a, "%llu-byte hole after it (was %llu)",
						    (unsigned long long)now, (unsigned long long)was);
		}
	}
	for (uint32_t i = 0; i < so->nr; i++) {
		uint64_t was = so->ms[i].hole_after, now = hole_after(&bn, wo[i]);

		if (was && !now) {
			struct hm_finding *f = add(a, td, HM_F_HOLE_GONE, wo[i]);

			f->detail = hm_arena_printf(a, "the %llu-byte hole after it is gone",
						    (unsigned long long)was);
		}
	}
	hm_hash_free(&bo);
	hm_hash_free(&bn);
}

static struct hm_type_diff *diff_one(struct hm_arena *a, const char *name, const struct hm_type *ot,
				     const struct hm_type *nt, uint32_t line)
{
	struct hm_type_diff *td = hm_arena_alloc(a, sizeof(*td));
	struct hm_shape so, sn;
	struct leaves O, N;

	hm_shape_compute(a, ot, line, &so);
	hm_shape_compute(a, nt, line, &sn);
	td->name = name;
	td->old_size = so.size;
	td->new_size = sn.size;
	td->old_align = so.align;
	td->new_align = sn.align;
	td->old_lines = so.cachelines;
	td->new_lines = sn.cachelines;
	if (so.size != sn.size) {
		struct hm_finding *f = add(a, td, HM_F_SIZE, NULL);

		f->detail = hm_arena_printf(a, "size %llu -> %llu (%+lld), cachelines %llu -> %llu",
					    (unsigned long long)so.size, (unsigned long long)sn.size,
					    (long long)(sn.size - so.size),
					    (unsigned long long)so.cachelines,
					    (unsigned long long)sn.cachelines);
		td->impact += (int64_t)(sn.size > so.size ? sn.size - so.size : so.size - sn.size);
	}
	if (so.align != sn.align)
		add(a, td, HM_F_ALIGN, NULL)->detail = hm_arena_printf(
			a, "alignment %llu -> %llu", (unsigned long long)so.align,
			(unsigned long long)sn.align);
	hm_ld_collect(&O, a, ot, line);
	hm_ld_collect(&N, a, nt, line);
	added_removed(a, td, &O, &N);
	for (size_t i = 0; i < N.n; i++) {
		const struct leaf *o = hm_hash_get(&O.by_path, N.v[i].path);

		if (o)
			member_changes(a, td, o, &N.v[i]);
	}
	hm_ld_leaves_free(&O);
	hm_ld_leaves_free(&N);
	hm_ld_collect_units(&O, a, ot, line);
	hm_ld_collect_units(&N, a, nt, line);
	sharing_changes(a, td, &O, &N);
	hm_ld_leaves_free(&O);
	hm_ld_leaves_free(&N);
	if (ot->kind != HM_T_UNION)
		hole_changes(a, td, &so, &sn);
	return td;
}

struct pair {
	const char *name;
	const struct hm_type *nt;
	struct hm_type_diff *td;
};

struct run {
	struct hm_arena *a;
	struct hm_layout *old, *new;
	uint32_t line;
	struct hm_diff *d;
	struct pair *pairs;
	size_t nr_pairs, cap_pairs;
	struct hm_hash changed;		/* "struct foo" -> its hm_type_diff */
	unsigned long embeds_budget;	/* aggregates visited looking for embedded types */
};

static void push_name(const char ***v, size_t *n, const char *name)
{
	*v = realloc((void *)*v, (*n + 1) * sizeof(**v));
	if (!*v)
		hm_oom();
	(*v)[(*n)++] = name;
}

/* The name a type is matched and reported by: its tag ("struct xfs_imap"), or for a
 * typedef'd anonymous struct its typedef's (lreg_args): "struct (anonymous)" would match
 * any anonymous struct of the other build. */
static const char *type_key(struct hm_arena *a, const struct hm_type *t)
{
	const struct hm_type *s = hm_type_strip(t);

	return s && !s->name && s->alias ? s->alias : hm_type_tag_name(a, t);
}

static void diff_pair(struct run *r, const char *key, const struct hm_type *ot)
{
	const struct hm_type *nt = hm_layout_find(r->new, key);
	const char *name = type_key(r->a, ot);
	struct pair *p;

	if (!nt) {
		push_name(&r->d->only_old, &r->d->nr_only_old, name);
		return;
	}
	if (r->nr_pairs == r->cap_pairs) {
		r->cap_pairs = r->cap_pairs ? r->cap_pairs * 2 : 256;
		r->pairs = realloc(r->pairs, r->cap_pairs * sizeof(*r->pairs));
		if (!r->pairs)
			hm_oom();
	}
	p = &r->pairs[r->nr_pairs++];
	p->name = name;
	p->nt = nt;
	p->td = diff_one(r->a, name, ot, nt, r->line);
	if (p->td->nr)
		hm_hash_put(&r->changed, name, p->td);
	r->d->compared++;
}

static int each_old(const struct hm_type *t, void *ctx)
{
	struct run *r = ctx;

	diff_pair(r, type_key(r->a, t), t);
	return 0;
}

static int each_new(const struct hm_type *t, void *ctx)
{
	struct run *r = ctx;
	const char *key = type_key(r->a, t);

	if (!hm_layout_find(r->old, key))
		push_name(&r->d->only_new, &r->d->nr_only_new, key);
	return 0;
}

/* Every by-value container of a changed type, at any depth, through arrays. */
static void embeds_scan(struct run *r, struct pair *p, const struct hm_type *t, const char *prefix,
			int depth)
{
	uint32_t nr;
	const struct hm_member *m = hm_type_members(t, &nr);

	if (depth > 32 || r->embeds_budget == 0)
		return;
	r->embeds_budget--;
	for (uint32_t i = 0; i < nr; i++) {
		const struct hm_type *s = hm_type_strip(m[i].type);
		const char *path = m[i].name ? (*prefix ? hm_arena_printf(r->a, "%s.%s", prefix,
									m[i].name)
							: m[i].name)
					     : prefix;
		struct hm_type_diff *inner;

		while (s && s->kind == HM_T_ARRAY)
			s = hm_type_strip(s->ref);
		if (m[i].bit_size || !hm_type_is_aggregate(s))
			continue;
		if ((s->name || s->alias) && (inner = hm_hash_get(&r->changed, type_key(r->a, s))) &&
		    strcmp(inner->name, p->name) != 0) {
			struct hm_finding *f = add(r->a, p->td, HM_F_EMBEDS, *path ? path : "(anonymous)");

			f->other = inner->name;
			f->new_offset = (int64_t)(m[i].bit_offset / 8);
			f->detail = hm_arena_printf(r->a, "contains %s, which changed (size %llu -> %llu)",
						    inner->name, (unsigned long long)inner->old_size,
						    (unsigned long long)inner->new_size);
		}
		embeds_scan(r, p, s, path, depth + 1);
	}
}

static int cmp_finding(const void *x, const void *y)
{
	const struct hm_finding *a = x, *b = y;

	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	return strcmp(a->member ? a->member : "", b->member ? b->member : "");
}

static int cmp_type(const void *x, const void *y)
{
	const struct hm_type_diff *a = *(struct hm_type_diff *const *)x;
	const struct hm_type_diff *b = *(struct hm_type_diff *const *)y;

	if (a->impact != b->impact)
		return a->impact > b->impact ? -1 : 1;
	return strcmp(a->name, b->name);
}

static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

static int diff_named(struct run *r, const char *const *names, size_t nr_names, struct hm_err *err)
{
	for (size_t i = 0; i < nr_names; i++) {
		const struct hm_type *ot = hm_layout_find(r->old, names[i]);
		const struct hm_type *nt = hm_layout_find(r->new, names[i]);

		if (ot) {
			diff_pair(r, type_key(r->a, ot), ot);
		} else if (nt) {
			push_name(&r->d->only_new, &r->d->nr_only_new, type_key(r->a, nt));
		} else {
			const char *near[3];
			size_t n = hm_layout_suggest(r->new, names[i], near, 3);

			return hm_err_set(err, HM_EXIT_INPUT,
					  "no struct, union or typedef named '%s' in %s or %s%s%s%s%s",
					  names[i], hm_layout_path(r->old), hm_layout_path(r->new),
					  n ? "; nearest: " : "", n ? near[0] : "", n > 1 ? ", " : "",
					  n > 1 ? near[1] : "");
		}
	}
	return 0;
}

int hm_diff_types(struct hm_arena *a, struct hm_layout *old, struct hm_layout *new,
		  const char *const *names, size_t nr_names, uint32_t line_size,
		  struct hm_diff *out, struct hm_err *err)
{
	struct run r = {.a = a, .old = old, .new = new, .line = line_size, .d = out};
	int rc = 0;

	memset(out, 0, sizeof(*out));
	out->line_size = line_size;
	hm_hash_init(&r.changed);
	if (nr_names) {
		rc = diff_named(&r, names, nr_names, err);
	} else {
		hm_layout_foreach(old, each_old, &r);
		hm_layout_foreach_anon(old, each_old, &r);	/* by their typedef: lreg_args */
		hm_layout_foreach(new, each_new, &r);
		hm_layout_foreach_anon(new, each_new, &r);
	}
	for (size_t i = 0; i < r.nr_pairs && !rc; i++) {
		r.embeds_budget = 1ul << 14;	/* nested aggregates per type */
		embeds_scan(&r, &r.pairs[i], r.pairs[i].nt, "", 0);
	}
	for (size_t i = 0; i < r.nr_pairs && !rc; i++) {
		struct hm_type_diff *td = r.pairs[i].td;

		if (!td->nr)
			continue;
		hm_sort(td->f, td->nr, sizeof(*td->f), cmp_finding);
		out->types = realloc(out->types, (out->nr + 1) * sizeof(*out->types));
		if (!out->types)
			hm_oom();
		out->types[out->nr++] = td;
	}
	if (out->nr)
		hm_sort(out->types, out->nr, sizeof(*out->types), cmp_type);
	if (out->nr_only_old)
		hm_sort(out->only_old, out->nr_only_old, sizeof(char *), cmp_str);
	if (out->nr_only_new)
		hm_sort(out->only_new, out->nr_only_new, sizeof(char *), cmp_str);
	free(r.pairs);
	hm_hash_free(&r.changed);
	return rc ? -1 : 0;
}

void hm_diff_free(struct hm_diff *d)
{
	free(d->types);
	free(d->only_old);
	free(d->only_new);
	memset(d, 0, sizeof(*d));
}
