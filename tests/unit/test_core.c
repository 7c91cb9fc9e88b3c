/* core/: hash maps, arena and the JSON writer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/arena.h"
#include "core/hash.h"
#include "core/json.h"

static void test_hash_keeps_first_value_and_grows(void **state)
{
	struct hm_hash h;
	char keys[1000][16];
	int vals[1000];

	(void)state;
	hm_hash_init(&h);
	for (int i = 0; i < 1000; i++) {
		snprintf(keys[i], sizeof(keys[i]), "k%d", i);
		vals[i] = i;
		assert_ptr_equal(hm_hash_put(&h, keys[i], &vals[i]), &vals[i]);
	}
	assert_ptr_equal(hm_hash_put(&h, "k7", &vals[0]), &vals[7]);
	for (int i = 0; i < 1000; i++)
		assert_int_equal(*(int *)hm_hash_get(&h, keys[i]), i);
	assert_null(hm_hash_get(&h, "k1000"));
	assert_int_equal(h.len, 1000);
	hm_hash_free(&h);
}

static void test_map64_overwrites(void **state)
{
	struct hm_map64 m;
	int a = 1, b = 2;

	(void)state;
	hm_map64_init(&m);
	assert_null(hm_map64_get(&m, 5));
	for (uint64_t k = 1; k < 5000; k++)
		hm_map64_put(&m, k * 0x1000, &a);
	hm_map64_put(&m, 0x1000, &b);
	assert_ptr_equal(hm_map64_get(&m, 0x1000), &b);
	assert_ptr_equal(hm_map64_get(&m, 4999 * 0x1000), &a);
	assert_null(hm_map64_get(&m, 0x1001));
	assert_int_equal(m.len, 4999);
	hm_map64_free(&m);
}

static void test_arena_zeroed_aligned_and_large(void **state)
{
	struct hm_arena a;
	char *big;
	uint64_t *p;

	(void)state;
	hm_arena_init(&a);
	hm_arena_alloc(&a, 3);
	p = hm_arena_alloc(&a, sizeof(*p));
	assert_int_equal((uintptr_t)p % 16, 0);
	assert_int_equal(*p, 0);
	big = hm_arena_alloc(&a, 1 << 20);
	assert_int_equal(big[(1 << 20) - 1], 0);
	assert_string_equal(hm_arena_printf(&a, "%s-%d", "x", 42), "x-42");
	hm_arena_free(&a);
}

static void test_json_escapes_and_commas(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct hm_json j;

	(void)state;
	hm_json_init(&j, f);
	hm_json_obj_begin(&j, NULL);
	hm_json_str(&j, "s", "a\"b\\c\n");
	hm_json_arr_begin(&j, "a");
	hm_json_u64(&j, NULL, 1);
	hm_json_hex(&j, NULL, 255);
	hm_json_null(&j, NULL);
	hm_json_arr_end(&j);
	hm_json_bool(&j, "t", 1);
	hm_json_double(&j, "nan", NAN);
	hm_json_obj_end(&j);
	hm_json_finish(&j);
	fclose(f);
	assert_string_equal(buf, "{\"s\":\"a\\\"b\\\\c\\n\",\"a\":[1,\"0xff\",null],\"t\":true,"
				 "\"nan\":null}\n");
	free(buf);
}

/* JSON is UTF-8: well-formed sequences pass, each byte of a broken one is U+FFFD. */
static void test_json_replaces_invalid_utf8(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct hm_json j;

	(void)state;
	hm_json_init(&j, f);
	hm_json_arr_begin(&j, NULL);
	hm_json_str(&j, NULL, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");	/* é € U+1F600 */
	hm_json_str(&j, NULL, "a\xff" "b\xc3");	/* a stray byte, a cut sequence */
	hm_json_str(&j, NULL, "\xc0\xaf\xed\xa0\x80\x7f");	/* overlong, surrogate, DEL */
	hm_json_arr_end(&j);
	hm_json_finish(&j);
	fclose(f);
	assert_string_equal(buf, "[\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\","
				 "\"a\\ufffdb\\ufffd\","
				 "\"\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\u007f\"]\n");
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hash_keeps_first_value_and_grows),
		cmocka_unit_test(test_map64_overwrites),
		cmocka_unit_test(test_arena_zeroed_aligned_and_large),
		cmocka_unit_test(test_json_escapes_and_commas),
		cmocka_unit_test(test_json_replaces_invalid_utf8),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
