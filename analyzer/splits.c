/* Accesses whose bytes cross a cache-line boundary (two lines to fetch, and to own for a
 * store) and, of those, a 4 KiB page boundary (two TLB lookups), grouped by field and code
 * site. */
#include "analyzer/lines.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "core/sort.h"
#include "core/oom.h"

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
	s->addr = hm_access_whole_addr(x);
	s->size = hm_access_whole_size(x);
	s->line_offset = (uint32_t)(s->addr & (L - 1));
	return s;
}

struct straddle_walk {
	struct hm_arena *a;
	const struct hm_type *t;
	const char *tname;
	uint32_t line_size;
	uint64_t accesses;
	struct hm_straddle *v;
	size_t n, cap;
};

static int note_straddle(const struct hm_field *f, void *ctx)
{
	struct straddle_walk *w = ctx;
	uint64_t first = f->bit_offset / 8;
	uint64_t bits = f->m->bit_size ? f->m->bit_size : f->size * 8;
	uint64_t last = bits ? (f->bit_offset + bits - 1) / 8 : first;
	struct hm_straddle *st;

	if (!bits || first / w->line_size == last / w->line_size)
		return 0;
	if (w->n == w->cap) {
		struct hm_straddle *nv;

		w->cap = w->cap ? w->cap * 2 : 8;
		nv = hm_arena_alloc(w->a, w->cap * sizeof(*nv));
		if (w->n)
			memcpy(nv, w->v, w->n * sizeof(*nv));
		w->v = nv;
	}
	st = &w->v[w->n++];
	st->type = w->tname;
	st->field = hm_arena_printf(w->a, "%s.%s", w->t->name ? w->t->name : "?", f->path);
	st->offset = first;
	st->size = last - first + 1;
	st->accesses = w->accesses;
	return 0;
}

static int cmp_straddle(const void *x, const void *y)
{
	const struct hm_straddle *a = x, *b = y;
	int c;

	if (a->accesses != b->accesses)
		return a->accesses > b->accesses ? -1 : 1;
	if ((c = strcmp(a->type, b->type)))
		return c;
	return a->offset < b->offset ? -1 : a->offset > b->offset;
}

struct type_count {
	const struct hm_type *t;
	uint64_t n;
};

/* What hm_splits_add keeps between batches. */
struct hm_splits_acc {
	struct hm_arena *a;
	struct hm_splits *out;
	struct hm_hash groups;		/* key -> struct hm_split */
	struct hm_split **list;
	size_t cap;
	struct hm_map64 types;		/* accessed aggregate -> struct type_count */
};

static void count_types(struct hm_splits_acc *c, const struct hm_access *acc, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct hm_type *t = hm_type_strip(acc[i].type);
		struct type_count *tc;

		while (t && t->kind == HM_T_ARRAY)
			t = hm_type_strip(t->ref);
		if (!t || !hm_type_is_aggregate(t) || !t->size)
			continue;
		if (!(tc = hm_map64_get(&c->types, (uint64_t)(uintptr_t)t))) {
			tc = hm_arena_alloc(c->a, sizeof(*tc));
			tc->t = t;
			hm_map64_put(&c->types, (uint64_t)(uintptr_t)t, tc);
		}
		tc->n++;
	}
}

/* The members of every accessed struct type that straddle a line in the layout. */
static void static_straddles(struct hm_splits_acc *c)
{
	struct straddle_walk w = {.a = c->a, .line_size = c->out->line_size};

	for (size_t i = 0; i < c->types.cap; i++) {
		const struct type_count *tc = c->types.slots[i].val;

		if (!c->types.slots[i].key)
			continue;
		w.t = tc->t;
		w.tname = hm_type_tag_name(c->a, tc->t);
		w.accesses = tc->n;
		hm_layout_walk(tc->t, 1, note_straddle, &w);
	}
	if (w.n)
		hm_sort(w.v, w.n, sizeof(*w.v), cmp_straddle);
	c->out->st = w.v;
	c->out->nr_st = w.n;
}

int hm_splits_begin(struct hm_arena *a, uint32_t line_size, struct hm_splits *out,
		    struct hm_splits_acc **acc, struct hm_err *err)
{
	struct hm_splits_acc *c;

	memset(out, 0, sizeof(*out));
	*acc = NULL;
	if (line_size < 16 || line_size > PAGE_SIZE_4K || (line_size & (line_size - 1)))
		return hm_err_set(err, HM_EXIT_USAGE,
				  "line size %u is not a power of two from 16 to 4096: use 64",
				  line_size);
	out->line_size = line_size;
	if (!(c = calloc(1, sizeof(*c))))
		hm_oom();	/* as the arena does */
	c->a = a;
	c->out = out;
	hm_hash_init(&c->groups);
	hm_map64_init(&c->types);
	*acc = c;
	return 0;
}

void hm_splits_add(struct hm_splits_acc *c, const struct hm_access *acc, size_t n)
{
	struct hm_splits *out = c->out;
	uint32_t line_size = out->line_size;

	for (size_t i = 0; i < n; i++) {
		const struct hm_access *x = &acc[i];
		char fbuf[256], kbuf[768];
		const char *field;
		struct hm_split *s;
		uint64_t addr = hm_access_whole_addr(x);
		uint32_t size = hm_access_whole_size(x);

		if (!x->s.addr || !x->s.size || x->part)
			continue;	/* a wide access is one, from its first member */
		out->sized++;
		if (!crosses(addr, size, line_size))
			continue;
		field = split_field(fbuf, sizeof(fbuf), x, line_size);
		split_key(kbuf, sizeof(kbuf), field, x);
		s = hm_hash_get(&c->groups, kbuf);
		if (!s) {
			s = split_new(c->a, x, field == fbuf ? hm_arena_strdup(c->a, fbuf) : field,
				      line_size);
			hm_hash_put(&c->groups, hm_arena_strdup(c->a, kbuf), s);
			if (out->nr == c->cap) {
				c->cap = c->cap ? 2 * c->cap : 16;
				c->list = realloc(c->list, c->cap * sizeof(*c->list));
				if (!c->list)
					hm_oom();	/* as the arena does */
			}
			c->list[out->nr++] = s;
		}
		s->count++;
		s->loads += x->s.op == HM_OP_LOAD;
		s->stores += x->s.op == HM_OP_STORE;
		out->line_splits++;
		if (crosses(addr, size, PAGE_SIZE_4K)) {
			s->page_splits++;
			out->page_splits++;
		}
	}
	count_types(c, acc, n);
}

void hm_splits_end(struct hm_splits_acc *c)
{
	struct hm_splits *out;

	if (!c)
		return;
	out = c->out;
	out->s = hm_arena_alloc(c->a, (out->nr + 1) * sizeof(*out->s));
	for (size_t i = 0; i < out->nr; i++)
		out->s[i] = *c->list[i];
	hm_sort(out->s, out->nr, sizeof(*out->s), cmp_split);
	static_straddles(c);
	hm_hash_free(&c->groups);
	hm_map64_free(&c->types);
	free(c->list);
	free(c);
}

int hm_splits_build(struct hm_arena *a, const struct hm_access *acc, size_t n,
		    uint32_t line_size, struct hm_splits *out, struct hm_err *err)
{
	struct hm_splits_acc *c;

	if (hm_splits_begin(a, line_size, out, &c, err))
		return -1;
	hm_splits_add(c, acc, n);
	hm_splits_end(c);
	return 0;
}
