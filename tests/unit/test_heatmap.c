/* analyzer/heatmap*.c on struct worker_stats of examples/bin/false_sharing and
 * struct outer_arr of examples/bin/tricky.o, with crafted accesses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analyzer/heatmap.h"
#include "render/heatmap_print.h"

#define FALSE_SHARING "examples/bin/false_sharing"
#define PADDED "examples/bin/false_sharing_padded"
#define TRICKY "examples/bin/tricky.o"
#define BASE 0x404040ull	/* a 64-byte aligned object */
#define T_OPS 101		/* the thread counting ops */
#define T_ERR 102		/* the thread counting errors and bytes */

struct fixture {
	struct hm_layout *lay;
	const struct hm_type *ws;
	struct hm_arena a;
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	struct hm_err err = {0};

	if (hm_layout_open(FALSE_SHARING, &fx->lay, &err) < 0) {
		print_error("%s (run make -C examples)\n", err.msg);
		free(fx);
		return -1;
	}
	fx->ws = hm_layout_find(fx->lay, "worker_stats");
	hm_arena_init(&fx->a);
	*state = fx;
	return fx->ws ? 0 : -1;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	hm_arena_free(&fx->a);
	hm_layout_close(fx->lay);
	free(fx);
	return 0;
}

static struct hm_access acc(const struct hm_type *t, uint64_t time, uint32_t tid, uint8_t op,
			    uint64_t off)
{
	struct hm_access x = {.type = t, .obj_base = BASE, .field_off = off};

	x.s.time = time;
	x.s.tid = tid;
	x.s.op = op;
	x.s.addr = BASE + off;
	x.s.size = 8;
	return x;
}

/* The false-sharing run, out of time order as PMU buffers of two CPUs deliver it:
 * t1 ops=S(101)  t2 errors=S(102)*  t3 ops=S(101)*  t4 errors=S(102)*
 * t5 flags=L(101)*  t6 flags=L(102)  t7 bytes=S(102)      (* a conflict) */
static size_t false_sharing_run(const struct hm_type *t, struct hm_access *v)
{
	size_t n = 0;

	v[n++] = acc(t, 5, T_OPS, HM_OP_LOAD, 24);
	v[n++] = acc(t, 1, T_OPS, HM_OP_STORE, 0);
	v[n++] = acc(t, 3, T_OPS, HM_OP_STORE, 0);
	v[n++] = acc(t, 2, T_ERR, HM_OP_STORE, 8);
	v[n++] = acc(t, 4, T_ERR, HM_OP_STORE, 8);
	v[n++] = acc(t, 6, T_ERR, HM_OP_LOAD, 24);
	v[n++] = acc(t, 7, T_ERR, HM_OP_STORE, 16);
	return n;
}

static const struct hm_heat_field *field(const struct hm_heat *h, const char *path)
{
	for (uint32_t i = 0; i < h->nr_fields; i++)
		if (!strcmp(h->fields[i].path, path))
			return &h->fields[i];
	fail_msg("no row %s", path);
	return NULL;
}

static void build_false_sharing(struct fixture *fx, struct hm_heat *h)
{
	struct hm_access v[16];
	size_t n = false_sharing_run(fx->ws, v);

	assert_int_equal(hm_heat_build(&fx->a, fx->ws, v, n, 64, h), 0);
}

static void test_heat_counts_loads_and_stores_per_field(void **state)
{
	struct fixture *fx = *state;
	struct hm_heat h;

	build_false_sharing(fx, &h);
	assert_int_equal(h.size, 32);
	assert_int_equal(h.nr_lines, 1);
	assert_int_equal(h.accesses, 7);
	assert_int_equal(field(&h, "ops")->stores, 2);
	assert_int_equal(field(&h, "ops")->loads, 0);
	assert_int_equal(field(&h, "errors")->stores, 2);
	assert_int_equal(field(&h, "bytes")->stores, 1);
	assert_int_equal(field(&h, "flags")->loads, 2);
	assert_int_equal(field(&h, "flags")->stores, 0);
	assert_int_equal(field(&h, "ops")->threads, 1);
	assert_int_equal(field(&h, "flags")->threads, 2);
	assert_int_equal(field(&h, "errors")->offset, 8);
	assert_int_equal(h.max_heat, 2);
}

static void test_heat_conflicts_when_another_thread_stores(void **state)
{
	struct fixture *fx = *state;
	struct hm_heat h;

	build_false_sharing(fx, &h);
	assert_int_equal(field(&h, "ops")->conflicts, 1);
	assert_int_equal(field(&h, "errors")->conflicts, 2);
	assert_int_equal(field(&h, "flags")->conflicts, 1);	/* load after 102's store */
	assert_int_equal(field(&h, "bytes")->conflicts, 0);	/* same thread as before */
	assert_int_equal(h.lines[0].conflicts, 4);
	assert_int_equal(h.max_conflicts, 4);
}

static void test_heat_line_with_two_writers(void **state)
{
	struct fixture *fx = *state;
	struct hm_heat h;

	build_false_sharing(fx, &h);
	assert_int_equal(h.lines[0].writers, 2);
	assert_int_equal(h.lines[0].readers, 2);
	assert_int_equal(h.lines[0].threads, 2);
	assert_int_equal(h.lines[0].loads, 2);
	assert_int_equal(h.lines[0].stores, 5);
}

static void test_heat_conflicts_only_within_one_object(void **state)
{
	struct fixture *fx = *state;
	struct hm_access v[2] = {acc(fx->ws, 1, T_OPS, HM_OP_STORE, 0),
				 acc(fx->ws, 2, T_ERR, HM_OP_STORE, 8)};
	struct hm_heat h;

	v[1].obj_base = BASE + 0x1000;	/* another worker_stats, on another line */
	assert_int_equal(hm_heat_build(&fx->a, fx->ws, v, 2, 64, &h), 0);
	assert_int_equal(h.lines[0].conflicts, 0);
	assert_int_equal(h.lines[0].writers, 2);	/* the type's line 0 in both objects */
	assert_int_equal(h.lines[0].line_writers, 1);	/* each object's line: one writer */
}

/* The same two writers in one object, and in two objects on one line (the second
 * starts 32 bytes into the first's line): one real line, two writers. */
static void test_heat_line_writers_judge_real_lines(void **state)
{
	struct fixture *fx = *state;
	struct hm_access v[2] = {acc(fx->ws, 1, T_OPS, HM_OP_STORE, 0),
				 acc(fx->ws, 2, T_ERR, HM_OP_STORE, 8)};
	struct hm_heat h;

	assert_int_equal(hm_heat_build(&fx->a, fx->ws, v, 2, 64, &h), 0);
	assert_int_equal(h.lines[0].line_writers, 2);
	v[1].obj_base = BASE + 32;
	v[1].s.addr = BASE + 40;
	assert_int_equal(hm_heat_build(&fx->a, fx->ws, v, 2, 64, &h), 0);
	assert_int_equal(h.lines[0].writers, 2);
	assert_int_equal(h.lines[0].line_writers, 2);
}

static void test_heat_padding_row_and_outside(void **state)
{
	struct fixture *fx = *state;
	struct hm_access v[3] = {acc(fx->ws, 1, T_OPS, HM_OP_LOAD, 29),
				 acc(fx->ws, 2, T_OPS, HM_OP_LOAD, 32),
				 acc(fx->ws, 3, T_OPS, HM_OP_STORE, 2)};	/* inside ops */
	struct hm_heat h;
	const struct hm_heat_field *pad;

	assert_int_equal(hm_heat_build(&fx->a, fx->ws, v, 3, 64, &h), 0);
	pad = &h.fields[h.nr_fields - 1];
	assert_true(pad->hole);
	assert_string_equal(pad->path, "(hole)");
	assert_int_equal(pad->offset, 28);
	assert_int_equal(pad->size, 4);
	assert_int_equal(pad->loads, 1);
	assert_int_equal(h.outside, 1);
	assert_int_equal(h.accesses, 3);
	assert_int_equal(field(&h, "ops")->stores, 1);
}

static void test_heat_matches_type_by_name_across_modules(void **state)
{
	struct fixture *fx = *state;
	struct hm_layout *again, *padded;
	struct hm_err err = {0};
	struct hm_heat h;
	struct hm_access v[3];

	assert_int_equal(hm_layout_open(FALSE_SHARING, &again, &err), 0);
	assert_int_equal(hm_layout_open(PADDED, &padded, &err), 0);
	v[0] = acc(hm_layout_find(again, "worker_stats"), 1, T_OPS, HM_OP_STORE, 0);
	v[1] = acc(hm_layout_find(padded, "worker_stats"), 2, T_OPS, HM_OP_STORE, 0);
	v[2] = acc(NULL, 3, T_OPS, HM_OP_STORE, 0);
	assert_ptr_not_equal(v[0].type, fx->ws);
	assert_int_equal(hm_heat_build(&fx->a, fx->ws, v, 3, 64, &h), 0);
	assert_int_equal(h.accesses, 1);	/* the padded build's layout differs */
	assert_int_equal(field(&h, "ops")->stores, 1);
	hm_layout_close(again);
	hm_layout_close(padded);
}

static void test_heat_rejects_scalars_and_odd_line_sizes(void **state)
{
	struct fixture *fx = *state;
	const struct hm_type *ops = hm_type_members(fx->ws, &(uint32_t){0})[0].type;
	struct hm_heat_opts o = {.line_size = 48};
	struct hm_err err = {0};
	struct hm_heat h;

	assert_int_equal(hm_heat_build(&fx->a, ops, NULL, 0, 64, &h), -22);
	assert_int_equal(hm_heat_build_opts(&fx->a, fx->ws, NULL, 0, &o, &h, &err), -22);
	assert_non_null(strstr(err.msg, "power of two"));
}

static void test_heat_folds_arrays_of_structs(void **state)
{
	struct fixture *fx = *state;
	struct hm_layout *lay;
	struct hm_err err = {0};
	const struct hm_type *t;
	struct hm_heat h;
	struct hm_access v[4];
	struct hm_heat_opts all = {.line_size = 64, .all_elems = 1};

	assert_int_equal(hm_layout_open(TRICKY, &lay, &err), 0);
	t = hm_layout_find(lay, "outer_arr");
	v[0] = acc(t, 1, T_OPS, HM_OP_STORE, 40);	/* pts[2].v */
	v[1] = acc(t, 2, T_OPS, HM_OP_LOAD, 8);		/* pts[0].v */
	v[2] = acc(t, 3, T_OPS, HM_OP_LOAD, 62);	/* the hole after name */
	v[3] = acc(t, 4, T_OPS, HM_OP_LOAD, 17);	/* the hole inside pts[1] */
	assert_int_equal(hm_heat_build(&fx->a, t, v, 4, 64, &h), 0);
	assert_int_equal(field(&h, "pts[*].v")->stores, 1);
	assert_int_equal(field(&h, "pts[*].v")->loads, 1);
	assert_int_equal(h.nr_folds, 1);
	assert_string_equal(h.folds[0].path, "pts");
	assert_int_equal(h.folds[0].offset, 16);
	assert_int_equal(h.folds[0].size, 32);
	assert_int_equal(h.fields[1].offset, 1);	/* pts[*] hole, not bytes 16..47 */
	assert_int_equal(h.fields[1].loads, 1);
	assert_true(h.fields[1].hole);
	assert_int_equal(field(&h, "name")->offset, 48);
	assert_int_equal(field(&h, "u.as_int")->line, 1);
	assert_int_equal(hm_heat_build_opts(&fx->a, t, v, 4, &all, &h, &err), 0);
	assert_int_equal(field(&h, "pts[2].v")->stores, 1);
	assert_int_equal(field(&h, "pts[0].v")->loads, 1);
	assert_int_equal(h.nr_folds, 0);
	hm_layout_close(lay);
}

static char *render(void (*fn)(FILE *, const struct hm_heat *), const struct hm_heat *h)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	fn(f, h);
	fclose(f);
	return buf;
}

static void html_one(FILE *out, const struct hm_heat *h)
{
	hm_heat_print_html(out, &h, 1, NULL);
}

static void test_heat_text_shows_fields_counts_and_writers(void **state)
{
	struct fixture *fx = *state;
	struct hm_heat h;
	char *s, *head;

	build_false_sharing(fx, &h);
	s = render(hm_heat_print_text, &h);
	head = strndup(s, strcspn(s, "\n"));	/* the one header line */
	assert_non_null(strstr(head, "struct worker_stats {"));
	assert_non_null(strstr(head, "loads"));
	assert_non_null(strstr(head, "conflicts"));
	free(head);
	assert_non_null(strstr(s, "\tlong unsigned int          ops;                  "
				  "/*     0     8 */"));
	assert_non_null(strstr(s, "errors;"));
	assert_non_null(strstr(s, "flags;"));
	assert_non_null(strstr(s, "\t/* ^ 2 threads write this line */"));
	/* errors: 0 loads, 2 stores, 1 thread, 2 conflicts, a full bar */
	assert_non_null(strstr(s, "*/      0      2       1         2  ##########"));
	/* line 0 totals on its boundary row */
	assert_non_null(strstr(s, "(0 bytes) --- */"));
	assert_non_null(strstr(s, "2      5       2         4"));
	assert_non_null(strstr(s, "/* padding: 4 */"));
	free(s);
}

static size_t count(const char *s, const char *what)
{
	size_t n = 0;

	for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

static void test_heat_html_is_self_contained(void **state)
{
	struct fixture *fx = *state;
	struct hm_heat h;
	char *s;

	build_false_sharing(fx, &h);
	s = render(html_one, &h);
	assert_memory_equal(s, "<!DOCTYPE html>", 15);
	assert_non_null(strstr(s, "<svg"));
	assert_int_equal(count(s, "<rect class=\"f\""), 4);
	assert_int_equal(count(s, "<rect class=\"h\""), 1);	/* the 4 bytes of padding */
	assert_non_null(strstr(s, "<title>errors: long unsigned int\noffset 8, size 8, line 0"));
	assert_non_null(strstr(s, "2 threads write this line"));
	assert_non_null(strstr(s, "<pre>struct worker_stats {"));
	assert_null(strstr(s, "http://"));
	assert_null(strstr(s, "https://"));
	assert_null(strstr(s, "<script"));
	assert_null(strstr(s, "url(http"));
	assert_non_null(strstr(s, "</html>\n"));
	free(s);
}

static void test_heat_html_escapes_names(void **state)
{
	struct fixture *fx = *state;
	struct hm_type lng = {.kind = HM_T_BASE, .name = "long", .size = 8};
	struct hm_member m[2] = {{.name = "a<b", .type = &lng},
				 {.name = "c&d", .type = &lng, .bit_offset = 64}};
	struct hm_type t = {.kind = HM_T_STRUCT, .name = "tmpl<int>\"'", .size = 16,
			    .loaded = 1, .nr_members = 2, .members = m};
	struct hm_access v[1] = {acc(&t, 1, T_OPS, HM_OP_STORE, 8)};
	struct hm_heat h;
	char *s;

	assert_int_equal(hm_heat_build(&fx->a, &t, v, 1, 64, &h), 0);
	s = render(html_one, &h);
	assert_non_null(strstr(s, "tmpl&lt;int&gt;&quot;&#39;"));
	assert_non_null(strstr(s, "<title>a&lt;b: long"));
	assert_non_null(strstr(s, "<title>c&amp;d: long"));
	assert_null(strstr(s, "a<b"));
	assert_null(strstr(s, "tmpl<"));
	assert_int_equal(count(s, "<rect class=\"f\""), 2);
	free(s);
}

static void test_heat_html_lists_several_types(void **state)
{
	struct fixture *fx = *state;
	struct hm_heat a, b;
	const struct hm_heat *both[2] = {&a, &b};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	build_false_sharing(fx, &a);
	build_false_sharing(fx, &b);
	hm_heat_print_html(f, both, 2, "two <runs>");
	fclose(f);
	assert_int_equal(count(buf, "<svg"), 2);
	assert_non_null(strstr(buf, "href=\"#heat-1\""));
	assert_non_null(strstr(buf, "<h1>two &lt;runs&gt;</h1>"));
	assert_int_equal(count(buf, "id=\"hatch-0\""), 1);
	assert_int_equal(count(buf, "id=\"hatch-1\""), 1);
	free(buf);
}

static void test_heat_json_fields_and_lines(void **state)
{
	struct fixture *fx = *state;
	struct hm_heat h;
	struct hm_json j;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	build_false_sharing(fx, &h);
	hm_json_init(&j, f);
	hm_heat_print_json(&j, &h);
	hm_json_finish(&j);
	fclose(f);
	assert_non_null(strstr(buf, "{\"type\":\"worker_stats\""));
	assert_non_null(strstr(buf, "\"line_size\":64"));
	assert_non_null(strstr(buf, "{\"field\":\"errors\",\"member\":\"errors\",\"offset\":8,\"size\":8,"
				 "\"line\":0,"));
	assert_non_null(strstr(buf, "\"stores\":2,\"other\":0,\"threads\":1,\"nr_threads\":1,"
				 "\"conflicts\":2}"));
	assert_non_null(strstr(buf, "{\"field\":\"(hole)\",\"member\":\"(hole)\",\"offset\":28,\"size\":4"));
	assert_non_null(strstr(buf, "\"lines\":[{\"line\":0,\"loads\":2,\"stores\":5,"));
	assert_non_null(strstr(buf, "\"writers\":2,\"line_writers\":2,\"conflicts\":4}]"));
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_heat_counts_loads_and_stores_per_field),
		cmocka_unit_test(test_heat_line_writers_judge_real_lines),
		cmocka_unit_test(test_heat_conflicts_when_another_thread_stores),
		cmocka_unit_test(test_heat_line_with_two_writers),
		cmocka_unit_test(test_heat_conflicts_only_within_one_object),
		cmocka_unit_test(test_heat_padding_row_and_outside),
		cmocka_unit_test(test_heat_matches_type_by_name_across_modules),
		cmocka_unit_test(test_heat_rejects_scalars_and_odd_line_sizes),
		cmocka_unit_test(test_heat_folds_arrays_of_structs),
		cmocka_unit_test(test_heat_text_shows_fields_counts_and_writers),
		cmocka_unit_test(test_heat_html_is_self_contained),
		cmocka_unit_test(test_heat_html_escapes_names),
		cmocka_unit_test(test_heat_html_lists_several_types),
		cmocka_unit_test(test_heat_json_fields_and_lines),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
