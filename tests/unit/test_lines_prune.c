/* analyzer/lines_prune.c: hm_lines_acc_set_max keeps the top lines, counts the dropped
 * ones and their accesses, keeps a dropped line dropped, and leaves every kept line as
 * the unlimited build has it (its tables copied out of the arena that the prune frees:
 * under ASan a pointer left behind is a use-after-free). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analyzer/lines.h"

#define LINES 40
#define BASE 0x7f0000000000ull

/* Line k gets k + 1 accesses (PMU stores of one thread, unnamed rows at offsets 0 and
 * 8), in rounds: round r touches every line that has more than r accesses, so the
 * busiest lines are busiest at any point of the run. */
static struct hm_access *make(size_t *n)
{
	struct hm_access *acc = calloc(LINES * (LINES + 1) / 2, sizeof(*acc));
	uint64_t t = 1000;

	assert_non_null(acc);
	*n = 0;
	for (int r = 0; r < LINES; r++) {
		for (int k = r; k < LINES; k++) {
			struct hm_access *x = &acc[(*n)++];

			x->s.time = t += 100;
			x->s.pid = 7;
			x->s.tid = 7;
			x->s.cpu = (uint32_t)(r % 2);
			x->s.source = HM_SRC_PMU;
			x->s.op = HM_OP_STORE;
			x->s.size = 8;
			x->s.addr = BASE + 64 * (uint64_t)k + 8 * (uint64_t)(r % 2);
			x->s.ip = 0x401000 + 4 * (uint64_t)(r % 3);
		}
	}
	return acc;
}

static void build(const struct hm_access *acc, size_t n, size_t batch, size_t max,
		  struct hm_arena *a, struct hm_lines *out)
{
	struct hm_lines_acc *m = hm_lines_acc_new(a, 64, 0);
	struct hm_err err = {0};

	hm_lines_acc_set_max(m, max);
	for (size_t i = 0; i < n; i += batch)
		assert_int_equal(hm_lines_acc_add(m, acc + i, n - i < batch ? n - i : batch, &err), 0);
	hm_lines_acc_end(m, out);
}

static const struct hm_line *find(const struct hm_lines *l, uint64_t addr)
{
	for (size_t i = 0; i < l->nr; i++)
		if (l->lines[i].addr == addr)
			return &l->lines[i];
	return NULL;
}

static void same_line(const struct hm_line *x, const struct hm_line *y)
{
	assert_int_equal(x->records, y->records);
	assert_int_equal(x->stores, y->stores);
	assert_int_equal(x->nr_fields, y->nr_fields);
	assert_int_equal(x->nr_threads, y->nr_threads);
	assert_int_equal(x->nr_cpus, y->nr_cpus);
	assert_non_null(x->c2c);
	assert_non_null(y->c2c);
	assert_memory_equal(x->c2c, y->c2c, sizeof(*x->c2c));
	for (uint32_t i = 0; i < x->nr_fields; i++) {
		const struct hm_lfield *f = &x->fields[i], *g = &y->fields[i];

		assert_int_equal(f->offset, g->offset);
		assert_int_equal(f->records, g->records);
		assert_string_equal(f->field, g->field);
		assert_int_equal(f->nr_sites_all, g->nr_sites_all);
		for (uint32_t s = 0; s < f->nr_sites; s++)
			assert_int_equal(f->sites[s].count, g->sites[s].count);
		assert_memory_equal(f->threads, g->threads, f->nr_threads * sizeof(*f->threads));
		assert_memory_equal(f->cpus, g->cpus, f->nr_cpus * sizeof(*f->cpus));
	}
}

static void check_kept(const struct hm_lines *all, const struct hm_lines *cut, size_t max)
{
	uint64_t kept = 0;

	assert_int_equal(cut->nr, max);
	assert_int_equal(cut->max_lines, max);
	assert_int_equal(cut->dropped_lines, LINES - max);
	for (size_t i = 0; i < cut->nr; i++) {
		const struct hm_line *y = find(all, cut->lines[i].addr);

		assert_non_null(y);
		same_line(&cut->lines[i], y);
		kept += cut->lines[i].records;
	}
	assert_int_equal(kept + cut->dropped_records, all->with_addr);
	assert_int_equal(cut->total, all->total);
}

static void test_top_lines_kept_and_dropped_counted(void **state)
{
	size_t n;
	struct hm_access *acc = make(&n);
	struct hm_arena a;
	struct hm_lines all, cut;

	(void)state;
	hm_arena_init(&a);
	build(acc, n, n, 0, &a, &all);
	assert_int_equal(all.nr, LINES);
	assert_int_equal(all.dropped_lines, 0);
	build(acc, n, n, 10, &a, &cut);
	check_kept(&all, &cut, 10);
	/* one prune over the whole run: the ten busiest, 31 to 40 accesses */
	for (size_t i = 0; i < cut.nr; i++)
		assert_true(cut.lines[i].records > LINES - 10);
	assert_int_equal(cut.dropped_records, 30 * 31 / 2);
	hm_arena_free(&a);
	free(acc);
}

static void test_pruned_every_batch_lines_stay_dropped(void **state)
{
	static const size_t batches[] = { 1, 13, 64, 200 };
	size_t n;
	struct hm_access *acc = make(&n);
	struct hm_arena a;
	struct hm_lines all;

	(void)state;
	hm_arena_init(&a);
	build(acc, n, n, 0, &a, &all);
	for (size_t k = 0; k < sizeof(batches) / sizeof(batches[0]); k++) {
		struct hm_lines cut;

		build(acc, n, batches[k], 8, &a, &cut);
		/* a dropped line that comes back is counted, not placed again: kept lines
		 * are exact, and kept + dropped are the 40 lines once each */
		check_kept(&all, &cut, 8);
	}
	hm_arena_free(&a);
	free(acc);
}

static void test_below_the_limit_nothing_dropped(void **state)
{
	size_t n;
	struct hm_access *acc = make(&n);
	struct hm_arena a;
	struct hm_lines all, cut;

	(void)state;
	hm_arena_init(&a);
	build(acc, n, 7, 0, &a, &all);
	build(acc, n, 7, LINES, &a, &cut);
	assert_int_equal(cut.nr, LINES);
	assert_int_equal(cut.dropped_lines, 0);
	assert_int_equal(cut.dropped_records, 0);
	for (size_t i = 0; i < cut.nr; i++) {
		assert_int_equal(cut.lines[i].addr, all.lines[i].addr);
		same_line(&cut.lines[i], &all.lines[i]);
	}
	hm_arena_free(&a);
	free(acc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_top_lines_kept_and_dropped_counted),
		cmocka_unit_test(test_pruned_every_batch_lines_stay_dropped),
		cmocka_unit_test(test_below_the_limit_nothing_dropped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
