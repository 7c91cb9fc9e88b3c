/* What the plan, --suggest and the placing of objects read of a run, without its
 * samples (struct hm_wi_sum in whatif.h): each distinct (type, object, offset, thread,
 * kind of access) once, with how many accesses had it, in the order first seen. The
 * consumers are the same loops as over the accesses, weighted, so a summary of a run
 * gives them what the whole run did; its size follows the objects, fields and threads
 * a run touches, not its length. */
#include "analyzer/whatif.h"

#include <stdlib.h>
#include <string.h>

#include "core/oom.h"

void hm_wi_sum_init(struct hm_wi_sum *s, uint32_t line_size)
{
	memset(s, 0, sizeof(*s));
	s->line_size = line_size ? line_size : 64;
}

void hm_wi_sum_free(struct hm_wi_sum *s)
{
	free(s->acc);
	free(s->w);
	free(s->slot);
	free(s->lines);
	memset(s, 0, sizeof(*s));
}

/* The fields a consumer reads: equal keys are one tuple. */
static int same(const struct hm_access *x, const struct hm_access *y)
{
	return x->type == y->type && x->obj_base == y->obj_base && x->field_off == y->field_off &&
	       hm_lines_space(x) == hm_lines_space(y) && x->s.pid == y->s.pid &&
	       x->s.tid == y->s.tid && x->s.op == y->s.op && x->locked == y->locked &&
	       x->method == y->method && !x->part == !y->part && x->s.size == y->s.size &&
	       !x->s.addr == !y->s.addr;
}

static uint64_t hash_of(const struct hm_access *x)
{
	uint64_t h = (uintptr_t)x->type * 0x9e3779b97f4a7c15ull;

	h ^= (x->obj_base + x->field_off * 0x632be59bd9b4e019ull) * 0xbf58476d1ce4e5b9ull;
	h ^= ((uint64_t)hm_lines_space(x) << 32 | x->s.tid) * 0x94d049bb133111ebull;
	h ^= (uint64_t)x->s.op << 3 ^ (uint64_t)x->s.size << 8 ^ (uint64_t)x->method << 24;
	return h ^ h >> 31;
}

static void grow_slots(struct hm_wi_sum *s)
{
	size_t cap = s->nslot ? 2 * s->nslot : 1024;
	size_t *v = calloc(cap, sizeof(*v));

	if (!v)
		hm_oom();	/* as the arena does */
	for (size_t i = 0; i < s->n; i++) {
		size_t j = hash_of(&s->acc[i]) & (cap - 1);

		while (v[j])
			j = (j + 1) & (cap - 1);
		v[j] = i + 1;
	}
	free(s->slot);
	s->slot = v;
	s->nslot = cap;
}

static void add_tuple(struct hm_wi_sum *s, const struct hm_access *x)
{
	size_t j;

	if (2 * (s->n + 1) > s->nslot)
		grow_slots(s);
	for (j = hash_of(x) & (s->nslot - 1); s->slot[j]; j = (j + 1) & (s->nslot - 1)) {
		if (same(&s->acc[s->slot[j] - 1], x)) {
			s->w[s->slot[j] - 1]++;
			return;
		}
	}
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 256;
		s->acc = realloc(s->acc, s->cap * sizeof(*s->acc));
		s->w = realloc(s->w, s->cap * sizeof(*s->w));
		if (!s->acc || !s->w)
			hm_oom();
	}
	s->acc[s->n] = *x;
	s->w[s->n] = 1;
	s->slot[j] = ++s->n;
}

/* Distinct (address space, line) by 8-byte fingerprints, as whatif_run.c decides
 * between one build and batches. */
static void add_line(struct hm_wi_sum *s, const struct hm_access *x)
{
	uint64_t f = (x->s.addr & ~(uint64_t)(s->line_size - 1)) * 0x9e3779b97f4a7c15ull ^
		     (uint64_t)hm_lines_space(x) * 0xc2b2ae3d27d4eb4full;
	size_t j;

	if (!s->lines) {
		s->lcap = 1024;
		if (!(s->lines = calloc(s->lcap, sizeof(*s->lines))))
			hm_oom();
	}
	f = (f ^ f >> 31) | 1;
	for (j = f & (s->lcap - 1); s->lines[j] && s->lines[j] != f; j = (j + 1) & (s->lcap - 1))
		;
	if (s->lines[j])
		return;
	s->lines[j] = f;
	if (2 * ++s->nlines > s->lcap) {
		uint64_t *g = calloc(2 * s->lcap, sizeof(*g));

		if (!g)
			hm_oom();
		for (size_t k = 0; k < s->lcap; k++) {
			if (!s->lines[k])
				continue;
			for (j = s->lines[k] & (2 * s->lcap - 1); g[j]; j = (j + 1) & (2 * s->lcap - 1))
				;
			g[j] = s->lines[k];
		}
		free(s->lines);
		s->lines = g;
		s->lcap *= 2;
	}
}

void hm_wi_sum_add(struct hm_wi_sum *s, const struct hm_access *acc, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct hm_access *x = &acc[i];

		s->accesses++;
		s->total += !x->part;	/* a wide access's members: one sample */
		s->with_addr += x->s.addr != 0 && !x->part;
		if (x->s.addr)
			add_line(s, x);
		if (x->type || x->obj_base)
			add_tuple(s, x);
	}
}

int hm_wi_sum_batched(const struct hm_wi_sum *s)
{
	return s->accesses > HM_WI_BATCH && s->accesses >= HM_WI_BATCH_MIN_PER_LINE * s->nlines;
}
