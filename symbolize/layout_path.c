/* Member paths: offset inside a type -> "outer.inner[3].field", and leaf walks. */
#include "symbolize/layout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Nesting deeper than this is a malformed or hostile file, not C. */
#define HM_MAX_NEST 64

static void append(char *buf, size_t len, const char *fmt, const char *name, uint64_t idx)
{
	size_t used = strlen(buf);

	if (used < len)
		snprintf(buf + used, len - used, fmt, name ? name : "", (unsigned long long)idx);
}

static uint64_t member_bits(const struct hm_member *m)
{
	return m->bit_size ? m->bit_size : hm_type_strip(m->type) ? m->type->size * 8 : 0;
}

static const struct hm_member *member_at(const struct hm_type *t, uint64_t off,
					 const struct hm_member **prev)
{
	uint32_t nr;
	const struct hm_member *m = hm_type_members(t, &nr);

	*prev = NULL;
	for (uint32_t i = 0; i < nr; i++) {
		uint64_t lo = m[i].bit_offset / 8;
		uint64_t hi = (m[i].bit_offset + member_bits(&m[i]) + 7) / 8;

		if (off >= lo && off < hi)
			return &m[i];
		if (lo <= off && (!*prev || lo >= (*prev)->bit_offset / 8))
			*prev = &m[i];
	}
	return NULL;
}

const struct hm_type *hm_layout_field_at(const struct hm_type *t, uint64_t offset, char *buf,
					 size_t len, uint64_t *within)
{
	const struct hm_type *s = hm_type_strip(t);

	if (len)
		buf[0] = '\0';
	if (!s || (s->size && offset >= s->size))
		return NULL;
	for (int depth = 0; depth < HM_MAX_NEST && s; depth++) {
		const struct hm_member *m, *prev;

		if (s->kind == HM_T_ARRAY) {
			const struct hm_type *elem = hm_type_strip(s->ref);

			if (!elem || !elem->size)
				break;
			append(buf, len, "%s[%llu]", NULL, offset / elem->size);
			offset %= elem->size;
			s = elem;
			continue;
		}
		if (!hm_type_is_aggregate(s))
			break;
		m = member_at(s, offset, &prev);
		if (!m) {
			if (prev)
				append(buf, len, *buf ? ".%s" : "%s", prev->name, 0);
			append(buf, len, prev && offset < s->size ? "<hole>" : "<padding>", NULL, 0);
			return NULL;
		}
		if (m->name)
			append(buf, len, *buf ? ".%s" : "%s", m->name, 0);
		offset -= m->bit_offset / 8;
		s = hm_type_strip(m->type);
		if (m->bit_size)
			break;
	}
	if (within)
		*within = offset;
	return s;
}

/* Members visited per walk: a corrupt file can share one struct many times at every
 * level, or nest a struct in itself; real types stay far below this. */
#define HM_MAX_WALK (1u << 16)

struct walk {
	int all_elems;
	int (*cb)(const struct hm_field *f, void *ctx);
	void *ctx;
	char path[1024];
	const struct hm_type *open[HM_MAX_NEST + 2];	/* aggregates being walked */
	int nr_open;
	unsigned visited;
};

static int walk_type(struct walk *w, const struct hm_type *t, uint64_t base_bits, int depth);

static int walk_member(struct walk *w, const struct hm_member *m, uint64_t base_bits, int depth)
{
	size_t mark = strlen(w->path);
	const struct hm_type *s = hm_type_strip(m->type);
	uint64_t bits = base_bits + m->bit_offset;
	int rc = 0;

	if (m->name)
		snprintf(w->path + mark, sizeof(w->path) - mark, "%s%s", mark ? "." : "", m->name);
	if (!m->bit_size && hm_type_is_aggregate(s)) {
		rc = walk_type(w, s, bits, depth + 1);
	} else if (!m->bit_size && s && s->kind == HM_T_ARRAY &&
		   hm_type_is_aggregate(hm_type_strip(s->ref)) && hm_type_strip(s->ref)->size) {
		const struct hm_type *elem = hm_type_strip(s->ref);
		uint64_t n = w->all_elems ? s->size / elem->size : 1;
		size_t at = strlen(w->path);

		for (uint64_t i = 0; i < n && !rc; i++) {
			snprintf(w->path + at, sizeof(w->path) - at, "[%llu]", (unsigned long long)i);
			rc = walk_type(w, elem, bits + i * elem->size * 8, depth + 1);
		}
	} else {
		struct hm_field f = {
			.path = w->path,
			.m = m,
			.bit_offset = bits,
			.size = s ? s->size : 0,
			.depth = depth,
		};

		rc = w->cb(&f, w->ctx);
	}
	w->path[mark] = '\0';
	return rc;
}

static int walk_type(struct walk *w, const struct hm_type *t, uint64_t base_bits, int depth)
{
	uint32_t nr;
	const struct hm_member *m;
	int rc = 0;

	if (depth > HM_MAX_NEST || w->visited > HM_MAX_WALK)
		return 0;
	for (int i = 0; i < w->nr_open; i++)
		if (w->open[i] == t)
			return 0;	/* a struct inside itself: only in a corrupt file */
	w->open[w->nr_open++] = t;
	m = hm_type_members(t, &nr);
	for (uint32_t i = 0; i < nr && !rc && w->visited++ <= HM_MAX_WALK; i++)
		rc = walk_member(w, &m[i], base_bits, depth);
	w->nr_open--;
	return rc;
}

int hm_layout_walk(const struct hm_type *t, int all_elems,
		   int (*cb)(const struct hm_field *f, void *ctx), void *ctx)
{
	struct walk w = {.all_elems = all_elems, .cb = cb, .ctx = ctx};

	return walk_type(&w, hm_type_strip(t), 0, 0);
}

/* Finds the member called name in t, looking through anonymous members; adds its
 * offset to *off. */
static const struct hm_member *find_named(const struct hm_type *t, const char *name, size_t len,
					  uint64_t *off, int depth, unsigned *budget)
{
	uint32_t nr;
	const struct hm_member *m = hm_type_members(t, &nr);

	/* Anonymous members are searched depth first; the budget bounds corrupt files that
	 * share one anonymous struct at every level. */
	if (depth > HM_MAX_NEST || *budget < nr)
		return NULL;
	*budget -= nr;
	for (uint32_t i = 0; i < nr; i++) {
		if (m[i].name && strlen(m[i].name) == len && !strncmp(m[i].name, name, len)) {
			*off += m[i].bit_offset / 8;
			return &m[i];
		}
	}
	for (uint32_t i = 0; i < nr; i++) {
		uint64_t sub = 0;
		const struct hm_member *found;

		if (m[i].name || !hm_type_is_aggregate(m[i].type))
			continue;
		found = find_named(hm_type_strip(m[i].type), name, len, &sub, depth + 1, budget);
		if (found) {
			*off += m[i].bit_offset / 8 + sub;
			return found;
		}
	}
	return NULL;
}

int hm_layout_member_offset(const struct hm_type *t, const char *path, uint64_t *offset,
			    uint64_t *size)
{
	const struct hm_type *cur = hm_type_strip(t);
	uint64_t off = 0;
	const char *p = path;

	while (*p && cur) {
		size_t len = strcspn(p, ".[");
		const struct hm_member *m;

		if (len) {
			unsigned budget = HM_MAX_WALK;

			m = find_named(cur, p, len, &off, 0, &budget);
			if (!m)
				return -1;
			cur = hm_type_strip(m->type);
			p += len;
		}
		while (*p == '[') {
			char *end;
			unsigned long long idx = strtoull(p + 1, &end, 0);

			if (*end != ']' || !cur || cur->kind != HM_T_ARRAY ||
			    (!cur->flexible && idx >= cur->nelems))
				return -1;
			cur = hm_type_strip(cur->ref);
			off += idx * (cur ? cur->size : 0);
			p = end + 1;
		}
		if (*p == '.')
			p++;
		else if (*p)
			return -1;
	}
	if (!cur)
		return -1;
	*offset = off;
	*size = cur->size;
	return 0;
}
