/* The recorded side of a streamed what-if, built while the run is first read (docs/
 * whatif.md, Memory), so that the replay builds only the new side. Per-line tables built
 * in chunks equal one build over the run (docs/report.md, What batches change), as long
 * as none is pruned: that holds when the run stays within --max-lines, the only case the
 * replay takes them in (its batches are HM_WI_BATCH then). The accesses' types are mapped
 * as the replay's feed maps them (hm_wi_type_sig), so the lines are those the replay
 * would build, byte for byte. */
#include "analyzer/whatif.h"

#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "core/oom.h"

struct hm_wi_before {
	struct hm_arena a;		/* the tables, adopted by the run's arena at the end */
	struct hm_lines_acc *acc;
	struct hm_access *buf;		/* a chunk with the summary's types, when they differ */
	size_t cap;
	const struct hm_type *last, *last_first;	/* the last type mapped */
	struct hm_map64 sig;		/* signature -> the first type seen with it */
	struct hm_map64 tr;		/* type -> that type */
	uint32_t line_size;
	uint64_t window_ns;
	size_t max_lines;
	int failed;
};

static uint64_t mix(uint64_t h, uint64_t v)
{
	h = (h ^ v) * 0x100000001b3ull;
	return h ^ h >> 29;
}

uint64_t hm_wi_type_sig(const struct hm_type *t)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (int depth = 0; t && depth < 8; t = t->ref, depth++) {
		h = mix(mix(mix(mix(h, t->kind), t->size), t->nelems), t->align);
		h = mix(mix(h, t->name ? hm_hash_str(t->name) : 0), t->alias ? hm_hash_str(t->alias) : 0);
		if (t->src)
			h = mix(mix(h, t->key), hm_hash_str(hm_layout_path(t->src)));
	}
	return h | 1;
}

struct hm_wi_before *hm_wi_before_new(uint32_t line_size, uint64_t window_ns, size_t max_lines)
{
	struct hm_wi_before *b = calloc(1, sizeof(*b));

	if (!b)
		hm_oom();
	hm_arena_init(&b->a);
	b->line_size = line_size;
	b->window_ns = window_ns;
	b->max_lines = max_lines;
	b->acc = hm_lines_acc_new(&b->a, line_size, window_ns);
	hm_lines_acc_set_max(b->acc, max_lines);
	hm_map64_init(&b->sig);
	hm_map64_init(&b->tr);
	return b;
}

/* The summary's type for t: the first type the run had with t's signature, as the
 * summary keeps tuples in the order first seen (whatif_sum.c) and the feed maps. */
static const struct hm_type *first_type(struct hm_wi_before *b, const struct hm_type *t)
{
	const struct hm_type *t1;
	uint64_t s;

	if (!t)
		return NULL;
	if ((t1 = hm_map64_get(&b->tr, (uintptr_t)t)))
		return t1;
	s = hm_wi_type_sig(t);
	if (!(t1 = hm_map64_get(&b->sig, s))) {
		t1 = t;
		hm_map64_put(&b->sig, s, (void *)t);
	}
	hm_map64_put(&b->tr, (uintptr_t)t, (void *)t1);
	return t1;
}

void hm_wi_before_add(struct hm_wi_before *b, const struct hm_access *acc, size_t n)
{
	struct hm_err err = {0};
	size_t i;

	if (b->failed)
		return;
	for (i = 0; i < n; i++) {
		if (acc[i].type != b->last) {
			b->last = acc[i].type;
			b->last_first = first_type(b, acc[i].type);
		}
		if (b->last_first != b->last)
			break;
	}
	if (i < n) {	/* a type stands for one the summary met first: a copy with that */
		if (n > b->cap) {
			b->cap = n;
			if (!(b->buf = realloc(b->buf, n * sizeof(*b->buf))))
				hm_oom();
		}
		memcpy(b->buf, acc, n * sizeof(*acc));
		for (i = 0; i < n; i++)
			b->buf[i].type = first_type(b, b->buf[i].type);
		acc = b->buf;
	}
	if (hm_lines_acc_add(b->acc, acc, n, &err))
		b->failed = 1;	/* the replay builds this side, and says what fails */
}

int hm_wi_before_end(struct hm_wi_before *b, struct hm_arena *a, const struct hm_wi_plan *p,
		     uint64_t window_ns, size_t batch, struct hm_lines *out)
{
	if (!b || !b->acc || b->failed || batch != HM_WI_BATCH || p->line_size != b->line_size ||
	    p->max_lines != b->max_lines || window_ns != b->window_ns)
		return -1;
	hm_lines_acc_end(b->acc, out);
	b->acc = NULL;
	if (out->dropped_lines) {	/* pruned where the replay's batches would not be */
		memset(out, 0, sizeof(*out));
		return -1;
	}
	hm_arena_adopt(a, &b->a);
	return 0;
}

void hm_wi_before_free(struct hm_wi_before *b)
{
	if (!b)
		return;
	free(b->buf);
	hm_map64_free(&b->sig);
	hm_map64_free(&b->tr);
	hm_arena_free(&b->a);
	free(b);
}
