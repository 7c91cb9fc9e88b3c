/* resolve/primitive.c: which functions are string and copy primitives, whose accesses
 * are counted apart when their buffer is unnamed. The names are the real ones: glibc
 * 2.36's ifunc implementations (as `hitmap report` names them on tests/data/rec/lib_copy)
 * and Debian 6.1's kernel functions (from the lab's kallsyms). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "resolve/resolve.h"

static void libc_implementations(void **state)
{
	(void)state;
	assert_true(hm_primitive_func("__memcpy_avx512_unaligned_erms"));
	assert_true(hm_primitive_func("__memmove_avx_unaligned_erms"));
	assert_true(hm_primitive_func("__memset_avx2_unaligned_erms"));
	assert_true(hm_primitive_func("memcpy@plt"));
	assert_true(hm_primitive_func("__strlen_avx2"));
	assert_true(hm_primitive_func("__memcmp_evex_movbe"));
	assert_true(hm_primitive_func("memset"));
}

static void kernel_functions(void **state)
{
	(void)state;
	assert_true(hm_primitive_func("memset_erms"));
	assert_true(hm_primitive_func("memcpy_orig"));
	assert_true(hm_primitive_func("__memmove"));
	assert_true(hm_primitive_func("copy_user_enhanced_fast_string"));
	assert_true(hm_primitive_func("copy_user_generic_unrolled"));
	assert_true(hm_primitive_func("_copy_to_user"));
	assert_true(hm_primitive_func("__clear_user"));
	assert_true(hm_primitive_func("clear_page_erms"));
	assert_true(hm_primitive_func("strncpy_from_user"));
	assert_true(hm_primitive_func("csum_partial_copy_generic"));
	assert_true(hm_primitive_func("memcpy_orig.cold"));
}

/* Functions whose names merely start like one, and ordinary code. */
static void not_primitives(void **state)
{
	(void)state;
	assert_false(hm_primitive_func(NULL));
	assert_false(hm_primitive_func(""));
	assert_false(hm_primitive_func("copy_page_range"));	/* page tables at fork */
	assert_false(hm_primitive_func("memsetter"));
	assert_false(hm_primitive_func("memcg_charge"));
	assert_false(hm_primitive_func("strlens"));
	assert_false(hm_primitive_func("ext4_orphan_add"));
	assert_false(hm_primitive_func("worker"));
	assert_false(hm_primitive_func("do_memset_thing"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(libc_implementations),
		cmocka_unit_test(kernel_functions),
		cmocka_unit_test(not_primitives),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
