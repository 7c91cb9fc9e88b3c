#include "resolve/order.h"

#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/hash.h"
#include "core/huge.h"
#include "core/sort.h"

struct hm_order {
	struct hm_map64 last;		/* ring key -> uint64_t last time in this batch */
	struct hm_arena ar;
	struct hm_okey *keys, *tmp;	/* tmp: hm_order_sort's merge arrays (2 words a key) */
	uint8_t *gone;			/* hm_order_compact: a bit per position gone on */
	uint64_t *times;		/* times[i]: the batch's access i's, for i < tn */
	size_t tn;
	uint64_t seen[2], *seen_t[2];	/* note_ring's last thread and CPU ring (0: none) */
};

static int cmp_okey(const void *x, const void *y)
{
	const struct hm_okey *a = x, *b = y;

	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* The end of the ascending run of k[0..n) that starts at i. */
static size_t run_end(const uint64_t *k, size_t i, size_t n)
{
	while (++i < n && k[i] >= k[i - 1])
		;
	return i;
}

/* Sorts k[0..n) (distinct): a batch is a few runs already in time order, one per ring
 * flush, so runs are merged pairwise until one is left (tmp: n more keys); qsort took
 * 10% of a report. Returns the array that holds the result. */
static uint64_t *merge_runs(uint64_t *k, uint64_t *tmp, size_t n)
{
	for (;;) {
		size_t i = 0, runs = 0;

		while (i < n) {
			size_t a = run_end(k, i, n), b = a < n ? run_end(k, a, n) : n, x = i, y = a;

			runs++;
			while (x < a && y < b)
				tmp[i++] = k[y] < k[x] ? k[y++] : k[x++];
			memcpy(&tmp[i], &k[x], (a - x) * sizeof(*k));
			i += a - x;
			memcpy(&tmp[i], &k[y], (b - y) * sizeof(*k));
			i += b - y;
		}
		if (runs <= 1)
			return tmp;
		uint64_t *t = k;

		k = tmp;
		tmp = t;
	}
}

/* The number of ascending runs of k[0..n). */
static size_t runs_of(const uint64_t *k, size_t n)
{
	size_t r = n > 0;

	for (size_t i = 1; i < n; i++)
		r += k[i] < k[i - 1];
	return r;
}

#define DIGIT 11		/* radix digits of 11 bits: 2048 counts, 16 KB */

/* Sorts k[0..n) by their low `bits` bits (the rest are zero), least significant digit
 * first, through tmp (n more keys); a digit all keys share is skipped. Returns the array
 * that holds the result. */
static uint64_t *radix_sort(uint64_t *k, uint64_t *tmp, size_t n, unsigned bits)
{
	static const uint64_t mask = (1u << DIGIT) - 1;
	size_t cnt[1u << DIGIT];

	for (unsigned sh = 0; sh < bits; sh += DIGIT) {
		size_t sum = 0;

		memset(cnt, 0, sizeof(cnt));
		for (size_t i = 0; i < n; i++)
			cnt[k[i] >> sh & mask]++;
		if (cnt[k[0] >> sh & mask] == n)
			continue;
		for (size_t d = 0; d <= mask; d++) {
			size_t c = cnt[d];

			cnt[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			tmp[cnt[k[i] >> sh & mask]++] = k[i];
		uint64_t *t = k;

		k = tmp;
		tmp = t;
	}
	return k;
}

static unsigned bit_len(uint64_t v)
{
	unsigned b = 0;

	while (v >> b)
		b++;
	return b;
}

/* The batch's accesses by (time, position) in o->keys. Each key is packed into one
 * number, time since the batch's first in the high bits and position in the low, so that
 * a sort compares one word (a two-field compare was half its cost); a batch whose times
 * span more than those bits leave (19 hours at the default batch) is sorted by both
 * fields. A batch is runs already in time order, one per ring flush: a few are merged
 * pairwise; many (a timer recording on two CPUs flushes ~1,500 runs into a default
 * batch: 11 merge passes) are sorted by radix, a pass per 11 bits of the keys (4 or 5).
 * The keys are distinct, so both give the one order. */
struct hm_okey *hm_order_sort(struct hm_order *o, const struct hm_access *acc, size_t n)
{
	uint64_t tmin = UINT64_MAX, tmax = 0, *a = (uint64_t *)o->tmp, *r;
	unsigned ib = 1, bits, merges = 0;
	size_t runs;

	/* the accesses' times, as noted while they were hot; or read once more from the
	 * batch, where each is on a line of its own (a batch is 50 MB): three quarters of
	 * this sort's time was that loop's cache misses */
	for (size_t i = 0; i < n; i++) {	/* o->tmp holds 2n words: both sorts' arrays */
		uint64_t t = a[i] = o->tn == n ? o->times[i] : acc[i].s.time;

		tmin = t < tmin ? t : tmin;
		tmax = t > tmax ? t : tmax;
	}
	while (ib < 63 && (n - 1) >> ib)
		ib++;
	if (!n || (tmax - tmin) >> (64 - ib)) {
		for (size_t i = 0; i < n; i++)
			o->keys[i] = (struct hm_okey){ a[i], i };
		if (n)
			hm_sort(o->keys, n, sizeof(*o->keys), cmp_okey);
		return o->keys;
	}
	for (size_t i = 0; i < n; i++)
		a[i] = (a[i] - tmin) << ib | i;
	bits = ib + bit_len(tmax - tmin);
	for (runs = runs_of(a, n); runs > 1u << merges; merges++)
		;
	/* a merge pass and a radix pass cost about alike: the fewer passes */
	r = merges > (bits + DIGIT - 1) / DIGIT ? radix_sort(a, a + n, n, bits)
						 : merge_runs(a, a + n, n);
	for (size_t i = 0; i < n; i++)
		o->keys[i] = (struct hm_okey){ (r[i] >> ib) + tmin, (size_t)(r[i] & ((1ull << ib) - 1)) };
	return o->keys;
}

static void note_ring(struct hm_order *o, int kind, uint64_t key, uint64_t time)
{
	uint64_t *t = o->seen[kind] == key ? o->seen_t[kind] : hm_map64_get(&o->last, key);

	o->seen[kind] = key;	/* runs of one thread and CPU: the last ring is asked again */
	if (!t) {
		t = hm_arena_alloc(&o->ar, sizeof(*t));
		hm_map64_put(&o->last, key, t);
	}
	o->seen_t[kind] = t;
	*t = time;
}

static uint64_t watermark(const struct hm_order *o)
{
	uint64_t w = UINT64_MAX;

	for (size_t i = 0; i < o->last.cap; i++) {
		const uint64_t *t = o->last.slots[i].val;

		if (o->last.slots[i].key && *t < w)
			w = *t;
	}
	return w;
}

void hm_order_note(struct hm_order *o, const struct hm_access *x, size_t pos)
{
	if (pos == o->tn)
		o->times[o->tn++] = x->s.time;
	note_ring(o, 0, 1ull << 63 | (uint64_t)x->s.pid << 32 | x->s.tid, x->s.time);
	note_ring(o, 1, 1ull << 62 | x->s.cpu, x->s.time);
}

/* Puts acc in the order of k (acc[i] becomes the old acc[k[i].idx]) in place, cycle by
 * cycle: a second batch-sized array of accesses (50 MB by default) is not needed. k's
 * indices are used up. */
void hm_order_permute(struct hm_access *acc, struct hm_okey *k, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct hm_access first;
		size_t j = i;

		if (k[i].idx == i)
			continue;	/* in place, or its cycle is done */
		first = acc[i];
		for (;;) {
			size_t from = k[j].idx;

			k[j].idx = j;
			if (from == i) {
				acc[j] = first;
				break;
			}
			acc[j] = acc[from];
			j = from;
		}
	}
}

/* The cut: the first cut of the n sorted keys k, up to the latest time every ring has
 * reached, at least half (all when final). Resets the rings for the next batch. */
size_t hm_order_cut(struct hm_order *o, const struct hm_okey *k, size_t n, int final)
{
	size_t cut = n;
	uint64_t w;

	if (!final) {
		w = watermark(o);
		for (cut = 0; cut < n && k[cut].time <= w; cut++)
			;
		if (cut < (n + 1) / 2)
			cut = (n + 1) / 2;
	}
	hm_map64_free(&o->last);
	hm_map64_init(&o->last);
	hm_arena_free(&o->ar);
	o->seen[0] = o->seen[1] = 0;
	return cut;
}

struct hm_order *hm_order_new(size_t cap)
{
	struct hm_order *o = calloc(1, sizeof(*o));

	if (!o || !(o->keys = malloc(cap * sizeof(*o->keys))) ||
	    !(o->times = malloc(cap * sizeof(*o->times))) ||
	    !(o->tmp = malloc(cap * sizeof(*o->tmp))) || !(o->gone = malloc((cap + 7) / 8))) {
		hm_order_free(o);
		return NULL;
	}
	hm_huge_hint(o->keys, cap * sizeof(*o->keys));
	hm_huge_hint(o->tmp, cap * sizeof(*o->tmp));
	hm_map64_init(&o->last);
	return o;
}

void hm_order_moved(struct hm_order *o)
{
	o->tn = 0;
}

void hm_order_free(struct hm_order *o)
{
	if (!o)
		return;
	hm_map64_free(&o->last);
	hm_arena_free(&o->ar);
	free(o->times);
	free(o->keys);
	free(o->tmp);
	free(o->gone);
	free(o);
}

void hm_order_compact(struct hm_order *o, struct hm_access *dst, const struct hm_access *src,
		      const struct hm_okey *k, size_t n, size_t cut)
{
	size_t j = 0;
	int times = o->tn == n;	/* noted times follow their accesses */

	memset(o->gone, 0, (n + 7) / 8);
	for (size_t i = 0; i < cut; i++)
		o->gone[k[i].idx / 8] |= (uint8_t)(1u << (k[i].idx % 8));
	for (size_t p = 0; p < n; p++) {
		if (o->gone[p / 8] & (1u << (p % 8)))
			continue;
		if (dst + j != src + p)
			dst[j] = src[p];
		if (times)
			o->times[j] = o->times[p];
		j++;
	}
	o->tn = times ? j : 0;
}
