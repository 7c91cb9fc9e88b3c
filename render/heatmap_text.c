/* The heat map as text (hitmap layout's columns plus the counts) and as JSON. */
#include "analyzer/heatmap.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/shape.h"
#include "core/oom.h"
#include "render/heatmap_print.h"

/* Text: hitmap layout's columns, flattened to leaf members, then the counts. */
#define TYPE_COL 26
#define NAME_COL 21
#define LEFT_MIN 66	/* the pahole columns after the tab: type, name, offset comment */
#define BAR_MAX 10

static int is_tail(const struct hm_heat *h, const struct hm_heat_field *f)
{
	return f->hole && f->offset + f->size == h->size;
}

static char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		hm_oom();
	va_end(ap);
	return s;
}

/* The pahole part of a row, without the leading tab; malloc'd. */
static char *left_text(const struct hm_heat *h, const struct hm_heat_field *f)
{
	unsigned long long off = f->offset, size = f->size;
	char *decl, *s;

	if (f->hole)
		return xasprintf("/* XXX %llu byte%s %s */", size, size == 1 ? "" : "s",
				 is_tail(h, f) ? "padding" : "hole, try to pack");
	decl = xasprintf("%-*s %s;", TYPE_COL, f->type_col, f->name_col);
	if (f->bit_size)
		s = xasprintf("%-*s /* %5llu:%2u%3llu */", TYPE_COL + 1 + NAME_COL, decl, off,
			      f->bit_in_unit, size);
	else
		s = xasprintf("%-*s /* %5llu %5llu */", TYPE_COL + 1 + NAME_COL, decl, off, size);
	free(decl);
	return s;
}

static char *marker_text(const struct hm_heat *h, uint64_t line, uint64_t at)
{
	unsigned long long start = line * h->line_size;

	if (at > start)
		return xasprintf("/* --- cacheline %llu boundary (%llu bytes) was %llu bytes ago "
				 "--- */", (unsigned long long)line, start,
				 (unsigned long long)at - start);
	return xasprintf("/* --- cacheline %llu boundary (%llu bytes) --- */",
			 (unsigned long long)line, start);
}

static char *fold_text(const struct hm_heat_fold *fo)
{
	return xasprintf("/* %s[%llu..%llu]: %llu bytes, counted in the %s[*] rows */", fo->path,
			 (unsigned long long)fo->first, (unsigned long long)fo->last,
			 (unsigned long long)fo->size, fo->path);
}

struct text {
	FILE *out;
	const struct hm_heat *h;
	int width;		/* of the pahole part, so the counts line up */
	uint64_t next_line;	/* first line whose boundary is not printed yet */
};

/* Pads to the counts unless none follow. */
static void put_left(struct text *p, char *s, int pad)
{
	fprintf(p->out, "\t%-*s", pad ? p->width : 0, s);
	free(s);
}

static void put_counts(struct text *p, uint64_t loads, uint64_t stores, uint32_t threads,
		       uint64_t conflicts)
{
	fprintf(p->out, " %6llu %6llu %7u %9llu", (unsigned long long)loads,
		(unsigned long long)stores, threads, (unsigned long long)conflicts);
}

static void marks_upto(struct text *p, uint64_t at)
{
	const struct hm_heat *h = p->h;

	for (; p->next_line < h->nr_lines && p->next_line * h->line_size <= at; p->next_line++) {
		const struct hm_heat_line *l = &h->lines[p->next_line];

		put_left(p, marker_text(h, p->next_line, at), 1);
		put_counts(p, l->loads, l->stores, l->threads, l->conflicts);
		fputc('\n', p->out);
		/* on a row of its own, so that rows fit 120 columns */
		if (l->line_writers > 1)
			fprintf(p->out, "\t/* ^ %u threads write this line */\n", l->line_writers);
		else if (l->writers > 1)
			fprintf(p->out, "\t/* ^ %u threads write it, each in its own instance's "
					"line: not shared */\n", l->writers);
		else if (l->writers == 1 && l->threads > 1)
			fprintf(p->out, "\t/* ^ 1 thread writes, %u %s this line */\n",
				l->threads - 1, l->threads == 2 ? "other accesses" : "others access");
	}
}

static void put_row(struct text *p, const struct hm_heat_field *f)
{
	const struct hm_heat *h = p->h;
	uint64_t heat = f->loads + f->stores + f->other;

	if (is_tail(h, f) && !heat)
		return;	/* trailing padding shows in the summary, as in pahole */
	marks_upto(p, f->offset);
	if (f->hole)
		fputc('\n', p->out);
	put_left(p, left_text(h, f), !f->hole || heat);
	if (!f->hole || heat) {
		int bar = heat ? (int)((double)heat * BAR_MAX / (double)h->max_heat + 0.999) : 0;

		put_counts(p, f->loads, f->stores, f->threads, f->conflicts);
		if (bar)
			fprintf(p->out, "  %.*s", bar, "##########");
	}
	fputc('\n', p->out);
	if (f->hole && heat)
		fprintf(p->out, "\t/* ^ accesses in a hole: report with the build that was "
				"recorded */\n");
	if (f->hole && !is_tail(h, f))
		fputc('\n', p->out);
}

static int text_width(const struct hm_heat *h)
{
	int w = LEFT_MIN;

	for (uint32_t i = 0; i < h->nr_fields; i++) {
		char *s = left_text(h, &h->fields[i]);

		if ((int)strlen(s) > w)
			w = (int)strlen(s);
		free(s);
	}
	for (uint32_t i = 0; i < h->nr_folds; i++) {
		char *s = fold_text(&h->folds[i]);

		if ((int)strlen(s) > w)
			w = (int)strlen(s);
		free(s);
	}
	for (uint64_t i = 0; i < h->nr_lines; i++) {
		char *s = marker_text(h, i, h->size);

		if ((int)strlen(s) > w)
			w = (int)strlen(s);
		free(s);
	}
	return w;
}

static void put_summary(struct text *p)
{
	const struct hm_heat *h = p->h;
	uint64_t pad = hm_shape_padding(h->type), loads = 0, stores = 0, other = 0, conf = 0;
	unsigned shared = 0;
	uint32_t nr;

	hm_type_members(h->type, &nr);
	for (uint64_t i = 0; i < h->nr_lines; i++) {
		loads += h->lines[i].loads;
		stores += h->lines[i].stores;
		other += h->lines[i].other;
		conf += h->lines[i].conflicts;
		shared += h->lines[i].line_writers > 1;
	}
	fprintf(p->out, "\n\t/* size: %llu, cachelines: %llu, members: %u */\n",
		(unsigned long long)h->size, (unsigned long long)h->nr_lines, nr);
	if (pad && h->type->kind != HM_T_UNION)
		fprintf(p->out, "\t/* padding: %llu */\n", (unsigned long long)pad);
	if (h->size % h->line_size)
		fprintf(p->out, "\t/* last cacheline: %llu bytes */\n",
			(unsigned long long)(h->size % h->line_size));
	fprintf(p->out, "\t/* accesses: %llu (%llu loads, %llu stores",
		(unsigned long long)h->accesses, (unsigned long long)loads,
		(unsigned long long)stores);
	if (other)
		fprintf(p->out, ", %llu of unknown direction", (unsigned long long)other);
	fprintf(p->out, "), conflicts: %llu */\n", (unsigned long long)conf);
	if (h->outside)
		fprintf(p->out, "\t/* %llu accesses beyond the type's %llu bytes are not counted "
				"above: an array of these, or a flexible member */\n",
			(unsigned long long)h->outside, (unsigned long long)h->size);
	if (shared)
		fprintf(p->out, "\t/* lines written by 2+ threads: %u; give each thread's fields "
				"their own %u-byte line (pad, or __aligned__(%u)) */\n",
			shared, h->line_size, h->line_size);
}

void hm_heat_print_text(FILE *out, const struct hm_heat *h)
{
	struct text p = {.out = out, .h = h, .width = text_width(h)};
	const struct hm_type *st = h->type ? hm_type_strip(h->type) : NULL;
	int anon = st && !st->name && st->alias;	/* typedef struct { .. } lreg_args; */
	char *head = anon ? xasprintf("typedef %s {", hm_type_keyword(h->type))
			  : xasprintf("%s %s {", hm_type_keyword(h->type), h->name);

	/* the opening line is the header: the tab of the rows counts as 8 columns */
	fprintf(out, "%-*s %6s %6s %7s %9s  %s\n", p.width + 8, head, "loads", "stores",
		"threads", "conflicts", "heat");
	free(head);
	for (uint32_t i = 0, k = 0; i <= h->nr_fields; i++) {
		uint64_t at = i < h->nr_fields ? h->fields[i].offset : UINT64_MAX;

		for (; k < h->nr_folds && h->folds[k].offset <= at; k++) {
			char *s = fold_text(&h->folds[k]);

			marks_upto(&p, h->folds[k].offset);
			fprintf(out, "\t%s\n", s);
			free(s);
		}
		if (i < h->nr_fields)
			put_row(&p, &h->fields[i]);
	}
	marks_upto(&p, h->size);
	put_summary(&p);
	if (anon)
		fprintf(out, "} %s;\n", h->name);
	else
		fprintf(out, "};\n");
}

void hm_heat_print_json(struct hm_json *j, const struct hm_heat *h)
{
	hm_json_obj_begin(j, NULL);
	hm_json_str(j, "type", h->name);
	hm_json_str(j, "kind", hm_type_keyword(h->type));
	hm_json_u64(j, "size", h->size);
	hm_json_u64(j, "line_size", h->line_size);
	hm_json_u64(j, "accesses", h->accesses);
	hm_json_u64(j, "outside", h->outside);
	hm_json_bool(j, "all_elems", h->all_elems);
	hm_json_arr_begin(j, "fields");
	for (uint32_t i = 0; i < h->nr_fields; i++) {
		const struct hm_heat_field *f = &h->fields[i];

		hm_json_obj_begin(j, NULL);
		hm_json_str(j, "field", f->path);	/* deprecated: a path, not TYPE.MEMBER */
		hm_json_str(j, "member", f->path);
		hm_json_u64(j, "offset", f->offset);
		hm_json_u64(j, "size", f->size);
		if (f->bit_size) {
			hm_json_u64(j, "bit_offset", f->bit_in_unit);
			hm_json_u64(j, "bit_size", f->bit_size);
		}
		hm_json_u64(j, "line", f->line);
		hm_json_bool(j, "straddles", f->straddles);
		hm_json_u64(j, "loads", f->loads);
		hm_json_u64(j, "stores", f->stores);
		hm_json_u64(j, "other", f->other);
		hm_json_u64(j, "threads", f->threads);	/* deprecated: a count named like a list */
		hm_json_u64(j, "nr_threads", f->threads);
		hm_json_u64(j, "conflicts", f->conflicts);
		hm_json_obj_end(j);
	}
	hm_json_arr_end(j);
	hm_json_arr_begin(j, "lines");
	for (uint64_t i = 0; i < h->nr_lines; i++) {
		const struct hm_heat_line *l = &h->lines[i];

		hm_json_obj_begin(j, NULL);
		hm_json_u64(j, "line", l->line);
		hm_json_u64(j, "loads", l->loads);
		hm_json_u64(j, "stores", l->stores);
		hm_json_u64(j, "other", l->other);
		hm_json_u64(j, "threads", l->threads);	/* deprecated, as above */
		hm_json_u64(j, "nr_threads", l->threads);
		hm_json_u64(j, "readers", l->readers);
		hm_json_u64(j, "writers", l->writers);
		hm_json_u64(j, "line_writers", l->line_writers);
		hm_json_u64(j, "conflicts", l->conflicts);
		hm_json_obj_end(j);
	}
	hm_json_arr_end(j);
	hm_json_obj_end(j);
}
