/* Source-independent half of the layout API: the name index, lookups, type helpers,
 * declarations, and offset -> member path. */
#include "symbolize/layout_int.h"
#include "core/oom.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hm_layout_base_init(struct hm_layout *lay, const struct hm_layout_ops *ops,
			 enum hm_layout_kind kind, const char *path)
{
	memset(lay, 0, sizeof(*lay));
	lay->ops = ops;
	lay->kind = kind;
	hm_arena_init(&lay->arena);
	lay->path = hm_arena_strdup(&lay->arena, path);
	hm_hash_init(&lay->names);
	hm_map64_init(&lay->seen);
}

static uint64_t kw_code(const char *kw)
{
	if (!kw)
		return 0;
	return !strcmp(kw, "struct") ? 1 : !strcmp(kw, "union") ? 2 : !strcmp(kw, "class") ? 3 :
	       !strcmp(kw, "var") ? 4 : 5;
}

void hm_layout_index_add(struct hm_layout *lay, const char *kw, const char *name, uint64_t ref)
{
	char buf[512];
	struct hm_name_entry *e;
	uint64_t fast = ((uint64_t)(uintptr_t)name << 3) | kw_code(kw);

	if (hm_map64_get(&lay->seen, fast))
		return;
	hm_map64_put(&lay->seen, fast, (void *)1);
	if (kw)
		snprintf(buf, sizeof(buf), "%s %s", kw, name);
	else
		snprintf(buf, sizeof(buf), "%s", name);
	if (hm_hash_get(&lay->names, buf))
		return;
	e = hm_arena_alloc(&lay->arena, sizeof(*e));
	e->key = hm_arena_strdup(&lay->arena, buf);
	e->ref = ref;
	hm_hash_put(&lay->names, e->key, e);
	/* typedefs too (bare names): hm_layout_foreach_anon, and suggestions */
	if (kw && (!strcmp(kw, "var") || !strcmp(kw, "func")))
		return;
	if (lay->nr_order == lay->cap_order) {
		lay->cap_order = lay->cap_order ? lay->cap_order * 2 : 256;
		lay->order = realloc(lay->order, lay->cap_order * sizeof(*lay->order));
		if (!lay->order) {
			hm_oom();
		}
	}
	lay->order[lay->nr_order++] = e;
}

void hm_layout_close(struct hm_layout *lay)
{
	if (!lay)
		return;
	if (lay->ops->close)
		lay->ops->close(lay);
	hm_hash_free(&lay->names);
	hm_map64_free(&lay->seen);
	free(lay->order);
	hm_arena_free(&lay->arena);
	free(lay);
}

const char *hm_layout_path(const struct hm_layout *lay) { return lay->path; }
const char *hm_layout_damage(const struct hm_layout *lay)
{
	return lay->damage[0] ? lay->damage : NULL;
}
enum hm_layout_kind hm_layout_source(const struct hm_layout *lay) { return lay->kind; }
void hm_layout_machine(const struct hm_layout *lay, uint16_t *machine, uint8_t *elf_class)
{
	*machine = lay->machine;
	*elf_class = lay->elf_class;
}

struct hm_arena *hm_layout_arena(struct hm_layout *lay) { return &lay->arena; }

static const struct hm_type *entry_type(struct hm_layout *lay, struct hm_name_entry *e)
{
	if (!e->type)
		e->type = lay->ops->type(lay, e->ref);
	return e->type;
}

/* Looks key up, scanning more of the file until it appears or the file ends. */
static struct hm_name_entry *index_lookup(struct hm_layout *lay, const char *key)
{
	struct hm_name_entry *e;

	while (!(e = hm_hash_get(&lay->names, key)) && !lay->index_done)
		if (!lay->ops->index_more(lay))
			lay->index_done = 1;
	return e;
}

static void index_complete(struct hm_layout *lay)
{
	while (!lay->index_done)
		if (!lay->ops->index_more(lay))
			lay->index_done = 1;
}

/* A bare name in what is indexed so far: the aggregate tags first, then a typedef that
 * names an aggregate. */
static const struct hm_type *find_bare(struct hm_layout *lay, const char *name)
{
	static const char *const kws[] = {"struct", "union", "class"};
	struct hm_name_entry *e;
	char key[512];

	for (size_t i = 0; i < sizeof(kws) / sizeof(kws[0]); i++) {
		snprintf(key, sizeof(key), "%s %s", kws[i], name);
		if ((e = hm_hash_get(&lay->names, key)))
			return entry_type(lay, e);
	}
	if ((e = hm_hash_get(&lay->names, name)) && hm_type_is_aggregate(entry_type(lay, e)))
		return hm_type_strip(entry_type(lay, e));
	return NULL;
}

const struct hm_type *hm_layout_find(struct hm_layout *lay, const char *name)
{
	const struct hm_type *t;

	if (strchr(name, ' ')) {
		struct hm_name_entry *e = index_lookup(lay, name);

		return e ? entry_type(lay, e) : NULL;
	}
	/* Scan no further into the file than the name needs. */
	while (!(t = find_bare(lay, name)) && !lay->index_done)
		if (!lay->ops->index_more(lay))
			lay->index_done = 1;
	return t;
}

/* The type of the entry "kw name" (a VAR's type, a FUNC's prototype), or NULL. */
static const struct hm_type *named_entry_type(struct hm_layout *lay, const char *kw, const char *name)
{
	char key[512];
	struct hm_name_entry *e;

	snprintf(key, sizeof(key), "%s %s", kw, name);
	e = index_lookup(lay, key);
	return e && lay->ops->var_type ? lay->ops->var_type(lay, e->ref) : NULL;
}

const struct hm_type *hm_layout_var_type(struct hm_layout *lay, const char *name)
{
	return named_entry_type(lay, "var", name);
}

const struct hm_type *hm_layout_func_type(struct hm_layout *lay, const char *name)
{
	return named_entry_type(lay, "func", name);
}

int hm_layout_foreach(struct hm_layout *lay, int (*cb)(const struct hm_type *t, void *ctx),
		      void *ctx)
{
	index_complete(lay);
	for (size_t i = 0; i < lay->nr_order; i++) {
		const struct hm_type *t = entry_type(lay, lay->order[i]);
		int rc;

		if (!t || !hm_type_is_aggregate(t) || !strchr(lay->order[i]->key, ' '))
			continue;	/* a typedef's bare name: foreach_anon */
		if ((rc = cb(t, ctx)))
			return rc;
	}
	return 0;
}

int hm_layout_foreach_anon(struct hm_layout *lay, int (*cb)(const struct hm_type *t, void *ctx),
			   void *ctx)
{
	index_complete(lay);
	for (size_t i = 0; i < lay->nr_order; i++) {
		const struct hm_type *t = strchr(lay->order[i]->key, ' ')
						  ? NULL
						  : hm_type_strip(entry_type(lay, lay->order[i]));
		int rc;

		if (!t || !hm_type_is_aggregate(t) || t->name || !t->alias ||
		    strcmp(t->alias, lay->order[i]->key))
			continue;
		if ((rc = cb(t, ctx)))
			return rc;
	}
	return 0;
}

/* Edit distance on at most 64 characters, enough to rank suggestions. */
static unsigned edit_distance(const char *a, const char *b)
{
	unsigned row[65], la = (unsigned)strlen(a), lb = (unsigned)strlen(b);

	if (la > 64)
		la = 64;
	if (lb > 64)
		lb = 64;
	for (unsigned j = 0; j <= lb; j++)
		row[j] = j;
	for (unsigned i = 1; i <= la; i++) {
		unsigned prev = row[0]++;

		for (unsigned j = 1; j <= lb; j++) {
			unsigned cur = row[j];
			unsigned best = prev + (a[i - 1] != b[j - 1]);

			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			prev = cur;
		}
	}
	return row[lb];
}

static const char *bare_name(const char *key)
{
	const char *sp = strchr(key, ' ');

	return sp ? sp + 1 : key;
}

size_t hm_layout_suggest(struct hm_layout *lay, const char *name, const char **out, size_t n)
{
	unsigned best[16];
	size_t got = 0;

	if (n > 16)
		n = 16;
	index_complete(lay);
	name = bare_name(name);
	for (size_t i = 0; i < lay->nr_order; i++) {
		const char *cand = bare_name(lay->order[i]->key);
		unsigned d = edit_distance(name, cand);
		size_t pos;

		/* A substring match ranks as close as one edit. */
		if (strstr(cand, name) || strstr(name, cand))
			d = d < 1 ? d : 1;
		if (got == n && d >= best[n - 1])
			continue;
		pos = got < n ? got++ : n - 1;
		while (pos > 0 && best[pos - 1] > d) {
			best[pos] = best[pos - 1];
			out[pos] = out[pos - 1];
			pos--;
		}
		best[pos] = d;
		out[pos] = cand;
	}
	return got;
}

/* Chains of qualifiers and typedefs longer than this are cycles in a corrupt file. */
#define HM_MAX_CHAIN 64

const char *hm_type_keyword(const struct hm_type *t)
{
	return t->kind == HM_T_UNION ? "union" : t->kind == HM_T_CLASS ? "class" : "struct";
}

const struct hm_type *hm_type_strip_cv(const struct hm_type *t)
{
	for (int n = 0; t && (t->kind == HM_T_CONST || t->kind == HM_T_VOLATILE ||
			      t->kind == HM_T_RESTRICT || t->kind == HM_T_ATOMIC); n++)
		t = n < HM_MAX_CHAIN ? t->ref : NULL;
	return t;
}

const struct hm_type *hm_type_strip(const struct hm_type *t)
{
	for (int n = 0; t && (t->kind == HM_T_TYPEDEF || t->kind == HM_T_CONST ||
			      t->kind == HM_T_VOLATILE || t->kind == HM_T_RESTRICT ||
			      t->kind == HM_T_ATOMIC); n++)
		t = n < HM_MAX_CHAIN ? t->ref : NULL;
	return t;
}

const struct hm_type *hm_type_agg(const struct hm_type *t, uint64_t *nelems)
{
	uint64_t n = 1;

	t = hm_type_strip(t);
	for (int depth = 0; t && t->kind == HM_T_ARRAY && depth < HM_MAX_CHAIN; depth++) {
		n *= t->nelems;
		t = hm_type_strip(t->ref);
	}
	if (nelems)
		*nelems = n;
	return t && hm_type_is_aggregate(t) ? t : NULL;
}

const char *hm_type_name(const struct hm_type *t)
{
	return t ? (t->name ? t->name : t->alias) : NULL;
}

void hm_type_set_alias(struct hm_type *td)
{
	struct hm_type *t = (struct hm_type *)hm_type_strip_cv(td->ref); /* a cache fill */

	if (td->kind == HM_T_TYPEDEF && td->name && t && !t->name && !t->alias &&
	    (t->kind == HM_T_STRUCT || t->kind == HM_T_UNION || t->kind == HM_T_CLASS))
		t->alias = td->name;
}

int hm_type_is_aggregate(const struct hm_type *t)
{
	t = hm_type_strip(t);
	return t && (t->kind == HM_T_STRUCT || t->kind == HM_T_UNION || t->kind == HM_T_CLASS);
}

const struct hm_member *hm_type_members(const struct hm_type *t, uint32_t *nr)
{
	struct hm_type *mt = (struct hm_type *)t; /* loading members is a cache fill */

	if (!hm_type_is_aggregate(t) || t != hm_type_strip(t)) {
		*nr = 0;
		return NULL;
	}
	if (!mt->loaded && mt->src) {
		mt->loaded = 1;
		mt->src->ops->load_members(mt->src, mt);
	}
	*nr = t->nr_members;
	return t->members;
}

/* Natural alignment as the C ABI computes it; explicit __aligned__ wins when larger.
 * depth bounds the recursion: a corrupt file can make a struct contain itself. */
static uint32_t struct_align(const struct hm_type *t, int depth);

static uint32_t type_align(const struct hm_type *t, int depth)
{
	uint32_t a = 1;

	if (!t || depth > HM_MAX_CHAIN)
		return 1;
	switch (t->kind) {
	case HM_T_BASE:
	case HM_T_ENUM:
	case HM_T_PTR:
		a = t->size ? (uint32_t)(t->size > 16 ? 16 : t->size) : 1;
		while (a & (a - 1))
			a &= a - 1;
		break;
	case HM_T_ARRAY:
	case HM_T_TYPEDEF:
	case HM_T_CONST:
	case HM_T_VOLATILE:
	case HM_T_RESTRICT:
	case HM_T_ATOMIC:
		a = type_align(t->ref, depth + 1);
		break;
	case HM_T_STRUCT:
	case HM_T_UNION:
	case HM_T_CLASS:
		/* Cached per type: shared members would otherwise be walked once per path,
		 * and a corrupt file that nests a struct in itself is caught as a cycle. */
		if (t->align_state)
			return t->align_state == 2 ? t->align_cached : 1;
		((struct hm_type *)t)->align_state = 1;
		a = struct_align(t, depth);
		((struct hm_type *)t)->align_cached = a;
		((struct hm_type *)t)->align_state = 2;
		return a;
	default:
		break;
	}
	return t->align > a ? t->align : a;
}

/* A struct's alignment: its largest member's, or 1 when packed. */
static uint32_t struct_align(const struct hm_type *t, int depth)
{
	uint32_t a = 1, nr;
	const struct hm_member *m = hm_type_members(t, &nr);

	for (uint32_t i = 0; i < nr; i++) {
		uint32_t ma = m[i].align ? m[i].align : type_align(m[i].type, depth + 1);

		if (!m[i].bit_size && (m[i].bit_offset % (8ull * ma)))
			return t->align ? t->align : 1;	/* packed */
		if (ma > a)
			a = ma;
	}
	if (t->size % a)
		return t->align ? t->align : 1;		/* packed */
	return t->align > a ? t->align : a;
}

uint32_t hm_type_align(const struct hm_type *t)
{
	return type_align(t, 0);
}

const char *hm_type_tag_name(struct hm_arena *a, const struct hm_type *t)
{
	const char *kw = NULL;

	switch (t->kind) {
	case HM_T_STRUCT: kw = "struct"; break;
	case HM_T_UNION: kw = "union"; break;
	case HM_T_CLASS: kw = "class"; break;
	case HM_T_ENUM: kw = "enum"; break;
	default: break;
	}
	if (!t->name)
		return kw ? hm_arena_printf(a, "%s (anonymous)", kw) : "(anonymous)";
	return kw ? hm_arena_printf(a, "%s %s", kw, t->name) : t->name;
}
