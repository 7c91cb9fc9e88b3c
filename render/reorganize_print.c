/* --reorganize's text (pahole -R's: the new layout, "saved N bytes" on its closing line)
 * with hitmap's notes after it, and its JSON (hitmap.layout.reorganize/1). */
#include "render/reorganize_print.h"

#include <string.h>

#define PL(n) ((n) == 1 ? "" : "s")

static const char *close_note(struct hm_arena *a, const struct hm_reorg *r)
{
	uint64_t saved = r->old_size - r->new_size, lines = r->old_lines - r->new_lines;

	if (!saved)
		return NULL;
	if (!lines)
		return hm_arena_printf(a, "   /* saved %llu byte%s! */", (unsigned long long)saved,
				       PL(saved));
	return hm_arena_printf(a, "   /* saved %llu byte%s and %llu cacheline%s! */",
			       (unsigned long long)saved, PL(saved), (unsigned long long)lines,
			       PL(lines));
}

#define MAX_COLS 120

/* One note; past MAX_COLS it breaks after its first part, the rest on a " * " line. */
static void note(FILE *out, const char *head, const char *tail)
{
	if (strlen(head) + strlen(tail) + 7 <= MAX_COLS)
		fprintf(out, "/* %s %s */\n", head, tail);
	else
		fprintf(out, "/* %s\n * %s */\n", head, tail);
}

static void print_move(FILE *out, struct hm_arena *a, const struct hm_reorg_move *m,
		       uint32_t line_size)
{
	const char *head;

	if (!m->refused) {
		fprintf(out, "/* moved '%s' from offset %llu to %llu, after '%s' */\n", m->what,
			(unsigned long long)m->old_off, (unsigned long long)m->new_off, m->after);
		return;
	}
	head = hm_arena_printf(a, "kept '%s' at %llu: after '%s',", m->what,
			       (unsigned long long)m->old_off, m->after);
	if (m->why == HM_RW_SPLIT)
		note(out, head, hm_arena_printf(a, "'%s' would straddle a %u-byte line", m->other,
						line_size));
	else
		note(out, head, hm_arena_printf(a, "'%s' would share a line that different threads "
						"write", m->other));
}

void hm_reorg_print_text(FILE *out, struct hm_arena *a, const struct hm_reorg *r,
			 const struct hm_print_opts *o)
{
	struct hm_print_opts po = *o;
	uint32_t made = 0;

	po.close_note = close_note(a, r);
	hm_layout_print_text(out, a, r->new_t, &po);
	if (r->skipped) {
		fprintf(out, "/* not reorganized: %s */\n", r->skipped);
		return;
	}
	for (uint32_t i = 0; i < r->nr_moves; i++)
		made += !r->moves[i].refused;
	fprintf(out, "/* size: %llu -> %llu bytes, cachelines: %llu -> %llu, %u move%s",
		(unsigned long long)r->old_size, (unsigned long long)r->new_size,
		(unsigned long long)r->old_lines, (unsigned long long)r->new_lines, made, PL(made));
	if (made < r->nr_moves)
		fprintf(out, ", %u refused", r->nr_moves - made);
	fprintf(out, " */\n");
	for (uint32_t i = 0; i < r->nr_moves; i++)
		print_move(out, a, &r->moves[i], o->line_size);
}

struct extra {
	const struct hm_reorg *r;
};

static void json_extra(struct hm_json *j, void *ctx)
{
	const struct hm_reorg *r = ((struct extra *)ctx)->r;

	hm_json_u64(j, "old_size", r->old_size);
	hm_json_u64(j, "old_cachelines", r->old_lines);
	hm_json_u64(j, "saved", r->old_size - r->new_size);
	hm_json_u64(j, "saved_cachelines", r->old_lines - r->new_lines);
	hm_json_u64(j, "layout_align", r->align);
	hm_json_bool(j, "reorganized", !r->skipped);
	hm_json_str(j, "skipped", r->skipped);
	hm_json_arr_begin(j, "moves");
	for (uint32_t i = 0; i < r->nr_moves; i++) {
		const struct hm_reorg_move *m = &r->moves[i];

		hm_json_obj_begin(j, NULL);
		hm_json_str(j, "member", m->what);
		hm_json_str(j, "after", m->after);
		hm_json_u64(j, "old_offset", m->old_off);
		if (m->refused) {
			hm_json_str(j, "refused", m->why == HM_RW_SPLIT ? "split" : "sharing");
			hm_json_str(j, "other", m->other);
		} else {
			hm_json_u64(j, "new_offset", m->new_off);
			hm_json_null(j, "refused");
		}
		hm_json_obj_end(j);
	}
	hm_json_arr_end(j);
}

void hm_reorg_print_json(struct hm_json *j, struct hm_arena *a, const struct hm_reorg *r,
			 const struct hm_print_opts *o)
{
	struct hm_print_opts po = *o;
	struct extra x = {.r = r};

	po.json_extra = json_extra;
	po.json_ctx = &x;
	hm_layout_print_json(j, a, r->new_t, &po);
}

void hm_layout_print_sizes(FILE *out, struct hm_json *j, struct hm_arena *a,
			   const struct hm_type *t, uint32_t line_size)
{
	struct hm_shape s;

	t = hm_type_strip(t);
	hm_shape_compute(a, t, line_size, &s);
	if (!j) {	/* pahole --sizes: name, size, holes, tab-separated */
		fprintf(out, "%s\t%llu\t%llu\n", hm_type_name(t), (unsigned long long)s.size,
			(unsigned long long)(t->kind == HM_T_UNION ? 0 : s.nr_holes));
		return;
	}
	hm_json_obj_begin(j, NULL);
	hm_json_str(j, "name", hm_type_name(t));
	hm_json_str(j, "kind", t->kind == HM_T_UNION ? "union" : t->kind == HM_T_CLASS ? "class"
							       : "struct");
	hm_json_u64(j, "size", s.size);
	hm_json_u64(j, "holes", t->kind == HM_T_UNION ? 0 : s.nr_holes);
	hm_json_u64(j, "sum_holes", t->kind == HM_T_UNION ? 0 : s.sum_holes);
	hm_json_u64(j, "cachelines", s.cachelines);
	hm_json_obj_end(j);
}

uint64_t hm_layout_nr_holes(struct hm_arena *a, const struct hm_type *t)
{
	struct hm_shape s;

	t = hm_type_strip(t);
	if (t->kind == HM_T_UNION)
		return 0;
	hm_shape_compute(a, t, 64, &s);
	return s.nr_holes;
}
