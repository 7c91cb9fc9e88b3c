/* The report page: title with the recording's source and counts, the thread key, the
 * lines table beside the shared lines' layouts, each line's verdict, evidence, checked
 * fix and who-reads-and-writes-what, then the hot types' heat maps. */
#include "render/html.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>
#include "analyzer/fixcheck.h"
#include "render/html_int.h"
#include "render/heatmap_print.h"

/* Okabe-Ito without its yellow, which vanishes on white; then black. */
static const char *const thread_rgb[HM_HTML_THREAD_COLOURS] = {
	"#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#7f3c8d", "#222222"};

static const unsigned char heat_rgb[5][3] = {
	{255, 255, 178}, {254, 204, 92}, {253, 141, 60}, {240, 59, 32}, {189, 0, 38}};
static const unsigned char conf_rgb[5][3] = {
	{242, 240, 247}, {203, 201, 226}, {158, 154, 200}, {117, 107, 177}, {84, 39, 143}};

static void ramp(const unsigned char stops[5][3], double v, char out[8])
{
	double x = (v < 0 ? 0 : v > 1 ? 1 : v) * 4;
	int i = x >= 4 ? 3 : (int)x;
	double t = x - i;
	int c[3];

	for (int k = 0; k < 3; k++)
		c[k] = (int)lround(stops[i][k] + (stops[i + 1][k] - stops[i][k]) * t);
	snprintf(out, 8, "#%02x%02x%02x", c[0] & 0xff, c[1] & 0xff, c[2] & 0xff);
}

void hm_html_heat(double v, char out[8])
{
	ramp(heat_rgb, v, out);
}

void hm_html_conf(double v, char out[8])
{
	ramp(conf_rgb, v, out);
}

double hm_html_log(uint64_t n, uint64_t max)
{
	return n && max ? log1p((double)n) / log1p((double)max) : 0;
}

double hm_html_lin(uint64_t n, uint64_t max)
{
	return n && max ? (double)n / (double)max : 0;
}

/* The lowest shade is kept for one access, so that white means none on either scale. */
void hm_html_fill_attrs(FILE *out, uint64_t n, uint64_t max)
{
	char lg[8] = "#ffffff", ln[8] = "#ffffff";

	if (n) {
		hm_html_heat(0.08 + 0.92 * hm_html_log(n, max), lg);
		hm_html_heat(0.08 + 0.92 * hm_html_lin(n, max), ln);
	}
	fprintf(out, "fill=\"%s\" data-log=\"%s\" data-lin=\"%s\"", lg, lg, ln);
}

const char *hm_html_thread_colour(const struct hm_lines *l, uint32_t tid)
{
	for (size_t i = 0; i < l->nr_threads && i < HM_HTML_THREAD_COLOURS; i++)
		if (l->threads[i].id == tid)
			return thread_rgb[i];
	return "#9a9a9a";
}

static const char *pl(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* The span of the accesses placed on lines, in seconds; 0 without times. */
static double duration_s(const struct hm_lines *l)
{
	uint64_t lo = UINT64_MAX, hi = 0;

	for (size_t i = 0; i < l->nr; i++) {
		if (l->lines[i].t_first < lo)
			lo = l->lines[i].t_first;
		if (l->lines[i].t_last > hi)
			hi = l->lines[i].t_last;
	}
	return hi > lo ? (double)(hi - lo) / 1e9 : 0;
}

static const char *secs(double s, char *buf, size_t size)
{
	if (s >= 0.1)
		snprintf(buf, size, "%.2f s", s);
	else
		snprintf(buf, size, "%.3f ms", s * 1e3);
	return buf;
}

/* What ran, for the title: the words after " -- " of a hitmap or perf command line,
 * the program without its folder. */
static const char *program(const char *cmd)
{
	const char *dd = strstr(cmd, " -- "), *sp, *sl;

	if (!dd)
		return cmd;
	cmd = dd + 4;
	sp = strchr(cmd, ' ');
	for (sl = cmd; (dd = strchr(sl, '/')) && (!sp || dd < sp); sl = dd + 1)
		;
	return sl;
}

static void title_text(FILE *out, const struct hm_html_page *p)
{
	const struct hm_lines *l = p->lines;
	double d = duration_s(l);
	char buf[32];

	fputs("hitmap: ", out);
	hm_heat_html_escape(out, p->input ? p->input : "perf.data");
	fprintf(out, " \xe2\x80\x94 %" PRIu64 " %s", l->total, pl(l->total, "sample", "samples"));
	if (d > 0)
		fprintf(out, " over %s", secs(d, buf, sizeof(buf)));
	if (p->command) {
		fputs(" of ", out);
		hm_heat_html_escape(out, program(p->command));
	}
}

static void header(FILE *out, const struct hm_html_page *p)
{
	const struct hm_lines *l = p->lines;
	size_t shared = 0;
	char buf[32];

	for (size_t i = 0; i < l->nr; i++)
		shared += hm_verdict_shared(l->lines[i].verdict) != 0;
	fputs("<header>\n<h1>", out);
	title_text(out, p);
	fputs("</h1>\n<p class=\"note\" id=\"source\">file <code>", out);
	hm_heat_html_escape(out, p->input ? p->input : "perf.data");
	fputs("</code>", out);
	if (p->command) {
		fputs(", command <code>", out);
		hm_heat_html_escape(out, p->command);
		fputs("</code>", out);
	}
	if (duration_s(l) > 0)
		fprintf(out, ", %s sampled", secs(duration_s(l), buf, sizeof(buf)));
	fprintf(out, "; %s samples: %" PRIu64 ", %" PRIu64 " with a data address, %" PRIu64
		     " resolved to an object, %" PRIu64 " lost; %zu %s of %u bytes, %zu shared."
		     "</p>\n", hm_source_name(l->source), l->total, l->with_addr, l->resolved,
		p->lost, l->nr, pl(l->nr, "line", "lines"), l->line_size, shared);
	fputs("<p class=\"controls\">colour scale: <button type=\"button\" id=\"scale-log\" "
	      "class=\"on\">log</button><button type=\"button\" id=\"scale-lin\">linear</button>"
	      " <span class=\"note\">(click a table header to sort)</span></p>\n", out);
	fputs("</header>\n", out);
}

static void thread_key(FILE *out, const struct hm_lines *l)
{
	fputs("<div class=\"key\" id=\"threads\"><b>threads</b>", out);
	for (size_t i = 0; i < l->nr_threads && i < HM_HTML_THREAD_COLOURS + 1; i++) {
		const struct hm_count *c = &l->threads[i];

		if (i == HM_HTML_THREAD_COLOURS) {
			fprintf(out, "<span class=\"tk\"><i style=\"background:#9a9a9a\"></i>%zu "
				     "others</span>", l->nr_threads - i);
			break;
		}
		fprintf(out, "<span class=\"tk\" data-tid=\"%u\"><i style=\"background:%s\"></i>"
			     "tid %u <small>(pid %u: %" PRIu64 " loads, %" PRIu64 " stores)"
			     "</small></span>", c->id, hm_html_thread_colour(l, c->id), c->id,
			c->pid, c->loads, c->stores);
	}
	fputs("<span class=\"tk\"><i class=\"wk\"></i>writes</span><span class=\"tk\">"
	      "<i class=\"rk\"></i>reads only</span></div>\n", out);
}

static void verdict_badge(FILE *out, enum hm_verdict v)
{
	const char *n = hm_verdict_name(v);

	fprintf(out, "<span class=\"verdict v-%s\" data-verdict=\"%s\">", n, n);
	for (; *n; n++)
		fputc(*n == '_' ? ' ' : *n, out);
	fputs("</span>", out);
}

/* The fix as a fix only where fixcheck's replay showed it removes the false sharing; a
 * fix not examined, or one no layout expresses (true sharing), as a suggestion; a failed
 * one is gone (fixcheck cleared it). Then what the replay showed, or why none ran. */
static void fix_block(FILE *out, const struct hm_line *ln)
{
	if (ln->fix && ln->fix_check == HM_FIX_REPLAYED) {
		fputs("<p class=\"fix\"><b>fix (replayed):</b> ", out);
		hm_heat_html_escape(out, ln->fix);
		fputs("</p>\n", out);
	} else if (ln->fix) {
		/* not examined, or no layout expresses it (true sharing): what to do instead */
		fputs("<p class=\"fix unchecked\"><b>suggestion (not replayed):</b> ", out);
		hm_heat_html_escape(out, ln->fix);
		fputs("</p>\n", out);
	}
	if (ln->fix_replay) {
		fputs("<p class=\"replay\">", out);
		hm_heat_html_escape(out, ln->fix_replay);
		fputs("</p>\n", out);
	}
	if (ln->advice) {
		fputs("<p class=\"advice\">", out);
		hm_heat_html_escape(out, ln->advice);
		fputs("</p>\n", out);
	}
}

static const struct hm_count *thread_of(const struct hm_lfield *f, uint32_t tid)
{
	for (uint32_t i = 0; i < f->nr_threads; i++)
		if (f->threads[i].id == tid)
			return &f->threads[i];
	return NULL;
}

/* Field by thread: who writes and who reads each field of the line. */
static void who_table(FILE *out, const struct hm_lines *l, const struct hm_line *ln)
{
	fputs("<table class=\"who\"><thead><tr><th>field</th><th>+off/size</th>", out);
	for (uint32_t t = 0; t < ln->nr_threads; t++)
		fprintf(out, "<th><i style=\"background:%s\"></i>tid %u</th>",
			hm_html_thread_colour(l, ln->threads[t].id), ln->threads[t].id);
	fputs("</tr></thead><tbody>\n", out);
	for (uint32_t i = 0; i < ln->nr_fields; i++) {
		const struct hm_lfield *f = &ln->fields[i];

		fputs("<tr><td class=\"fname\">", out);
		hm_heat_html_escape(out, f->field);
		if (f->size)
			fprintf(out, "</td><td>+0x%x/%u</td>", f->offset, f->size);
		else
			fprintf(out, "</td><td>+0x%x</td>", f->offset);	/* size unknown */
		for (uint32_t t = 0; t < ln->nr_threads; t++) {
			const struct hm_count *c = thread_of(f, ln->threads[t].id);

			if (!c) {
				fputs("<td></td>", out);
				continue;
			}
			fprintf(out, "<td class=\"%s\" data-tid=\"%u\" style=\"border-left-color:%s\">",
				c->writes ? "w" : "r", c->id, hm_html_thread_colour(l, c->id));
			if (c->writes)
				fprintf(out, "writes %" PRIu64 ", ", c->writes);
			fprintf(out, "reads %" PRIu64 "</td>", c->loads);
		}
		fputs("</tr>\n", out);
	}
	fputs("</tbody></table>\n", out);
}

static void line_section(FILE *out, const struct hm_lines *l, size_t k, uint64_t max_records,
			 const struct hm_html_page *p)
{
	const struct hm_line *ln = &l->lines[k];

	fprintf(out, "<section class=\"line\" id=\"line-%zu\">\n<h3>line %zu: 0x%" PRIx64 " ",
		k + 1, k + 1, ln->addr);
	if (ln->object) {
		fputs("<span class=\"obj\">", out);
		hm_heat_html_escape(out, ln->object);
		fputs("</span> ", out);
	}
	verdict_badge(out, ln->verdict);
	if (ln->confidence != HM_CONF_NONE)
		fprintf(out, " <small>confidence %s</small>", hm_confidence_name(ln->confidence));
	fprintf(out, "</h3>\n<p class=\"note\">%" PRIu64 " %s, %" PRIu64 " accesses (%" PRIu64
		     " loads, %" PRIu64 " stores) by %u %s on %u %s</p>\n", ln->contention,
		hm_contention_name(l->source), ln->records, ln->loads, ln->stores, ln->nr_threads,
		pl(ln->nr_threads, "thread", "threads"), ln->nr_cpus, pl(ln->nr_cpus, "CPU", "CPUs"));
	if (ln->evidence) {
		fputs("<p class=\"evidence\">", out);
		hm_heat_html_escape(out, ln->evidence);
		fputs("</p>\n", out);
	}
	fix_block(out, ln);
	hm_html_line_svg(out, l, ln, k, max_records, p->heat, p->nr_heat);
	who_table(out, l, ln);
	fputs("</section>\n", out);
}

/* The lines drawn: the shared ones first (the ranking puts them there), at most
 * HM_HTML_LINES_DRAWN, and none that one thread alone touched unless nothing is shared. */
static size_t lines_drawn(const struct hm_lines *l)
{
	size_t n = 0;

	while (n < l->nr && n < HM_HTML_LINES_DRAWN && l->lines[n].nr_threads > 1)
		n++;
	return n ? n : (l->nr < 3 ? l->nr : 3);
}

/* Sorting on a header's click (descending first, again to reverse) and the colour
 * toggle. A URL fragment #sort=KEY&dir=asc&scale=lin clicks the same header and button
 * on load: a link can open the page sorted, and the test drives the real handlers. */
static const char js[] =
	"(function(){\n"
	"function val(td){var v=td.getAttribute('data-v');return v===null?td.textContent:v;}\n"
	"function sortBy(th,desc){var tb=th.closest('table').tBodies[0],i=th.cellIndex,"
	"num=th.classList.contains('n');var rows=Array.prototype.slice.call(tb.rows);"
	"rows.sort(function(a,b){var x=val(a.cells[i]),y=val(b.cells[i]);"
	"var c=num?(+x)-(+y):String(x).localeCompare(String(y));return desc?-c:c;});"
	"rows.forEach(function(r){tb.appendChild(r);});"
	"th.closest('tr').querySelectorAll('th').forEach(function(h){h.removeAttribute("
	"'aria-sort');});th.setAttribute('aria-sort',desc?'descending':'ascending');}\n"
	"document.querySelectorAll('table.sortable th').forEach(function(th){"
	"th.addEventListener('click',function(){sortBy(th,th.getAttribute('aria-sort')!=="
	"'descending');});});\n"
	"function scale(s){document.querySelectorAll('[data-'+s+']').forEach(function(e){"
	"e.setAttribute('fill',e.getAttribute('data-'+s));});"
	"document.body.setAttribute('data-scale',s);"
	"document.getElementById('scale-log').classList.toggle('on',s==='log');"
	"document.getElementById('scale-lin').classList.toggle('on',s==='lin');}\n"
	"document.getElementById('scale-log').addEventListener('click',function(){scale('log');});\n"
	"document.getElementById('scale-lin').addEventListener('click',function(){scale('lin');});\n"
	"var q={};location.hash.replace(/^#/,'').split('&').forEach(function(kv){"
	"var p=kv.split('=');if(p[0])q[p[0]]=p[1]||'';});\n"
	"scale('log');if(q.scale==='lin')document.getElementById('scale-lin').click();\n"
	"if(q.sort){var th=document.querySelector('#lines th[data-key=\"'+q.sort+'\"]');"
	"if(th){th.click();if(q.dir==='asc')th.click();}}\n"
	"document.body.setAttribute('data-js','ready');\n"
	"})();\n";

static const char css[] =
	"body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:20px;"
	"color:#222;background:#fff}\n"
	"h1{font-size:19px;margin:0 0 4px}h3{font-size:15px;margin:4px 0}\n"
	"code{font:12px ui-monospace,Menlo,Consolas,monospace;background:#f2f2f2;padding:0 3px}\n"
	".note{color:#555;margin:2px 0 8px}.controls button{font:inherit;margin-left:4px;"
	"border:1px solid #999;background:#fff;padding:1px 8px;cursor:pointer}"
	".controls button.on{background:#333;color:#fff}\n"
	".key{margin:6px 0 12px}.tk{margin-left:14px;white-space:nowrap}.tk i,.who th i{"
	"display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-1px;"
	"border-radius:2px}\n"
	".tk i.wk{background:#555}.tk i.rk{background:rgba(85,85,85,.25);border:1px solid #555;"
	"box-sizing:border-box}\n"
	".main{display:grid;grid-template-columns:max-content minmax(560px,1fr);gap:16px;"
	"align-items:start}\n.side{position:sticky;top:8px;max-height:96vh;overflow:auto}\n"
	"table{border-collapse:collapse;font-size:12px}th,td{padding:2px 5px;border-bottom:1px "
	"solid #e4e4e4;text-align:left}td.n,th.n{text-align:right}\n"
	"table.sortable th{cursor:pointer;background:#f4f4f4;position:sticky;top:0}"
	"th[aria-sort=ascending]::after{content:' \\25B2'}th[aria-sort=descending]::after{"
	"content:' \\25BC'}\n"
	"tr.shared td{background:#fff5f0}td.obj{max-width:14em;overflow:hidden;"
	"text-overflow:ellipsis;white-space:nowrap}\n"
	".verdict{font-size:12px;padding:1px 6px;border-radius:3px;background:#eee;"
	"white-space:nowrap}.v-false_sharing{background:#bd0026;color:#fff}.v-true_sharing{"
	"background:#54278f;color:#fff}.v-too_few_samples{background:#fec44f}\n"
	"section.line{border:1px solid #ddd;border-radius:4px;padding:8px 12px;margin:0 0 16px}\n"
	".obj{font-family:ui-monospace,Menlo,Consolas,monospace}\n"
	".fix{background:#edf8e9;border-left:4px solid #31a354;padding:4px 8px;margin:6px 0}"
	".fix.unchecked{background:#fff7e6;border-left-color:#e69f00}.replay,.advice{"
	"color:#555;margin:2px 0 6px}.evidence{margin:2px 0}\n"
	"table.who td.w,table.who td.r{border-left:6px solid}table.who td.w{font-weight:bold}\n"
	"table.who .fname{font-family:ui-monospace,Menlo,Consolas,monospace}\n"
	"svg{max-width:100%;height:auto}\n"
	"svg.lsvg .lbg{fill:#fafafa;stroke:#bbb}svg.lsvg .grid,svg.lsvg .lead{stroke:#ccc;"
	"stroke-width:1;fill:none}svg.lsvg .lead{stroke:#999}\n"
	"svg.lsvg .objb path{stroke:#333;stroke-width:1.5;fill:none}svg.lsvg .objb text{"
	"font-size:11px;fill:#333}\n"
	"svg.lsvg rect.mem{fill:none;stroke:#999;stroke-dasharray:3 2}svg.lsvg rect.mh{"
	"fill:#ececec;stroke:none}\n"
	"svg.lsvg rect.f{stroke:#444;stroke-width:1}svg.lsvg g.fld:hover rect.f{stroke:#000;"
	"stroke-width:2.5}svg.lsvg g.fld text{text-anchor:middle;fill:#222;paint-order:stroke;"
	"stroke:#fff;stroke-width:2.5px}\n"
	"svg.lsvg rect.th.r{fill-opacity:.25}svg.lsvg text.lbl{font-size:11px;fill:#111}svg.lsvg text.mname{fill:#777}\n";

void hm_html_print_report(FILE *out, const struct hm_html_page *p)
{
	const struct hm_lines *l = p->lines;
	size_t drawn = lines_drawn(l);
	uint64_t max_records = 0;

	for (size_t k = 0; k < drawn; k++)
		for (uint32_t i = 0; i < l->lines[k].nr_fields; i++)
			if (l->lines[k].fields[i].records > max_records)
				max_records = l->lines[k].fields[i].records;
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>",
	      out);
	title_text(out, p);
	fprintf(out, "</title>\n<style>\n%s%s</style>\n</head>\n<body>\n", css, hm_heat_html_css);
	header(out, p);
	thread_key(out, l);
	fputs("<div class=\"main\">\n<div class=\"side\">\n", out);
	hm_html_lines_table(out, l, drawn);
	fputs("</div>\n<div class=\"layouts\">\n", out);
	if (!drawn)
		fputs("<p>No line has an access with a data address: record memory samples "
		      "(hitmap record -c timer).</p>\n", out);
	for (size_t k = 0; k < drawn; k++)
		line_section(out, l, k, max_records, p);
	fputs("</div>\n</div>\n", out);
	if (p->nr_heat)
		fputs("<h2>Hot types</h2>\n<p class=\"note\">Each type's layout with the accesses "
		      "of all its instances summed, drawn as if each instance started on a line "
		      "boundary; the lines above show where the instances really sit.</p>\n", out);
	for (size_t i = 0; i < p->nr_heat; i++)
		hm_heat_html_section(out, p->heat[i], i);
	fprintf(out, "<script>\n%s</script>\n</body>\n</html>\n", js);
}
