/* hitmap compare's output: a table that reads like the kernel test robot's (base mean
 * ±%stddev, %change, new mean ±%stddev), the layout side, and hitmap.compare/1. */
#include <math.h>
#include <string.h>

#include "analyzer/compare.h"
#include "analyzer/lines.h"
#include "core/arena.h"
#include "core/json.h"
#include "render/compare_print.h"

int hm_cmp_view_wants(const struct hm_cmp_view *v, const struct hm_cmp_metric *m)
{
	if (!v->nr_only)
		return 1;
	for (size_t i = 0; i < v->nr_only; i++)
		if (strstr(m->name, v->only[i]))
			return 1;
	return 0;
}

/* Numbers right-aligned in columns: as many decimals as their size needs. */
static const char *num(char *buf, size_t len, double v)
{
	double m = fabs(v);

	if (isnan(v))
		snprintf(buf, len, "-");
	else if (m >= 1e7)
		snprintf(buf, len, "%.4g", v);
	else if (m >= 1000 || v == floor(v))
		snprintf(buf, len, "%.0f", v);
	else if (m >= 1)
		snprintf(buf, len, "%.2f", v);
	else
		snprintf(buf, len, "%.3g", v);
	return buf;
}

static const char *sd_col(char *buf, size_t len, const struct hm_summary *s)
{
	if (isnan(s->sd_pct) || s->n < 2)
		snprintf(buf, len, "%s", "");
	else
		snprintf(buf, len, "±%3.0f%%", s->sd_pct);
	return buf;
}

static const char *change_col(char *buf, size_t len, const struct hm_change *c)
{
	if (!c->a.n || !c->b.n)
		snprintf(buf, len, "-");
	else if (isnan(c->change_pct))
		snprintf(buf, len, "new");
	else
		snprintf(buf, len, "%+.1f%%", c->change_pct);
	return buf;
}

static const char *p_col(char *buf, size_t len, const struct hm_ttest *t)
{
	if (!t->ok)
		snprintf(buf, len, "n/a");
	else if (t->p == 0)
		snprintf(buf, len, "0");
	else
		snprintf(buf, len, "%.2g", t->p);
	return buf;
}

static const char *pct_col(char *buf, size_t len, double v)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else if (isinf(v))
		snprintf(buf, len, "new");
	else
		snprintf(buf, len, "%+.1f%%", v);
	return buf;
}

static void row(FILE *out, const struct hm_cmp_metric *m, int interleaved)
{
	char a[32], asd[16], ch[32], b[32], bsd[16], p[16], dr[32], vs[32];
	const char *only = hm_cmp_presence(m);

	fprintf(out, "%12s %6s %9s %12s %6s %8s", num(a, sizeof(a), m->c.a.mean),
		sd_col(asd, sizeof(asd), &m->c.a), change_col(ch, sizeof(ch), &m->c),
		num(b, sizeof(b), m->c.b.mean), sd_col(bsd, sizeof(bsd), &m->c.b),
		p_col(p, sizeof(p), &m->c.t));
	if (interleaved)	/* drift is a magnitude: no sign */
		fprintf(out, " %8s %9s", isnan(m->drift_pct) ? "-" :
			pct_col(dr, sizeof(dr), m->drift_pct) + !isinf(m->drift_pct),
			pct_col(vs, sizeof(vs), m->vs_controls_pct));
	fprintf(out, " %c  %s%s%s%s\n", m->c.significant ? '*' : m->within_drift ? '~' : ' ',
		m->name, only ? " (" : "", only ? only : "", only ? ")" : "");
}

static void header(FILE *out, const struct hm_cmp_view *v)
{
	const struct hm_cmp_side *s[2] = {&v->a, &v->b};

	struct hm_arena ar;

	hm_arena_init(&ar);
	fprintf(out, "hitmap compare:");
	for (int i = 0; i < 2; i++)
		fprintf(out, "%s %s = %zu run%s of %s", i ? "," : "", i ? "B" : "A", s[i]->n,
			s[i]->n == 1 ? "" : "s", hm_cmp_build_label(&ar, s[i]->id));
	hm_arena_free(&ar);
	fprintf(out, "\nfield and type counts per %.0f samples of each run; p: Welch's t-test; "
		"* significant: p < %.2f and |change| above both sides' stddev and >= %.0f%%\n",
		HM_CMP_PER, HM_STATS_ALPHA, HM_STATS_MIN_CHANGE_PCT);
	if (v->cmp->groups.nr_a > 1)
		fprintf(out, "interleaved controls: %zu groups of A around %zu of B; drift: the A "
			"groups' largest change; vs ctl: B against the midpoint of the A groups "
			"around it; ~ within the drift: not significant\n", v->cmp->groups.nr_a,
			v->cmp->groups.nr_b);
	for (size_t i = 0; i < v->nr_notes; i++)
		fprintf(out, "note: %s\n", v->notes[i]);
}

static void table(FILE *out, const struct hm_cmp_view *v)
{
	size_t shown = 0, hidden = 0;

	int il = v->cmp->groups.nr_a > 1;

	fprintf(out, "\n%12s %6s %9s %12s %6s %8s", "base", "±sd", "%change", "new", "±sd", "p");
	if (il)
		fprintf(out, " %8s %9s", "drift", "vs ctl");
	fprintf(out, "    metric\n");
	for (size_t i = 0; i < v->cmp->nr; i++) {
		const struct hm_cmp_metric *m = &v->cmp->m[i];

		if (!hm_cmp_view_wants(v, m))
			continue;
		if (!m->c.significant && v->top && shown >= v->top) {
			hidden++;
			continue;
		}
		row(out, m, il);
		shown += !m->c.significant;
	}
	if (hidden)
		fprintf(out, "... %zu more metric%s without a significant change (--top 0 shows "
			"all)\n", hidden, hidden == 1 ? "" : "s");
}

static const char *hot_detail(const struct hm_cmp_hot *h)
{
	switch (h->status) {
	case HM_CMP_ONLY_A: return "member only in A's build: removed or renamed in B";
	case HM_CMP_ONLY_B: return "member only in B's build";
	case HM_CMP_TYPE_ONLY_A: return "type only in A's build";
	case HM_CMP_TYPE_ONLY_B: return "type only in B's build";
	default: return h->nr_f ? h->why[0] : "";
	}
}

static void layout_text(FILE *out, const struct hm_cmp_layout *l)
{
	char a[32], b[32], d[32], hot[64] = "";

	if (l->hot_min != HM_CMP_HOT)	/* compare --hot */
		snprintf(hot, sizeof(hot), " (%g samples per %g, or any contention)", l->hot_min,
			 HM_CMP_PER);
	fprintf(out, "\nlayout: %s (A) -> %s (B), %u-byte lines: hot fields%s whose line or "
		"neighbours changed, by how much contention moved\n", l->a_path, l->b_path,
		l->line_size, hot);
	if (l->nr)
		fprintf(out, "  %-30s %-10s %10s %10s %10s  %s\n", "field", "measure", "base",
			"new", "delta", "change in B's layout");
	for (size_t i = 0; i < l->nr; i++) {
		const struct hm_cmp_hot *h = &l->hot[i];

		fprintf(out, "  %-30s %-10s %10s %10s %10s  %s\n", h->field, h->measure,
			num(a, sizeof(a), h->a), num(b, sizeof(b), h->b),
			num(d, sizeof(d), h->b - h->a), hot_detail(h));
		for (uint32_t k = 1; h->status == HM_CMP_CHANGED && k < h->nr_f; k++)
			fprintf(out, "  %-30s %-10s %10s %10s %10s  %s\n", "", "", "", "", "",
				h->why[k]);
	}
	if (!l->nr)
		fprintf(out, "  no hot field changed line, offset or neighbours\n");
	if (l->unchanged)
		fprintf(out, "  %zu hot field%s kept %s offset, line and neighbours\n",
			l->unchanged, l->unchanged == 1 ? "" : "s", l->unchanged == 1 ? "its" : "their");
	if (l->nr_elsewhere) {
		fprintf(out, "  not in either main executable (a library's types?), not diffed:");
		for (size_t i = 0; i < l->nr_elsewhere; i++)
			fprintf(out, "%s %s", i ? "," : "", l->elsewhere[i]);
		fprintf(out, "\n");
	}
}

void hm_cmp_print_text(FILE *out, const struct hm_cmp_view *v)
{
	header(out, v);
	table(out, v);
	if (v->layout)
		layout_text(out, v->layout);
}

/* --- hitmap.compare/1 --- */

static void json_files(struct hm_json *j, const char *key, const struct hm_cmp_side *s)
{
	hm_json_arr_begin(j, key);
	for (size_t i = 0; i < s->n; i++)
		hm_json_str(j, NULL, s->files[i]);
	hm_json_arr_end(j);
}

/* The modules of s's first run whose build differs from the other side's, when both run
 * one kernel (hm_cmp_label_modules); [] between two kernels. */
static void json_modules(struct hm_json *j, const struct hm_cmp_ident *x,
			 const struct hm_cmp_ident *y)
{
	hm_json_arr_begin(j, "modules_changed");
	for (size_t i = 0; x->mods_label && i < x->nr_mods; i++)
		for (size_t k = 0; k < y->nr_mods; k++)
			if (!strcmp(x->mods[i].name, y->mods[k].name) &&
			    strcmp(x->mods[i].hex, y->mods[k].hex)) {
				hm_json_obj_begin(j, NULL);
				hm_json_str(j, "name", x->mods[i].name);
				hm_json_str(j, "path", x->mods[i].path);
				hm_json_str(j, "build_id", x->mods[i].hex);
				hm_json_obj_end(j);
			}
	hm_json_arr_end(j);
}

static void json_build(struct hm_json *j, const char *key, const struct hm_cmp_side *s,
		       const struct hm_cmp_side *other)
{
	hm_json_obj_begin(j, key);
	hm_json_str(j, "kind", hm_cmp_build_kind_name(s->id->kind));
	s->id->exe ? hm_json_str(j, "exe", s->id->exe) : hm_json_null(j, "exe");
	s->id->build_id_hex ? hm_json_str(j, "build_id", s->id->build_id_hex)
			    : hm_json_null(j, "build_id");
	if (s->id->kind != HM_CMP_BUILD_USER) {
		hm_json_obj_begin(j, "kernel");
		s->id->kernel_release ? hm_json_str(j, "release", s->id->kernel_release)
				      : hm_json_null(j, "release");
		s->id->kernel_build_id_hex ? hm_json_str(j, "build_id", s->id->kernel_build_id_hex)
					   : hm_json_null(j, "build_id");
		hm_json_u64(j, "samples", s->id->samples);
		hm_json_u64(j, "kernel_samples", s->id->kernel_samples);
		json_modules(j, s->id, other->id);
		hm_json_obj_end(j);
	}
	if (s->id->comm)
		hm_json_str(j, "comm", s->id->comm);
	else
		hm_json_null(j, "comm");
	hm_json_arr_begin(j, "runs");
	for (size_t i = 0; i < s->n; i++) {
		hm_json_obj_begin(j, NULL);
		hm_json_str(j, "file", s->files[i]);
		hm_json_u64(j, "samples", s->runs[i].samples);
		hm_json_str(j, "source", hm_source_name(s->runs[i].source));
		hm_json_obj_end(j);
	}
	hm_json_arr_end(j);
	hm_json_obj_end(j);
}

static const char *kind_name(enum hm_cmp_kind k)
{
	static const char *const names[] = {"run", "user", "field", "type"};

	return (unsigned)k < 4 ? names[k] : "?";
}

static void json_values(struct hm_json *j, const char *key, const double *v, size_t n)
{
	hm_json_arr_begin(j, key);
	for (size_t i = 0; i < n; i++)
		hm_json_double(j, NULL, v[i]);
	hm_json_arr_end(j);
}

static void json_metric(struct hm_json *j, const struct hm_cmp *c, const struct hm_cmp_metric *m)
{
	const char *only = hm_cmp_presence(m);

	hm_json_obj_begin(j, NULL);
	hm_json_str(j, "name", m->name);
	hm_json_double(j, "a_mean", m->c.a.mean);
	hm_json_double(j, "a_stddev_pct", m->c.a.sd_pct);
	hm_json_double(j, "b_mean", m->c.b.mean);
	hm_json_double(j, "b_stddev_pct", m->c.b.sd_pct);
	hm_json_double(j, "change_pct", m->c.change_pct);
	hm_json_double(j, "p", m->c.t.p);
	hm_json_bool(j, "significant", m->c.significant);
	hm_json_str(j, "kind", kind_name(m->kind));
	hm_json_str(j, "unit", m->unit);
	if (m->field)
		hm_json_str(j, "field", m->field);
	if (m->type)
		hm_json_str(j, "type", m->type);
	hm_json_bool(j, "contention", m->contention);
	hm_json_bool(j, "rare", m->rare);
	hm_json_u64(j, "a_n", m->c.a.n);
	hm_json_u64(j, "b_n", m->c.b.n);
	hm_json_double(j, "a_stddev", m->c.a.sd);
	hm_json_double(j, "b_stddev", m->c.b.sd);
	hm_json_double(j, "t", m->c.t.t);
	hm_json_double(j, "df", m->c.t.df);
	if (only)
		hm_json_str(j, "presence", only[5] == 'A' ? "a" : "b");
	else
		hm_json_str(j, "presence", "both");
	json_values(j, "a_values", m->a, c->na);
	json_values(j, "b_values", m->b, c->nb);
	if (c->groups.nr_a > 1) {
		hm_json_double(j, "drift_pct", m->drift_pct);
		hm_json_double(j, "vs_controls_pct", m->vs_controls_pct);
		hm_json_bool(j, "within_drift", m->within_drift);
	}
	hm_json_obj_end(j);
}

static void json_groups(struct hm_json *j, const struct hm_cmp_groups *g)
{
	if (g->nr_a < 2)
		return;
	hm_json_obj_begin(j, "groups");
	hm_json_arr_begin(j, "a");
	for (size_t i = 0; i < g->nr_a; i++)
		hm_json_u64(j, NULL, g->a[i]);
	hm_json_arr_end(j);
	hm_json_arr_begin(j, "b");
	for (size_t i = 0; i < g->nr_b; i++)
		hm_json_u64(j, NULL, g->b[i]);
	hm_json_arr_end(j);
	hm_json_obj_end(j);
}

static void json_hot(struct hm_json *j, const struct hm_cmp_hot *h)
{
	hm_json_obj_begin(j, NULL);
	hm_json_str(j, "field", h->field);
	hm_json_str(j, "type", h->type);
	hm_json_str(j, "member", h->member);
	hm_json_str(j, "status", hm_cmp_hot_status_name(h->status));
	hm_json_str(j, "measure", h->measure);
	hm_json_double(j, "a", h->a);
	hm_json_double(j, "b", h->b);
	hm_json_double(j, "delta", h->b - h->a);
	hm_json_arr_begin(j, "findings");
	for (uint32_t k = 0; k < h->nr_f; k++) {
		const struct hm_finding *f = h->f[k];

		hm_json_obj_begin(j, NULL);
		hm_json_str(j, "kind", hm_fkind_name(f->kind));
		hm_json_str(j, "member", f->member);
		if (f->other)
			hm_json_str(j, "other", f->other);
		f->old_offset >= 0 ? hm_json_i64(j, "old_offset", f->old_offset)
				   : hm_json_null(j, "old_offset");
		f->new_offset >= 0 ? hm_json_i64(j, "new_offset", f->new_offset)
				   : hm_json_null(j, "new_offset");
		f->old_line >= 0 ? hm_json_i64(j, "old_line", f->old_line)
				 : hm_json_null(j, "old_line");
		f->new_line >= 0 ? hm_json_i64(j, "new_line", f->new_line)
				 : hm_json_null(j, "new_line");
		hm_json_str(j, "detail", f->detail);
		hm_json_obj_end(j);
	}
	hm_json_arr_end(j);
	hm_json_obj_end(j);
}

static void json_layout(struct hm_json *j, const struct hm_cmp_layout *l)
{
	hm_json_arr_begin(j, "layout");
	for (size_t i = 0; l && i < l->nr; i++)
		json_hot(j, &l->hot[i]);
	hm_json_arr_end(j);
	if (!l) {
		hm_json_null(j, "layout_info");
		return;
	}
	hm_json_obj_begin(j, "layout_info");
	hm_json_str(j, "a", l->a_path);
	hm_json_str(j, "b", l->b_path);
	hm_json_u64(j, "line_size", l->line_size);
	hm_json_double(j, "hot_min", l->hot_min);
	hm_json_u64(j, "unchanged", l->unchanged);
	hm_json_arr_begin(j, "elsewhere");
	for (size_t i = 0; i < l->nr_elsewhere; i++)
		hm_json_str(j, NULL, l->elsewhere[i]);
	hm_json_arr_end(j);
	hm_json_obj_end(j);
}

void hm_cmp_print_json(FILE *out, const struct hm_cmp_view *v)
{
	struct hm_json j;

	hm_json_init(&j, out);
	hm_json_obj_begin(&j, NULL);
	hm_json_str(&j, "schema", "hitmap.compare/1");
	json_files(&j, "a", &v->a);
	json_files(&j, "b", &v->b);
	json_groups(&j, &v->cmp->groups);
	hm_json_arr_begin(&j, "metrics");
	for (size_t i = 0; i < v->cmp->nr; i++)
		if (hm_cmp_view_wants(v, &v->cmp->m[i]))
			json_metric(&j, v->cmp, &v->cmp->m[i]);
	hm_json_arr_end(&j);
	hm_json_u64(&j, "line_size", v->line_size);
	hm_json_double(&j, "per_samples", HM_CMP_PER);
	json_build(&j, "a_build", &v->a, &v->b);
	json_build(&j, "b_build", &v->b, &v->a);
	json_layout(&j, v->layout);
	hm_json_arr_begin(&j, "notes");
	for (size_t i = 0; i < v->nr_notes; i++)
		hm_json_str(&j, NULL, v->notes[i]);
	hm_json_arr_end(&j);
	hm_json_obj_end(&j);
	hm_json_finish(&j);
}
