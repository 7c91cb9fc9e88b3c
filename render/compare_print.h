/* compare's text and hitmap.compare/1 JSON (compare_print.c): what cli/compare.c hands over. */
#ifndef HM_RENDER_COMPARE_PRINT_H
#define HM_RENDER_COMPARE_PRINT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analyzer/compare.h"

struct hm_cmp_side {
	const char *const *files;
	size_t n;
	const struct hm_cmp_ident *id;	/* the side's build (its first run) */
	const struct hm_cmp_run *runs;
};

struct hm_cmp_view {
	struct hm_cmp_side a, b;
	const struct hm_cmp *cmp;
	const struct hm_cmp_layout *layout;	/* NULL when not computed */
	const char *const *notes;		/* one line each: what could not be done */
	size_t nr_notes;
	const char *const *only;		/* --metric NAME filters (substring); NULL: all */
	size_t nr_only;
	size_t top;				/* text: not-significant rows shown; 0: all */
	uint32_t line_size;
};

/* Whether metric m passes the view's --metric filters. */
int hm_cmp_view_wants(const struct hm_cmp_view *v, const struct hm_cmp_metric *m);
void hm_cmp_print_text(FILE *out, const struct hm_cmp_view *v);
void hm_cmp_print_json(FILE *out, const struct hm_cmp_view *v);

#endif
