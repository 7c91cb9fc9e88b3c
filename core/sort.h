/* qsort with the empty case allowed: C leaves qsort(NULL, 0, ...) undefined (UBSan
 * reports it), and empty result arrays are often NULL. */
#ifndef HM_SORT_H
#define HM_SORT_H

#include <stdlib.h>

static inline void hm_sort(void *base, size_t n, size_t size,
			   int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

#endif
