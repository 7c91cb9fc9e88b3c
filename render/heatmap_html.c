/* A type's heat map in HTML: each cache line of the type a row, each field a box as
 * wide as its bytes, coloured by its accesses (data-log/data-lin: the report page's
 * toggle), each line framed by its cross-thread conflicts; the text table follows. The
 * report page (html_page.c) shows these under its lines; hm_heat_print_html is the page
 * of heat maps alone, inline CSS and SVG, no scripts or network. */
#include "analyzer/heatmap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/sort.h"
#include "core/oom.h"
#include "render/html_int.h"
#include "render/heatmap_print.h"

#define LABEL_W 96	/* "line 3" and its byte offset, left of the boxes */
#define AREA_W 640.0	/* one cache line */
#define STATS_W 300	/* line totals, right of the boxes */
#define LANE_H 34	/* one box; union members overlapping in bytes stack in lanes */
#define LINE_PAD 5
#define LINE_GAP 8
#define RULER_H 22
#define LEGEND_H 64
#define OLABEL_H 13		/* a lane of names under a line, for narrow fields */
#define OLABEL_LANES 4
#define CHAR_W 6.7	/* 11px monospace */
#define SVG_W (LABEL_W + (int)AREA_W + STATS_W)

void hm_heat_html_escape(FILE *out, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&#39;", out); break;
		default: fputc(*s, out);
		}
	}
}

/* One field's part of one cache line. */
struct seg {
	uint32_t field;
	uint64_t line;
	double x0, x1;		/* bytes from the line's start */
	uint32_t lane;
	uint8_t first;		/* the field's first line: carries the label */
	uint8_t outside;	/* its name does not fit: under the line, in lane olane */
	uint8_t olane;
};

struct plan {
	struct seg *segs;
	size_t nr;
	size_t *start;		/* segs of line k: start[k] .. start[k + 1] */
	uint32_t *lanes;	/* per line */
	uint32_t *olanes;	/* per line: lanes of names under it */
	double *y;		/* top of each line */
	double height;
};

/* Items drawn: the rows, then the folded array elements; bytes from the type's start.
 * A bitfield is drawn over its own bits, not its storage unit, so that neighbours in
 * one unit sit side by side. */
static void span_of(const struct hm_heat *h, uint32_t i, double *lo, double *hi)
{
	if (i >= h->nr_fields) {
		*lo = (double)h->folds[i - h->nr_fields].offset;
		*hi = *lo + (double)h->folds[i - h->nr_fields].size;
	} else if (h->fields[i].bit_size) {
		*lo = (double)h->fields[i].offset + h->fields[i].bit_in_unit / 8.0;
		*hi = *lo + h->fields[i].bit_size / 8.0;
	} else {
		*lo = (double)h->fields[i].offset;
		*hi = *lo + (double)h->fields[i].size;
	}
}

static void line_range(const struct hm_heat *h, uint32_t i, uint64_t *first, uint64_t *last)
{
	double lo, hi;

	span_of(h, i, &lo, &hi);
	*first = (uint64_t)lo / h->line_size;
	*last = (uint64_t)(hi > lo ? ceil(hi) - 1 : lo) / h->line_size;
	if (*last >= h->nr_lines)
		*last = h->nr_lines - 1;
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p)
		hm_oom();
	return p;
}

static int cmp_seg(const void *pa, const void *pb)
{
	const struct seg *a = pa, *b = pb;

	if (a->x0 != b->x0)
		return a->x0 < b->x0 ? -1 : 1;
	return a->field < b->field ? -1 : a->field > b->field;
}

static void assign_lanes(struct plan *p, uint64_t line)
{
	size_t n = p->start[line + 1] - p->start[line];
	double *end = xcalloc(n, sizeof(*end));
	uint32_t used = 1;

	hm_sort(&p->segs[p->start[line]], n, sizeof(*p->segs), cmp_seg);
	for (size_t i = p->start[line]; i < p->start[line + 1]; i++) {
		struct seg *s = &p->segs[i];
		uint32_t lane = 0;

		while (lane < used && end[lane] > s->x0)
			lane++;
		if (lane == used)
			used++;
		s->lane = lane;
		end[lane] = s->x1 > s->x0 ? s->x1 : s->x0 + 0.5;
	}
	p->lanes[line] = used;
	free(end);
}

static const char *seg_name(const struct hm_heat *h, const struct seg *s)
{
	const struct hm_heat_field *f = &h->fields[s->field];

	return f->hole ? "(hole)" : f->path;
}

static double seg_w(const struct hm_heat *h, const struct seg *s)
{
	double w = (s->x1 - s->x0) * (AREA_W / h->line_size);

	return w < 3 ? 3 : w;
}

/* Left end of a name under the line: at its box, kept left of the line's totals. */
static double olabel_x(const struct hm_heat *h, const struct seg *s)
{
	double x = LABEL_W + s->x0 * (AREA_W / h->line_size);
	double tw = strlen(seg_name(h, s)) * CHAR_W;

	return x + tw > LABEL_W + AREA_W ? LABEL_W + AREA_W - tw : x;
}

static int fits(double w, const char *s)
{
	return w > 8 && strlen(s) <= (size_t)((w - 6) / CHAR_W);
}

/* Names of accessed fields too narrow for them go under the line, each in the first
 * lane where it overlaps no other, with a leader to its box: "p..." says nothing. */
static uint32_t place_outside(const struct hm_heat *h, struct plan *p, uint64_t line)
{
	double end[OLABEL_LANES] = {0};
	uint32_t used = 0;

	for (size_t i = p->start[line]; i < p->start[line + 1]; i++) {
		struct seg *s = &p->segs[i];
		const struct hm_heat_field *f;
		double x;
		uint32_t lane = 0;

		if (!s->first || s->field >= h->nr_fields)
			continue;
		f = &h->fields[s->field];
		if (!(f->loads + f->stores + f->other) || fits(seg_w(h, s), seg_name(h, s)))
			continue;
		x = olabel_x(h, s);
		while (lane + 1 < OLABEL_LANES && end[lane] > x)
			lane++;
		end[lane] = x + strlen(seg_name(h, s)) * CHAR_W + 8;
		s->outside = 1;
		s->olane = (uint8_t)lane;
		if (lane + 1 > used)
			used = lane + 1;
	}
	return used;
}

static void plan_build(const struct hm_heat *h, struct plan *p)
{
	uint64_t ls = h->line_size, first, last;
	uint32_t items = h->nr_fields + h->nr_folds;
	size_t *fill;

	p->start = xcalloc(h->nr_lines + 1, sizeof(*p->start));
	for (uint32_t i = 0; i < items; i++) {
		line_range(h, i, &first, &last);
		for (uint64_t l = first; l <= last; l++)
			p->start[l + 1]++;
	}
	for (uint64_t l = 0; l < h->nr_lines; l++)
		p->start[l + 1] += p->start[l];
	p->nr = p->start[h->nr_lines];
	p->segs = xcalloc(p->nr, sizeof(*p->segs));
	fill = xcalloc(h->nr_lines, sizeof(*fill));
	for (uint32_t i = 0; i < items; i++) {
		double lo, hi;

		span_of(h, i, &lo, &hi);
		line_range(h, i, &first, &last);
		for (uint64_t l = first; l <= last; l++) {
			struct seg *s = &p->segs[p->start[l] + fill[l]++];
			double start = (double)(l * ls), end = (double)((l + 1) * ls);

			*s = (struct seg){.field = i, .line = l, .first = l == first};
			s->x0 = (lo > start ? lo : start) - start;
			s->x1 = (hi < end ? hi : end) - start;
			if (s->x1 < s->x0)
				s->x1 = s->x0;
		}
	}
	free(fill);
	p->lanes = xcalloc(h->nr_lines, sizeof(*p->lanes));
	p->y = xcalloc(h->nr_lines, sizeof(*p->y));
	p->height = RULER_H;
	p->olanes = xcalloc(h->nr_lines, sizeof(*p->olanes));
	for (uint64_t l = 0; l < h->nr_lines; l++) {
		assign_lanes(p, l);
		p->olanes[l] = place_outside(h, p, l);
		p->y[l] = p->height;
		p->height += p->lanes[l] * LANE_H + 2 * LINE_PAD + LINE_GAP + p->olanes[l] * OLABEL_H;
	}
}

static void plan_free(struct plan *p)
{
	free(p->segs);
	free(p->start);
	free(p->lanes);
	free(p->olanes);
	free(p->y);
}

static void tooltip(FILE *out, const struct hm_heat_field *f)
{
	fputs("<title>", out);
	if (f->hole) {
		fprintf(out, "(hole) %llu bytes at offset %llu", (unsigned long long)f->size,
			(unsigned long long)f->offset);
	} else {
		hm_heat_html_escape(out, f->path);
		fputs(": ", out);
		hm_heat_html_escape(out, f->type_col);
		fprintf(out, "\noffset %llu, size %llu, line %llu%s", (unsigned long long)f->offset,
			(unsigned long long)f->size, (unsigned long long)f->line,
			f->straddles ? ", straddles a line boundary" : "");
	}
	fprintf(out, "\nloads %llu, stores %llu, threads %u, conflicts %llu",
		(unsigned long long)f->loads, (unsigned long long)f->stores, f->threads,
		(unsigned long long)f->conflicts);
	if (f->other)
		fprintf(out, ", unknown direction %llu", (unsigned long long)f->other);
	fputs("</title>", out);
}

/* The label is cut to the box: the tooltip always has the whole name. */
static void label(FILE *out, double x, double y, double w, const char *s, int light)
{
	size_t fit = w > 8 ? (size_t)((w - 6) / CHAR_W) : 0, len = strlen(s);

	if (fit < 2)
		return;
	fprintf(out, "<text x=\"%.1f\" y=\"%.1f\"%s>", x + 3, y, light ? " class=\"light\"" : "");
	if (len <= fit) {
		hm_heat_html_escape(out, s);
	} else {
		char *cut = strndup(s, fit - 1);

		hm_heat_html_escape(out, cut);
		fputs("\xe2\x80\xa6", out);	/* an ellipsis */
		free(cut);
	}
	fputs("</text>\n", out);
}

static void draw_fold(FILE *out, const struct hm_heat_fold *fo, const struct seg *s, double x,
		      double y, double w)
{
	char name[256];

	snprintf(name, sizeof(name), "%s[%llu..%llu]", fo->path, (unsigned long long)fo->first,
		 (unsigned long long)fo->last);
	fprintf(out, "<rect class=\"e\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\">"
		     "<title>", x, y, w, LANE_H - 3);
	hm_heat_html_escape(out, name);
	fprintf(out, ": %llu bytes, counted in the ", (unsigned long long)fo->size);
	hm_heat_html_escape(out, fo->path);
	fputs("[*] boxes</title></rect>\n", out);
	if (s->first)
		label(out, x, y + 13, w, name, 0);
}

static void draw_seg(FILE *out, const struct hm_heat *h, const struct plan *p, const struct seg *s,
		     size_t id)
{
	double px = AREA_W / h->line_size;
	double x = LABEL_W + s->x0 * px, w = (s->x1 - s->x0) * px;
	double y = p->y[s->line] + LINE_PAD + s->lane * LANE_H;

	if (w < 3)
		w = 3;	/* zero-sized and one-byte members stay visible */
	if (s->field >= h->nr_fields) {
		draw_fold(out, &h->folds[s->field - h->nr_fields], s, x, y, w);
		return;
	}
	const struct hm_heat_field *f = &h->fields[s->field];
	uint64_t heat = f->loads + f->stores + f->other;
	double v = hm_html_log(heat, h->max_heat);

	fprintf(out, "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" ",
		f->hole ? "h" : s->first ? "f" : "fc", x, y, w, LANE_H - 3);
	if (f->hole && !heat)
		fprintf(out, "fill=\"url(#hatch-%zu)\"", id);
	else
		hm_html_fill_attrs(out, heat, h->max_heat);
	fputs(">", out);
	tooltip(out, f);
	fputs("</rect>\n", out);
	if (f->hole && !heat)
		return;
	if (s->outside) {
		double ly = p->y[s->line] + p->lanes[s->line] * LANE_H + 2 * LINE_PAD + 2 +
			    s->olane * OLABEL_H;

		fprintf(out, "<path class=\"lead\" d=\"M%.1f %.1fV%.1f\"/><text class=\"olbl\" "
			     "x=\"%.1f\" y=\"%.1f\">", x + w / 2, y + LANE_H - 3, ly + 1, olabel_x(h, s),
			ly + 10);
		hm_heat_html_escape(out, seg_name(h, s));
		fputs("</text>\n", out);
	} else {
		label(out, x, y + 13, w, seg_name(h, s), v > 0.62);
	}
	if (heat && s->first) {
		char c[64];

		snprintf(c, sizeof(c), "%llu ld %llu st", (unsigned long long)f->loads,
			 (unsigned long long)f->stores);
		if ((strlen(c) + 1) * CHAR_W > w - 6)
			snprintf(c, sizeof(c), "%llu", (unsigned long long)heat);
		label(out, x, y + 26, w, c, v > 0.62);
	}
}

/* The space after the type's last byte on its last line: the next object's. */
static void draw_end(FILE *out, const struct hm_heat *h, double y, double hgt)
{
	double px = AREA_W / h->line_size;
	double x = LABEL_W + (double)(h->size % h->line_size) * px;

	fprintf(out, "<rect class=\"end\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
		     "height=\"%.1f\"/>\n", x, y + 2, LABEL_W + AREA_W - x, hgt - 4);
	if (LABEL_W + AREA_W - x > 110)
		fprintf(out, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\">end of type</text>\n",
			x + 8, y + 17);
}

static void draw_line_stats(FILE *out, const struct hm_heat *h, const struct hm_heat_line *l,
			    double y)
{
	double x = LABEL_W + AREA_W + 16;

	fprintf(out, "<text class=\"stat\" x=\"6\" y=\"%.1f\">line %llu</text>\n", y + 17,
		(unsigned long long)l->line);
	fprintf(out, "<text x=\"6\" y=\"%.1f\">+%llu</text>\n", y + 31,
		(unsigned long long)(l->line * h->line_size));
	fprintf(out, "<text class=\"stat\" x=\"%.1f\" y=\"%.1f\">%llu loads, %llu stores</text>\n",
		x, y + 14, (unsigned long long)l->loads, (unsigned long long)l->stores);
	fprintf(out, "<text class=\"stat\" x=\"%.1f\" y=\"%.1f\">%llu conflicts, %u writer%s"
		     "</text>\n", x, y + 28, (unsigned long long)l->conflicts, l->writers,
		l->writers == 1 ? "" : "s");
	if (l->line_writers > 1)
		fprintf(out, "<text class=\"stat warn\" x=\"%.1f\" y=\"%.1f\">&#9888; %u threads "
			     "write this line</text>\n", x, y + 42, l->line_writers);
	else if (l->writers > 1)
		fprintf(out, "<text class=\"stat\" x=\"%.1f\" y=\"%.1f\">each in its own "
			     "instance's line</text>\n", x, y + 42);
}

/* The line's frame: its colour and width grow with the line's conflicts. */
static void draw_line(FILE *out, const struct hm_heat *h, const struct plan *p, uint64_t k)
{
	const struct hm_heat_line *l = &h->lines[k];
	double v = hm_html_log(l->conflicts, h->max_conflicts);
	double y = p->y[k], hgt = p->lanes[k] * LANE_H + 2 * LINE_PAD - 3;
	char stroke[8] = "#c8c8c8", fill[8] = "#fafafa";

	if (l->conflicts) {
		hm_html_conf(0.35 + 0.65 * v, stroke);
		hm_html_conf(0.05 + 0.2 * v, fill);
	}
	fprintf(out, "<rect class=\"ln\" x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
		     "fill=\"%s\" stroke=\"%s\" stroke-width=\"%.1f\"><title>line %llu: %llu "
		     "loads, %llu stores, %u threads, %u writers, %llu conflicts</title></rect>\n",
		LABEL_W - 4, y, AREA_W + 8, hgt, fill, stroke, l->conflicts ? 2 + 3 * v : 1,
		(unsigned long long)k, (unsigned long long)l->loads, (unsigned long long)l->stores,
		l->threads, l->writers, (unsigned long long)l->conflicts);
	if ((k + 1) * h->line_size > h->size)
		draw_end(out, h, y, hgt);
	draw_line_stats(out, h, l, y);
}

static void draw_ruler(FILE *out, const struct hm_heat *h)
{
	uint32_t step = h->line_size >= 16 ? h->line_size / 8 : 1;
	double px = AREA_W / h->line_size;

	for (uint32_t b = 0; b <= h->line_size; b += step)
		fprintf(out, "<text class=\"tick\" x=\"%.1f\" y=\"14\">%u</text>\n",
			LABEL_W + b * px - (b == h->line_size ? 12 : 0), b);
}

static void draw_legend(FILE *out, const struct hm_heat *h, double y, size_t id)
{
	fprintf(out, "<g transform=\"translate(%d,%.1f)\">\n", LABEL_W, y);
	fprintf(out, "<text class=\"stat\" x=\"0\" y=\"12\">accesses per field (loads+stores; "
		     "the report page toggles log and linear)</text>\n<rect x=\"0\" y=\"18\" width=\"220\" height=\"14\" "
		     "fill=\"url(#grad-%zu)\" stroke=\"#888\"/>\n", id);
	fprintf(out, "<text x=\"0\" y=\"46\">1</text><text x=\"190\" y=\"46\">%llu</text>\n",
		(unsigned long long)h->max_heat);
	fprintf(out, "<rect x=\"250\" y=\"18\" width=\"24\" height=\"14\" fill=\"#ffffff\" "
		     "stroke=\"#888\"/><text x=\"280\" y=\"29\">not accessed</text>\n");
	fprintf(out, "<rect x=\"380\" y=\"18\" width=\"24\" height=\"14\" fill=\"url(#hatch-%zu)\" "
		     "stroke=\"#888\"/><text x=\"410\" y=\"29\">hole / padding</text>\n", id);
	fprintf(out, "<rect x=\"520\" y=\"18\" width=\"24\" height=\"14\" fill=\"#fafafa\" "
		     "stroke=\"#c8c8c8\"/><rect x=\"550\" y=\"18\" width=\"24\" height=\"14\" "
		     "fill=\"#e3e0ef\" stroke=\"#54278f\" stroke-width=\"4\"/>"
		     "<text x=\"582\" y=\"29\">line frame: cross-thread conflicts, none .. "
		     "%llu</text>\n</g>\n", (unsigned long long)h->max_conflicts);
}

static void defs(FILE *out, size_t id)
{
	char c[8];

	fprintf(out, "<defs><pattern id=\"hatch-%zu\" width=\"6\" height=\"6\" "
		     "patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
		     "<rect width=\"6\" height=\"6\" fill=\"#ececec\"/><line x1=\"0\" y1=\"0\" "
		     "x2=\"0\" y2=\"6\" stroke=\"#b4b4b4\" stroke-width=\"3\"/></pattern>\n"
		     "<linearGradient id=\"grad-%zu\">", id, id);
	for (int i = 0; i <= 4; i++) {
		hm_html_heat(0.08 + 0.92 * i / 4.0, c);
		fprintf(out, "<stop offset=\"%d%%\" stop-color=\"%s\"/>", i * 25, c);
	}
	fputs("</linearGradient></defs>\n", out);
}

void hm_heat_html_section(FILE *out, const struct hm_heat *h, size_t id)
{
	struct plan p = {0};
	char *table = NULL;
	size_t len = 0;
	FILE *m;

	plan_build(h, &p);
	fprintf(out, "<section id=\"heat-%zu\">\n<h2>%s ", id,
		h->type->kind == HM_T_UNION   ? "union"
		: h->type->kind == HM_T_CLASS ? "class"
					      : "struct");
	hm_heat_html_escape(out, h->name);
	fprintf(out, "</h2>\n<p class=\"note\">%llu bytes, %llu cache line%s of %u bytes; %llu "
		     "accesses. Hover a box for its counts.</p>\n",
		(unsigned long long)h->size, (unsigned long long)h->nr_lines,
		h->nr_lines == 1 ? "" : "s", h->line_size, (unsigned long long)h->accesses);
	fprintf(out, "<svg width=\"%d\" height=\"%.0f\" viewBox=\"0 0 %d %.0f\" role=\"img\">\n",
		SVG_W, p.height + LEGEND_H, SVG_W, p.height + LEGEND_H);
	defs(out, id);
	draw_ruler(out, h);
	for (uint64_t k = 0; k < h->nr_lines; k++) {
		draw_line(out, h, &p, k);
		for (size_t i = p.start[k]; i < p.start[k + 1]; i++)
			draw_seg(out, h, &p, &p.segs[i], id);
	}
	draw_legend(out, h, p.height + 4, id);
	fputs("</svg>\n<pre>", out);
	m = open_memstream(&table, &len);
	if (!m)
		hm_oom();
	hm_heat_print_text(m, h);
	fclose(m);
	hm_heat_html_escape(out, table);
	free(table);
	fputs("</pre>\n</section>\n", out);
	plan_free(&p);
}

static const char page_css[] =
	"body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px;"
	"color:#222;background:#fff}\n"
	"h1{font-size:20px;margin:0 0 6px}\n"
	".note{color:#555;margin:2px 0 10px}\n";

const char hm_heat_html_css[] =
	"h2{font:bold 16px ui-monospace,Menlo,Consolas,monospace;margin:28px 0 4px}\n"
	"svg text{font:11px ui-monospace,Menlo,Consolas,monospace;fill:#222;"
	"pointer-events:none}\n"
	"svg text.light{fill:#fff}svg text.tick{fill:#777}\n"
	"svg text.stat{font:12px system-ui,sans-serif}svg text.warn{fill:#b00020;"
	"font-weight:bold}\n"
	"rect.f,rect.fc,rect.h{stroke:#555;stroke-width:1}\n"
	"rect.f:hover,rect.fc:hover,rect.h:hover{stroke:#000;stroke-width:2.5}\n"
	"rect.e{fill:#eef1f5;stroke:#9aa5b1;stroke-dasharray:4 3}\n"
	"rect.end{fill:#fff;stroke:none}\n"
	"svg path.lead{stroke:#888;stroke-width:1;fill:none}\n"
	"pre{font:12px/1.35 ui-monospace,Menlo,Consolas,monospace;background:#f7f7f7;"
	"border:1px solid #ddd;padding:10px;overflow-x:auto;tab-size:8}\n";

void hm_heat_print_html(FILE *out, const struct hm_heat *const *h, size_t n, const char *title)
{
	if (!title)
		title = "hitmap heat map";
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n", out);
	fputs("<title>", out);
	hm_heat_html_escape(out, title);
	fprintf(out, "</title>\n<style>\n%s%s</style>\n</head>\n<body>\n<h1>", page_css,
		hm_heat_html_css);
	hm_heat_html_escape(out, title);
	fputs("</h1>\n<p class=\"note\">Each row is one cache line; each box one field, as wide "
	      "as its bytes and coloured by its accesses. A line's frame darkens with "
	      "cross-thread conflicts: a thread touching the line after another thread, where "
	      "either stores. Hatched boxes are holes and padding.</p>\n", out);
	if (n > 1) {
		fputs("<ul>\n", out);
		for (size_t i = 0; i < n; i++) {
			fprintf(out, "<li><a href=\"#heat-%zu\">", i);
			hm_heat_html_escape(out, h[i]->name);
			fprintf(out, "</a>: %llu accesses, %llu bytes</li>\n",
				(unsigned long long)h[i]->accesses, (unsigned long long)h[i]->size);
		}
		fputs("</ul>\n", out);
	}
	if (!n)
		fputs("<p>No types to show: name a type that the recording accesses.</p>\n", out);
	for (size_t i = 0; i < n; i++)
		hm_heat_html_section(out, h[i], i);
	fputs("</body>\n</html>\n", out);
}
