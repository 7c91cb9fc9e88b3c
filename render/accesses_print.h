/* report --view accesses: every resolved access as the analyses receive it, one text line
 * or one hitmap.accesses/1 object each, in their order (time order, docs/report.md). What
 * named each sample: a line's row takes the name of the first access to its address, and
 * this says which sample that was and what named the others. */
#ifndef HM_ACCESSES_PRINT_H
#define HM_ACCESSES_PRINT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/json.h"
#include "symbolize/access.h"

struct hm_accesses_out {
	FILE *out;
	int json;
	size_t top;			/* accesses printed at most; 0: all */
	uint64_t seen, printed;
	struct hm_json j;
};

/* The header line (text) or the document's opening keys (JSON). */
void hm_accesses_begin(struct hm_accesses_out *o, FILE *out, int json, size_t top,
		       const char *input);
void hm_accesses_add(struct hm_accesses_out *o, const struct hm_access *acc, size_t n);
/* JSON: the counts and warnings, and the document's end; text: nothing more. */
void hm_accesses_end(struct hm_accesses_out *o, uint64_t lost, const char *warning);

#endif
