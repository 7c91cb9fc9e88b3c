/* Large arrays that are filled once and then reused (a batch of accesses, its sort keys,
 * the handoff's slots): asked to be backed by 2 MB pages where the kernel allows it
 * (transparent huge pages in "madvise" mode, Debian's default), so that their first
 * touch faults once per 2 MB, not once per 4 KB page. A streamed report's batch arrays
 * took 30,000 of its 36,000 page faults, and a fault costs microseconds in a VM. */
#ifndef HM_HUGE_H
#define HM_HUGE_H

#include <stddef.h>

/* Hints the whole 2 MB pages inside [p, p + n); nothing when there are none or the
 * kernel refuses. */
void hm_huge_hint(void *p, size_t n);

#endif
