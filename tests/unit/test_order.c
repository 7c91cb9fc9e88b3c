/* resolve/order.c: a batch's accesses by (time, position). The batches are synthesized in
 * the shapes streamed recordings have: a few runs already in time order (merged), many
 * short runs of two CPUs' rings (sorted by radix), equal times across runs, times spread
 * wider than a packed key holds (the two-field sort) and one access. Each answer is
 * checked against a plain sort of the same keys: a permutation, ascending, ties by
 * position. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "resolve/order.h"

static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

static int cmp_ref(const void *x, const void *y)
{
	const struct hm_okey *a = x, *b = y;

	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* Sorts acc[0..n) with hm_order_sort and with qsort; the two must agree key for key. */
static void check_sorted(struct hm_access *acc, size_t n)
{
	struct hm_order *o = hm_order_new(n ? n : 1);
	struct hm_okey *want = malloc((n ? n : 1) * sizeof(*want)), *got;

	assert_non_null(o);
	assert_non_null(want);
	for (size_t i = 0; i < n; i++)
		want[i] = (struct hm_okey){acc[i].s.time, i};
	qsort(want, n, sizeof(*want), cmp_ref);
	got = hm_order_sort(o, acc, n);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(got[i].time, want[i].time);
		assert_int_equal(got[i].idx, want[i].idx);
	}
	free(want);
	hm_order_free(o);
}

/* n accesses as `runs` interleaved runs, each ascending from t0 in steps below step;
 * every `tie`-th time is rounded down to a multiple of 1000 so that runs share times. */
static struct hm_access *batch(size_t n, size_t runs, uint64_t t0, uint64_t step, int tie)
{
	struct hm_access *acc = calloc(n ? n : 1, sizeof(*acc));
	size_t per = runs ? (n + runs - 1) / runs : n;

	assert_non_null(acc);
	for (size_t i = 0; i < n; i++) {
		size_t in_run = i % per;
		uint64_t t = t0 + in_run * step + rnd() % (step ? step : 1);

		if (tie && i % (size_t)tie == 0)
			t -= t % 1000;
		acc[i].s.time = t;
	}
	for (size_t r = 0; r < runs; r++) {	/* each run ascending, as a ring flushes */
		size_t lo = r * per, hi = lo + per < n ? lo + per : n;

		for (size_t i = lo + 1; i < hi; i++)
			if (acc[i].s.time < acc[i - 1].s.time)
				acc[i].s.time = acc[i - 1].s.time;
	}
	return acc;
}

static void test_few_runs_are_merged_in_order(void **state)
{
	struct hm_access *acc = batch(5000, 3, 1000000, 2000, 7);

	(void)state;
	check_sorted(acc, 5000);
	free(acc);
}

static void test_many_runs_are_sorted_by_radix_in_order(void **state)
{
	/* 2,000 runs of 131: 11 merge passes against 4 radix passes */
	struct hm_access *acc = batch(262144, 2000, 162000000000ull, 250000, 5);

	(void)state;
	check_sorted(acc, 262144);
	free(acc);
}

static void test_equal_times_keep_batch_order(void **state)
{
	struct hm_access *acc = calloc(70000, sizeof(*acc));

	(void)state;
	assert_non_null(acc);
	for (size_t i = 0; i < 70000; i++)	/* 7,000 runs of 10, all of 3 times */
		acc[i].s.time = 5000 + (i % 10) / 4;
	check_sorted(acc, 70000);
	free(acc);
}

static void test_wide_spans_fall_back_to_two_fields(void **state)
{
	struct hm_access *acc = batch(20000, 500, 1, 1ull << 50, 0);

	(void)state;
	check_sorted(acc, 20000);
	free(acc);
}

static void test_random_batches_of_every_shape(void **state)
{
	(void)state;
	for (int k = 0; k < 60; k++) {
		size_t n = 1 + rnd() % 40000, runs = 1 + rnd() % (n < 4000 ? n : 4000);
		uint64_t step = 1 + rnd() % (1ull << (rnd() % 40));
		struct hm_access *acc = batch(n, runs, rnd() % (1ull << 40), step,
					      (int)(rnd() % 4));

		check_sorted(acc, n);
		free(acc);
	}
}

/* After a cut, the rest goes to the front of the same array or of another one, in its
 * order in the batch, and the source array is only read when they differ. */
static void test_compact_keeps_the_rest_in_batch_order(void **state)
{
	size_t n = 5000;
	struct hm_access *acc = batch(n, 7, 1000, 50, 1), *copy = malloc(n * sizeof(*copy));
	struct hm_access *other = calloc(n, sizeof(*other));
	struct hm_order *o = hm_order_new(n);
	struct hm_okey *k;
	size_t cut = n / 3, j = 0;
	uint8_t *gone = calloc(n, 1);

	(void)state;
	assert_non_null(copy);
	assert_non_null(other);
	assert_non_null(o);
	assert_non_null(gone);
	for (size_t i = 0; i < n; i++)
		acc[i].s.ip = i;	/* each access's batch position */
	memcpy(copy, acc, n * sizeof(*acc));
	k = hm_order_sort(o, acc, n);
	for (size_t i = 0; i < cut; i++)
		gone[k[i].idx] = 1;
	hm_order_compact(o, other, acc, k, n, cut);
	assert_memory_equal(acc, copy, n * sizeof(*acc));	/* read only */
	for (size_t p = 0; p < n; p++)
		if (!gone[p])
			assert_int_equal(other[j++].s.ip, p);
	assert_int_equal(j, n - cut);
	hm_order_compact(o, acc, acc, k, n, cut);	/* in place: the same */
	for (size_t i = 0; i < n - cut; i++)
		assert_int_equal(acc[i].s.ip, other[i].s.ip);
	hm_order_free(o);
	free(gone);
	free(other);
	free(copy);
	free(acc);
}

/* Times noted as the accesses come are what the sort uses, through a compaction and the
 * next accesses; once the batch moved (hm_order_moved), the batch's own are read. */
static void test_noted_times_are_sorted_until_the_batch_moves(void **state)
{
	size_t n = 3000, cut = 1000, more = 500;
	struct hm_access *acc = batch(n, 5, 1000, 40, 0);
	struct hm_order *o = hm_order_new(n);
	struct hm_okey *k;
	uint64_t prev;

	(void)state;
	assert_non_null(o);
	for (size_t i = 0; i < n; i++) {
		hm_order_note(o, &acc[i], i);
		acc[i].s.time = 0;	/* only the noted times say the order */
	}
	k = hm_order_sort(o, acc, n);
	for (size_t i = 1; i < n; i++)
		assert_true(k[i].time >= k[i - 1].time && k[i].time > 0);
	prev = k[cut - 1].time;
	hm_order_compact(o, acc, acc, k, n, cut);
	for (size_t i = 0; i < more; i++) {	/* the next accesses, after the rest */
		acc[n - cut + i].s.time = 0;
		hm_order_note(o, &(struct hm_access){.s.time = prev + 1 + i}, n - cut + i);
	}
	k = hm_order_sort(o, acc, n - cut + more);
	for (size_t i = 1; i < n - cut + more; i++)
		assert_true(k[i].time >= k[i - 1].time && k[i].time >= prev);
	hm_order_moved(o);
	k = hm_order_sort(o, acc, n - cut + more);
	assert_int_equal(k[n - cut + more - 1].time, 0);	/* the batch's zeros */
	hm_order_free(o);
	free(acc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_few_runs_are_merged_in_order),
		cmocka_unit_test(test_many_runs_are_sorted_by_radix_in_order),
		cmocka_unit_test(test_equal_times_keep_batch_order),
		cmocka_unit_test(test_wide_spans_fall_back_to_two_fields),
		cmocka_unit_test(test_random_batches_of_every_shape),
		cmocka_unit_test(test_compact_keeps_the_rest_in_batch_order),
		cmocka_unit_test(test_noted_times_are_sorted_until_the_batch_moves),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
