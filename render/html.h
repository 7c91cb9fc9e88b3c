/* The report as one self-contained HTML page (hitmap report --html): the recording in
 * the title, a sortable c2c-style table of lines beside each shared line's layout (its
 * objects at their real offset, each field's readers and writers by thread, the verdict
 * and the replayed fix), then the hot types' heat maps. Inline CSS, SVG and a little JS
 * (sorting, linear/log colours); no network. docs/heatmap.md shows it. */
#ifndef HM_HTML_H
#define HM_HTML_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analyzer/heatmap.h"
#include "analyzer/lines.h"

#define HM_HTML_LINES_DRAWN 12		/* line layouts drawn; the table lists more */
#define HM_HTML_TABLE_MAX 200		/* rows of the lines table */

struct hm_html_page {
	const char *input;		/* the file, as the user named it */
	const char *command;		/* the recorded command line, or NULL */
	uint64_t lost;
	const struct hm_lines *lines;
	const struct hm_heat *const *heat;	/* the hot types, busiest first */
	size_t nr_heat;
};

void hm_html_print_report(FILE *out, const struct hm_html_page *p);

#endif
