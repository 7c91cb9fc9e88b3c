/* analyzer/reorganize.c on DWARF that gcc writes for the fixture below, compiled at test
 * time (cc -g -c). The writers of the sharing tests are synthesized here, not recorded:
 * the names say so. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "analyzer/reorganize.h"
#include "symbolize/layout.h"
#include "symbolize/shape.h"

static const char fixture[] =
	"struct holey { char a; long b; char c; };\n"		/* 24 -> 16 */
	"struct fine { long a; int b; int c; };\n"		/* nothing to do */
	"union u { int i; char c[8]; };\n"
	"struct forced { long a; long b __attribute__((aligned(64))); long c; };\n"
	/* moving c shifts tag from 64..72 to 62..70: a new split */
	"struct split { char a; int b; char c; short s; char buf[52]; char tag[8]; };\n"
	/* w2 would move next to w1 on line 0 */
	"struct ws { long w1; char c; long q[7]; int w2; };\n"
	"struct holey v1; struct fine v2; union u v3; struct forced v4; struct split v5;\n"
	"struct ws v6;\n";

struct fx {
	char dir[64];
	struct hm_layout *lay;
	struct hm_arena a;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct hm_err err = {0};
	char cmd[256], path[128];
	FILE *src;

	strcpy(f->dir, "/tmp/hm_reorgXXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(path, sizeof(path), "%s/r.c", f->dir);
	if (!(src = fopen(path, "w")))
		return -1;
	fputs(fixture, src);
	fclose(src);
	snprintf(cmd, sizeof(cmd), "cc -g -O0 -c -o %s/r.o %s", f->dir, path);
	if (system(cmd))
		return -1;
	snprintf(path, sizeof(path), "%s/r.o", f->dir);
	if (hm_layout_open(path, &f->lay, &err) < 0) {
		print_error("%s\n", err.msg);
		return -1;
	}
	hm_arena_init(&f->a);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	hm_arena_free(&f->a);
	hm_layout_close(f->lay);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	if (system(cmd))
		return -1;
	free(f);
	return 0;
}

static void reorg(void **state, const char *name, const struct hm_reorg_writers *w, int allow,
		  struct hm_reorg *r)
{
	struct fx *f = *state;
	const struct hm_type *t = hm_layout_find(f->lay, name);
	struct hm_reorg_opts o = {.line_size = 64, .allow_splits = allow, .writers = w};

	assert_non_null(t);
	hm_reorganize(&f->a, t, &o, r);
}

static uint64_t offset_of(const struct hm_type *t, const char *member)
{
	uint64_t off, size;

	assert_int_equal(hm_layout_member_offset(t, member, &off, &size), 0);
	return off;
}

static void test_hole_shrinks(void **state)
{
	struct hm_reorg r;

	reorg(state, "holey", NULL, 0, &r);
	assert_null(r.skipped);
	assert_int_equal(r.old_size, 24);
	assert_int_equal(r.new_size, 16);
	assert_int_equal(r.new_t->size, 16);
	assert_int_equal(offset_of(r.new_t, "c"), 1);
	assert_int_equal(offset_of(r.new_t, "b"), 8);
	assert_int_equal(r.nr_moves, 1);
	assert_string_equal(r.moves[0].what, "c");
	assert_string_equal(r.moves[0].after, "a");
}

static void test_tight_type_unchanged(void **state)
{
	struct hm_reorg r;

	reorg(state, "fine", NULL, 0, &r);
	assert_null(r.skipped);
	assert_int_equal(r.new_size, 16);
	assert_int_equal(r.nr_moves, 0);
}

static void test_union_skipped(void **state)
{
	struct hm_reorg r;

	reorg(state, "u", NULL, 0, &r);
	assert_non_null(r.skipped);
	assert_ptr_equal(r.new_t, r.old_t);
}

/* pahole 1.24 gives 72 here, dropping the tail padding __aligned__(64) requires. */
static void test_forced_alignment_kept(void **state)
{
	struct hm_reorg r;

	reorg(state, "forced", NULL, 0, &r);
	assert_int_equal(r.new_size, 128);
	assert_int_equal(offset_of(r.new_t, "c"), 8);
	assert_int_equal(offset_of(r.new_t, "b"), 64);
}

static int straddles(struct fx *f, const struct hm_type *t, const char *member)
{
	struct hm_shape sh;

	hm_shape_compute(&f->a, t, 64, &sh);
	for (uint32_t i = 0; i < sh.nr; i++)
		if (sh.ms[i].m->name && !strcmp(sh.ms[i].m->name, member))
			return sh.ms[i].straddles;
	fail_msg("no member %s", member);
	return -1;
}

static void test_split_refused(void **state)
{
	struct fx *f = *state;
	struct hm_reorg r;

	reorg(state, "split", NULL, 0, &r);
	assert_int_equal(offset_of(r.new_t, "tag"), 64);
	assert_false(straddles(f, r.new_t, "tag"));
	assert_true(r.nr_moves >= 1);
	assert_true(r.moves[0].refused);
	assert_int_equal(r.moves[0].why, HM_RW_SPLIT);
	assert_string_equal(r.moves[0].other, "tag");

	reorg(state, "split", NULL, 1, &r);	/* without the rule, c and s move: tag straddles */
	assert_int_equal(offset_of(r.new_t, "tag"), 60);
	assert_true(straddles(f, r.new_t, "tag"));
}

static void writers_for(struct fx *f, uint32_t nr, struct hm_reorg_writers *w)
{
	w->nr = nr;
	w->thread = hm_arena_alloc(&f->a, sizeof(*w->thread) * nr);
	w->multi = hm_arena_alloc(&f->a, nr);
	memset(w->thread, 0, sizeof(*w->thread) * nr);
	memset(w->multi, 0, nr);
}

static void test_sharing_refused_synthesized_writers(void **state)
{
	struct fx *f = *state;
	struct hm_reorg_writers w;
	struct hm_reorg r;

	reorg(state, "ws", NULL, 0, &r);	/* nobody writes: w2 fills the hole */
	assert_int_equal(r.new_size, 72);
	assert_int_equal(offset_of(r.new_t, "w2"), 12);

	writers_for(f, 4, &w);
	w.thread[0] = 1ull << 63 | 1;		/* w1: thread 1 */
	w.thread[3] = 1ull << 63 | 2;		/* w2: thread 2 */
	reorg(state, "ws", &w, 0, &r);
	assert_int_equal(r.new_size, 80);
	assert_int_equal(offset_of(r.new_t, "w2"), 72);
	assert_true(r.moves[0].refused);
	assert_int_equal(r.moves[0].why, HM_RW_SHARING);
	assert_string_equal(r.moves[0].other, "w1");

	w.thread[3] = w.thread[0];		/* one thread writes both: no reason to refuse */
	reorg(state, "ws", &w, 0, &r);
	assert_int_equal(r.new_size, 72);
}

static void test_writers_collect_synthesized_accesses(void **state)
{
	struct fx *f = *state;
	const struct hm_type *t = hm_layout_find(f->lay, "ws");
	struct hm_access acc[4];
	struct hm_reorg_writers w;

	memset(acc, 0, sizeof(acc));
	for (int i = 0; i < 4; i++) {
		acc[i].type = t;
		acc[i].s.op = HM_OP_STORE;
		acc[i].s.pid = 10;
	}
	acc[0].field_off = 0, acc[0].s.tid = 11;	/* w1 by 11 */
	acc[1].field_off = 72, acc[1].s.tid = 12;	/* w2 by 12 */
	acc[2].field_off = 80 + 72, acc[2].s.tid = 13;	/* w2 of element 1 of an array: 13 */
	acc[3].field_off = 8, acc[3].s.op = HM_OP_LOAD;	/* c: only read */
	hm_reorg_writers_collect(&f->a, t, acc, 4, &w);
	assert_int_equal(w.nr, 4);
	assert_int_equal(w.stores, 3);
	assert_int_equal(w.thread[0], 1ull << 63 | 10ull << 32 | 11);
	assert_int_equal(w.multi[0], 0);
	assert_int_equal(w.thread[1], 0);
	assert_int_equal(w.multi[3], 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hole_shrinks),
		cmocka_unit_test(test_tight_type_unchanged),
		cmocka_unit_test(test_union_skipped),
		cmocka_unit_test(test_forced_alignment_kept),
		cmocka_unit_test(test_split_refused),
		cmocka_unit_test(test_sharing_refused_synthesized_writers),
		cmocka_unit_test(test_writers_collect_synthesized_accesses),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
