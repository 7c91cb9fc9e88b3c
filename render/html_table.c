/* The lines table of the page, perf c2c's "Shared Data Cache Line Table" in spirit: one
 * row per line, most contended first, sortable by any column (the page's script; each
 * cell's data-v is what it sorts by). */
#include <inttypes.h>

#include "render/html.h"
#include "render/html_int.h"
#include "render/heatmap_print.h"

static void num(FILE *out, uint64_t v)
{
	fprintf(out, "<td class=\"n\" data-v=\"%" PRIu64 "\">%" PRIu64 "</td>", v, v);
}

static void head(FILE *out, const struct hm_lines *l, int pmu)
{
	static const struct { const char *key, *label; int n; } cols[] = {
		{"rank", "#", 1}, {"line", "line", 0}, {"object", "object", 0},
		{"verdict", "verdict", 0}, {"contention", NULL, 1}, {"pct", "%", 1},
		{"records", "records", 1}, {"loads", "loads", 1}, {"stores", "stores", 1},
		{"threads", "threads", 1}, {"cpus", "cpus", 1},
	};

	fputs("<table class=\"sortable\" id=\"lines\"><thead><tr>", out);
	for (size_t i = 0; i < sizeof(cols) / sizeof(cols[0]); i++)
		fprintf(out, "<th data-key=\"%s\"%s>%s</th>", cols[i].key,
			cols[i].n ? " class=\"n\"" : "",
			cols[i].label ? cols[i].label : hm_contention_name(l->source));
	if (pmu)
		fputs("<th data-key=\"lcl_hitm\" class=\"n\">lcl HITM</th>"
		      "<th data-key=\"rmt_hitm\" class=\"n\">rmt HITM</th>", out);
	fputs("</tr></thead>\n<tbody>\n", out);
}

static void row(FILE *out, const struct hm_lines *l, size_t k, size_t drawn, uint64_t total,
		int pmu)
{
	const struct hm_line *ln = &l->lines[k];
	const char *v = hm_verdict_name(ln->verdict);

	fprintf(out, "<tr%s>", hm_verdict_shared(ln->verdict) ? " class=\"shared\"" : "");
	num(out, k + 1);
	fprintf(out, "<td data-v=\"%08x%016" PRIx64 "\">", ln->pid, ln->addr);
	if (k < drawn)
		fprintf(out, "<a href=\"#line-%zu\">0x%" PRIx64 "</a></td>", k + 1, ln->addr);
	else
		fprintf(out, "0x%" PRIx64 "</td>", ln->addr);
	fputs("<td class=\"obj\" title=\"", out);
	hm_heat_html_escape(out, ln->object ? ln->object : "?");
	fputs("\">", out);
	hm_heat_html_escape(out, ln->object ? ln->object : "?");
	fprintf(out, "</td><td data-v=\"%d%s\"><span class=\"verdict v-%s\">",
		hm_verdict_shared(ln->verdict) ? 0 : 1, v, v);
	for (const char *c = v; *c; c++)
		fputc(*c == '_' ? ' ' : *c, out);
	fputs("</span></td>", out);
	num(out, ln->contention);
	fprintf(out, "<td class=\"n\" data-v=\"%.4f\">%.1f</td>",
		total ? 100.0 * (double)ln->contention / (double)total : 0.0,
		total ? 100.0 * (double)ln->contention / (double)total : 0.0);
	num(out, ln->records);
	num(out, ln->loads);
	num(out, ln->stores);
	num(out, ln->nr_threads);
	num(out, ln->nr_cpus);
	if (pmu) {
		num(out, ln->c2c ? ln->c2c->hitm_local : 0);
		num(out, ln->c2c ? ln->c2c->hitm_remote : 0);
	}
	fputs("</tr>\n", out);
}

void hm_html_lines_table(FILE *out, const struct hm_lines *l, size_t drawn)
{
	size_t n = l->nr < HM_HTML_TABLE_MAX ? l->nr : HM_HTML_TABLE_MAX;
	int pmu = l->by_source[HM_SRC_PMU] != 0;
	uint64_t total = 0;

	for (size_t k = 0; k < l->nr; k++)
		total += l->lines[k].contention;
	head(out, l, pmu);
	for (size_t k = 0; k < n; k++)
		row(out, l, k, drawn, total, pmu);
	fputs("</tbody></table>\n", out);
	if (n < l->nr)
		fprintf(out, "<p class=\"note\">the %zu busiest of %zu lines; hitmap report "
			     "--view lines --top 0 lists every one</p>\n", n, l->nr);
}
