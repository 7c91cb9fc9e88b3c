/* Rendering of a report: the c2c-like text views (report_print.c) and hitmap.report/1
 * (report_json.c). Neither decides anything: verdicts and fixes come from analyzer/. */
#ifndef HM_REPORT_PRINT_H
#define HM_REPORT_PRINT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analyzer/c2c_view.h"
#include "analyzer/heatmap.h"
#include "analyzer/lines.h"

enum hm_report_view_kind {
	HM_VIEW_LINES,		/* lines table, then the sharing and splits sections */
	HM_VIEW_FIELDS,		/* every row of every line, by contention */
	HM_VIEW_SHARING,	/* shared lines: field pairs, threads, the fix */
	HM_VIEW_SPLITS,		/* accesses crossing a line or page boundary */
};

struct hm_report_view {
	const char *input;		/* file name as the user gave it */
	enum hm_source source;		/* the contention measure shown; see hm_lines_set_source */
	uint64_t lost;			/* lost samples (LOST and LOST_SAMPLES records) */
	size_t top;			/* lines (rows, splits) shown; 0: all */
	enum hm_report_view_kind view;	/* text only: JSON always holds every section */
	const struct hm_lines *lines;
	const struct hm_splits *splits;	/* NULL: no splits section */
	const struct hm_heat *const *heat;	/* JSON: the "heatmap" array (--view heatmap) */
	size_t nr_heat;
	const char *warning;		/* what was forced (--force), or NULL; JSON "warnings" */
	const struct hm_c2c_view *c2c;	/* --view c2c: JSON "c2c_view"; NULL otherwise */
	const char *slab_source;	/* kernel heap named by slab cache, from "kcore"; NULL:
					 * not so named (JSON stats.kernel_slab absent) */
	uint64_t kernel_slab;		/* lookups the slab cache named */
};

/* "lines", "fields", "sharing", "splits" -> kind; -1 when unknown. */
int hm_report_view_parse(const char *name);
const char *hm_report_view_name(enum hm_report_view_kind v);

void hm_report_print_text(FILE *out, const struct hm_report_view *v);
/* {"schema":"hitmap.report/1", ...}: lines limited to top, splits too; docs/report.md. */
void hm_report_print_json(FILE *out, const struct hm_report_view *v);

/* One row of lines[].fields[] ({"field", "offset", "size", ...}), for other schemas that
 * show a line's fields (hitmap.whatif/1's field_rows); kind: hm_contention_name(). */
void hm_report_json_field(struct hm_json *j, const struct hm_lfield *f, const char *kind);

#endif
