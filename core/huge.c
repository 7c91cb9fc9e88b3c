#include "core/huge.h"

#include <stdint.h>
#include <sys/mman.h>

#define HUGE_PAGE ((uintptr_t)2 << 20)

void hm_huge_hint(void *p, size_t n)
{
	uintptr_t lo = ((uintptr_t)p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	uintptr_t hi = ((uintptr_t)p + n) & ~(HUGE_PAGE - 1);

#ifdef MADV_HUGEPAGE
	if (p && hi > lo)
		(void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
	(void)lo;
	(void)hi;
#endif
}
