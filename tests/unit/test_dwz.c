/* symbolize/layout_dwarf.c through dwz: examples/bin/false_sharing and its padded build
 * are dwz'd into a common .gnu_debugaltlink file at setup (Debian package dwz, installed
 * by make deps); the types whose DIEs moved there must read as from the original. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "symbolize/layout.h"

static char dir[] = "/tmp/hm-dwz-XXXXXX";

static int setup(void **state)
{
	char cmd[512];

	(void)state;
	if (!mkdtemp(dir))
		return -1;
	snprintf(cmd, sizeof(cmd), "cp examples/bin/false_sharing %s/a && "
		 "cp examples/bin/false_sharing_padded %s/b && "
		 "dwz -m %s/common.debug -M %s/common.debug %s/a %s/b", dir, dir, dir, dir, dir, dir);
	if (system(cmd) != 0)
		fail_msg("%s failed: install dwz (make deps) and run make examples", cmd);
	return 0;
}

static int teardown(void **state)
{
	char cmd[256];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Every member of worker_stats has its base type: the base types live in the alt file. */
static void test_member_types_through_altlink(void **state)
{
	static const char *const names[] = {"ops", "errors", "bytes", "flags"};
	static const uint64_t sizes[] = {8, 8, 8, 4};
	struct hm_layout *lay = NULL;
	struct hm_err err = {0};
	const struct hm_member *m;
	const struct hm_type *t;
	char path[64];
	uint32_t nr;

	(void)state;
	snprintf(path, sizeof(path), "%s/a", dir);
	assert_int_equal(hm_layout_open(path, &lay, &err), 0);
	t = hm_layout_find(lay, "worker_stats");
	assert_non_null(t);
	assert_int_equal(t->size, 32);
	m = hm_type_members(t, &nr);
	assert_int_equal(nr, 4);
	for (uint32_t i = 0; i < nr; i++) {
		assert_string_equal(m[i].name, names[i]);
		assert_non_null(hm_type_strip(m[i].type));
		assert_int_equal(hm_type_strip(m[i].type)->kind, HM_T_BASE);
		assert_int_equal(hm_type_strip(m[i].type)->size, sizes[i]);
		assert_int_equal(m[i].bit_offset, 64 * i);
	}
	hm_layout_close(lay);
}

/* A type that dwz moved to the alt file whole (it is in both builds) is still found. */
static void test_type_moved_to_altlink_found(void **state)
{
	struct hm_layout *lay = NULL;
	struct hm_err err = {0};
	const struct hm_type *t;
	char path[64];

	(void)state;
	snprintf(path, sizeof(path), "%s/b", dir);
	assert_int_equal(hm_layout_open(path, &lay, &err), 0);
	t = hm_layout_find(lay, "pthread_attr_t");
	assert_non_null(t);
	assert_int_equal(t->size, 56);
	hm_layout_close(lay);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_member_types_through_altlink),
		cmocka_unit_test(test_type_moved_to_altlink_found),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
