/* The strings data symbolization's results share: interned, so a million samples
 * allocate nothing new; type labels ("struct item", a typedef's name) and field paths
 * ("item.stats.ops") made once per (type, offset). */
#include "symbolize/data_int.h"

#include <stdio.h>
#include <string.h>

const char *data_intern(struct hm_data *d, const char *s)
{
	const char *got = hm_hash_get(&d->strs, s);
	char *copy;

	if (got)
		return got;
	copy = hm_arena_strdup(&d->arena, s);
	hm_hash_put(&d->strs, copy, copy);
	return copy;
}

/* A named aggregate goes by its tag ("struct item" even through item_t); anything else
 * by its outermost typedef: mbstate_t (an anonymous struct), size_t. */
static const struct hm_type *named(const struct hm_type *t, const char **alias)
{
	*alias = NULL;
	for (; t && t != hm_type_strip(t); t = t->ref)
		if (t->kind == HM_T_TYPEDEF && !*alias)
			*alias = t->name;
	if (t && t->name && hm_type_is_aggregate(t))
		*alias = NULL;
	return t;
}

const char *data_type_label(struct hm_data *d, const struct hm_type *t)
{
	const char *label = hm_map64_get(&d->labels, (uint64_t)(uintptr_t)t), *alias;
	const char *type_col, *name_col;
	const struct hm_type *s;

	if (label)
		return label;
	s = named(t, &alias);
	if (alias)
		label = alias;
	else if (!s)
		label = "?";
	else if (hm_type_is_aggregate(s) || s->kind == HM_T_FWD)
		label = hm_type_tag_name(&d->arena, s);
	else {	/* once per type: the labels map keeps it */
		hm_type_decl(&d->arena, s, "", &type_col, &name_col);
		label = hm_arena_printf(&d->arena, "%s%s%s", type_col,
					*name_col && name_col[0] != '*' && name_col[0] != '[' ? " " : "",
					name_col);
	}
	label = data_intern(d, label);
	hm_map64_put(&d->labels, (uint64_t)(uintptr_t)t, (void *)label);
	return label;
}

/* The type's name without its tag, for field paths: "item" for struct item. */
const char *data_bare_name(struct hm_data *d, const struct hm_type *t)
{
	const char *alias;
	const struct hm_type *s = named(t, &alias);

	if (alias)
		return alias;
	if (s && s->name && (hm_type_is_aggregate(s) || s->kind == HM_T_ENUM))
		return s->name;
	return data_type_label(d, t);
}

/* One name per (prefix, type, offset): every sample of a hot field asks for the same
 * one, so it is walked and formatted once. prefix and t outlive d's lookups (interned,
 * or owned by modules that stay open), so their addresses identify them. */
struct field_memo {
	const char *prefix;
	const struct hm_type *t;
	uint64_t offset;
	const char *name;
};

static uint64_t memo_key(const char *prefix, const struct hm_type *t, uint64_t offset)
{
	uint64_t h = (uint64_t)(uintptr_t)prefix * 0x9e3779b97f4a7c15ull;

	h ^= ((uint64_t)(uintptr_t)t + (h << 6) + (h >> 2)) * 0xff51afd7ed558ccdull;
	h ^= (offset + (h << 6) + (h >> 2)) * 0xc4ceb9fe1a85ec53ull;
	return h | 1;	/* never 0: map64 keys are non-zero */
}

const char *data_field(struct hm_data *d, const char *prefix, const struct hm_type *t,
		       uint64_t offset)
{
	uint64_t key = memo_key(prefix, t, offset);
	struct field_memo *m = hm_map64_get(&d->fields, key);
	char path[400], buf[512];
	uint64_t within;

	if (m && m->prefix == prefix && m->t == t && m->offset == offset)
		return m->name;
	path[0] = '\0';
	if (t)
		hm_layout_field_at(t, offset, path, sizeof(path), &within);
	snprintf(buf, sizeof(buf), "%s%s%s", prefix, path[0] && path[0] != '[' ? "." : "", path);
	if (m)	/* a hash collision: answer without memo */
		return data_intern(d, buf);
	m = hm_arena_alloc(&d->arena, sizeof(*m));
	*m = (struct field_memo){prefix, t, offset, data_intern(d, buf)};
	hm_map64_put(&d->fields, key, m);
	return m->name;
}
