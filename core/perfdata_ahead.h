/* A perf.data file's records read and decoded on a second thread, ahead of the one that
 * resolves them: hm_pd_ahead_next is hm_perfdata_next with the reading and the decoding
 * done while the caller works on the records before. The records and their order are the
 * same; so are the errors, at the same record. For files, not pipes: a pipe's attrs are
 * learnt from its records as they come, which the caller may be asking about. */
#ifndef HM_PERFDATA_AHEAD_H
#define HM_PERFDATA_AHEAD_H

#include "core/perfdata.h"

struct hm_pd_ahead;

/* Starts reading pd on a thread; NULL when it cannot (a pipe, out of memory, no thread):
 * read pd with hm_perfdata_next then. pd is the thread's until hm_pd_ahead_end. */
struct hm_pd_ahead *hm_pd_ahead_start(struct hm_perfdata *pd);
/* As hm_perfdata_next: 1 with *ev pointing at the next record (valid, with what it points
 * at, until the next call), 0 at the end, negative on error with err set. */
int hm_pd_ahead_next(struct hm_pd_ahead *a, const struct hm_perf_event **ev,
		     struct hm_err *err);
/* Stops the thread (at once, when the caller stops early) and frees a; pd is the
 * caller's again, its stats and warning those of what was read. NULL: nothing. */
void hm_pd_ahead_end(struct hm_pd_ahead *a);

#endif
