/* Private to analyzer/sharing*.c: the fix sentences (sharing_fix.c). */
#ifndef HM_SHARING_FIX_H
#define HM_SHARING_FIX_H

#include "analyzer/lines.h"

/* Threads p->tid_a and p->tid_b both use the bytes of rows p->a and p->b. */
const char *hm_sharing_fix_true(struct hm_arena *a, const struct hm_line *ln,
				const struct hm_pair *p, uint32_t line_size);
/* The rows of p are disjoint bytes of one line: move, pad or align (L: the line size). */
const char *hm_sharing_fix_false(struct hm_arena *a, const struct hm_line *ln,
				 const struct hm_pair *p, uint32_t L);

/* sharing_spin.c. A per-CPU copy touched only on its CPU: private (evidence says so),
 * returns 1. A line waiters spin on (at least HM_MIN_RECORDS spinning loads): true
 * sharing of the lock word with its evidence and advice, returns 1. Else 0, ln as it was. */
int hm_sharing_percpu_local(struct hm_arena *a, struct hm_line *ln);
int hm_sharing_spin(struct hm_arena *a, struct hm_line *ln);

#endif
