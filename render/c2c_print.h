/* --view c2c's text (c2c_print.c) and its JSON member (c2c_json.c). */
#ifndef HM_RENDER_C2C_PRINT_H
#define HM_RENDER_C2C_PRINT_H

#include <stddef.h>
#include <stdio.h>

#include "analyzer/c2c_view.h"
#include "core/json.h"

/* wide: perf's one row per line; else the table in two parts that fit 120 columns. */
void hm_c2c_print_text(FILE *out, const struct hm_c2c_view *v, const char *input, size_t top,
		       int wide);
/* The "c2c_view" member of hitmap.report/1 (docs/report.md). */
void hm_c2c_print_json(struct hm_json *j, const struct hm_c2c_view *v, size_t top);

#endif
