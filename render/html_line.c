/* One cache line as SVG: its bytes left to right; above them the objects that lie on it,
 * each at its real address (an object may start on an earlier line or end on a later
 * one, and two instances of a type are two objects); the accessed fields as boxes
 * coloured by accesses over the outlines of their type's other members; under each box a
 * stripe per thread, solid where it writes, pale where it only reads; the labels below,
 * with a leader to their box, so that a one-byte field's name is as readable as a wide
 * one's. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/heatmap.h"
#include "render/html_int.h"
#include "core/oom.h"
#include "render/heatmap_print.h"

#define SVG_W 640
#define AREA_X 20
#define AREA_W 600.0
#define RULER_H 16
#define OBJ_H 21
#define BOX_H 30
#define STRIPE_H 7
#define STRIPES_MAX 6		/* thread stripes under a box; its title lists the rest */
#define LABEL_H 13
#define LABEL_LANES 5
#define CHAR_W 6.7		/* 11px monospace */
#define OBJ_MAX 16		/* objects named above one line */

struct obj {
	uint64_t base, size;	/* size 0: unknown, drawn over its accessed rows */
	uint64_t lo, hi;	/* accessed bytes, from the line's start */
	const char *name;
	const struct hm_type *type;
	uint32_t lane;
};

struct geom {
	const struct hm_line *ln;
	uint32_t ls;
	double px;		/* pixels per byte */
	double y_box, y_labels;
	uint32_t stripes;	/* the most stripes under one box */
};

static double bx(const struct geom *g, double byte)
{
	return AREA_X + byte * g->px;
}

/* The distinct objects of the line's rows (by base address), in address order. */
static size_t objects(const struct hm_line *ln, struct obj *o)
{
	size_t n = 0;

	for (uint32_t i = 0; i < ln->nr_fields; i++) {
		const struct hm_lfield *f = &ln->fields[i];
		uint64_t end = (uint64_t)f->offset + (f->size ? f->size : 1);
		size_t j = 0;

		if (!f->obj_base || !f->object)
			continue;
		while (j < n && o[j].base != f->obj_base)
			j++;
		if (j == n) {
			if (n == OBJ_MAX)
				continue;
			const struct hm_type *t = hm_type_strip(f->type);

			o[n++] = (struct obj){.base = f->obj_base, .size = t ? t->size : 0,
					      .lo = f->offset, .hi = end, .name = f->object,
					      .type = f->type};
		}
		if (f->offset < o[j].lo)
			o[j].lo = f->offset;
		if (end > o[j].hi)
			o[j].hi = end;
	}
	return n;
}

/* The object's bytes on this line: [*lo, *hi) from the line's start. */
static void obj_span(const struct geom *g, const struct obj *o, double *lo, double *hi)
{
	int64_t start = (int64_t)(o->base - g->ln->addr);
	int64_t end = start + (int64_t)o->size;

	if (!o->size) {
		*lo = (double)o->lo;
		*hi = (double)o->hi;
		return;
	}
	*lo = start < 0 ? 0 : (double)start;
	*hi = end > (int64_t)g->ls ? (double)g->ls : (double)end;
}

static uint32_t obj_lanes(const struct geom *g, struct obj *o, size_t n)
{
	double end[OBJ_MAX];
	uint32_t used = 0;

	for (size_t i = 0; i < n; i++) {
		double lo, hi;
		uint32_t lane = 0;

		obj_span(g, &o[i], &lo, &hi);
		while (lane < used && end[lane] > lo)
			lane++;
		if (lane == used)
			used++;
		o[i].lane = lane;
		end[lane] = hi;
	}
	return used;
}

/* The object's label, as much of "name (type) at +16" as fits w pixels; an arrow
 * where it goes on past the line's edge. */
static void obj_label(FILE *out, const struct geom *g, const struct obj *o, double w)
{
	int64_t start = (int64_t)(o->base - g->ln->addr);
	const char *tn = o->type ? hm_type_name(hm_type_strip(o->type)) : NULL;
	int before = start < 0, after = o->size && start + (int64_t)o->size > (int64_t)g->ls;
	size_t fit = w > 0 ? (size_t)(w / CHAR_W) : 0, len;
	char where[40] = "", buf[256];

	fit = fit > (size_t)(before + after) ? fit - before - after : 0;
	if (start)
		snprintf(where, sizeof(where), start < 0 ? " from %" PRId64 : " at +%" PRId64, start);
	if (tn && !strstr(o->name, tn))
		snprintf(buf, sizeof(buf), "%s (%s)%s", o->name, tn, where);
	else
		snprintf(buf, sizeof(buf), "%s%s", o->name, where);
	if (strlen(buf) > fit)
		snprintf(buf, sizeof(buf), "%s%s", o->name, where);
	if (strlen(buf) > fit)
		snprintf(buf, sizeof(buf), "%s", o->name);
	len = strlen(buf);
	if (len > fit && fit >= 2) {
		buf[fit - 1] = 0;
		len = 0;
	} else if (len > fit) {
		buf[0] = 0;
	}
	fputs(before ? "\xe2\x97\x82" : "", out);
	hm_heat_html_escape(out, buf);
	fputs(!len && buf[0] ? "\xe2\x80\xa6" : "", out);
	fputs(after ? "\xe2\x96\xb8" : "", out);
}

static void draw_obj(FILE *out, const struct geom *g, const struct obj *o)
{
	double lo, hi, y = RULER_H + o->lane * OBJ_H;

	obj_span(g, o, &lo, &hi);
	fputs("<g class=\"objb\"><title>", out);
	hm_heat_html_escape(out, o->name);
	fprintf(out, " at 0x%" PRIx64 ", %" PRIu64 " bytes: line bytes %.0f..%.0f</title>",
		o->base, o->size, lo, hi);
	fprintf(out, "<path d=\"M%.1f %.1fv-5H%.1fv5\"/>", bx(g, lo), y + 19, bx(g, hi));
	fprintf(out, "<text x=\"%.1f\" y=\"%.1f\">", bx(g, lo) + 2, y + 9);
	obj_label(out, g, o, (hi - lo) * g->px - 4);
	fputs("</text></g>\n", out);
}

static const char *mname(const struct hm_heat_field *f)
{
	return f->m && f->m->name ? f->m->name : f->path;
}

/* An untouched member's name, inside its outline (its accessed neighbours' labels are
 * under the boxes). */
static void member_name(FILE *out, const struct geom *g, const struct hm_heat_field *f,
			double lo)
{
	fprintf(out, "<text class=\"mname\" x=\"%.1f\" y=\"%.1f\">", bx(g, lo) + 3,
		g->y_box + 19);
	hm_heat_html_escape(out, mname(f));
	fputs("</text>\n", out);
}

/* The members of the object's type, from its heat map, where the page has one: the
 * fields no sample touched still show where they sit. */
static void draw_members(FILE *out, const struct geom *g, const struct obj *o,
			 const struct hm_heat *const *heat, size_t nr_heat)
{
	const struct hm_heat *h = NULL;

	for (size_t i = 0; i < nr_heat && !h; i++)
		if (o->type && hm_type_strip(o->type) == heat[i]->type && heat[i]->size == o->size)
			h = heat[i];
	if (!h)
		return;
	for (uint32_t i = 0; i < h->nr_fields; i++) {
		const struct hm_heat_field *f = &h->fields[i];
		double lo = (double)(int64_t)(o->base - g->ln->addr) + (double)f->offset;
		double hi = lo + (double)f->size;

		if (f->bit_size) {
			lo += f->bit_in_unit / 8.0;
			hi = lo + f->bit_size / 8.0;
		}
		if (hi <= 0 || lo >= g->ls)
			continue;
		lo = lo < 0 ? 0 : lo;
		hi = hi > g->ls ? g->ls : hi;
		fprintf(out, "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\">"
			     "<title>", f->hole ? "mh" : "mem", bx(g, lo), g->y_box,
			(hi - lo) * g->px, BOX_H);
		hm_heat_html_escape(out, f->hole ? "(hole)" : f->path);
		fprintf(out, ": +%" PRIu64 ", %" PRIu64 " bytes; %" PRIu64 " accesses to every "
			     "instance</title></rect>\n", f->offset, f->size,
			f->loads + f->stores + f->other);
		if (!f->hole && (strlen(mname(f)) + 1) * CHAR_W < (hi - lo) * g->px)
			member_name(out, g, f, lo);
	}
}

static void box_title(FILE *out, const struct hm_lfield *f)
{
	fputs("<title>", out);
	hm_heat_html_escape(out, f->field);
	fprintf(out, " +0x%x/%u: %" PRIu64 " accesses, %" PRIu64 " loads, %" PRIu64 " stores, %"
		     PRIu64 " conflicts", f->offset, f->size, f->records, f->loads, f->stores,
		f->conflicts);
	for (uint32_t t = 0; t < f->nr_threads; t++)
		fprintf(out, "\ntid %u: %" PRIu64 " writes, %" PRIu64 " reads", f->threads[t].id,
			f->threads[t].writes, f->threads[t].loads);
	fputs("</title>", out);
}

static void draw_box(FILE *out, const struct hm_lines *l, const struct geom *g,
		     const struct hm_lfield *f, uint64_t max_records)
{
	double x = bx(g, f->offset), w = (f->size ? f->size : 1) * g->px;
	char cnt[24];

	if (x + w > AREA_X + AREA_W)
		w = AREA_X + AREA_W - x;	/* it goes on into the next line */
	fprintf(out, "<g class=\"fld\" data-field=\"");
	hm_heat_html_escape(out, f->field);
	fprintf(out, "\"><rect class=\"f\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" ",
		x, g->y_box, w, BOX_H);
	hm_html_fill_attrs(out, f->records, max_records);
	fputs(">", out);
	box_title(out, f);
	fputs("</rect>\n", out);
	snprintf(cnt, sizeof(cnt), "%" PRIu64, f->records);
	if ((strlen(cnt) + 1) * CHAR_W < w)
		fprintf(out, "<text x=\"%.1f\" y=\"%.1f\">%s</text>", x + w / 2, g->y_box + 19, cnt);
	for (uint32_t t = 0; t < f->nr_threads && t < STRIPES_MAX; t++) {
		const struct hm_count *c = &f->threads[t];
		const char *col = hm_html_thread_colour(l, c->id);

		fprintf(out, "<rect class=\"th %s\" data-tid=\"%u\" x=\"%.1f\" y=\"%.1f\" "
			     "width=\"%.1f\" height=\"%d\" fill=\"%s\" stroke=\"%s\"><title>tid %u: "
			     "%" PRIu64 " writes, %" PRIu64 " reads</title></rect>\n",
			c->writes ? "w" : "r", c->id, x, g->y_box + BOX_H + 2 + t * STRIPE_H, w,
			STRIPE_H - 1, col, col, c->id, c->writes, c->loads);
	}
	fputs("</g>\n", out);
}

/* Where the field's name goes under the boxes: centred on its box, in the first lane
 * where it overlaps no other label. */
static double label_x(const struct geom *g, const struct hm_lfield *f)
{
	double cx = bx(g, f->offset + (f->size ? f->size : 1) / 2.0);
	double tw = strlen(f->field) * CHAR_W, x = cx - tw / 2;

	if (x + tw > SVG_W - 2)
		x = SVG_W - 2 - tw;
	return x < 2 ? 2 : x;
}

static uint32_t place_labels(const struct geom *g, uint8_t *lane_of)
{
	double lane_end[LABEL_LANES] = {0};
	uint32_t used = 1;

	for (uint32_t i = 0; i < g->ln->nr_fields; i++) {
		const struct hm_lfield *f = &g->ln->fields[i];
		double x = label_x(g, f);
		uint32_t lane = 0;

		while (lane + 1 < LABEL_LANES && lane_end[lane] > x)
			lane++;
		lane_end[lane] = x + strlen(f->field) * CHAR_W + 8;
		lane_of[i] = (uint8_t)lane;
		if (lane + 1 > used)
			used = lane + 1;
	}
	return used;
}

static void draw_label(FILE *out, const struct geom *g, const struct hm_lfield *f, uint32_t lane)
{
	double cx = bx(g, f->offset + (f->size ? f->size : 1) / 2.0);
	double y0 = g->y_box + BOX_H + 2 + g->stripes * STRIPE_H;
	double y = g->y_labels + lane * LABEL_H;

	fprintf(out, "<path class=\"lead\" d=\"M%.1f %.1fV%.1f\"/><text class=\"lbl\" "
		     "x=\"%.1f\" y=\"%.1f\">", cx, y0, y + 2, label_x(g, f), y + 11);
	hm_heat_html_escape(out, f->field);
	fputs("</text>\n", out);
}

static void draw_ruler(FILE *out, const struct geom *g, double bottom)
{
	uint32_t step = g->ls / 8;

	for (uint32_t b = 0; b <= g->ls; b += step) {
		fprintf(out, "<text class=\"tick\" x=\"%.1f\" y=\"11\">%u</text>", bx(g, b) -
			(b == g->ls ? 8 : b ? 4 : 0), b);
		fprintf(out, "<path class=\"grid\" d=\"M%.1f %dV%.1f\"/>\n", bx(g, b), RULER_H - 2,
			bottom);
	}
}

void hm_html_line_svg(FILE *out, const struct hm_lines *l, const struct hm_line *ln,
		      size_t k, uint64_t max_records, const struct hm_heat *const *heat,
		      size_t nr_heat)
{
	struct obj o[OBJ_MAX];
	size_t no = objects(ln, o);
	struct geom g = {.ln = ln, .ls = l->line_size, .px = AREA_W / l->line_size};
	uint32_t lanes = obj_lanes(&g, o, no), label_lanes;
	uint8_t *lane_of = calloc(ln->nr_fields ? ln->nr_fields : 1, 1);
	double height;

	if (!lane_of)
		hm_oom();

	for (uint32_t i = 0; i < ln->nr_fields; i++)
		if (ln->fields[i].nr_threads > g.stripes)
			g.stripes = ln->fields[i].nr_threads;
	if (g.stripes > STRIPES_MAX)
		g.stripes = STRIPES_MAX;
	g.y_box = RULER_H + lanes * OBJ_H + 2;
	g.y_labels = g.y_box + BOX_H + 4 + g.stripes * STRIPE_H + 6;
	label_lanes = place_labels(&g, lane_of);
	height = g.y_labels + label_lanes * LABEL_H + 4;
	fprintf(out, "<svg class=\"lsvg\" id=\"svg-line-%zu\" width=\"%d\" height=\"%.0f\" "
		     "viewBox=\"0 0 %d %.0f\" role=\"img\" aria-label=\"line %zu layout\">\n",
		k + 1, SVG_W, height, SVG_W, height, k + 1);
	fprintf(out, "<rect class=\"lbg\" x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"%d\"/>\n",
		AREA_X, g.y_box, AREA_W, BOX_H);
	draw_ruler(out, &g, g.y_box + BOX_H);
	for (size_t i = 0; i < no; i++) {
		draw_obj(out, &g, &o[i]);
		draw_members(out, &g, &o[i], heat, nr_heat);
	}
	for (uint32_t i = 0; i < ln->nr_fields; i++)
		draw_box(out, l, &g, &ln->fields[i], max_records);
	for (uint32_t i = 0; i < ln->nr_fields; i++)
		draw_label(out, &g, &ln->fields[i], lane_of[i]);
	fputs("</svg>\n", out);
	free(lane_of);
}
