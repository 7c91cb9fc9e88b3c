/* What the page's parts share (html_page.c, html_line.c, html_table.c, heatmap_html.c):
 * colours, the thread key and escaping. */
#ifndef HM_HTML_INT_H
#define HM_HTML_INT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analyzer/lines.h"

#define HM_HTML_THREAD_COLOURS 8	/* threads past these share grey */

/* #rrggbb of v in [0, 1] on the heat ramp (ColorBrewer YlOrRd). */
void hm_html_heat(double v, char out[8]);
/* #rrggbb of v in [0, 1] on the contention ramp (ColorBrewer Purples). */
void hm_html_conf(double v, char out[8]);
/* v of n against max, log scale (one access still shows) and linear. */
double hm_html_log(uint64_t n, uint64_t max);
double hm_html_lin(uint64_t n, uint64_t max);
/* A box's fill as fill="..." data-lin="..." data-log="...": the page's toggle swaps
 * them (log by default). n 0 is white on both. */
void hm_html_fill_attrs(FILE *out, uint64_t n, uint64_t max);

/* The colour of thread tid: the first HM_HTML_THREAD_COLOURS threads of the recording
 * by accesses keep one colour (Okabe-Ito, told apart by most colour-blind readers) in
 * every part of the page; the rest are grey. */
const char *hm_html_thread_colour(const struct hm_lines *l, uint32_t tid);

/* html_line.c: the SVG of one line. */
void hm_html_line_svg(FILE *out, const struct hm_lines *l, const struct hm_line *ln,
		      size_t k, uint64_t max_records, const struct hm_heat *const *heat,
		      size_t nr_heat);
/* html_table.c: the sortable lines table; the first drawn lines link to their layouts. */
void hm_html_lines_table(FILE *out, const struct hm_lines *l, size_t drawn);
/* heatmap_html.c: one type's heat map section (id: unique in the page). */
void hm_heat_html_section(FILE *out, const struct hm_heat *h, size_t id);
extern const char hm_heat_html_css[];

#endif
