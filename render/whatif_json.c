/* hitmap.whatif/1 (docs/whatif.md, docs/schema/whatif.json): the JSON of a what-if, its
 * plan, suggestion, lines and prediction, from what whatif*.c returned; the text is
 * whatif_print.c's. */
#include "analyzer/whatif.h"
#include "core/json.h"
#include "render/report_print.h"
#include "render/whatif_print.h"

#include <inttypes.h>
#include <string.h>

static const char *agg_kind(const struct hm_type *t)
{
	t = t ? hm_type_strip(t) : NULL;
	if (!t)
		return NULL;
	return hm_type_keyword(t);
}

static void json_type(struct hm_json *j, struct hm_arena *a, const struct hm_wi_type *t,
		      uint32_t L)
{
	hm_json_obj_begin(j, NULL);
	hm_json_str(j, "name", t->name);	/* deprecated: type, as in the other schemas */
	hm_json_str(j, "type", t->name);
	hm_json_str(j, "kind", agg_kind(t->old_t));
	hm_json_u64(j, "old_size", t->old_size);
	hm_json_u64(j, "new_size", t->new_size);
	hm_json_u64(j, "old_align", t->old_align);
	hm_json_u64(j, "new_align", t->new_align);
	hm_json_u64(j, "accesses", t->accesses);
	hm_json_bool(j, "changed", t->changed);
	hm_json_arr_begin(j, "members");
	for (uint32_t i = 0; i < t->nr; i++) {
		const struct hm_wi_member *m = &t->m[i];
		const char *tc, *nc;

		hm_type_decl(a, hm_wi_member_type(m), NULL, &tc, &nc);
		hm_json_obj_begin(j, NULL);
		hm_json_str(j, "name", m->name);
		hm_json_str(j, "type", *nc ? hm_arena_printf(a, "%s %s", tc, nc) : tc);
		if (m->old_off == HM_WI_NONE)
			hm_json_null(j, "old_offset");
		else
			hm_json_u64(j, "old_offset", m->old_off);
		if (m->new_off == HM_WI_NONE)
			hm_json_null(j, "new_offset");
		else
			hm_json_u64(j, "new_offset", m->new_off);
		hm_json_u64(j, "old_size", m->old_size);
		hm_json_u64(j, "new_size", m->new_size);
		hm_json_u64(j, "align", m->align);
		hm_json_u64(j, "forced_align", m->forced);
		hm_json_u64(j, "pad_before", m->pad_before);
		hm_json_bool(j, "moved", m->old_off != m->new_off);
		if (m->old_off != HM_WI_NONE)
			hm_json_u64(j, "old_line", m->old_off / L);
		else
			hm_json_null(j, "old_line");	/* null with its offset */
		if (m->new_off != HM_WI_NONE)
			hm_json_u64(j, "new_line", m->new_off / L);
		else
			hm_json_null(j, "new_line");
		hm_json_u64(j, "loads", m->loads);
		hm_json_u64(j, "stores", m->stores);
		if (m->group >= 0)
			hm_json_u64(j, "group", (uint64_t)m->group);
		hm_json_obj_end(j);
	}
	hm_json_arr_end(j);
	hm_json_obj_end(j);
}

static void json_line(struct hm_json *j, const struct hm_line *ln, const char *kind)
{
	hm_json_obj_begin(j, NULL);
	hm_json_hex(j, "addr", ln->addr);
	if (ln->pid == HM_LINES_KERNEL_PID || HM_LINES_IS_TLS(ln->pid) || HM_LINES_IS_PERCPU(ln->pid))
		hm_json_null(j, "pid");
	else
		hm_json_u64(j, "pid", ln->pid);
	hm_json_str(j, "object", ln->object);
	hm_json_str(j, "verdict", hm_verdict_name(ln->verdict));
	hm_json_u64(j, "contention", ln->contention);
	hm_json_u64(j, "records", ln->records);
	hm_json_u64(j, "loads", ln->loads);
	hm_json_u64(j, "stores", ln->stores);
	hm_json_arr_begin(j, "fields");
	for (uint32_t i = 0; i < ln->nr_fields; i++)
		hm_json_str(j, NULL, ln->fields[i].field);
	hm_json_arr_end(j);
	/* the same fields as objects, keyed as in hitmap.report/1 (added: "fields" stays) */
	hm_json_arr_begin(j, "field_rows");
	for (uint32_t i = 0; i < ln->nr_fields; i++)
		hm_report_json_field(j, &ln->fields[i], kind);
	hm_json_arr_end(j);
	hm_json_str(j, "fix", ln->fix);
	hm_json_obj_end(j);
}

static void json_totals(struct hm_json *j, const char *key, const struct hm_wi_totals *t,
			size_t max_lines)
{
	hm_json_obj_begin(j, key);
	hm_json_u64(j, "lines", t->lines);	/* deprecated: a count named like a list */
	hm_json_u64(j, "nr_lines", t->lines);
	hm_json_u64(j, "shared_lines", t->shared);
	hm_json_u64(j, "false_sharing", t->false_sharing);
	hm_json_u64(j, "true_sharing", t->true_sharing);
	hm_json_u64(j, "contention", t->contention);
	if (t->dropped_lines) {	/* only past --max-lines: docs/whatif.md, Memory */
		hm_json_u64(j, "dropped_lines", t->dropped_lines);
		hm_json_u64(j, "dropped_samples", t->dropped_samples);
		hm_json_u64(j, "max_lines", max_lines);
	}
	hm_json_obj_end(j);
}

static void json_suggest(struct hm_json *j, const struct hm_wi_suggestion *s,
			 const struct hm_wi_type *t)
{
	uint32_t nr;
	const struct hm_member *mm = hm_type_members(s->t, &nr);

	hm_json_obj_begin(j, "suggest");
	hm_json_str(j, "type", s->type);
	hm_json_bool(j, "needed", s->needed);
	hm_json_bool(j, "per_instance", s->per_instance);
	hm_json_u64(j, "line_size", s->line_size);
	hm_json_i64(j, "added_bytes", (int64_t)(t->new_size - t->old_size));
	hm_json_arr_begin(j, "groups");
	for (uint32_t g = 0; g < s->nr_groups; g++) {
		const struct hm_wi_group *gr = &s->groups[g];

		hm_json_obj_begin(j, NULL);
		hm_json_str(j, "kind", hm_wi_gkind_name(gr->kind));
		if (gr->kind == HM_WG_WRITER) {
			hm_json_u64(j, "pid", gr->pid);
			hm_json_u64(j, "tid", gr->tid);
		}
		hm_json_u64(j, "threads", gr->nr_threads);	/* deprecated: nr_threads */
		hm_json_u64(j, "nr_threads", gr->nr_threads);
		hm_json_u64(j, "records", gr->records);
		for (int k = 0; k < 2; k++) {	/* members: deprecated, names under an objects' key */
			hm_json_arr_begin(j, k ? "member_names" : "members");
			for (uint32_t i = 0; i < gr->nr; i++)
				hm_json_str(j, NULL, mm[gr->members[i]].name);
			hm_json_arr_end(j);
		}
		hm_json_obj_end(j);
	}
	hm_json_arr_end(j);
	hm_json_obj_end(j);
}

static void json_change(struct hm_json *j, const struct hm_wi_view *v)
{
	const struct hm_wi_plan *p = v->w->plan;
	const char *kind[] = {"layout", "pad", "align", "order", "suggest", "split", "unpack"};

	hm_json_obj_begin(j, "change");
	hm_json_str(j, "kind", kind[p->kind]);
	hm_json_str(j, "text", v->change);
	hm_json_str(j, "build", p->build);
	hm_json_obj_end(j);
}

static void json_absent(struct hm_json *j, const struct hm_wi_plan *p)
{
	hm_json_arr_begin(j, "absent");
	for (uint32_t i = 0; i < p->nr_absent; i++) {
		hm_json_obj_begin(j, NULL);
		hm_json_str(j, "type", p->absent[i].type);
		hm_json_str(j, "field", p->absent[i].field);
		hm_json_str(j, "file", p->absent[i].file);
		hm_json_bool(j, "other_file", p->absent[i].other);
		hm_json_u64(j, "accesses", p->absent[i].accesses);
		hm_json_obj_end(j);
	}
	hm_json_arr_end(j);
}

static void json_changes(struct hm_json *j, const struct hm_whatif *w, size_t shown)
{
	const char *kind = hm_contention_name(w->before.source);

	hm_json_arr_begin(j, "lines");
	for (size_t i = 0; i < shown; i++) {
		const struct hm_wi_change *ch = &w->changes[i];

		hm_json_obj_begin(j, NULL);
		hm_json_str(j, "change", hm_wi_change_name(ch->kind));
		hm_json_arr_begin(j, "before");
		for (uint32_t k = 0; k < ch->nr_before; k++)
			json_line(j, ch->before[k], kind);
		hm_json_arr_end(j);
		hm_json_arr_begin(j, "after");
		for (uint32_t k = 0; k < ch->nr_after; k++)
			json_line(j, ch->after[k], kind);
		hm_json_arr_end(j);
		hm_json_obj_end(j);
	}
	hm_json_arr_end(j);
}

void hm_whatif_print_json(FILE *out, struct hm_arena *a, const struct hm_wi_view *v)
{
	const struct hm_whatif *w = v->w;
	const struct hm_wi_plan *p = w->plan;
	const struct hm_wi_counts *c = &w->counts;
	size_t shown = v->top && v->top < w->nr_changes ? v->top : w->nr_changes;
	struct hm_json j;

	hm_json_init(&j, out);
	hm_json_obj_begin(&j, NULL);
	hm_json_str(&j, "schema", "hitmap.whatif/1");
	hm_json_str(&j, "input", v->input);
	hm_json_str(&j, "source", hm_source_name(w->before.source));
	hm_json_str(&j, "contention_kind", hm_contention_name(w->before.source));
	hm_json_u64(&j, "line_size", p->line_size);
	hm_json_u64(&j, "window_ns", w->before.window_ns);
	json_change(&j, v);
	hm_json_obj_begin(&j, "samples");
	hm_json_u64(&j, "total", c->total);
	hm_json_u64(&j, "with_addr", c->with_addr);
	hm_json_u64(&j, "affected", c->affected);
	hm_json_u64(&j, "moved", c->moved);
	hm_json_u64(&j, "dropped", c->dropped);
	hm_json_u64(&j, "objects", c->objects);
	hm_json_u64(&j, "objects_moved", c->objects_moved);
	hm_json_u64(&j, "heap_held", c->heap_held);
	hm_json_obj_end(&j);
	hm_json_arr_begin(&j, "types");
	for (uint32_t i = 0; i < p->nr_types; i++)
		json_type(&j, a, &p->types[i], p->line_size);
	hm_json_arr_end(&j);
	json_absent(&j, p);
	json_changes(&j, w, shown);
	json_totals(&j, "before", &w->tb, p->max_lines);
	json_totals(&j, "after", &w->ta, p->max_lines);
	hm_json_obj_begin(&j, "prediction");
	hm_json_u64(&j, "stops", w->stops);
	hm_json_u64(&j, "starts", w->starts);
	hm_json_u64(&j, "stays", w->stays);
	hm_json_u64(&j, "false_sharing", w->false_after);
	hm_json_u64(&j, "true_sharing", w->true_after);
	hm_json_str(&j, "text", hm_whatif_prediction(a, w));
	hm_json_obj_end(&j);
	if (v->sug && p->nr_types)
		json_suggest(&j, v->sug, &p->types[0]);
	hm_json_obj_end(&j);
	hm_json_finish(&j);
}
