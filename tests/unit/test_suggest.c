/* analyzer/suggest.c on crafted accesses to the examples' real types: the layout
 * --suggest proposes groups each writer thread's members and isolates true sharing, and
 * its replay leaves no sharing (whatif_util.h for the fixture). */
#include "whatif_util.h"

static void test_suggest_separates_writer_threads(void **state)
{
	struct fx *f = *state;
	const struct hm_type *ws = type_in(f, FS, "worker_stats");
	struct hm_wi_suggestion s;
	struct hm_wi_spec spec = {.kind = HM_WI_SUGGEST, .line_size = 64};
	struct hm_whatif w;
	uint64_t ops, errors, bytes, flags;

	false_sharing(f, ws, BASE, 200);
	assert_int_equal(hm_whatif_suggest(&f->a, f->acc, f->n, "worker_stats", 64, &s, &f->err), 0);
	assert_true(s.needed);
	assert_int_equal(s.nr_groups, 2);
	assert_int_equal(s.groups[0].kind, HM_WG_WRITER);
	assert_int_equal(s.groups[0].tid, 1);
	assert_int_equal(s.groups[1].kind, HM_WG_WRITER);
	assert_int_equal(s.groups[1].tid, 2);
	assert_int_equal(s.group_of[1], s.group_of[2]);	/* errors with bytes */
	spec.edits = s.edits;
	spec.nr_edits = s.nr_edits;
	assert_int_equal(hm_whatif_plan(&f->a, f->acc, f->n, &spec, &f->plan, &f->err), 0);
	ops = row(&f->plan, "worker_stats", "ops")->new_off;
	errors = row(&f->plan, "worker_stats", "errors")->new_off;
	bytes = row(&f->plan, "worker_stats", "bytes")->new_off;
	flags = row(&f->plan, "worker_stats", "flags")->new_off;
	assert_int_not_equal(ops / 64, errors / 64);
	assert_int_equal(errors / 64, bytes / 64);
	assert_int_equal(flags / 64, ops / 64);	/* cold: into the first line's slack */
	assert_int_equal(trow(&f->plan, "worker_stats")->new_size, 128);
	assert_int_equal(hm_whatif_run(&f->a, f->acc, f->n, &f->plan, 0, &w, &f->err), 0);
	assert_int_equal(w.false_after, 0);
	assert_int_equal(w.true_after, 0);
	hm_whatif_free(&w);
}

static void test_suggest_isolates_true_sharing(void **state)
{
	struct fx *f = *state;
	const struct hm_type *ws = type_in(f, FS, "worker_stats");
	struct hm_wi_suggestion s;

	for (int i = 0; i < 50; i++) {
		add(f, ws, BASE, 0, 8, HM_OP_STORE, 1, 10000ull * i);
		add(f, ws, BASE, 0, 8, HM_OP_STORE, 2, 10000ull * i + 1);	/* ops: both */
		add(f, ws, BASE, 8, 8, HM_OP_STORE, 2, 10000ull * i + 2);
		add(f, ws, BASE, 24, 4, HM_OP_LOAD, 3, 10000ull * i + 3);	/* flags: read */
		add(f, ws, BASE, 24, 4, HM_OP_LOAD, 1, 10000ull * i + 4);
	}
	assert_int_equal(hm_whatif_suggest(&f->a, f->acc, f->n, "worker_stats", 64, &s, &f->err), 0);
	assert_int_equal(s.nr_groups, 3);
	assert_int_equal(s.groups[s.group_of[0]].kind, HM_WG_SHARED);
	assert_int_equal(s.groups[s.group_of[1]].kind, HM_WG_WRITER);
	assert_int_equal(s.groups[s.group_of[3]].kind, HM_WG_READ);
	assert_int_equal(s.groups[s.group_of[3]].nr_threads, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_suggest_separates_writer_threads, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_suggest_isolates_true_sharing, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
