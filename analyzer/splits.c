/* Accesses whose bytes cross a cache-line boundary (two lines to fetch, and to own for a
 * store) and, of those, a 4 KiB page boundary (two TLB lookups), grouped by field and code
 * site. */
#include "analyzer/lines.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hash.h"

#define PAGE_SIZE_4K 4096u

static int crosses(uint64_t addr, uint32_t size, uint64_t boundary)
{
	return addr / boundary != (addr + size - 1) / boundary;
}

/* The row name (as lines.c names rows) into buf. */
static const char *split_field(char *buf, size_t len, const struct hm_access *x, uint32_t L)
{
	if (x->field)
		return x->field;
	if (x->object && x->obj_base)
		snprintf(buf, len, "%s+0x%" PRIx64, x->object, x->field_off);
	else
		snprintf(buf, len, "+0x%" PRIx64, x->s.addr & (L - 1));
	return buf;
}

/* Field and site, as one string: the group's key. */
static void split_key(char *buf, size_t len, const char *field, const struct hm_access *x)
{
	if (x->func)
		snprintf(buf, len, "%s\n%s\n%s:%d", field, x->func, x->file ? x->file : "",
			 x->line);
	else
		snprintf(buf, len, "%s\n0x%" PRIx64, field, x->s.ip);
}

static int cmp_split(const void *x, const void *y)
{
	const struct hm_split *a = x, *b = y;
	int c;

	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	if (a->page_splits != b->page_splits)
		return a->page_splits > b->page_splits ? -1 : 1;
	if ((c = strcmp(a->field, b->field)))
		return c;
	return a->ip < b->ip ? -1 : a->ip > b->ip;
}

static struct hm_split *split_new(struct hm_arena *a, const struct hm_access *x,
				  const char *field, uint32_t L)
{
	struct hm_split *s = hm_arena_alloc(a, sizeof(*s));

	s->field = field;
	s->object = x->object;
	s->func = x->func;
	s->file = x->file;
	s->line = x->line;
	s->ip = x->s.ip;
	s->addr = x->s.addr;
	s->size = x->s.size;
	s->line_offset = (uint32_t)(x->s.addr & (L - 1));
	return s;
}

int hm_splits_build(struct hm_arena *a, const struct hm_access *acc, size_t n,
		    uint32_t line_size, struct hm_splits *out, struct hm_err *err)
{
	struct hm_hash groups;
	struct hm_split **list = NULL;
	size_t cap = 0;

	memset(out, 0, sizeof(*out));
	if (line_size < 16 || line_size > PAGE_SIZE_4K || (line_size & (line_size - 1)))
		return hm_err_set(err, HM_EXIT_USAGE,
				  "line size %u is not a power of two from 16 to 4096: use 64",
				  line_size);
	out->line_size = line_size;
	hm_hash_init(&groups);
	for (size_t i = 0; i < n; i++) {
		const struct hm_access *x = &acc[i];
		char fbuf[256], kbuf[768];
		const char *field;
		struct hm_split *s;

		if (!x->s.addr || !x->s.size)
			continue;
		out->sized++;
		if (!crosses(x->s.addr, x->s.size, line_size))
			continue;
		field = split_field(fbuf, sizeof(fbuf), x, line_size);
		split_key(kbuf, sizeof(kbuf), field, x);
		s = hm_hash_get(&groups, kbuf);
		if (!s) {
			s = split_new(a, x, field == fbuf ? hm_arena_strdup(a, fbuf) : field,
				      line_size);
			hm_hash_put(&groups, hm_arena_strdup(a, kbuf), s);
			if (out->nr == cap) {
				cap = cap ? 2 * cap : 16;
				list = realloc(list, cap * sizeof(*list));
				if (!list)
					abort();	/* as the arena does */
			}
			list[out->nr++] = s;
		}
		s->count++;
		s->loads += x->s.op == HM_OP_LOAD;
		s->stores += x->s.op == HM_OP_STORE;
		out->line_splits++;
		if (crosses(x->s.addr, x->s.size, PAGE_SIZE_4K)) {
			s->page_splits++;
			out->page_splits++;
		}
	}
	hm_hash_free(&groups);
	out->s = hm_arena_alloc(a, (out->nr + 1) * sizeof(*out->s));
	for (size_t i = 0; i < out->nr; i++)
		out->s[i] = *list[i];
	free(list);
	qsort(out->s, out->nr, sizeof(*out->s), cmp_split);
	return 0;
}
