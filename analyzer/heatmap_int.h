/* Between heatmap.c (the rows of a type's layout) and heatmap_count.c (counting
 * accesses into them); not part of the API. */
#ifndef HM_HEATMAP_INT_H
#define HM_HEATMAP_INT_H

#include "analyzer/heatmap.h"

/* Offset inside an element of an array of structs -> the same offset in element 0. */
uint64_t hm_heat_fold_offset(const struct hm_type *t, uint64_t off);
/* The row for a byte at off of an access named field; ends[i] is the largest end of
 * rows 0..i. */
int32_t hm_heat_row_at(const struct hm_heat *h, const uint64_t *ends, uint64_t off,
		       const char *field);
/* The counting state of h, once its rows are laid out. */
struct hm_heat_acc *hm_heat_acc_new(struct hm_heat *h);

#endif
