/* hm_oom(): see oom.h. Not a global handler pointer: a weak default that the program's
 * own definition overrides at link time keeps core free of mutable state. */
#include "core/oom.h"

#include <stdlib.h>
#include <sys/resource.h>

__attribute__((weak)) void hm_oom_report(size_t peak_kb)
{
	(void)peak_kb;
}

_Noreturn void hm_oom(void)
{
	struct rusage ru;

	hm_oom_report(getrusage(RUSAGE_SELF, &ru) == 0 ? (size_t)ru.ru_maxrss : 0);
	abort();
}
