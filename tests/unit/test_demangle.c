/* symbolize/code_demangle.c: C++ symbols read as a person writes them; C names, and
 * names that only look mangled, stay as they are. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "symbolize/code_int.h"

static void test_cxx_symbols_demangled(void **state)
{
	struct hm_arena a;

	(void)state;
	hm_arena_init(&a);
	assert_string_equal(code_demangle(&a, "_ZN3srv4bumpEPNS_5StatsEi"),
			    "srv::bump(srv::Stats*, int)");
	/* as c++filt prints it */
	assert_string_equal(code_demangle(&a, "_ZNSt6vectorIiSaIiEE9push_backERKi"),
			    "std::vector<int, std::allocator<int> >::push_back(int const&)");
	hm_arena_free(&a);
}

static void test_c_names_unchanged(void **state)
{
	static const char *const names[] = {"main", "count_ops", "_Zbogus", "__libc_start_main"};
	struct hm_arena a;

	(void)state;
	hm_arena_init(&a);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		assert_ptr_equal(code_demangle(&a, names[i]), names[i]);
	assert_null(code_demangle(&a, NULL));
	hm_arena_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cxx_symbols_demangled),
		cmocka_unit_test(test_c_names_unchanged),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
