/* Rendering of a what-if: the new layouts pahole-style with moved members marked, the
 * suggested struct as C, the lines that stop, start or stay shared (hitmap.whatif/1 is
 * whatif_json.c).
 * Nothing here decides: the plan, the replay and the verdicts come from whatif*.c. */
#include "analyzer/whatif.h"
#include "render/whatif_print.h"

#include <inttypes.h>
#include <string.h>

#define TYPE_COL 26
#define NAME_COL 21
#define MAX_TYPES_TEXT 3
#define MAX_FIELDS 4
#define MAX_SIDE 6

const struct hm_type *hm_wi_member_type(const struct hm_wi_member *m)
{
	return m->new_m ? m->new_m->type : m->old_m ? m->old_m->type : NULL;
}

static const struct hm_member *mmember(const struct hm_wi_member *m)
{
	return m->new_m ? m->new_m : m->old_m;
}

static const char *decl_name(struct hm_arena *a, const struct hm_wi_member *m, int with_attr,
			     const char **tc)
{
	const struct hm_member *mm = mmember(m);
	const char *nc, *name;

	hm_type_decl(a, hm_wi_member_type(m), m->name, tc, &nc);
	name = nc;
	if (mm && mm->bit_size)
		name = hm_arena_printf(a, "%s:%u", name, mm->bit_size);
	if (with_attr && m->forced)
		name = hm_arena_printf(a, "%s __attribute__((aligned(%u)))", name, m->forced);
	return hm_arena_printf(a, "%s;", name);
}

static void mark_line(FILE *out, uint64_t off, uint32_t L, uint64_t *last)
{
	uint64_t line = off / L;

	if (line <= *last)
		return;
	*last = line;
	if (off % L)
		fprintf(out, "\t/* --- cacheline %" PRIu64 " boundary (%" PRIu64 " bytes) was %" PRIu64
			" bytes ago --- */\n", line, line * L, off % L);
	else
		fprintf(out, "\t/* --- cacheline %" PRIu64 " boundary (%" PRIu64 " bytes) --- */\n",
			line, line * L);
}

static uint64_t lines_of(uint64_t size, uint32_t L)
{
	return (size + L - 1) / L;
}

/* The end of the member before m[i] in the new layout (bitfield units share offsets). */
static uint64_t prev_end(const struct hm_wi_type *t, uint32_t i)
{
	uint64_t end = 0;

	for (uint32_t k = 0; k < i; k++)
		if (t->m[k].new_off != HM_WI_NONE && t->m[k].new_off + t->m[k].new_size > end)
			end = t->m[k].new_off + t->m[k].new_size;
	return end;
}

static void print_gap(FILE *out, const struct hm_wi_type *t, uint32_t i)
{
	const struct hm_wi_member *m = &t->m[i];
	uint64_t end = prev_end(t, i);

	if (!i || m->new_off == HM_WI_NONE || m->new_off <= end)
		return;
	if (m->pad_before)
		fprintf(out, "\n\t/* XXX %" PRIu64 " bytes inserted before %s */\n\n",
			m->new_off - end, m->name ? m->name : "(anonymous)");
	else if (m->forced)
		fprintf(out, "\n\t/* XXX %" PRIu64 " bytes of padding: %s is aligned to %u */\n\n",
			m->new_off - end, m->name ? m->name : "(anonymous)", m->forced);
	else
		fprintf(out, "\n\t/* XXX %" PRIu64 " bytes hole */\n\n", m->new_off - end);
}

/* A typedef of an anonymous struct: `typedef struct { .. } lreg_args;`, there is no
 * `struct lreg_args` to write (as hitmap layout and pahole print it). */
static int anon_typedef(const struct hm_wi_type *t)
{
	const struct hm_type *s = t->old_t ? hm_type_strip(t->old_t) : NULL;

	return s && !s->name && s->alias;
}

static void print_summary(FILE *out, const struct hm_wi_type *t, uint32_t L)
{
	fprintf(out, "\n\t/* size: %" PRIu64, t->new_size);
	if (t->new_size != t->old_size)
		fprintf(out, " (was %" PRIu64 ")", t->old_size);
	fprintf(out, ", cachelines: %" PRIu64, lines_of(t->new_size, L));
	if (lines_of(t->new_size, L) != lines_of(t->old_size, L))
		fprintf(out, " (was %" PRIu64 ")", lines_of(t->old_size, L));
	fprintf(out, ", align: %u", t->new_align);
	if (t->new_align != t->old_align)
		fprintf(out, " (was %u)", t->old_align);
	if (anon_typedef(t))
		fprintf(out, " */\n} %s;\n", t->name);
	else
		fprintf(out, " */\n};\n");
}

static void print_group(FILE *out, const struct hm_wi_group *g, int32_t idx, uint32_t row)
{
	fprintf(out, "%s\t/* group %d: ", row ? "\n" : "", idx + 1);
	if (g->kind == HM_WG_WRITER)
		fprintf(out, "written by thread %u", g->tid);
	else if (g->kind == HM_WG_PER_OBJECT)
		fprintf(out, "each object written by one thread (%u threads)", g->nr_threads);
	else if (g->kind == HM_WG_READ && g->nr_threads == 1)
		fprintf(out, "read by thread %u, never written", g->tid);
	else if (g->kind == HM_WG_READ)
		fprintf(out, "read by %u threads, never written", g->nr_threads);
	else if (g->kind == HM_WG_SHARED)
		fprintf(out, "written by one thread and used by another: true sharing, which no "
			     "layout removes");
	else
		fprintf(out, "no recorded access");
	fprintf(out, " (%" PRIu64 " access%s) */\n", g->records, g->records == 1 ? "" : "es");
}

/* pahole-style, new offsets, with "was N" on every member that moved. */
static void print_type(FILE *out, struct hm_arena *a, const struct hm_wi_type *t, uint32_t L,
		       const struct hm_wi_suggestion *sug)
{
	uint64_t last = 0;
	int32_t group = -1;

	if (anon_typedef(t))
		fprintf(out, "typedef %s {\n", hm_type_strip(t->old_t)->kind == HM_T_UNION ? "union"
											  : "struct");
	else
		fprintf(out, "%s %s {\n",
			t->old_t && t->old_t->kind == HM_T_UNION ? "union" : "struct", t->name);
	for (uint32_t i = 0; i < t->nr; i++) {
		const struct hm_wi_member *m = &t->m[i];
		const char *tc, *nc = decl_name(a, m, 1, &tc);

		if (sug && m->group != group && m->group >= 0) {
			group = m->group;
			print_group(out, &sug->groups[group], group, i);
		}
		if (m->new_off == HM_WI_NONE) {
			fprintf(out, "\t%-*s %-*s /* removed; was at %" PRIu64 " */\n", TYPE_COL, tc,
				NAME_COL, nc, m->old_off);
			continue;
		}
		if (!sug)
			print_gap(out, t, i);
		mark_line(out, m->new_off, L, &last);
		fprintf(out, "\t%-*s %-*s /* %5" PRIu64 " %5" PRIu64 " */", TYPE_COL, tc, NAME_COL,
			nc, m->new_off, m->new_size);
		if (m->old_off == HM_WI_NONE)
			fprintf(out, "  /* added */");
		else if (m->old_off != m->new_off)
			fprintf(out, "  /* was %" PRIu64 " */", m->old_off);
		if (m->old_off != HM_WI_NONE && m->old_size != m->new_size)
			fprintf(out, "  /* size was %" PRIu64 " */", m->old_size);
		if (sug && !m->loads && !m->stores && sug->groups[m->group].kind != HM_WG_COLD)
			fprintf(out, "  /* cold */");
		fputc('\n', out);
	}
	print_summary(out, t, L);
}

void hm_whatif_print_struct(FILE *out, struct hm_arena *a, const struct hm_wi_type *t,
			    const struct hm_wi_suggestion *sug)
{
	print_type(out, a, t, sug->line_size, sug);
	if (!sug->needed)
		return;
	fprintf(out, "/* %+" PRId64 " bytes; or, instead of the attributes, align %s%s to %u",
		(int64_t)(t->new_size - t->old_size), anon_typedef(t) ? "" : "struct ", t->name,
		sug->line_size);
	for (uint32_t i = 1, k = 0; i < t->nr; i++) {
		uint64_t end = prev_end(t, i);

		if (!t->m[i].forced || t->m[i].new_off <= end)
			continue;
		fprintf(out, "%s char __pad%u[%" PRIu64 "]; before %s", k ? "," : " and insert", k,
			t->m[i].new_off - end, t->m[i].name ? t->m[i].name : "(anonymous)");
		k++;
	}
	if (sug->per_instance)
		fprintf(out, ", so that each object starts a line and no two share one (allocate "
			     "them with aligned_alloc or posix_memalign if on the heap)");
	fprintf(out, " */\n");
}

/* --- lines --- */

static const char *fields_of(struct hm_arena *a, const struct hm_line *ln)
{
	const char *s = "";

	for (uint32_t i = 0; i < ln->nr_fields && i < MAX_FIELDS; i++)
		s = hm_arena_printf(a, "%s%s%s", s, i ? " " : "", ln->fields[i].field);
	if (ln->nr_fields > MAX_FIELDS)
		s = hm_arena_printf(a, "%s +%u more", s, ln->nr_fields - MAX_FIELDS);
	return s;
}

static void print_line(FILE *out, struct hm_arena *a, const char *lead, const char *side,
		       const struct hm_line *ln)
{
	fprintf(out, "%-12s %-6s 0x%-16" PRIx64 " %-16s %-14s %9" PRIu64 " %8" PRIu64 "  %s\n",
		lead, side, ln->addr, ln->object ? ln->object : "?", hm_verdict_name(ln->verdict),
		ln->contention, ln->records, fields_of(a, ln));
}

static void print_changes(FILE *out, struct hm_arena *a, const struct hm_wi_view *v)
{
	const struct hm_whatif *w = v->w;
	size_t shown = v->top && v->top < w->nr_changes ? v->top : w->nr_changes;

	if (!w->nr_changes) {
		fprintf(out, "no line holding the changed objects is shared, before or after\n");
		return;
	}
	fprintf(out, "%-12s %-6s %-18s %-16s %-14s %9s %8s  %s\n", "    change", "side", "line",
		"object", "verdict", hm_contention_name(w->before.source), "records", "fields");
	for (size_t i = 0; i < shown; i++) {
		const struct hm_wi_change *c = &w->changes[i];
		char lead[48];

		snprintf(lead, sizeof(lead), "%3zu %s", i + 1, hm_wi_change_name(c->kind));
		for (uint32_t k = 0; k < c->nr_before && k < MAX_SIDE; k++)
			print_line(out, a, k ? "" : lead, "before", c->before[k]);
		if (c->nr_before > MAX_SIDE)
			fprintf(out, "%-12s %-6s (%u more lines)\n", "", "before", c->nr_before - MAX_SIDE);
		for (uint32_t k = 0; k < c->nr_after && k < MAX_SIDE; k++)
			print_line(out, a, "", "after", c->after[k]);
		if (c->nr_after > MAX_SIDE)
			fprintf(out, "%-12s %-6s (%u more lines)\n", "", "after", c->nr_after - MAX_SIDE);
	}
	if (shown < w->nr_changes)
		fprintf(out, "(%zu more; --top 0 shows all)\n", w->nr_changes - shown);
}

static const char *type_list(struct hm_arena *a, const struct hm_wi_plan *p)
{
	const char *s = "";
	uint32_t k = 0;

	for (uint32_t i = 0; i < p->nr_types && k < 3; i++)
		if (p->types[i].changed)
			s = hm_arena_printf(a, "%s%s%s", s, k++ ? ", " : "", p->types[i].name);
	return k ? s : "the changed types";
}

const char *hm_whatif_prediction(struct hm_arena *a, const struct hm_whatif *w)
{
	const char *s;

	if (!w->false_after && !w->true_after)
		return hm_arena_printf(a, "no false sharing predicted on lines holding %s",
				       type_list(a, w->plan));
	s = w->false_after ? hm_arena_printf(a, "false sharing predicted on %" PRIu64 " line%s",
					     w->false_after, w->false_after == 1 ? "" : "s")
			   : "no false sharing predicted";
	if (w->true_after)
		s = hm_arena_printf(a, "%s; true sharing predicted on %" PRIu64 " line%s, which no layout "
				       "removes (give each thread its own copy)", s, w->true_after,
				    w->true_after == 1 ? "" : "s");
	return hm_arena_printf(a, "%s, on lines holding %s", s, type_list(a, w->plan));
}

static void print_absent(FILE *out, const struct hm_wi_plan *p)
{
	uint64_t other = 0, other_acc = 0;
	uint32_t shown = 0;

	for (uint32_t i = 0; i < p->nr_absent; i++) {
		const struct hm_wi_absent *ab = &p->absent[i];

		if (ab->other) {
			other++;
			other_acc += ab->accesses;
		} else if (shown++ >= 8) {
			continue;
		} else if (ab->field) {
			fprintf(out, "absent: %s.%s is not in %s: its %" PRIu64 " accesses are left "
				     "out of the prediction\n", ab->type, ab->field, p->build,
				ab->accesses);
		} else {
			fprintf(out, "absent: type %s is not in %s: its %" PRIu64 " accesses stay "
				     "where they were\n", ab->type, p->build, ab->accesses);
		}
	}
	if (shown > 8)
		fprintf(out, "absent: %u more (--json lists them)\n", shown - 8);
	if (other)
		fprintf(out, "%" PRIu64 " type%s of other files (libraries), not in %s, stay where "
			     "they were (%" PRIu64 " accesses; --json lists them)\n", other,
			other == 1 ? "" : "s", p->build, other_acc);
}

/* Past --max-lines (docs/whatif.md, Memory): as report says it. */
static void print_dropped(FILE *out, const char *side, const struct hm_wi_totals *t,
			  size_t max_lines)
{
	if (!t->dropped_lines)
		return;
	fprintf(out, "%s: %" PRIu64 " line%s dropped past --max-lines %zu, the least contended, "
		     "with %" PRIu64 " sample%s\n", side, t->dropped_lines,
		t->dropped_lines == 1 ? "" : "s", max_lines, t->dropped_samples,
		t->dropped_samples == 1 ? "" : "s");
}

void hm_whatif_print_text(FILE *out, struct hm_arena *a, const struct hm_wi_view *v)
{
	const struct hm_whatif *w = v->w;
	const struct hm_wi_plan *p = w->plan;
	const struct hm_wi_counts *c = &w->counts;
	uint32_t shown = 0;

	fprintf(out, "%s (%s): %s, %u-byte lines\n", v->input, hm_source_name(w->before.source),
		v->change, p->line_size);
	fprintf(out, "%" PRIu64 " sample%s, %" PRIu64 " with an address, %" PRIu64 " to objects "
		     "whose layout changes, %" PRIu64 " moved (%" PRIu64 " of %" PRIu64
		     " object%s moved)", c->total, c->total == 1 ? "" : "s", c->with_addr,
		c->affected, c->moved, c->objects_moved, c->objects, c->objects == 1 ? "" : "s");
	if (c->dropped)
		fprintf(out, ", %" PRIu64 " dropped (field absent)", c->dropped);
	fprintf(out, "\n");
	print_dropped(out, "before", &w->tb, p->max_lines);
	print_dropped(out, "after", &w->ta, p->max_lines);
	if (c->heap_held)
		fprintf(out, "%" PRIu64 " heap object%s kept the address malloc gave %s (16-byte "
			     "aligned), although the type now asks for more: allocate with "
			     "aligned_alloc or posix_memalign, and add --aligned-alloc to predict "
			     "that\n", c->heap_held, c->heap_held == 1 ? "" : "s",
			c->heap_held == 1 ? "it" : "them");
	print_absent(out, p);
	if (v->sug) {
		fprintf(out, "\nsuggested layout (%s):\n", v->sug->per_instance
			? "each object on its own cache line(s): different threads write "
			  "neighbouring objects of this type"
			: v->sug->needed ? "each group on its own cache line(s)"
					 : "no change needed: no member is written by one thread "
					   "and used by another");
		hm_whatif_print_struct(out, a, &p->types[0], v->sug);
	}
	for (uint32_t i = 0; !v->sug && i < p->nr_types && shown < MAX_TYPES_TEXT; i++) {
		if (!p->types[i].changed)
			continue;
		fputc('\n', out);
		print_type(out, a, &p->types[i], p->line_size, NULL);
		shown++;
	}
	if (!v->sug && p->nr_types > shown)
		fprintf(out, "(%u more changed types: --json lists them)\n", p->nr_types - shown);
	fputc('\n', out);
	print_changes(out, a, v);
	fprintf(out, "\nprediction: %" PRIu64 " shared line%s stop%s being shared, %" PRIu64
		     " start%s, %" PRIu64 " stay%s shared; %s\n", w->stops, w->stops == 1 ? "" : "s",
		w->stops == 1 ? "s" : "", w->starts, w->starts == 1 ? "s" : "", w->stays,
		w->stays == 1 ? "s" : "", hm_whatif_prediction(a, w));
	fprintf(out, "%s on shared lines: %" PRIu64 " before, %" PRIu64 " after (shared lines: %"
		     PRIu64 " of %" PRIu64 " before, %" PRIu64 " of %" PRIu64 " after)\n",
		hm_contention_name(w->before.source), w->tb.contention, w->ta.contention,
		w->tb.shared, w->tb.lines, w->ta.shared, w->ta.lines);
}

/* --- JSON --- */
