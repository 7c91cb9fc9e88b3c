/* Types written the common C way (typedef struct { ... } name;), from the real DWARF of
 * examples/bin/typedef_args: the anonymous struct answers to its typedef's name in the
 * layout, whatif (--pad, --suggest) and heat maps, also through a global array of it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <linux/perf_event.h>

#include "analyzer/heatmap.h"
#include "analyzer/whatif.h"

#define TD "examples/bin/typedef_args"
#define BASE 0x555500001020ull	/* 32 bytes into a line, as the linker placed it */

struct fx {
	struct hm_arena a;
	struct hm_layout *lay;
	const struct hm_type *arr;	/* lreg_args[2], the type of gargs */
	struct hm_access acc[512];
	size_t n;
	struct hm_err err;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct hm_err err = {0};

	if (!f)
		return -1;
	hm_arena_init(&f->a);
	if (hm_layout_open(TD, &f->lay, &err))
		fail_msg("%s: %s (run make examples)", TD, err.msg);
	f->arr = hm_layout_var_type(f->lay, "gargs");
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	hm_layout_close(f->lay);
	hm_arena_free(&f->a);
	free(f);
	return 0;
}

/* Thread 1 bumps gargs[0].hits, thread 2 gargs[1].hits, interleaved (timer samples). */
static void two_elements(struct fx *f, int n)
{
	for (int i = 0; i < 2 * n; i++) {
		struct hm_access *x = &f->acc[f->n++];
		uint64_t off = (uint64_t)(i % 2) * 16;

		memset(x, 0, sizeof(*x));
		x->s.addr = BASE + off;
		x->s.size = 8;
		x->s.op = HM_OP_STORE;
		x->s.pid = 100;
		x->s.tid = (uint32_t)(i % 2) + 1;
		x->s.cpu = (uint32_t)(i % 2);
		x->s.time = 1000 * (uint64_t)i;
		x->s.source = HM_SRC_TIMER;
		x->method = HM_M_GLOBAL;
		x->object = "gargs";
		x->type = f->arr;
		x->obj_base = BASE;
		x->field_off = off;
		x->field = i % 2 ? "gargs[1].hits" : "gargs[0].hits";
	}
}

static void test_anonymous_struct_named_by_its_typedef(void **state)
{
	struct fx *f = *state;
	const struct hm_type *t = hm_layout_find(f->lay, "lreg_args");
	uint64_t nel = 0;

	assert_non_null(t);
	assert_null(t->name);
	assert_string_equal(hm_type_name(t), "lreg_args");
	assert_non_null(f->arr);
	assert_ptr_equal(hm_type_agg(f->arr, &nel), t);
	assert_int_equal(nel, 2);
	assert_null(hm_type_agg(hm_layout_var_type(f->lay, "iterations"), NULL));
}

static void test_whatif_pad_finds_typedef_name(void **state)
{
	struct fx *f = *state;
	struct hm_wi_edit e = {.kind = HM_WI_PAD, .type = "lreg_args", .field = "misses",
			       .value = 48};
	struct hm_wi_spec spec = {.kind = HM_WI_PAD, .edits = &e, .nr_edits = 1, .line_size = 64};
	struct hm_wi_plan plan;
	struct hm_whatif w;

	two_elements(f, 40);
	assert_int_equal(hm_whatif_plan(&f->a, f->acc, f->n, &spec, &plan, &f->err), 0);
	assert_int_equal(hm_whatif_run(&f->a, f->acc, f->n, &plan, 0, &w, &f->err), 0);
	assert_int_equal(w.tb.false_sharing, 1);
	assert_int_equal(w.false_after, 0);
	hm_whatif_free(&w);
	hm_whatif_plan_free(&plan);
}

/* Each element has one writer, but neighbouring elements have different ones: the
 * suggestion aligns the type itself, and its replay leaves no shared line. */
static void test_suggest_aligns_type_written_per_instance(void **state)
{
	struct fx *f = *state;
	struct hm_wi_suggestion s;
	struct hm_wi_spec spec = {.kind = HM_WI_SUGGEST, .line_size = 64};
	struct hm_wi_plan plan;
	struct hm_whatif w;

	two_elements(f, 40);
	assert_int_equal(hm_whatif_suggest(&f->a, f->acc, f->n, "lreg_args", 64, &s, &f->err), 0);
	assert_string_equal(s.type, "lreg_args");
	assert_true(s.needed);
	assert_true(s.per_instance);
	spec.edits = s.edits;
	spec.nr_edits = s.nr_edits;
	assert_int_equal(hm_whatif_plan(&f->a, f->acc, f->n, &spec, &plan, &f->err), 0);
	assert_int_equal(plan.types[0].new_size, 64);
	assert_int_equal(hm_whatif_run(&f->a, f->acc, f->n, &plan, 0, &w, &f->err), 0);
	assert_int_equal(w.tb.false_sharing, 1);
	assert_int_equal(w.false_after, 0);
	assert_int_equal(w.true_after, 0);
	hm_whatif_free(&w);
	hm_whatif_plan_free(&plan);
}

/* A heat map of the element type from accesses typed as the array. */
static void test_heatmap_of_array_elements(void **state)
{
	struct fx *f = *state;
	struct hm_heat h;

	two_elements(f, 40);
	assert_int_equal(hm_heat_build(&f->a, f->arr, f->acc, f->n, 64, &h), 0);
	assert_string_equal(h.name, "lreg_args");
	assert_int_equal(h.size, 16);
	assert_int_equal(h.accesses, 80);
	assert_int_equal(h.outside, 0);
	assert_int_equal(h.fields[0].stores, 80);	/* hits, both elements */
	assert_int_equal(h.fields[1].stores, 0);	/* misses */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_anonymous_struct_named_by_its_typedef, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_whatif_pad_finds_typedef_name, setup, teardown),
		cmocka_unit_test_setup_teardown(test_suggest_aligns_type_written_per_instance,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_heatmap_of_array_elements, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
