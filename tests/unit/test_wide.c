/* Wide accesses (symbolize/data_split.c, resolve/resolve_wide.c): an access over several
 * members is one access per member, each with its own bytes. The rule on the real DWARF of
 * the committed tests/data/rec/bin/wide_stats and of a struct with holes and arrays built
 * here; then the committed recording of wide_stats, whose 16-byte movdqu/movups over
 * ops and bytes (gcc 12 -O2) must credit both. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "resolve/load.h"
#include "symbolize/data.h"
#include "run_util.h"

#define WIDE_BIN "tests/data/rec/bin/wide_stats"
#define WIDE_REC "tests/data/rec/wide_stats.data"

static const struct hm_type *type_of(const char *path, const char *name, struct hm_layout **lay)
{
	struct hm_err err = {0};
	const struct hm_type *t;

	if (hm_layout_open(path, lay, &err))
		fail_msg("%s: %s", path, err.msg);
	t = hm_layout_find(*lay, name);
	if (!t)
		fail_msg("%s: no type %s", path, name);
	return t;
}

#define PART(p, o, a, s)                                                                  \
	do {                                                                               \
		assert_int_equal((p).offset, (o));                                         \
		assert_int_equal((p).at, (a));                                             \
		assert_int_equal((p).size, (s));                                           \
	} while (0)

/* worker_stats { unsigned long ops, bytes, errors; }: the movdqu over ops and bytes. */
static void test_wide_store_covers_two_members(void **state)
{
	struct hm_layout *lay;
	const struct hm_type *t = type_of(WIDE_BIN, "worker_stats", &lay);
	struct hm_data_part p[HM_DATA_MAX_PARTS];

	(void)state;
	assert_int_equal(hm_data_split_type(t, 0, 16, 1, p, HM_DATA_MAX_PARTS), 2);
	PART(p[0], 0, 0, 8);
	PART(p[1], 8, 8, 8);
	assert_int_equal(hm_data_split_type(t, 8, 16, 1, p, HM_DATA_MAX_PARTS), 2);
	PART(p[0], 8, 0, 8);
	PART(p[1], 16, 8, 8);
	/* misaligned: the last half of ops and the first of bytes */
	assert_int_equal(hm_data_split_type(t, 4, 8, 1, p, HM_DATA_MAX_PARTS), 2);
	PART(p[0], 4, 0, 4);
	PART(p[1], 8, 4, 4);
	/* one member: nothing to split */
	assert_int_equal(hm_data_split_type(t, 8, 8, 1, p, HM_DATA_MAX_PARTS), 1);
	/* the whole struct (a memset of one element) */
	assert_int_equal(hm_data_split_type(t, 0, 24, 1, p, HM_DATA_MAX_PARTS), 3);
	PART(p[2], 16, 16, 8);
	hm_layout_close(lay);
}

/* A heap element's access goes on into the next element; a variable's stops at its end;
 * max parts: the last takes the rest. */
static void test_wide_wraps_heap_elements_and_caps_parts(void **state)
{
	struct hm_layout *lay;
	const struct hm_type *t = type_of(WIDE_BIN, "worker_stats", &lay);
	struct hm_data_part p[HM_DATA_MAX_PARTS];

	(void)state;
	assert_int_equal(hm_data_split_type(t, 16, 16, 1, p, HM_DATA_MAX_PARTS), 2);
	PART(p[0], 16, 0, 8);
	PART(p[1], 0, 8, 8);	/* the next worker_stats' ops */
	assert_int_equal(hm_data_split_type(t, 16, 16, 0, p, HM_DATA_MAX_PARTS), 1);
	PART(p[0], 16, 0, 8);
	assert_int_equal(hm_data_split_type(t, 0, 48, 1, p, 4), 4);	/* rep stos, 2 elements */
	PART(p[3], 0, 24, 24);
	assert_int_equal(hm_data_split_type(t, 0, 0, 1, p, HM_DATA_MAX_PARTS), 0);
	assert_int_equal(hm_data_split_type(t, 24, 8, 1, p, HM_DATA_MAX_PARTS), 0);
	hm_layout_close(lay);
}

/* Holes are nobody's bytes; a run of one scalar array's elements is one part. */
static void test_wide_skips_holes_and_merges_arrays(void **state)
{
	char dir[] = "/tmp/hm_wide_XXXXXX", src[300], obj[300];
	struct hm_layout *lay;
	const struct hm_type *t;
	struct hm_data_part p[HM_DATA_MAX_PARTS];
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(src, sizeof(src), "%s/h.c", dir);
	snprintf(obj, sizeof(obj), "%s/h.o", dir);
	assert_non_null(f = fopen(src, "w"));
	fputs("struct holey { char c; long b; char name[16]; int tail[4]; struct { int x, y; } "
	      "pt[2]; };\nstruct holey h;\n", f);
	fclose(f);
	assert_int_equal(run("gcc -g -O0 -c -o %s %s", obj, src), 0);
	t = type_of(obj, "holey", &lay);
	assert_int_equal(hm_data_split_type(t, 0, 16, 0, p, HM_DATA_MAX_PARTS), 2);
	PART(p[0], 0, 0, 1);	/* c; then 7 bytes of hole */
	PART(p[1], 8, 8, 8);	/* b */
	assert_int_equal(hm_data_split_type(t, 16, 32, 0, p, HM_DATA_MAX_PARTS), 2);
	PART(p[0], 16, 0, 16);	/* name[0..15] */
	PART(p[1], 32, 16, 16);	/* tail[0..3] */
	assert_int_equal(hm_data_split_type(t, 20, 8, 0, p, HM_DATA_MAX_PARTS), 1);	/* in name */
	/* arrays of structs are members each: pt[0].x, pt[0].y, pt[1].x, pt[1].y */
	assert_int_equal(hm_data_split_type(t, 48, 16, 0, p, HM_DATA_MAX_PARTS), 4);
	PART(p[3], 60, 12, 4);
	hm_layout_close(lay);
	run("rm -rf %s", dir);
}

static int keep_all(const struct hm_access *a, void *ctx)
{
	(void)a;
	(void)ctx;
	return 1;
}

/* The committed recording: every sample of the movdqu/movups is ops and bytes, 8 bytes
 * each, one after the other; the whole access is still 16 bytes (the splits view). */
static void test_wide_recording_credits_both_fields(void **state)
{
	struct hm_resolve_opts o = {.buildid_dir = "tests/data/rec"};
	struct hm_recording rec;
	struct hm_err err = {0};
	size_t ops = 0, bytes = 0, pairs = 0;

	(void)state;
	if (hm_recording_load(WIDE_REC, &o, keep_all, NULL, &rec, &err))
		fail_msg("%s: %s", WIDE_REC, err.msg);
	for (size_t i = 0; i < rec.n; i++) {
		const struct hm_access *x = &rec.acc[i];

		if (!x->field)
			continue;
		ops += !strcmp(x->field, "worker_stats.ops");
		bytes += !strcmp(x->field, "worker_stats.bytes");
		if (strcmp(x->field, "worker_stats.ops") || x->nr_parts != 2)
			continue;
		assert_true(i + 1 < rec.n);
		assert_int_equal(x->part, 0);
		assert_int_equal(x->s.size, 8);
		assert_int_equal(x->wide_size, 16);
		assert_string_equal(rec.acc[i + 1].field, "worker_stats.bytes");
		assert_int_equal(rec.acc[i + 1].part, 1);
		assert_int_equal(rec.acc[i + 1].s.addr, x->s.addr + 8);
		assert_int_equal(rec.acc[i + 1].field_off, 8);
		assert_int_equal(hm_access_whole_addr(&rec.acc[i + 1]), x->s.addr);
		assert_int_equal(rec.acc[i + 1].s.time, x->s.time);
		pairs++;
	}
	assert_true(ops > 100);
	assert_int_equal(bytes, ops);	/* every access to ops is one to bytes too */
	assert_int_equal(pairs, ops);
	assert_int_equal(hm_resolver_stats(rec.resolver)->wide, pairs);
	hm_recording_free(&rec);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wide_store_covers_two_members),
		cmocka_unit_test(test_wide_wraps_heap_elements_and_caps_parts),
		cmocka_unit_test(test_wide_skips_holes_and_merges_arrays),
		cmocka_unit_test(test_wide_recording_credits_both_fields),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
