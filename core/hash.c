#include "hash.h"
#include "core/oom.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hm_hash_init(struct hm_hash *h)
{
	memset(h, 0, sizeof(*h));
}

void hm_hash_free(struct hm_hash *h)
{
	free(h->slots);
	hm_hash_init(h);
}

uint64_t hm_hash_str(const char *s)
{
	uint64_t x = 0xcbf29ce484222325ull; /* FNV-1a */

	for (; *s; s++)
		x = (x ^ (unsigned char)*s) * 0x100000001b3ull;
	return x ? x : 1;
}

static struct hm_hash_slot *hash_find(struct hm_hash_slot *slots, size_t cap,
				      const char *key, uint64_t hv)
{
	size_t i = hv & (cap - 1);

	for (;; i = (i + 1) & (cap - 1)) {
		struct hm_hash_slot *s = &slots[i];

		if (!s->key || (s->hash == hv && strcmp(s->key, key) == 0))
			return s;
	}
}

static void hash_grow(struct hm_hash *h)
{
	size_t cap = h->cap ? h->cap * 2 : 64;
	struct hm_hash_slot *slots = calloc(cap, sizeof(*slots));

	if (!slots) {
		hm_oom();
	}
	for (size_t i = 0; i < h->cap; i++) {
		struct hm_hash_slot *o = &h->slots[i];

		if (o->key)
			*hash_find(slots, cap, o->key, o->hash) = *o;
	}
	free(h->slots);
	h->slots = slots;
	h->cap = cap;
}

void *hm_hash_put(struct hm_hash *h, const char *key, void *val)
{
	uint64_t hv = hm_hash_str(key);
	struct hm_hash_slot *s;

	if ((h->len + 1) * 4 > h->cap * 3)
		hash_grow(h);
	s = hash_find(h->slots, h->cap, key, hv);
	if (s->key)
		return s->val;
	s->key = key;
	s->hash = hv;
	s->val = val;
	h->len++;
	return val;
}

void *hm_hash_get(const struct hm_hash *h, const char *key)
{
	struct hm_hash_slot *s;

	if (!h->cap)
		return NULL;
	s = hash_find(h->slots, h->cap, key, hm_hash_str(key));
	return s->key ? s->val : NULL;
}

void hm_map64_init(struct hm_map64 *m)
{
	memset(m, 0, sizeof(*m));
}

void hm_map64_free(struct hm_map64 *m)
{
	free(m->slots);
	hm_map64_init(m);
}

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

static struct hm_map64_slot *map64_find(struct hm_map64_slot *slots, size_t cap, uint64_t key)
{
	size_t i = mix64(key) & (cap - 1);

	while (slots[i].key && slots[i].key != key)
		i = (i + 1) & (cap - 1);
	return &slots[i];
}

void hm_map64_put(struct hm_map64 *m, uint64_t key, void *val)
{
	struct hm_map64_slot *s;

	if ((m->len + 1) * 4 > m->cap * 3) {
		size_t cap = m->cap ? m->cap * 2 : 64;
		struct hm_map64_slot *slots = calloc(cap, sizeof(*slots));

		if (!slots) {
			hm_oom();
		}
		for (size_t i = 0; i < m->cap; i++)
			if (m->slots[i].key)
				*map64_find(slots, cap, m->slots[i].key) = m->slots[i];
		free(m->slots);
		m->slots = slots;
		m->cap = cap;
	}
	s = map64_find(m->slots, m->cap, key);
	if (!s->key)
		m->len++;
	s->key = key;
	s->val = val;
}

void *hm_map64_get(const struct hm_map64 *m, uint64_t key)
{
	return m->cap ? map64_find(m->slots, m->cap, key)->val : NULL;
}
