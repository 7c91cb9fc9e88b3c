/* resolve/handoff.c: what the consumer's thread is given. Chunks copied into slots and
 * batches it gathers itself by sorted keys reach fn in the order handed on, in chunks of
 * at most HM_HANDOFF_CHUNK, and a gathered batch's array is the producer's again once
 * hm_handoff_idle returns; after fn fails, everything says so. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "resolve/handoff.h"

struct seen {
	uint64_t *ip;		/* s.ip of every access fn saw, in order */
	size_t n, cap, calls, fail_at;	/* fail_at: fn fails on this call (0: never) */
	size_t biggest;
};

static int record(const struct hm_access *acc, size_t n, void *arg)
{
	struct seen *s = arg;

	s->calls++;
	if (s->fail_at && s->calls == s->fail_at)
		return -1;
	if (n > s->biggest)
		s->biggest = n;
	for (size_t i = 0; i < n; i++) {
		if (s->n == s->cap) {
			s->cap = s->cap ? 2 * s->cap : 1024;
			s->ip = realloc(s->ip, s->cap * sizeof(*s->ip));
			assert_non_null(s->ip);
		}
		s->ip[s->n++] = acc[i].s.ip;
	}
	return 0;
}

/* n accesses numbered from base, and keys that take them in reverse */
static struct hm_access *numbered(size_t n, uint64_t base, struct hm_okey **k)
{
	struct hm_access *acc = calloc(n, sizeof(*acc));

	*k = calloc(n, sizeof(**k));
	assert_non_null(acc);
	assert_non_null(*k);
	for (size_t i = 0; i < n; i++) {
		acc[i].s.ip = base + i;
		(*k)[i] = (struct hm_okey){i, n - 1 - i};
	}
	return acc;
}

static void test_gathered_batches_come_in_key_order_between_copies(void **state)
{
	struct seen s = {0};
	struct hm_handoff *h = hm_handoff_start(4 * HM_HANDOFF_CHUNK, record, &s);
	size_t n1 = 2 * HM_HANDOFF_CHUNK + 5, n2 = 3;
	struct hm_okey *k1, *k2, *k3;
	struct hm_access *a1 = numbered(n1, 0, &k1), *a2 = numbered(n2, 100000, &k2);
	struct hm_access *a3 = numbered(10, 200000, &k3);

	(void)state;
	assert_non_null(h);
	assert_int_equal(hm_handoff_gather(h, a1, k1, n1), 0);
	assert_int_equal(hm_handoff_copy(h, a3, 10), 0);
	assert_int_equal(hm_handoff_gather(h, a2, k2, n2), 0);
	assert_int_equal(hm_handoff_gather(h, a2, k2, 0), 0);	/* nothing: no call */
	assert_int_equal(hm_handoff_idle(h), 0);
	/* idle: everything was seen, and the arrays are the producer's again */
	assert_int_equal(s.n, n1 + 10 + n2);
	memset(a1, 0xff, n1 * sizeof(*a1));
	for (size_t i = 0; i < n1; i++)
		assert_int_equal(s.ip[i], n1 - 1 - i);
	for (size_t i = 0; i < 10; i++)
		assert_int_equal(s.ip[n1 + i], 200000 + i);
	for (size_t i = 0; i < n2; i++)
		assert_int_equal(s.ip[n1 + 10 + i], 100000 + n2 - 1 - i);
	assert_int_equal(s.biggest, HM_HANDOFF_CHUNK);
	assert_int_equal(s.calls, 3 + 1 + 1);	/* n1 in three chunks */
	assert_int_equal(hm_handoff_end(h), 0);
	free(a1), free(a2), free(a3), free(k1), free(k2), free(k3), free(s.ip);
}

static void test_a_failed_fn_is_reported_to_the_producer(void **state)
{
	struct seen s = {.fail_at = 2};
	struct hm_handoff *h = hm_handoff_start(2 * HM_HANDOFF_CHUNK, record, &s);
	size_t n = 3 * HM_HANDOFF_CHUNK;
	struct hm_okey *k;
	struct hm_access *a = numbered(n, 0, &k);

	(void)state;
	assert_non_null(h);
	assert_int_equal(hm_handoff_gather(h, a, k, n), 0);
	assert_int_equal(hm_handoff_idle(h), -1);
	assert_int_equal(s.n, HM_HANDOFF_CHUNK);	/* the rest dropped */
	assert_int_equal(hm_handoff_gather(h, a, k, n), -1);
	assert_null(hm_handoff_slot(h));
	assert_int_equal(hm_handoff_end(h), -1);
	free(a), free(k), free(s.ip);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gathered_batches_come_in_key_order_between_copies),
		cmocka_unit_test(test_a_failed_fn_is_reported_to_the_producer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
