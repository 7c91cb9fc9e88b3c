/* analyzer/fixcheck.c on crafted accesses to the examples' real types: a fix is printed
 * only when its replay removes the false sharing. worker_stats from
 * examples/bin/false_sharing (three fields, two writers: the one-pair fix is not enough),
 * lreg_args from examples/bin/heap_args (64-byte per-thread blocks in a calloc'd array
 * that starts 48 bytes into a line: aligning the type is not enough without
 * aligned_alloc). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <linux/perf_event.h>

#include "analyzer/fixcheck.h"
#include "analyzer/whatif.h"

#define FS "examples/bin/false_sharing"
#define HEAP "examples/bin/heap_args"
#define LINE0 0x555500001000ull

struct fx {
	struct hm_arena a;
	struct hm_layout *lay;
	struct hm_access acc[2048];
	size_t n;
	struct hm_lines lines;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	hm_arena_init(&f->a);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	if (f->lay)
		hm_layout_close(f->lay);
	hm_arena_free(&f->a);
	free(f);
	return 0;
}

static const struct hm_type *type_in(struct fx *f, const char *path, const char *name)
{
	struct hm_err err = {0};
	const struct hm_type *t;

	if (hm_layout_open(path, &f->lay, &err))
		fail_msg("%s: %s (run make examples)", path, err.msg);
	t = hm_layout_find(f->lay, name);
	assert_non_null(t);
	return t;
}

static void add(struct fx *f, const struct hm_type *t, enum hm_method m, uint64_t base,
		uint64_t off, int op, uint32_t tid, uint64_t time, const char *field)
{
	struct hm_access *x = &f->acc[f->n++];

	assert_true(f->n <= sizeof(f->acc) / sizeof(f->acc[0]));
	memset(x, 0, sizeof(*x));
	x->s.addr = base + off;
	x->s.size = 8;
	x->s.op = (uint8_t)op;
	x->s.pid = 100;
	x->s.tid = tid;
	x->s.cpu = tid;
	x->s.time = time;
	x->s.source = HM_SRC_TIMER;
	x->method = m;
	x->object = hm_type_name(t);
	x->type = t;
	x->obj_base = base;
	x->field_off = off;
	x->field = field;
}

static const struct hm_line *build(struct fx *f)
{
	struct hm_err err = {0};

	assert_int_equal(hm_lines_build(&f->a, f->acc, f->n, 64, 0, &f->lines, &err), 0);
	hm_fixcheck_lines(&f->a, &f->lines, HM_FIX_CHECK_LINES);
	assert_true(f->lines.nr > 0);
	return &f->lines.lines[0];
}

/* Thread 1 writes ops, thread 2 errors and bytes: aligning the top pair's later member
 * leaves ops and errors on one line, so the printed fix is the suggested layout. */
static void test_one_pair_fix_not_enough_takes_suggestion(void **state)
{
	struct fx *f = *state;
	const struct hm_type *ws = type_in(f, FS, "worker_stats");
	const struct hm_line *ln;

	for (int i = 0; i < 60; i++) {
		add(f, ws, HM_M_GLOBAL, LINE0, 0, HM_OP_STORE, 1, 1000ull * i, "worker_stats.ops");
		add(f, ws, HM_M_GLOBAL, LINE0, i % 2 ? 8 : 16, HM_OP_STORE, 2, 1000ull * i + 500,
		    i % 2 ? "worker_stats.errors" : "worker_stats.bytes");
	}
	ln = build(f);
	assert_int_equal(ln->verdict, HM_V_FALSE_SHARING);
	assert_int_equal(ln->fix_check, HM_FIX_REPLAYED);
	assert_non_null(strstr(ln->fix, "lay worker_stats out as"));
	assert_non_null(strstr(ln->fix_replay, "1 falsely shared line holding worker_stats "
					       "before, 0 after"));
}

/* Two adjacent globals' worth of one struct, one field each: aligning the later member
 * is enough, and that is the fix printed. */
static void test_simple_pair_keeps_align_fix(void **state)
{
	struct fx *f = *state;
	const struct hm_type *ws = type_in(f, FS, "worker_stats");
	const struct hm_line *ln;

	for (int i = 0; i < 60; i++) {
		add(f, ws, HM_M_GLOBAL, LINE0, 0, HM_OP_STORE, 1, 1000ull * i, "worker_stats.ops");
		add(f, ws, HM_M_GLOBAL, LINE0, 8, HM_OP_STORE, 2, 1000ull * i + 500,
		    "worker_stats.errors");
	}
	ln = build(f);
	assert_int_equal(ln->fix_check, HM_FIX_REPLAYED);
	assert_non_null(strstr(ln->fix, "move worker_stats.errors to its own cache line"));
	assert_null(strstr(ln->fix, "aligned_alloc"));
}

/* lreg_args blocks at 48 bytes into a line, one per thread, each thread writing its
 * block's count (+0) and total (+56): element 0's total and element 1's count share a
 * line. The type is already 64 bytes; only an aligned allocation separates them. */
static void test_heap_array_needs_aligned_alloc(void **state)
{
	struct fx *f = *state;
	const struct hm_type *t = type_in(f, HEAP, "lreg_args");
	const uint64_t base = LINE0 + 48;
	const struct hm_line *shared = NULL;

	assert_int_equal(t->size, 64);
	for (int i = 0; i < 60; i++)
		for (uint32_t e = 0; e < 2; e++) {
			add(f, t, HM_M_HEAP, base + 64 * e, 0, HM_OP_STORE, e + 1,
			    2000ull * i + 500 * e, "lreg_args.count");
			add(f, t, HM_M_HEAP, base + 64 * e, 56, HM_OP_STORE, e + 1,
			    2000ull * i + 500 * e + 250, "lreg_args.total");
		}
	build(f);
	for (size_t i = 0; i < f->lines.nr; i++)
		if (f->lines.lines[i].verdict == HM_V_FALSE_SHARING)
			shared = &f->lines.lines[i];
	assert_non_null(shared);
	assert_int_equal(shared->addr, LINE0 + 64);
	assert_int_equal(shared->fix_check, HM_FIX_REPLAYED);
	assert_non_null(strstr(shared->fix, "aligned_alloc(64, size) or posix_memalign"));
	assert_non_null(strstr(shared->fix_replay, "before, 0 after"));
}

/* Replays f's accesses under spec: the heap objects held at malloc's alignment, and
 * where the first access went. */
static void replay_first(struct fx *f, const struct hm_wi_spec *spec, uint64_t held,
			 uint64_t addr)
{
	struct hm_wi_plan plan;
	struct hm_whatif w;
	struct hm_err err = {0};

	assert_int_equal(hm_whatif_plan(&f->a, f->acc, f->n, spec, &plan, &err), 0);
	assert_int_equal(hm_whatif_run(&f->a, f->acc, f->n, &plan, 0, &w, &err), 0);
	assert_int_equal(w.counts.heap_held, held);
	assert_int_equal(w.replayed[0].s.addr, addr);
	hm_whatif_free(&w);
	hm_whatif_plan_free(&plan);
}

/* The replay itself: without --aligned-alloc a heap object keeps its malloc'd base when
 * its type's alignment grows, and says so. */
static void test_heap_objects_keep_base_without_aligned_alloc(void **state)
{
	struct fx *f = *state;
	const struct hm_type *t = type_in(f, HEAP, "lreg_args");
	struct hm_wi_edit e = {.kind = HM_WI_ALIGN, .type = "lreg_args", .field = "count",
			       .value = 64};
	struct hm_wi_spec spec = {.kind = HM_WI_ALIGN, .edits = &e, .nr_edits = 1,
				  .line_size = 64};

	add(f, t, HM_M_HEAP, LINE0 + 48, 0, HM_OP_STORE, 1, 0, "lreg_args.count");
	replay_first(f, &spec, 1, LINE0 + 48);
	spec.aligned_alloc = 1;
	replay_first(f, &spec, 0, LINE0 + 64);
	/* a kernel heap object is a slab cache's, which aligns its objects as the type asks:
	 * no malloc advice, the object moves */
	spec.aligned_alloc = 0;
	f->acc[0].s.kernel = 1;
	replay_first(f, &spec, 0, LINE0 + 64);
}

/* True sharing has no layout fix: the advice stays and says it was not replayed. */
static void test_true_sharing_not_replayed(void **state)
{
	struct fx *f = *state;
	const struct hm_type *ws = type_in(f, FS, "worker_stats");
	const struct hm_line *ln;

	for (int i = 0; i < 60; i++)
		add(f, ws, HM_M_GLOBAL, LINE0, 0, HM_OP_STORE, 1 + (uint32_t)(i % 2), 1000ull * i,
		    "worker_stats.ops");
	ln = build(f);
	assert_int_equal(ln->verdict, HM_V_TRUE_SHARING);
	assert_int_equal(ln->fix_check, HM_FIX_NOT_LAYOUT);
	assert_non_null(ln->fix);
	assert_non_null(strstr(ln->fix_replay, "true sharing"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_one_pair_fix_not_enough_takes_suggestion,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_simple_pair_keeps_align_fix, setup, teardown),
		cmocka_unit_test_setup_teardown(test_heap_array_needs_aligned_alloc, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_heap_objects_keep_base_without_aligned_alloc,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_true_sharing_not_replayed, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
