/* hitmap.report/1 (DESIGN.md, JSON contract; docs/report.md lists every key). Keys are
 * only ever added: tests, bots and scripts read this. */
#include "analyzer/fixcheck.h"
#include "render/report_print.h"

#include "core/json.h"
#include "render/c2c_print.h"
#include "render/heatmap_print.h"

static void counts(struct hm_json *j, const char *key, const char *id,
		   const struct hm_count *c, uint32_t n, int with_pid)
{
	hm_json_arr_begin(j, key);
	for (uint32_t i = 0; i < n; i++) {
		hm_json_obj_begin(j, NULL);
		hm_json_u64(j, id, c[i].id);
		if (with_pid)
			hm_json_u64(j, "pid", c[i].pid);
		hm_json_u64(j, "records", c[i].records);
		hm_json_u64(j, "loads", c[i].loads);
		hm_json_u64(j, "stores", c[i].stores);
		hm_json_u64(j, "locked", c[i].locked);
		hm_json_obj_end(j);
	}
	hm_json_arr_end(j);
}

static void sites(struct hm_json *j, const struct hm_lfield *f)
{
	hm_json_arr_begin(j, "sites");
	for (uint32_t i = 0; i < f->nr_sites; i++) {
		const struct hm_site *s = &f->sites[i];

		hm_json_obj_begin(j, NULL);
		hm_json_str(j, "func", s->func);
		hm_json_str(j, "file", s->file);
		if (s->func)
			hm_json_i64(j, "line", s->line);
		else
			hm_json_null(j, "line");
		hm_json_hex(j, "ip", s->ip);
		hm_json_u64(j, "count", s->count);
		hm_json_obj_end(j);
	}
	hm_json_arr_end(j);
}

/* Every counter of perf c2c's Trace Event Information, under the rows' keys. */
static void c2c_obj(struct hm_json *j, const char *key, const struct hm_c2c_stats *st)
{
	hm_json_obj_begin(j, key);
	for (unsigned i = 0; i < hm_c2c_nr_rows; i++) {
		const struct hm_c2c_row *r = &hm_c2c_rows[i];

		if (r->kind != HM_C2C_PCT_OF_MISSES)
			hm_json_u64(j, r->key, hm_c2c_row_count(st, r));
	}
	hm_json_obj_end(j);
}

void hm_report_json_field(struct hm_json *j, const struct hm_lfield *f, const char *kind)
{
	hm_json_obj_begin(j, NULL);
	hm_json_str(j, "field", f->field);
	hm_json_u64(j, "offset", f->offset);
	hm_json_u64(j, "size", f->size);
	hm_json_u64(j, "loads", f->loads);
	hm_json_u64(j, "stores", f->stores);
	counts(j, "threads", "tid", f->threads, f->nr_threads, 1);
	counts(j, "cpus", "cpu", f->cpus, f->nr_cpus, 0);
	sites(j, f);
	hm_json_str(j, "object", f->object);
	if (f->obj_base) {
		hm_json_hex(j, "obj_base", f->obj_base);
		hm_json_u64(j, "obj_offset", f->field_off);
	} else {	/* unknown, not inapplicable: null (docs/schema/README.md) */
		hm_json_null(j, "obj_base");
		hm_json_null(j, "obj_offset");
	}
	hm_json_bool(j, "named", f->named);
	hm_json_u64(j, "records", f->records);
	hm_json_u64(j, "locked", f->locked);
	if (f->spin)	/* loads in a spin-wait loop (docs/report.md) */
		hm_json_u64(j, "spin", f->spin);
	hm_json_u64(j, "contention", f->contention);
	hm_json_str(j, "contention_kind", kind);
	hm_json_u64(j, "hitm", f->c2c ? hm_c2c_hitm(f->c2c) : 0);
	hm_json_u64(j, "conflicts", f->conflicts);
	hm_json_u64(j, "transfers", f->transfers);
	hm_json_obj_end(j);
}

static void pairs(struct hm_json *j, const struct hm_line *ln)
{
	hm_json_arr_begin(j, "pairs");
	for (uint32_t i = 0; i < ln->nr_pairs; i++) {
		const struct hm_pair *p = &ln->pairs[i];

		hm_json_obj_begin(j, NULL);
		hm_json_str(j, "kind", hm_verdict_name(p->kind));
		hm_json_str(j, "a", ln->fields[p->a].field);
		hm_json_str(j, "b", ln->fields[p->b].field);
		hm_json_u64(j, "a_offset", ln->fields[p->a].offset);
		hm_json_u64(j, "b_offset", ln->fields[p->b].offset);
		hm_json_u64(j, "tid_a", p->tid_a);
		hm_json_u64(j, "tid_b", p->tid_b);
		hm_json_u64(j, "events", p->events);
		hm_json_u64(j, "a_loads", ln->fields[p->a].loads);
		hm_json_u64(j, "a_stores", ln->fields[p->a].stores);
		hm_json_u64(j, "b_loads", ln->fields[p->b].loads);
		hm_json_u64(j, "b_stores", ln->fields[p->b].stores);
		hm_json_obj_end(j);
	}
	hm_json_arr_end(j);
}

static void latency(struct hm_json *j, const struct hm_line *ln)
{
	if (!ln->lat)
		return;
	hm_json_arr_begin(j, "latency");
	for (int lv = 0; lv < HM_LVL__COUNT; lv++) {
		if (!ln->lat[lv].n)
			continue;
		hm_json_obj_begin(j, NULL);
		hm_json_str(j, "level", hm_c2c_level_name((enum hm_c2c_level)lv));
		hm_json_u64(j, "loads", ln->lat[lv].n);
		hm_json_u64(j, "avg", ln->lat[lv].sum / ln->lat[lv].n);
		hm_json_obj_end(j);
	}
	hm_json_arr_end(j);
}

static void line_obj(struct hm_json *j, const struct hm_lines *l, const struct hm_line *ln)
{
	const char *kind = hm_contention_name(l->source);

	hm_json_obj_begin(j, NULL);
	hm_json_hex(j, "addr", ln->addr);
	hm_json_str(j, "object", ln->object);
	hm_json_str(j, "verdict", hm_verdict_name(ln->verdict));
	hm_json_u64(j, "contention", ln->contention);
	hm_json_arr_begin(j, "fields");
	for (uint32_t i = 0; i < ln->nr_fields; i++)
		hm_report_json_field(j, &ln->fields[i], kind);
	hm_json_arr_end(j);
	hm_json_str(j, "fix", ln->fix);
	hm_json_str(j, "fix_check", hm_fix_check_name(ln->fix_check));
	hm_json_str(j, "fix_replay", ln->fix_replay);
	hm_json_str(j, "confidence", hm_confidence_name(ln->confidence));
	hm_json_bool(j, "latent", ln->latent);
	if (ln->latent)
		hm_json_u64(j, "latent_cpu", ln->latent_cpu);
	hm_json_str(j, "evidence", ln->evidence);
	if (l->source == HM_SRC_WATCH && ln->nr_pairs) {	/* exact: every access seen */
		hm_json_bool(j, "confirmed", ln->pairs[0].events > 0);
		hm_json_u64(j, "watched_ns", ln->t_last - ln->t_first);
	}
	hm_json_str(j, "advice", ln->advice);
	if (ln->nr_pairs) {
		hm_json_obj_begin(j, "sides");
		hm_json_u64(j, "a_records", ln->ev_records[0]);
		hm_json_u64(j, "a_writes", ln->ev_writes[0]);
		hm_json_u64(j, "b_records", ln->ev_records[1]);
		hm_json_u64(j, "b_writes", ln->ev_writes[1]);
		hm_json_obj_end(j);
	}
	hm_json_str(j, "contention_kind", kind);
	if (ln->pid == HM_LINES_KERNEL_PID || HM_LINES_IS_PERCPU(ln->pid)) {
		hm_json_null(j, "pid");
	} else if (HM_LINES_IS_TLS(ln->pid)) {
		hm_json_u64(j, "pid", ln->nr_threads ? ln->threads[0].pid : 0);
		hm_json_u64(j, "tls_thread", ln->pid & HM_LINES_TID_MASK);
	} else {
		hm_json_u64(j, "pid", ln->pid);
	}
	if (HM_LINES_IS_PERCPU(ln->pid))
		hm_json_u64(j, "percpu_cpu", HM_LINES_PERCPU_CPU(ln->pid));
	hm_json_u64(j, "records", ln->records);
	hm_json_u64(j, "loads", ln->loads);
	hm_json_u64(j, "stores", ln->stores);
	hm_json_u64(j, "locked", ln->locked);
	if (ln->spin)
		hm_json_u64(j, "spin", ln->spin);
	hm_json_u64(j, "hitm", ln->c2c ? hm_c2c_hitm(ln->c2c) : 0);
	hm_json_u64(j, "conflicts", ln->conflicts);
	hm_json_u64(j, "transfers", ln->transfers);
	counts(j, "threads", "tid", ln->threads, ln->nr_threads, 1);
	counts(j, "cpus", "cpu", ln->cpus, ln->nr_cpus, 0);
	pairs(j, ln);
	if (ln->c2c) {
		c2c_obj(j, "c2c", ln->c2c);
		latency(j, ln);
	}
	hm_json_obj_end(j);
}

static void straddles(struct hm_json *j, const struct hm_report_view *v)
{
	const struct hm_splits *s = v->splits;

	hm_json_arr_begin(j, "straddles");
	for (size_t i = 0; s && i < s->nr_st; i++) {
		hm_json_obj_begin(j, NULL);
		hm_json_str(j, "type", s->st[i].type);
		hm_json_str(j, "field", s->st[i].field);
		hm_json_u64(j, "offset", s->st[i].offset);
		hm_json_u64(j, "size", s->st[i].size);
		hm_json_u64(j, "accesses", s->st[i].accesses);
		hm_json_obj_end(j);
	}
	hm_json_arr_end(j);
}

static void splits(struct hm_json *j, const struct hm_report_view *v)
{
	const struct hm_splits *s = v->splits;
	size_t n = s ? (v->top && v->top < s->nr ? v->top : s->nr) : 0;

	hm_json_arr_begin(j, "splits");
	for (size_t i = 0; i < n; i++) {
		const struct hm_split *x = &s->s[i];

		hm_json_obj_begin(j, NULL);
		hm_json_str(j, "field", x->field);
		hm_json_str(j, "object", x->object);
		hm_json_u64(j, "count", x->count);
		hm_json_u64(j, "page_splits", x->page_splits);
		hm_json_u64(j, "size", x->size);
		hm_json_u64(j, "line_offset", x->line_offset);
		hm_json_hex(j, "addr", x->addr);
		hm_json_u64(j, "loads", x->loads);
		hm_json_u64(j, "stores", x->stores);
		hm_json_str(j, "func", x->func);
		hm_json_str(j, "file", x->file);
		if (x->func)
			hm_json_i64(j, "line", x->line);
		else
			hm_json_null(j, "line");
		hm_json_hex(j, "ip", x->ip);
		hm_json_obj_end(j);
	}
	hm_json_arr_end(j);
}

static void stats(struct hm_json *j, const struct hm_report_view *v)
{
	static const char *const methods[HM_M__COUNT] = { "unknown", "global", "tls",
							  "stack", "heap", "noaddr" };
	const struct hm_lines *l = v->lines;
	size_t shared = 0;

	for (size_t i = 0; i < l->nr; i++)
		shared += l->lines[i].verdict == HM_V_FALSE_SHARING ||
			  l->lines[i].verdict == HM_V_TRUE_SHARING;
	hm_json_obj_begin(j, "stats");
	hm_json_u64(j, "lines", l->nr);	/* deprecated: a count named like a list */
	hm_json_u64(j, "nr_lines", l->nr);
	hm_json_u64(j, "shared_lines", shared);
	hm_json_u64(j, "line_size", l->line_size);
	hm_json_u64(j, "window_ns", l->window_ns);
	hm_json_bool(j, "cpus_known", l->cpus_known);
	hm_json_obj_begin(j, "by_source");
	for (int s = HM_SRC_PMU; s <= HM_SRC_WATCH; s++)
		hm_json_u64(j, hm_source_name((enum hm_source)s), l->by_source[s]);
	hm_json_obj_end(j);
	hm_json_obj_begin(j, "by_method");
	for (int m = 0; m < HM_M__COUNT; m++)
		hm_json_u64(j, methods[m], l->by_method[m]);
	hm_json_obj_end(j);
	if (v->splits) {
		hm_json_u64(j, "sized", v->splits->sized);
		hm_json_u64(j, "line_splits", v->splits->line_splits);
		hm_json_u64(j, "page_splits", v->splits->page_splits);
	}
	counts(j, "threads", "tid", l->threads, (uint32_t)l->nr_threads, 1);
	if (l->by_source[HM_SRC_PMU])
		c2c_obj(j, "c2c", &l->c2c);
	if (v->slab_source) {	/* kernel heap named by its slab cache (docs/kernel.md) */
		hm_json_obj_begin(j, "kernel_slab");
		hm_json_u64(j, "named", v->kernel_slab);
		hm_json_str(j, "facts", v->slab_source);
		hm_json_obj_end(j);
	}
	hm_json_obj_end(j);
}

void hm_report_print_json(FILE *out, const struct hm_report_view *v)
{
	const struct hm_lines *l = v->lines;
	size_t n = v->top && v->top < l->nr ? v->top : l->nr;
	struct hm_json j;

	hm_json_init(&j, out);
	hm_json_obj_begin(&j, NULL);
	hm_json_str(&j, "schema", "hitmap.report/1");
	hm_json_str(&j, "input", v->input);
	hm_json_str(&j, "source", hm_source_name(v->source));
	hm_json_obj_begin(&j, "samples");
	hm_json_u64(&j, "total", l->total);
	hm_json_u64(&j, "with_addr", l->with_addr);
	hm_json_u64(&j, "resolved", l->resolved);
	hm_json_u64(&j, "lost", v->lost);
	if (l->prim) {	/* string and copy primitives: docs/report.md */
		hm_json_u64(&j, "primitives", l->prim);
		hm_json_u64(&j, "primitives_resolved", l->prim_resolved);
	}
	if (l->dropped_lines) {	/* only past --max-lines: docs/report.md */
		hm_json_u64(&j, "dropped_lines", l->dropped_lines);
		hm_json_u64(&j, "dropped_samples", l->dropped_records);
		hm_json_u64(&j, "max_lines", l->max_lines);
	}
	hm_json_obj_end(&j);
	hm_json_arr_begin(&j, "warnings");	/* lists are present, empty when nothing */
	if (v->warning)
		hm_json_str(&j, NULL, v->warning);
	hm_json_arr_end(&j);
	hm_json_arr_begin(&j, "lines");
	for (size_t i = 0; i < n; i++)
		line_obj(&j, l, &l->lines[i]);
	hm_json_arr_end(&j);
	splits(&j, v);
	straddles(&j, v);
	stats(&j, v);
	if (v->nr_heat) {
		hm_json_arr_begin(&j, "heatmap");
		for (size_t i = 0; i < v->nr_heat; i++)
			hm_heat_print_json(&j, v->heat[i]);
		hm_json_arr_end(&j);
	}
	if (v->c2c)
		hm_c2c_print_json(&j, v->c2c, v->top);
	hm_json_obj_end(&j);
	hm_json_finish(&j);
}
