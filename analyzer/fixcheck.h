/* Fixes checked before they are printed: each shared line's fix is replayed through
 * whatif on the line's recorded rows (docs/report.md, "The fix is replayed"). */
#ifndef HM_FIXCHECK_H
#define HM_FIXCHECK_H

#include "analyzer/lines.h"

/* Lines checked per report: each replays up to four candidate layouts. */
#define HM_FIX_CHECK_LINES 16

/* For the first max_lines shared lines: replaces each fix with the first candidate whose
 * replay leaves no false sharing for the pair's type (fix_check REPLAYED), or clears it
 * (FAILED) saying what was tried, or says why no layout change applies (NOT_LAYOUT).
 * Strings live in a. */
void hm_fixcheck_lines(struct hm_arena *a, struct hm_lines *l, size_t max_lines);
const char *hm_fix_check_name(enum hm_fix_check k);

#endif
