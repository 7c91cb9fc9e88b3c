/* symbolize/data_warm.c: a file's subprogram and variable indexes built ahead on a thread
 * of their own are the ones its ti would build at first use, and are given only to a ti
 * that reads the same debug file. The test program's debug file is found by the ti through
 * its debug link and by the thread through a build-id directory that links to it. */
#include "code_util.h"

#include <linux/perf_event.h>

#include "core/perfdata.h"
#include "symbolize/data_int.h"

static char bids[600], copy_dir[600], copy_linked[700];

static int setup(void **state)
{
	char hex[64];

	if (build_prog(state))
		return -1;
	for (size_t i = 1; i < P.id_size; i++)
		sprintf(hex + 2 * (i - 1), "%02x", P.id[i]);
	snprintf(bids, sizeof(bids), "%s/debug", P.dir);
	snprintf(copy_dir, sizeof(copy_dir), "%s/copy", P.dir);
	snprintf(copy_linked, sizeof(copy_linked), "%s/prog.linked", copy_dir);
	return run("mkdir -p %s/.build-id/%02x && ln -s %s %s/.build-id/%02x/%s.debug", bids,
		   P.id[0], P.debug, bids, P.id[0], hex) ||
	       run("mkdir -p %s && cp %s %s %s/", copy_dir, P.linked, P.debug, copy_dir);
}

static struct hm_data *warm_data(uint16_t misc)
{
	struct hm_perf_build_id id = {.misc = misc, .size = (uint8_t)P.id_size};
	struct hm_err err = {0};
	struct hm_data *d;

	memcpy(id.id, P.id, P.id_size);
	assert_int_equal(hm_data_open(&d, &err), 0);
	hm_data_warm(d, bids, &id, 1);
	return d;
}

static struct hm_ti *ti_of(const char *path, struct hm_data *d)
{
	struct hm_err err = {0};
	struct hm_ti *ti;

	assert_int_equal(hm_ti_open(path, NULL, &ti, &err), 0);
	assert_true(hm_ti_has_dwarf(ti));
	ti->warm = d ? &d->warm : NULL;
	return ti;
}

/* The variables built ahead equal the ti's own walk, entry by entry; taken once. */
static void test_statics_built_ahead_equal_the_own_walk(void **state)
{
	struct hm_data *d = warm_data(PERF_RECORD_MISC_USER);
	struct hm_ti *tw = ti_of(P.linked, d), *tp = ti_of(P.linked, NULL);
	struct data_index x, y;
	struct hm_arena a;
	const struct hm_ti_static *sx, *sy;
	size_t counters = 0;

	(void)state;
	assert_non_null(d->warm);
	data_warm_settle(d);
	assert_int_equal(data_warm_take(tw, DATA_WARM_STATICS, &x), 1);
	hm_arena_init(&a);
	assert_int_equal(data_statics_scan(tp->dw, &a, NULL, &y), 0);
	assert_int_equal(x.n, y.n);
	sx = x.v;
	sy = y.v;
	for (size_t i = 0; i < x.n; i++) {
		assert_int_equal(sx[i].addr, sy[i].addr);
		assert_int_equal(sx[i].size, sy[i].size);
		assert_string_equal(sx[i].name, sy[i].name);
		assert_int_equal(sx[i].die, sy[i].die);
		assert_int_equal(sx[i].tls, sy[i].tls);
		counters += !strcmp(sx[i].name, "counters");
	}
	assert_int_equal(counters, 1);	/* the program's own global is among them */
	assert_int_equal(data_warm_take(tw, DATA_WARM_STATICS, &x), 0);	/* given once */
	free(x.v);
	free(y.v);
	hm_arena_free(&a);
	hm_ti_close(tw);
	hm_ti_close(tp);
	hm_data_close(d);
}

/* Frames through the subprograms built ahead are those of a ti that walks them itself. */
static void test_frames_through_the_index_built_ahead(void **state)
{
	struct hm_data *d = warm_data(PERF_RECORD_MISC_USER);
	struct hm_ti *tw = ti_of(P.linked, d), *tp = ti_of(P.linked, NULL), *same;
	struct data_index x;
	uint64_t bias = P.sym;	/* file address: hm_store's symbol */

	(void)state;
	data_warm_settle(d);
	for (uint64_t pc = bias; pc < bias + P.sym_size; pc++) {
		const struct hm_ti_frame *fw = hm_ti_frame_at(tw, pc), *fp = hm_ti_frame_at(tp, pc);

		assert_true(!fw == !fp);
		if (!fw)
			continue;
		assert_string_equal(fw->func, fp->func);
		assert_string_equal(fw->func, "hm_store");
		assert_int_equal(fw->lo, fp->lo);
		assert_int_equal(fw->hi, fp->hi);
		assert_int_equal(fw->nr_vars, fp->nr_vars);
	}
	/* the first frame took the warm thread's index: another ti of the file finds none
	 * left (it would have, had tw walked the file itself) */
	same = ti_of(P.linked, d);
	assert_int_equal(data_warm_take(same, DATA_WARM_FUNCS, &x), 0);
	hm_ti_close(same);
	hm_ti_close(tw);
	hm_ti_close(tp);
	hm_data_close(d);
}

/* A ti that reads another file (the DWARF in the program itself, or a copy of the debug
 * file elsewhere) gets nothing, though the build-id is the same. */
static void test_another_file_gets_nothing(void **state)
{
	struct hm_data *d = warm_data(PERF_RECORD_MISC_USER);
	struct hm_ti *own = ti_of(P.bin, d), *copy = ti_of(copy_linked, d), *same;
	struct data_index x;

	(void)state;
	data_warm_settle(d);
	assert_int_equal(data_warm_take(own, DATA_WARM_FUNCS, &x), 0);
	assert_int_equal(data_warm_take(copy, DATA_WARM_FUNCS, &x), 0);
	assert_int_equal(data_warm_take(copy, DATA_WARM_STATICS, &x), 0);
	same = ti_of(P.linked, d);	/* still there for the file it was built from */
	assert_int_equal(data_warm_take(same, DATA_WARM_FUNCS, &x), 1);
	free(x.v);
	hm_ti_close(own);
	hm_ti_close(copy);
	hm_ti_close(same);
	hm_data_close(d);
}

/* The kernel's build-ids start no thread; closing while the thread walks frees all. */
static void test_kernel_ids_and_early_close(void **state)
{
	struct hm_data *d = warm_data(PERF_RECORD_MISC_KERNEL);

	(void)state;
	assert_null(d->warm);
	hm_data_close(d);
	d = warm_data(PERF_RECORD_MISC_USER);
	assert_non_null(d->warm);
	hm_data_close(d);	/* LeakSanitizer: what was built is freed */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_statics_built_ahead_equal_the_own_walk),
		cmocka_unit_test(test_frames_through_the_index_built_ahead),
		cmocka_unit_test(test_another_file_gets_nothing),
		cmocka_unit_test(test_kernel_ids_and_early_close),
	};

	return cmocka_run_group_tests(tests, setup, remove_prog);
}
