/* symbolize/layout*.c and shape.c on examples/bin/tricky.o (tests/data/tricky.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "symbolize/layout.h"
#include "symbolize/shape.h"

#define TRICKY "examples/bin/tricky.o"

static int open_tricky(void **state)
{
	struct hm_layout *lay;
	struct hm_err err = {0};

	if (hm_layout_open(TRICKY, &lay, &err) < 0) {
		print_error("%s\n", err.msg);
		return -1;
	}
	*state = lay;
	return 0;
}

static int close_layout(void **state)
{
	hm_layout_close(*state);
	return 0;
}

static const struct hm_type *find(void **state, const char *name)
{
	const struct hm_type *t = hm_layout_find(*state, name);

	assert_non_null(t);
	return t;
}

static void test_find_plain_tagged_and_typedef(void **state)
{
	assert_ptr_equal(find(state, "outer_arr"), find(state, "struct outer_arr"));
	assert_int_equal(find(state, "union top_union")->kind, HM_T_UNION);
	assert_int_equal(find(state, "typedef_anon_t")->kind, HM_T_STRUCT);
	assert_int_equal(find(state, "typedef_anon_t")->size, 16);
	assert_null(hm_layout_find(*state, "no_such_type"));
	assert_null(hm_layout_find(*state, "union outer_arr"));
}

static void expect_path(void **state, const char *type, uint64_t off, const char *path,
			uint64_t within)
{
	char buf[256];
	uint64_t w = 99;

	assert_non_null(hm_layout_field_at(find(state, type), off, buf, sizeof(buf), &w));
	assert_string_equal(buf, path);
	assert_int_equal(w, within);
}

static void test_field_at_array_of_structs(void **state)
{
	expect_path(state, "outer_arr", 24, "pts[1].v", 0);
	expect_path(state, "outer_arr", 28, "pts[1].v", 4);
	expect_path(state, "outer_arr", 50, "name[2]", 0);
	expect_path(state, "outer_arr", 72, "u.as_int", 0);
	expect_path(state, "uses_typedef", 16 + 4 * 4, "arr2[1][1]", 0);
}

static void test_field_at_anonymous_members(void **state)
{
	expect_path(state, "anon_nest", 10, "hi", 0);
	expect_path(state, "anon_nest", 16, "tail", 0);
}

static void test_field_at_bitfield_and_hole(void **state)
{
	char buf[256];

	expect_path(state, "bits_hole", 1, "x", 0);
	expect_path(state, "bits_hole", 2, "y", 0);
	assert_null(hm_layout_field_at(find(state, "inner_pt"), 3, buf, sizeof(buf), NULL));
	assert_string_equal(buf, "c<hole>");
	assert_null(hm_layout_field_at(find(state, "inner_pt"), 16, buf, sizeof(buf), NULL));
}

static void test_bitfield_holes_reported(void **state)
{
	struct hm_arena a;
	struct hm_shape s;

	hm_arena_init(&a);
	hm_shape_compute(&a, find(state, "bits_hole"), 64, &s);
	assert_int_equal(s.nr_bit_holes, 2);
	assert_int_equal(s.sum_bit_holes, 17);
	assert_int_equal(s.nr_holes, 1);
	assert_int_equal(s.sum_holes, 4);
	hm_shape_compute(&a, find(state, "bits_across"), 64, &s);
	assert_int_equal(s.ms[3].offset, 8);	/* d:40 in the long long unit at 8 */
	assert_int_equal(s.ms[3].bit_in_unit, 4);
	assert_int_equal(s.sum_bit_holes, 42);
	assert_int_equal(s.padding, 4);
	hm_arena_free(&a);
}

static void test_forced_alignment_hole_and_straddle(void **state)
{
	struct hm_arena a;
	struct hm_shape s;

	hm_arena_init(&a);
	hm_shape_compute(&a, find(state, "aligned64"), 64, &s);
	assert_int_equal(s.size, 128);
	assert_int_equal(s.nr_forced_holes, 1);
	assert_int_equal(s.sum_forced_holes, 60);
	assert_int_equal(s.ms[1].line, 1);
	hm_shape_compute(&a, find(state, "many_lines"), 64, &s);
	assert_true(s.packed);
	assert_true(s.ms[3].straddles);	/* crosses at 126..130 */
	assert_false(s.ms[1].straddles);	/* 60..64 ends on the boundary */
	hm_arena_free(&a);
}

static void test_declarations(void **state)
{
	struct hm_arena a;
	uint32_t nr;
	const struct hm_member *m;
	const char *tc, *nc;

	hm_arena_init(&a);
	m = hm_type_members(find(state, "uses_typedef"), &nr);
	assert_int_equal(nr, 3);
	hm_type_decl(&a, m[2].type, m[2].name, &tc, &nc);
	assert_string_equal(tc, "void");
	assert_string_equal(nc, "(*fn)(int)");
	hm_type_decl(&a, m[1].type, m[1].name, &tc, &nc);
	assert_string_equal(nc, "arr2[2][3]");
	m = hm_type_members(find(state, "flex"), &nr);
	hm_type_decl(&a, m[2].type, m[2].name, &tc, &nc);
	assert_string_equal(nc, "data[]");
	m = hm_type_members(find(state, "outer_arr"), &nr);
	hm_type_decl(&a, m[2].type, m[2].name, &tc, &nc);
	assert_string_equal(tc, "struct inner_pt *");
	hm_arena_free(&a);
}

struct collect {
	char paths[32][64];
	uint64_t bits[32];
	int n;
};

static int collect_leaf(const struct hm_field *f, void *ctx)
{
	struct collect *c = ctx;

	if (c->n < 32) {
		snprintf(c->paths[c->n], sizeof(c->paths[0]), "%s", f->path);
		c->bits[c->n++] = f->bit_offset;
	}
	return 0;
}

static void test_walk_leaves_with_absolute_offsets(void **state)
{
	struct collect c = {0};

	hm_layout_walk(find(state, "holder_of_sub"), 0, collect_leaf, &c);
	assert_int_equal(c.n, 7);
	assert_string_equal(c.paths[0], "s.x");
	assert_string_equal(c.paths[6], "bh.l");
	assert_int_equal(c.bits[6], (16 + 8) * 8);
	memset(&c, 0, sizeof(c));
	hm_layout_walk(find(state, "outer_arr"), 1, collect_leaf, &c);
	assert_string_equal(c.paths[5], "pts[2].v");
	assert_int_equal(c.bits[5], 40 * 8);
}

static void test_suggest_nearest_names(void **state)
{
	const char *near[3];
	size_t n = hm_layout_suggest(*state, "inner_p", near, 3);

	assert_true(n >= 1);
	assert_string_equal(near[0], "inner_pt");
}

static void test_var_type_and_member_offset(void **state)
{
	const struct hm_type *t = hm_layout_var_type(*state, "oa");
	uint64_t off = 0, size = 0;

	assert_non_null(t);
	assert_ptr_equal(hm_type_strip(t), find(state, "outer_arr"));
	assert_null(hm_layout_var_type(*state, "no_such_var"));
	assert_int_equal(hm_layout_member_offset(t, "pts[1].v", &off, &size), 0);
	assert_int_equal(off, 24);
	assert_int_equal(size, 8);
	assert_int_equal(hm_layout_member_offset(find(state, "anon_nest"), "hi", &off, &size), 0);
	assert_int_equal(off, 10);
	assert_int_equal(size, 2);
	assert_int_equal(hm_layout_member_offset(t, "u.as_float", &off, &size), 0);
	assert_int_equal(off, 72);
	assert_int_equal(hm_layout_member_offset(t, "pts[3].v", &off, &size), -1);
	assert_int_equal(hm_layout_member_offset(t, "nope", &off, &size), -1);
	assert_int_equal(hm_layout_member_offset(t, "name[2", &off, &size), -1);
}

static void test_btf_kernel_types(void **state)
{
	struct hm_layout *lay;
	struct hm_err err = {0};
	const struct hm_type *t;
	char buf[256];

	(void)state;
	if (access("/sys/kernel/btf/vmlinux", R_OK) != 0)
		skip();
	assert_int_equal(hm_layout_open_btf("/sys/kernel/btf/vmlinux", &lay, &err), 0);
	t = hm_layout_find(lay, "list_head");
	assert_non_null(t);
	assert_int_equal(t->size, 16);
	assert_non_null(hm_layout_field_at(t, 8, buf, sizeof(buf), NULL));
	assert_string_equal(buf, "prev");
	assert_non_null(hm_layout_find(lay, "task_struct"));
	hm_layout_close(lay);
}

static void test_open_errors_fill_err(void **state)
{
	struct hm_layout *lay = (void *)1;
	struct hm_err err = {0};

	(void)state;
	assert_true(hm_layout_open("tests/run.sh", &lay, &err) < 0);
	assert_null(lay);
	assert_int_equal(err.code, HM_EXIT_INPUT);
	assert_non_null(strstr(err.msg, "not an ELF file"));
	assert_true(hm_layout_open_btf("/nonexistent/btf", &lay, &err) < 0);
	assert_non_null(strstr(err.msg, "/nonexistent/btf"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_find_plain_tagged_and_typedef, open_tricky, close_layout),
		cmocka_unit_test_setup_teardown(test_field_at_array_of_structs, open_tricky, close_layout),
		cmocka_unit_test_setup_teardown(test_field_at_anonymous_members, open_tricky, close_layout),
		cmocka_unit_test_setup_teardown(test_field_at_bitfield_and_hole, open_tricky, close_layout),
		cmocka_unit_test_setup_teardown(test_bitfield_holes_reported, open_tricky, close_layout),
		cmocka_unit_test_setup_teardown(test_forced_alignment_hole_and_straddle, open_tricky, close_layout),
		cmocka_unit_test_setup_teardown(test_declarations, open_tricky, close_layout),
		cmocka_unit_test_setup_teardown(test_walk_leaves_with_absolute_offsets, open_tricky, close_layout),
		cmocka_unit_test_setup_teardown(test_suggest_nearest_names, open_tricky, close_layout),
		cmocka_unit_test_setup_teardown(test_var_type_and_member_offset, open_tricky, close_layout),
		cmocka_unit_test(test_btf_kernel_types),
		cmocka_unit_test(test_open_errors_fill_err),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
