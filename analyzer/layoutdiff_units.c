/* The leaves and units layoutdiff.c compares: each member of a type as a unique path
 * with its bit offset, size and cache lines. */
#include "analyzer/layoutdiff_int.h"
#include "core/oom.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void push_leaf(struct leaves *L, const char *path, uint64_t bit_off, uint64_t bits,
		      const char *type)
{
	struct leaf *l;

	if (L->n == L->cap) {
		L->cap = L->cap ? L->cap * 2 : 64;
		L->v = realloc(L->v, L->cap * sizeof(*L->v));
		if (!L->v)
			hm_oom();
	}
	l = &L->v[L->n++];
	l->path = hm_arena_strdup(L->a, *path ? path : "(anonymous)");
	l->type = type;
	l->bit_off = bit_off;
	l->bits = bits;
	l->first_line = bit_off / 8 / L->line;
	l->last_line = bits ? (bit_off + bits - 1) / 8 / L->line : l->first_line;
}

static int add_leaf(const struct hm_field *f, void *ctx)
{
	struct leaves *L = ctx;
	const char *tc, *nc;

	if (L->n >= 4 * MAX_UNITS)
		return 1;	/* a corrupt, self-nesting type: keep what came first */

	hm_type_decl(L->a, f->m->type, NULL, &tc, &nc);
	push_leaf(L, f->path, f->bit_offset, f->m->bit_size ? f->m->bit_size : f->size * 8,
		  *nc ? hm_arena_printf(L->a, "%s %s", tc, nc) : tc);
	return 0;
}

/* Paths index the leaves; one that repeats (unnamed bitfields, anonymous members with no
 * named member inside) gets "#2", "#3"... by occurrence, the same in an unchanged type, so
 * that nothing is matched against the wrong twin. */
static void index_paths(struct leaves *L)
{
	hm_hash_init(&L->by_path);
	for (size_t i = 0; i < L->n; i++) {
		const char *p = L->v[i].path;

		for (unsigned k = 2; hm_hash_get(&L->by_path, p); k++)
			p = hm_arena_printf(L->a, "%s#%u", L->v[i].path, k);
		L->v[i].path = p;
		hm_hash_put(&L->by_path, p, &L->v[i]);
	}
}

void hm_ld_collect(struct leaves *L, struct hm_arena *a, const struct hm_type *t, uint32_t line)
{
	memset(L, 0, sizeof(*L));
	L->a = a;
	L->line = line;
	hm_layout_walk(t, 0, add_leaf, L);
	index_paths(L);
}

/* The first named member of an anonymous aggregate, looking inside nested anonymous ones:
 * C puts those names in the enclosing scope, so it names the member uniquely there. */
static const char *first_name(const struct hm_type *t, int depth)
{
	uint32_t nr;
	const struct hm_member *m = hm_type_members(t, &nr);

	for (uint32_t i = 0; i < nr && depth < 8; i++) {
		const struct hm_type *s = hm_type_strip(m[i].type);
		const char *n = m[i].name;

		if (!n && !m[i].bit_size && hm_type_is_aggregate(s))
			n = first_name(s, depth + 1);
		if (n)
			return n;
	}
	return NULL;
}

/* An anonymous member's path: the parent's plus {first member}, by contents. */
const char *hm_ld_anon_path(struct hm_arena *a, const char *prefix, const struct hm_type *s,
			     uint32_t idx)
{
	const char *n = s && hm_type_is_aggregate(s) ? first_name(s, 0) : NULL;

	if (n)
		return hm_arena_printf(a, "%s%s{%s...}", prefix, *prefix ? "." : "", n);
	return hm_arena_printf(a, "%s%s#%u", prefix, *prefix ? "." : "", idx);
}

void hm_ld_leaves_free(struct leaves *L)
{
	free(L->v);
	hm_hash_free(&L->by_path);
}

/* Pairs of members present in both builds whose sharing of a cache line changed. */
/* Sharing is judged between *units*: leaves, except that a union counts as one unit (its
 * alternatives share their bytes and move together; pairing each of them with every
 * other member would multiply the findings by the union's width). */
static void walk_units(struct leaves *L, const struct hm_type *t, uint64_t base, const char *prefix,
		       int depth)
{
	uint32_t nr;
	const struct hm_member *m;

	if (L->visits++ > 4 * MAX_UNITS)
		return;
	m = hm_type_members(t, &nr);
	for (uint32_t i = 0; i < nr && depth < 32 && L->n < MAX_UNITS; i++) {
		const struct hm_type *s = hm_type_strip(m[i].type);
		uint64_t bits = m[i].bit_size ? m[i].bit_size : (s ? s->size * 8 : 0);
		const char *path = m[i].name ? (*prefix ? hm_arena_printf(L->a, "%s.%s", prefix,
									    m[i].name)
							 : m[i].name)
					     : prefix;

		if (!m[i].bit_size && s && (s->kind == HM_T_STRUCT || s->kind == HM_T_CLASS))
			walk_units(L, s, base + m[i].bit_offset, path, depth + 1);
		else
			push_leaf(L, m[i].name ? path : hm_ld_anon_path(L->a, prefix, s, i),
				  base + m[i].bit_offset, bits,
				  s && s->kind == HM_T_UNION ? "union" : "");
	}
}

void hm_ld_collect_units(struct leaves *L, struct hm_arena *a, const struct hm_type *t,
			  uint32_t line)
{
	memset(L, 0, sizeof(*L));
	L->a = a;
	L->line = line;
	walk_units(L, hm_type_strip(t), 0, "", 0);
	index_paths(L);
}
