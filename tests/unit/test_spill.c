/* resolve/spill.c: whatif's spill gives back the exact bytes of every access written,
 * stored as the words that differ from the last access of its thread's slot: runs of
 * near-equal accesses of threads that interleave,
 * accesses that differ everywhere, reads in chunks of odd sizes, a second read (the
 * PMU replay reads its after side twice), and no writing once read. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "resolve/spill.h"

#define N 300000	/* more than the spill's 1 MB buffer holds, whole or encoded */

static uint64_t rnd_state = 88172645463325252ull;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* Accesses as a recording gives them: runs of one site (time, thread and address
 * change), every 1000th random in every byte, padding bytes included. */
static struct hm_access *accesses(void)
{
	struct hm_access *v = malloc(N * sizeof(*v));

	assert_non_null(v);
	memset(&v[0], 0, sizeof(v[0]));	/* words equal to the spill's start */
	v[0].s.time = 1;
	for (size_t i = 1; i < N; i++) {
		if (i % 1000 == 0 || i % 97 == 0) {
			uint8_t *b = (uint8_t *)&v[i];

			for (size_t k = 0; k < sizeof(*v); k++)
				b[k] = (uint8_t)rnd();
			continue;
		}
		v[i] = v[i - 1];
		v[i].s.time += 1 + rnd() % 1000;
		v[i].s.tid = (uint32_t)(rnd() % 4);
		v[i].s.addr += 8 * (rnd() % 3);
	}
	return v;
}

static void read_back(struct hm_spill *s, const struct hm_access *want)
{
	struct hm_access *got = malloc(1000 * sizeof(*got));
	size_t at = 0, n, chunk = 1;

	assert_non_null(got);
	assert_int_equal(hm_spill_rewind(s), 0);
	while ((n = hm_spill_read(s, got, chunk)) > 0) {
		assert_true(at + n <= N);
		assert_memory_equal(got, want + at, n * sizeof(*got));
		at += n;
		chunk = chunk * 7 % 1000 + 1;
	}
	assert_int_equal(at, N);
	free(got);
}

static void test_spill_gives_back_every_byte_twice(void **state)
{
	struct hm_access *v = accesses();
	struct hm_spill *s = hm_spill_open();

	(void)state;
	assert_non_null(s);
	for (size_t i = 0; i < N; i += 4096)
		assert_int_equal(hm_spill_write(s, v + i, N - i < 4096 ? N - i : 4096), 0);
	read_back(s, v);
	read_back(s, v);	/* the second read of a PMU replay */
	assert_int_equal(hm_spill_write(s, v, 1), -1);	/* written once, then read */
	hm_spill_close(s);
	free(v);
}

static void test_empty_spill_reads_nothing(void **state)
{
	struct hm_spill *s = hm_spill_open();
	struct hm_access a;

	(void)state;
	assert_non_null(s);
	assert_int_equal(hm_spill_rewind(s), 0);
	assert_int_equal(hm_spill_read(s, &a, 1), 0);
	hm_spill_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spill_gives_back_every_byte_twice),
		cmocka_unit_test(test_empty_spill_reads_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
