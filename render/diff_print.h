/* Rendering of a layout diff: terminal text, a markdown review comment, hitmap.diff/1. */
#ifndef HM_DIFF_PRINT_H
#define HM_DIFF_PRINT_H

#include <stdio.h>

#include "analyzer/globalsdiff.h"
#include "analyzer/layoutdiff.h"

struct hm_diff_view {
	const char *old_path, *new_path;
	const struct hm_diff *types;
	const struct hm_gdiff *globals;	/* NULL without --globals */
};

void hm_diff_print_text(FILE *out, const struct hm_diff_view *v);
void hm_diff_print_md(FILE *out, const struct hm_diff_view *v);
void hm_diff_print_json(FILE *out, const struct hm_diff_view *v);

#endif
