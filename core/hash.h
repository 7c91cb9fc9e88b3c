/* Open-addressing hash map from a string key to a pointer; keys are not copied. */
#ifndef HM_HASH_H
#define HM_HASH_H

#include <stddef.h>
#include <stdint.h>

struct hm_hash_slot {
	const char *key;
	uint64_t hash;
	void *val;
};

struct hm_hash {
	struct hm_hash_slot *slots;
	size_t cap, len;
};

void hm_hash_init(struct hm_hash *h);
void hm_hash_free(struct hm_hash *h);
uint64_t hm_hash_str(const char *s);
/* Returns the existing value for key if present (and keeps it), else inserts val. */
void *hm_hash_put(struct hm_hash *h, const char *key, void *val);
void *hm_hash_get(const struct hm_hash *h, const char *key);

/* The slot of a direct-mapped table of 2^bits entries for a key already mixed into h
 * (the memo tables of resolve.c and symbolize/data_resolve.c): the top bits of h, mixed
 * once more. */
static inline size_t hm_slot64(uint64_t h, unsigned bits)
{
	h ^= h >> 31;
	return (size_t)((h * 0x94d049bb133111ebull) >> (64 - bits));
}



/* Open-addressing map from a non-zero 64-bit key to a pointer. */
struct hm_map64_slot {
	uint64_t key;
	void *val;
};

struct hm_map64 {
	struct hm_map64_slot *slots;
	size_t cap, len;
};

void hm_map64_init(struct hm_map64 *m);
void hm_map64_free(struct hm_map64 *m);
void hm_map64_put(struct hm_map64 *m, uint64_t key, void *val);
void *hm_map64_get(const struct hm_map64 *m, uint64_t key);
#endif
