/* Heat maps as text and JSON (heatmap_text.c) and as an HTML page (heatmap_html.c). */
#ifndef HM_RENDER_HEATMAP_PRINT_H
#define HM_RENDER_HEATMAP_PRINT_H

#include <stddef.h>
#include <stdio.h>

#include "analyzer/heatmap.h"
#include "core/json.h"

/* The layout as `hitmap layout` prints it (flattened to leaf members) with loads,
 * stores, threads, conflicts and a bar per row, and line totals on the boundary rows. */
void hm_heat_print_text(FILE *out, const struct hm_heat *h);
/* One self-contained page (inline CSS and SVG, no scripts, no network) for n types. */
void hm_heat_print_html(FILE *out, const struct hm_heat *const *h, size_t n, const char *title);
/* One object: {"type","size","line_size","fields":[...],"lines":[...]}. */
void hm_heat_print_json(struct hm_json *j, const struct hm_heat *h);
/* Writes s with & < > " ' as character references. */
void hm_heat_html_escape(FILE *out, const char *s);

#endif
