/* Out of memory: every allocation failure in the library ends in hm_oom(). It calls
 * hm_oom_report() with the peak resident size, then aborts. hitmap's cli/ defines
 * hm_oom_report to print one line with the figure and exit 3 (documented exit code:
 * environment); a library user gets the default, which reports nothing. */
#ifndef HM_OOM_H
#define HM_OOM_H

#include <stddef.h>
#include <stdlib.h>

_Noreturn void hm_oom(void);

/* realloc that ends in hm_oom(); a size of 0 asks for 1 byte (realloc may answer NULL). */
static inline void *hm_xrealloc(void *p, size_t size)
{
	void *q = realloc(p, size ? size : 1);

	if (!q)
		hm_oom();
	return q;
}
/* Weak in core/oom.c; a strong definition elsewhere replaces it. */
void hm_oom_report(size_t peak_kb);

#endif
