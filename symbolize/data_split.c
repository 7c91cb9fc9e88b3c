/* Wide accesses, member by member: gcc -O2 merges `s->ops++; s->bytes += n` into one
 * 16-byte movdqu and movups, and a rep stos or a memset covers a whole struct. Named by
 * the member at its first byte, such an access hides every other member it touches; here
 * it becomes one part per member, each with its own bytes. */
#include "symbolize/data_int.h"

#include <string.h>

#define PATH_MAX_LEN 400

/* The path without a trailing element index: "name[5]" -> "name"; "a[1].b" stays. */
static size_t stem_len(const char *path)
{
	size_t n = strlen(path);

	if (!n || path[n - 1] != ']')
		return n;
	while (n && path[n - 1] != '[')
		n--;
	return n ? n - 1 : strlen(path);
}

/* The leaf at offset o of s: its path into buf and how many of its bytes lie from o on;
 * 0 in a hole or padding. */
static uint64_t leaf_at(const struct hm_type *s, uint64_t o, char *buf, size_t len)
{
	uint64_t within = 0, lsize;
	const struct hm_type *leaf = hm_layout_field_at(s, o, buf, len, &within);

	if (!leaf)
		return 0;
	lsize = hm_type_strip(leaf)->size;
	if (!lsize)
		lsize = 1;	/* an incomplete leaf: its first byte at least */
	return lsize > within ? lsize - within : 1;
}

size_t hm_data_split_type(const struct hm_type *t, uint64_t offset, uint32_t size, int wrap,
			  struct hm_data_part *out, size_t max)
{
	const struct hm_type *s = hm_type_strip(t);
	char path[PATH_MAX_LEN], prev[PATH_MAX_LEN] = "";
	uint64_t pos = offset, end = offset + size;
	size_t n = 0;

	if (!s || !s->size || !size || !max || offset >= s->size)
		return 0;
	if (!wrap && end > s->size)
		end = s->size;
	while (pos < end) {
		uint64_t o = pos % s->size, got = leaf_at(s, o, path, sizeof(path));
		uint64_t stop;

		if (!got) {	/* a hole: no member's bytes */
			pos++;
			prev[0] = '\0';
			continue;
		}
		stop = pos + got < end ? pos + got : end;
		if (n && prev[0] && stem_len(path) == stem_len(prev) &&
		    !strncmp(path, prev, stem_len(path)) && stem_len(path) != strlen(path) &&
		    out[n - 1].at + out[n - 1].size == pos - offset) {
			out[n - 1].size += (uint32_t)(stop - pos);	/* the same array, on */
		} else if (n == max) {
			out[n - 1].size = (uint32_t)(end - offset - out[n - 1].at);
			break;
		} else {
			out[n++] = (struct hm_data_part){o, (uint32_t)(pos - offset),
							 (uint32_t)(stop - pos), NULL};
			memcpy(prev, path, sizeof(prev));
		}
		pos = stop;
	}
	return n;
}

/* Every sample of a wide access asks again with the same object, offset and size: the
 * answer depends on those alone (data_field interns the names), so it is kept, keyed by
 * them, instead of walking the type and formatting paths per sample. */
struct split_memo {
	const struct hm_type *type;
	const char *prefix;
	uint64_t offset;
	uint32_t size;
	uint8_t wrap;
	size_t max, n;
	struct hm_data_part parts[];
};

/* A heap object's type is one element of what the pointer points into, unless the object
 * is its whole allocation. */
static int split_wraps(const struct hm_data_obj *obj)
{
	return obj->method == HM_M_HEAP && !obj->whole;
}

static uint64_t split_key(const struct hm_data_obj *obj, uint32_t size, size_t max)
{
	uint64_t h = (uint64_t)(uintptr_t)obj->type * 0x9e3779b97f4a7c15ull;

	h ^= ((uint64_t)(uintptr_t)obj->prefix + (h << 6) + (h >> 2)) * 0xff51afd7ed558ccdull;
	h ^= (obj->offset + (h << 6) + (h >> 2)) * 0xc4ceb9fe1a85ec53ull;
	h ^= (((uint64_t)size << 8 | max << 1 | split_wraps(obj)) + (h << 6)) *
	     0x9e3779b97f4a7c15ull;
	return h | 1;	/* never 0: map64 keys are non-zero */
}

static int split_memo_is(const struct split_memo *m, const struct hm_data_obj *obj,
			 uint32_t size, size_t max)
{
	return m->type == obj->type && m->prefix == obj->prefix && m->offset == obj->offset &&
	       m->size == size && m->wrap == split_wraps(obj) && m->max == max;
}

static size_t split_compute(struct hm_data *d, const struct hm_data_obj *obj, uint32_t size,
			    struct hm_data_part *out, size_t max)
{
	size_t n = hm_data_split_type(obj->type, obj->offset, size, split_wraps(obj),
				      out, max);

	for (size_t i = 0; i < n; i++)
		out[i].field = data_field(d, obj->prefix, obj->type, out[i].offset);
	return n;
}

size_t hm_data_split(struct hm_data *d, const struct hm_data_obj *obj, uint32_t size,
		     struct hm_data_part *out, size_t max)
{
	uint64_t key;
	struct split_memo *m;
	size_t n;

	if (!d || !obj || !obj->type || !obj->prefix || !obj->field)
		return 0;
	key = split_key(obj, size, max);
	m = hm_map64_get(&d->splits, key);
	if (m && split_memo_is(m, obj, size, max)) {
		memcpy(out, m->parts, m->n * sizeof(*out));
		return m->n;
	}
	n = split_compute(d, obj, size, out, max);
	if (m)	/* a hash collision: answer without memo */
		return n;
	m = hm_arena_alloc(&d->arena, sizeof(*m) + n * sizeof(*out));
	*m = (struct split_memo){obj->type, obj->prefix, obj->offset, size,
				 split_wraps(obj), max, n};
	memcpy(m->parts, out, n * sizeof(*out));
	hm_map64_put(&d->splits, key, m);
	return n;
}
