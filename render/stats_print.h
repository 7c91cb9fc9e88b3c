/* --stats: how many samples got a data address and an object, by method, and the
 * instructions whose addresses stayed unnamed (like perf's data-type statistics). */
#ifndef HM_STATS_PRINT_H
#define HM_STATS_PRINT_H

#include <stdio.h>

#include "resolve/resolve.h"

void hm_stats_print(FILE *out, struct hm_resolver *r);

#endif
