/* String and copy primitives: memset, memcpy and their kind, in libc and in the kernel.
 * An access they make belongs to whatever buffer they were handed, which no variable in
 * scope types, so when the buffer's object is unknown such an access is counted apart
 * (--stats, the report's samples) instead of diluting the share of accesses named. */
#include "resolve/resolve.h"

#include <string.h>

/* Name stems, after leading underscores: libc's __memset_avx2_unaligned_erms and the
 * kernel's memset_erms, __memcpy, copy_user_enhanced_fast_string, rep_movs_alternative,
 * clear_page_erms, csum_partial_copy_generic, strncpy_from_user all match. */
static const char *const stems[] = {
	"memset", "memcpy", "memmove", "mempcpy", "memcmp", "bcmp", "memchr", "memrchr",
	"memzero", "bzero", "wmemset", "wmemcpy", "wmemmove",
	"copy_user", "copy_to_user", "copy_from_user", "copy_mc", "copy_page", "clear_user",
	"clear_page", "rep_movs", "rep_stos", "csum_partial_copy", "csum_and_copy",
	"strncpy_from_user", "strnlen_user",
	"strlen", "strnlen", "strcpy", "strncpy", "stpcpy", "stpncpy", "strcat", "strncat",
	"strcmp", "strncmp", "strcasecmp", "strncasecmp", "strchr", "strrchr", "strchrnul",
	"strscpy", "strlcpy", "strlcat",
};

/* What may follow a stem: an implementation suffix (_erms, _avx2_unaligned, _orig),
 * a symbol version or PLT mark (@plt, @@GLIBC_2.2.5), a clone (.part.0), nothing. */
static int suffix_ok(char c)
{
	return c == 0 || c == '_' || c == '@' || c == '.';
}

int hm_primitive_func(const char *func)
{
	if (!func)
		return 0;
	while (*func == '_')
		func++;
	if (!strncmp(func, "copy_page_range", 15))
		return 0;	/* page tables at fork, no buffer */
	for (size_t i = 0; i < sizeof(stems) / sizeof(stems[0]); i++) {
		size_t n = strlen(stems[i]);

		if (!strncmp(func, stems[i], n) && suffix_ok(func[n]))
			return 1;
	}
	return 0;
}
