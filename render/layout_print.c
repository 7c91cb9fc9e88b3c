/* pahole-style text and JSON for one aggregate. Offsets of nested members are
 * absolute from the start of the printed type, as pahole -E prints them. */
#include "render/layout_print.h"

#include <string.h>

#include "symbolize/shape.h"

#define TYPE_COL 26
#define NAME_COL 21
#define MAX_NEST 32

/* Members expanded in place per printed type: a corrupt file can share one anonymous
 * struct many times at every level, which would print exponentially. */
#define MAX_EXPANDED 20000

struct printer {
	FILE *out;
	struct hm_arena *a;
	const struct hm_print_opts *o;
	uint64_t last_line;	/* last cache line whose boundary was marked */
	const struct hm_type *open[MAX_NEST + 1];	/* types being expanded, outermost first */
	int nr_open;
	unsigned expanded;
};

/* Anonymous aggregates always print in place; named ones with -E. */
static const struct hm_type *inline_type(const struct printer *p, const struct hm_member *m)
{
	const struct hm_type *direct = hm_type_strip_cv(m->type);
	const struct hm_type *s = hm_type_strip(m->type);

	if (m->bit_size || !hm_type_is_aggregate(s) || p->nr_open > MAX_NEST ||
	    p->expanded > MAX_EXPANDED)
		return NULL;
	for (int i = 0; i < p->nr_open; i++)
		if (p->open[i] == s)
			return NULL;	/* contains itself: only in a corrupt file */
	/* A typedef of an anonymous struct prints by the typedef's name. */
	return (direct == s && !s->name) || p->o->expand ? s : NULL;
}

static void open_type(struct printer *p, const struct hm_type *t)
{
	p->open[p->nr_open++] = t;
	p->expanded++;
}

static void indent(FILE *out, int depth)
{
	for (int i = 0; i <= depth; i++)
		fputc('\t', out);
}

static void mark_line(struct printer *p, uint64_t off, int depth)
{
	uint64_t ls = p->o->line_size, line = off / ls;

	if (line <= p->last_line)
		return;
	p->last_line = line;
	indent(p->out, depth);
	if (off % ls)
		fprintf(p->out, "/* --- cacheline %llu boundary (%llu bytes) was %llu bytes ago --- */\n",
			(unsigned long long)line, (unsigned long long)(line * ls),
			(unsigned long long)(off % ls));
	else
		fprintf(p->out, "/* --- cacheline %llu boundary (%llu bytes) --- */\n",
			(unsigned long long)line, (unsigned long long)(line * ls));
}

static void comment(struct printer *p, const struct hm_member_shape *ms, uint64_t off)
{
	if (ms->m->bit_size)
		fprintf(p->out, " /* %5llu:%2u%3llu */\n", (unsigned long long)off, ms->bit_in_unit,
			(unsigned long long)ms->size);
	else
		fprintf(p->out, " /* %5llu %5llu */\n", (unsigned long long)off,
			(unsigned long long)ms->size);
}

static int col_width(int base, int depth)
{
	int w = base - 8 * depth;

	return w > 0 ? w : 0;
}

static void print_members(struct printer *p, const struct hm_type *t, uint64_t base, int depth);

static void print_member(struct printer *p, const struct hm_member_shape *ms, uint64_t base,
			 int depth)
{
	const struct hm_member *m = ms->m;
	const struct hm_type *sub = inline_type(p, m);
	uint64_t off = base + ms->offset;
	const char *tc, *nc, *name;

	mark_line(p, off, depth);
	indent(p->out, depth);
	if (sub && depth < MAX_NEST) {
		fprintf(p->out, "%s%s%s {\n", hm_type_keyword(sub), sub->name ? " " : "",
			sub->name ? sub->name : "");
		open_type(p, sub);
		print_members(p, sub, off, depth + 1);
		p->nr_open--;
		indent(p->out, depth);
		name = hm_arena_printf(p->a, "}%s%s;", m->name ? " " : "", m->name ? m->name : "");
		if (hm_type_strip(m->type) != hm_type_strip(sub))
			name = hm_arena_printf(p->a, "} %s;", m->name);
		fprintf(p->out, "%-*s", col_width(TYPE_COL, depth) + 1 + NAME_COL, name);
		comment(p, ms, off);
		return;
	}
	hm_type_decl(p->a, m->type, m->name, &tc, &nc);
	if (m->is_base)
		nc = "<ancestor>";
	name = hm_arena_printf(p->a, "%s", nc);
	if (m->bit_size)
		name = hm_arena_printf(p->a, "%s:%u", name, m->bit_size);
	if (m->align)
		name = hm_arena_printf(p->a, "%s __attribute__((__aligned__(%u)))", name, m->align);
	name = hm_arena_printf(p->a, "%s;", name);
	fprintf(p->out, "%-*s %-*s", col_width(TYPE_COL, depth), tc, NAME_COL, name);
	comment(p, ms, off);
}

static void print_holes(struct printer *p, const struct hm_member_shape *ms, int depth)
{
	if (!ms->hole_after && !ms->bit_hole_after && !ms->sub_padding)
		return;
	fputc('\n', p->out);
	if (ms->sub_padding && !ms->m->bit_size && !inline_type(p, ms->m)) {
		indent(p->out, depth);
		fprintf(p->out, "/* XXX last struct has %llu byte%s of padding */\n",
			(unsigned long long)ms->sub_padding, ms->sub_padding == 1 ? "" : "s");
	}
	if (ms->bit_hole_after) {
		indent(p->out, depth);
		fprintf(p->out, "/* XXX %u bit%s hole, try to pack */\n", ms->bit_hole_after,
			ms->bit_hole_after == 1 ? "" : "s");
	}
	if (ms->hole_after) {
		indent(p->out, depth);
		fprintf(p->out, "/* XXX %llu byte%s hole, try to pack */\n",
			(unsigned long long)ms->hole_after, ms->hole_after == 1 ? "" : "s");
	}
	fputc('\n', p->out);
}

static void print_members(struct printer *p, const struct hm_type *t, uint64_t base, int depth)
{
	struct hm_shape s;

	hm_shape_compute(p->a, t, p->o->line_size, &s);
	if (s.lead_bit_hole) {
		fputc('\n', p->out);
		indent(p->out, depth);
		fprintf(p->out, "/* XXX %u bits hole, try to pack */\n\n", s.lead_bit_hole);
	}
	for (uint32_t i = 0; i < s.nr; i++) {
		print_member(p, &s.ms[i], base, depth);
		if (t->kind != HM_T_UNION)
			print_holes(p, &s.ms[i], depth);
	}
}

static void print_summary(struct printer *p, const struct hm_shape *s)
{
	FILE *out = p->out;

	fprintf(out, "\n\t/* size: %llu, cachelines: %llu, members: %u */\n",
		(unsigned long long)s->size, (unsigned long long)s->cachelines, s->nr);
	if (s->type->kind == HM_T_UNION)
		return;	/* members overlap: sums, holes and padding mean nothing */
	uint64_t bit_bytes = (s->sum_bitfield_bits + s->sum_bit_holes + s->bit_padding + 7) / 8;

	if (s->nr_holes || s->sum_members + s->sum_holes + s->padding + bit_bytes != s->size) {
		fprintf(out, "\t/* sum members: %llu", (unsigned long long)s->sum_members);
		if (s->nr_holes)
			fprintf(out, ", holes: %llu, sum holes: %llu", (unsigned long long)s->nr_holes,
				(unsigned long long)s->sum_holes);
		fprintf(out, " */\n");
	}
	if (s->sum_bitfield_bits) {
		fprintf(out, "\t/* sum bitfield members: %llu bits",
			(unsigned long long)s->sum_bitfield_bits);
		if (s->nr_bit_holes)
			fprintf(out, ", bit holes: %llu, sum bit holes: %llu bits",
				(unsigned long long)s->nr_bit_holes,
				(unsigned long long)s->sum_bit_holes);
		fprintf(out, " */\n");
	}
	if (s->padding)
		fprintf(out, "\t/* padding: %llu */\n", (unsigned long long)s->padding);
	if (s->nr_paddings)
		fprintf(out, "\t/* paddings: %llu, sum paddings: %llu */\n",
			(unsigned long long)s->nr_paddings, (unsigned long long)s->sum_paddings);
	if (s->bit_padding)
		fprintf(out, "\t/* bit_padding: %llu bits */\n", (unsigned long long)s->bit_padding);
	if (s->nr_forced) {
		fprintf(out, "\t/* forced alignments: %llu", (unsigned long long)s->nr_forced);
		if (s->nr_forced_holes)
			fprintf(out, ", forced holes: %llu, sum forced holes: %llu",
				(unsigned long long)s->nr_forced_holes,
				(unsigned long long)s->sum_forced_holes);
		fprintf(out, " */\n");
	}
	if (s->size % s->line_size)
		fprintf(out, "\t/* last cacheline: %llu bytes */\n",
			(unsigned long long)(s->size % s->line_size));
}

void hm_layout_print_text(FILE *out, struct hm_arena *a, const struct hm_type *t,
			  const struct hm_print_opts *o)
{
	struct printer p = {.out = out, .a = a, .o = o};
	struct hm_shape s;

	t = hm_type_strip(t);
	hm_shape_compute(a, t, o->line_size, &s);
	/* typedef struct { ... } lreg_args; prints as pahole -C lreg_args prints it */
	if (!t->name && t->alias)
		fprintf(out, "typedef %s {\n", hm_type_keyword(t));
	else
		fprintf(out, "%s %s {\n", hm_type_keyword(t), t->name ? t->name : "(anonymous)");
	open_type(&p, t);
	print_members(&p, t, 0, 0);
	print_summary(&p, &s);
	fputc('}', out);
	if (s.packed)
		fprintf(out, " __attribute__((__packed__))");
	if (t->align)
		fprintf(out, " __attribute__((__aligned__(%u)))", t->align);
	if (!t->name && t->alias)
		fprintf(out, " %s", t->alias);
	fprintf(out, ";%s\n", o->close_note ? o->close_note : "");
}

static void json_members(struct printer *p, struct hm_json *j, const struct hm_type *t,
			 uint64_t base, int depth)
{
	struct hm_shape s;

	hm_shape_compute(p->a, t, p->o->line_size, &s);
	hm_json_arr_begin(j, "members");
	for (uint32_t i = 0; i < s.nr; i++) {
		const struct hm_member_shape *ms = &s.ms[i];
		const struct hm_type *sub = inline_type(p, ms->m);
		const char *tc, *nc;
		uint64_t off = base + ms->offset;

		hm_type_decl(p->a, ms->m->type, NULL, &tc, &nc);
		hm_json_obj_begin(j, NULL);
		hm_json_str(j, "name", ms->m->name);
		hm_json_str(j, "type", *nc ? hm_arena_printf(p->a, "%s %s", tc, nc) : tc);
		hm_json_u64(j, "offset", off);
		hm_json_u64(j, "size", ms->size);
		if (ms->m->bit_size) {
			hm_json_u64(j, "bit_offset", ms->bit_in_unit);
			hm_json_u64(j, "bit_size", ms->m->bit_size);
		}
		hm_json_u64(j, "align", ms->align);
		hm_json_u64(j, "line", (base * 8 + ms->m->bit_offset) / 8 / s.line_size);
		hm_json_bool(j, "straddles", ms->straddles);
		if (t->kind != HM_T_UNION) {
			hm_json_u64(j, "hole_after", ms->hole_after);
			hm_json_u64(j, "bit_hole_after", ms->bit_hole_after);
		}
		if (sub && depth < MAX_NEST) {
			open_type(p, sub);
			json_members(p, j, sub, off, depth + 1);
			p->nr_open--;
		}
		hm_json_obj_end(j);
	}
	hm_json_arr_end(j);
}

void hm_layout_print_json(struct hm_json *j, struct hm_arena *a, const struct hm_type *t,
			  const struct hm_print_opts *o)
{
	struct printer p = {.a = a, .o = o};
	struct hm_shape s;

	t = hm_type_strip(t);
	hm_shape_compute(a, t, o->line_size, &s);
	hm_json_obj_begin(j, NULL);
	hm_json_str(j, "name", t->name);	/* deprecated: type (null when unnamed) */
	hm_json_str(j, "type", hm_type_name(t));
	hm_json_str(j, "kind", hm_type_keyword(t));
	hm_json_u64(j, "size", s.size);
	hm_json_u64(j, "align", s.align);
	hm_json_u64(j, "cachelines", s.cachelines);
	hm_json_bool(j, "packed", s.packed);
	open_type(&p, t);
	json_members(&p, j, t, 0, 0);
	hm_json_arr_begin(j, "holes");
	for (uint32_t i = 0; i < s.nr; i++) {
		if (!s.ms[i].hole_after || t->kind == HM_T_UNION)
			continue;
		hm_json_obj_begin(j, NULL);
		hm_json_u64(j, "offset", s.ms[i].offset + s.ms[i].size);
		hm_json_u64(j, "size", s.ms[i].hole_after);
		hm_json_str(j, "after", s.ms[i].m->name);
		hm_json_obj_end(j);
	}
	hm_json_arr_end(j);
	hm_json_u64(j, "sum_members", s.sum_members);
	hm_json_u64(j, "sum_holes", s.sum_holes);
	hm_json_u64(j, "lead_bit_hole", s.lead_bit_hole);
	hm_json_u64(j, "bit_holes", s.nr_bit_holes);
	hm_json_u64(j, "sum_bit_holes", s.sum_bit_holes);
	hm_json_u64(j, "padding", s.padding);
	hm_json_u64(j, "bit_padding", s.bit_padding);
	if (o->json_extra)
		o->json_extra(j, o->json_ctx);
	hm_json_obj_end(j);
}
