/* Rendering of --reorganize results and of --sizes rows (docs/layout.md). */
#ifndef HM_REORGANIZE_PRINT_H
#define HM_REORGANIZE_PRINT_H

#include <stdio.h>

#include "render/layout_print.h"
#include "analyzer/reorganize.h"
#include "core/json.h"
#include "symbolize/shape.h"

void hm_reorg_print_text(FILE *out, struct hm_arena *a, const struct hm_reorg *r,
			 const struct hm_print_opts *o);
/* One element of the "types" array of hitmap.layout.reorganize/1. */
void hm_reorg_print_json(struct hm_json *j, struct hm_arena *a, const struct hm_reorg *r,
			 const struct hm_print_opts *o);
/* One --sizes row: text (j NULL) as pahole --sizes prints it, or one JSON element. */
void hm_layout_print_sizes(FILE *out, struct hm_json *j, struct hm_arena *a,
			   const struct hm_type *t, uint32_t line_size);
/* Byte holes as pahole counts them (--holes); 0 for unions. */
uint64_t hm_layout_nr_holes(struct hm_arena *a, const struct hm_type *t);

#endif
