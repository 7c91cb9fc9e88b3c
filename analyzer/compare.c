/* Run sets: which build each run is, its metrics by type.field, the table over both
 * sides (docs/compare.md); compare_run.c tells builds apart, compare_layout.c the layout. */
#include "analyzer/compare.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/lines.h"
#include "core/perfdata.h"
#include "core/sort.h"
#include "core/oom.h"

#define PER_1K "per 1k samples"	/* the unit of counts scaled by HM_CMP_PER */

/* --- one run's metrics --- */

void hm_cmp_run_init(struct hm_cmp_run *r, const char *path)
{
	memset(r, 0, sizeof(*r));
	r->path = path;
	hm_hash_init(&r->idx);
}

void hm_cmp_run_free(struct hm_cmp_run *r)
{
	free(r->v);
	hm_hash_free(&r->idx);
	memset(r, 0, sizeof(*r));
}

static struct hm_cmp_val *run_val(struct hm_arena *a, struct hm_cmp_run *r, const char *name,
				  enum hm_cmp_kind kind, const char *unit, int count)
{
	size_t i = (size_t)(uintptr_t)hm_hash_get(&r->idx, name);
	struct hm_cmp_val *v;

	if (i)
		return &r->v[i - 1];
	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 64;
		if (!(r->v = realloc(r->v, r->cap * sizeof(*r->v))))
			hm_oom();	/* as the arena does */
	}
	v = &r->v[r->n++];
	memset(v, 0, sizeof(*v));
	v->name = hm_arena_strdup(a, name);
	v->kind = kind;
	v->unit = unit;
	v->count = count;
	hm_hash_put(&r->idx, v->name, (void *)(uintptr_t)r->n);
	return v;
}

/* "worker_stats.ops" -> "worker_stats"; NULL for a global scalar ("counter"). */
static const char *type_of(struct hm_arena *a, const char *field)
{
	size_t n = strcspn(field, ".[");

	return strchr(field, '.') && n ? hm_arena_printf(a, "%.*s", (int)n, field) : NULL;
}

static struct hm_cmp_val *field_val(struct hm_arena *a, struct hm_cmp_run *r,
				    const char *field, const char *what, const char *unit)
{
	char name[512];
	struct hm_cmp_val *v;

	snprintf(name, sizeof(name), "%s %s", field, what);
	v = run_val(a, r, name, HM_CMP_FIELD, unit, 1);
	if (!v->field) {
		v->field = hm_arena_strdup(a, field);
		v->type = type_of(a, field);
	}
	return v;
}

/* Per type on one line: the line counts once, with its whole contention. */
static void line_types(struct hm_arena *a, struct hm_cmp_run *r, const struct hm_line *ln,
		       const char **types, double scale)
{
	const char *measure = hm_contention_name(r->source);
	size_t nt = 0;
	char name[512];

	for (uint32_t k = 0; k < ln->nr_fields; k++) {
		const struct hm_lfield *f = &ln->fields[k];
		const char *t;
		size_t j;

		if (!f->named || !(t = field_val(a, r, f->field, "samples", PER_1K)->type))
			continue;
		for (j = 0; j < nt && strcmp(types[j], t); j++)
			;
		if (j == nt)
			types[nt++] = t;
	}
	for (size_t j = 0; j < nt; j++) {
		struct hm_cmp_val *v;

		snprintf(name, sizeof(name), "%s (type) lines touched", types[j]);
		v = run_val(a, r, name, HM_CMP_TYPE, "lines", 1);
		v->type = types[j];
		v->v += 1;
		snprintf(name, sizeof(name), "%s (type) %s", types[j], measure);
		v = run_val(a, r, name, HM_CMP_TYPE, PER_1K, 1);
		v->type = types[j];
		v->contention = 1;
		v->v += (double)ln->contention * scale;
	}
}

static void line_fields(struct hm_arena *a, struct hm_cmp_run *r, const struct hm_line *ln,
			double scale)
{
	const char *measure = hm_contention_name(r->source);

	for (uint32_t k = 0; k < ln->nr_fields; k++) {
		const struct hm_lfield *f = &ln->fields[k];
		struct hm_cmp_val *v;

		if (!f->named)
			continue;
		field_val(a, r, f->field, "samples", PER_1K)->v += (double)f->records * scale;
		field_val(a, r, f->field, "loads", PER_1K)->v += (double)f->loads * scale;
		field_val(a, r, f->field, "stores", PER_1K)->v += (double)f->stores * scale;
		v = field_val(a, r, f->field, measure, PER_1K);
		v->contention = 1;
		v->v += (double)f->contention * scale;
	}
}

/* --- streaming: a run's accesses in batches, held as per-line and per-field tables, so
 * memory grows with the distinct lines and fields, not with the run's length --- */

/* One field's PMU load latencies. */
struct lat_sum {
	const char *field;
	double sum;			/* integer weights: exact below 2^53 */
	uint64_t n;
	struct lat_sum *next;		/* first seen first, the order of the metrics */
};

struct hm_cmp_acc {
	struct hm_arena *a;
	struct hm_arena tmp;		/* latencies; the lines' tables are the lines' */
	struct hm_cmp_run *r;
	struct hm_lines_acc *lines;
	struct hm_hash lat_idx;		/* field -> struct lat_sum */
	struct lat_sum *lat, **lat_tail;
	uint64_t n, t0, t1;
};

struct hm_cmp_acc *hm_cmp_acc_new(struct hm_arena *a, uint32_t line_size, struct hm_cmp_run *r)
{
	struct hm_cmp_acc *c = calloc(1, sizeof(*c));

	if (!c)
		hm_oom();	/* as the arena does */
	c->a = a;
	c->r = r;
	hm_arena_init(&c->tmp);
	c->lines = hm_lines_acc_new(&c->tmp, line_size, 0);
	hm_lines_acc_set_max(c->lines, HM_CMP_MAX_LINES);
	hm_hash_init(&c->lat_idx);
	c->lat_tail = &c->lat;
	c->t0 = UINT64_MAX;
	return c;
}

void hm_cmp_acc_set_max(struct hm_cmp_acc *c, size_t max_lines)
{
	hm_lines_acc_set_max(c->lines, max_lines);
}

/* PEBS weight is 0 for stores on Intel and for loads it did not time: average only the
 * loads that carry a latency. */
static void add_latency(struct hm_cmp_acc *c, const struct hm_access *x)
{
	struct lat_sum *l;

	if (x->s.source != HM_SRC_PMU || x->s.op != HM_OP_LOAD || !x->s.weight || !x->field)
		return;
	if (!(l = hm_hash_get(&c->lat_idx, x->field))) {
		l = hm_arena_alloc(&c->tmp, sizeof(*l));
		l->field = hm_arena_strdup(&c->tmp, x->field);
		hm_hash_put(&c->lat_idx, l->field, l);
		*c->lat_tail = l;
		c->lat_tail = &l->next;
	}
	l->sum += (double)x->s.weight;
	l->n++;
}

int hm_cmp_acc_add(struct hm_cmp_acc *c, const struct hm_access *acc, size_t n,
		   struct hm_err *err)
{
	if (hm_lines_acc_add(c->lines, acc, n, err))
		return -1;
	c->n += n;
	for (size_t i = 0; i < n; i++) {
		const struct hm_access *x = &acc[i];

		if (x->s.time) {
			c->t0 = x->s.time < c->t0 ? x->s.time : c->t0;
			c->t1 = x->s.time > c->t1 ? x->s.time : c->t1;
		}
		add_latency(c, x);
	}
	return 0;
}

void hm_cmp_acc_end(struct hm_cmp_acc *c)
{
	struct hm_cmp_run *r = c->r;
	struct hm_arena *a = c->a;
	struct hm_lines l;
	const char **types;
	double scale = c->n ? HM_CMP_PER / (double)c->n : 0;
	uint32_t most = 0;

	hm_lines_acc_end(c->lines, &l);
	r->samples = c->n;
	r->source = l.source;
	r->dropped_lines = l.dropped_lines;
	r->dropped_samples = l.dropped_records;
	run_val(a, r, "samples", HM_CMP_RUN, "", 1)->v = (double)c->n;
	if (c->t1 > c->t0)
		run_val(a, r, "elapsed seconds", HM_CMP_RUN, "s", 0)->v =
			(double)(c->t1 - c->t0) / 1e9;
	for (size_t i = 0; i < l.nr; i++)
		most = l.lines[i].nr_fields > most ? l.lines[i].nr_fields : most;
	types = hm_arena_alloc(&c->tmp, (most + 1) * sizeof(*types));
	for (size_t i = 0; i < l.nr; i++) {
		line_fields(a, r, &l.lines[i], scale);
		line_types(a, r, &l.lines[i], types, scale);
	}
	for (const struct lat_sum *s = c->lat; s; s = s->next) {
		struct hm_cmp_val *v = field_val(a, r, s->field, "load latency", "cycles");

		v->count = 0;
		v->v = (v->v + s->sum) / (double)s->n;
	}
	hm_hash_free(&c->lat_idx);
	hm_arena_free(&c->tmp);
	free(c);
}

int hm_cmp_extract(struct hm_arena *a, const struct hm_access *acc, size_t n,
		   uint32_t line_size, struct hm_cmp_run *r, struct hm_err *err)
{
	struct hm_cmp_acc *c = hm_cmp_acc_new(a, line_size, r);
	int rc = hm_cmp_acc_add(c, acc, n, err);

	hm_cmp_acc_end(c);	/* on failure too: it frees c */
	return rc;
}

/* --- user metrics --- */

void hm_cmp_user_set(struct hm_arena *a, struct hm_cmp_run *r, const char *name, double v)
{
	run_val(a, r, name, HM_CMP_USER, "", 0)->v = v;
}

static int valid_name(const char *s, size_t n)
{
	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (s[i] == ' ' || s[i] == '\t' || s[i] == '=' || s[i] == ',')
			return 0;
	return 1;
}

int hm_cmp_user_parse(struct hm_arena *a, struct hm_cmp_run *r, const char *text,
		      struct hm_err *err)
{
	const char *s = text;

	while (*s) {
		size_t len = strcspn(s, ","), k = strcspn(s, "=");
		char name[256], *end;
		double v;

		if (k >= len || !valid_name(s, k) || k >= sizeof(name))
			goto bad;
		memcpy(name, s, k);
		name[k] = '\0';
		errno = 0;
		v = strtod(s + k + 1, &end);
		if (end == s + k + 1 || end != s + len || errno || !isfinite(v))
			goto bad;
		hm_cmp_user_set(a, r, name, v);
		s += len + (s[len] == ',');
	}
	return 0;
bad:
	return hm_err_set(err, HM_EXIT_USAGE, "metric '%s': write NAME=VALUE[,NAME=VALUE], "
			  "e.g. throughput=1234.5", text);
}

int hm_cmp_user_file(struct hm_arena *a, struct hm_cmp_run *r, const char *path,
		     struct hm_err *err)
{
	FILE *f = fopen(path, "r");
	char line[512];
	int no = 0;

	if (!f)
		return errno == ENOENT ? 1 : hm_err_set(err, HM_EXIT_INPUT, "%s: %s: check its "
							"permissions", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char name[256], rest[2];
		double v;
		int got;

		no++;
		line[strcspn(line, "#\r\n")] = '\0';
		got = sscanf(line, "%255s %lf %1s", name, &v, rest);
		if (got == EOF || (got <= 0 && !line[strspn(line, " \t")]))
			continue;
		if (got != 2 || !isfinite(v)) {
			fclose(f);
			return hm_err_set(err, HM_EXIT_INPUT, "%s:%d: expected 'NAME VALUE' (one "
					  "metric per line, e.g. 'throughput 1234.5')", path, no);
		}
		hm_cmp_user_set(a, r, name, v);
	}
	fclose(f);
	return 0;
}

/* --- the table over both sides --- */

static void fill_side(struct hm_arena *a, struct hm_hash *idx, struct hm_cmp_metric *m,
		      size_t *nr, const struct hm_cmp_run *runs, size_t n, int side_b,
		      size_t na, size_t nb)
{
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < runs[i].n; k++) {
			const struct hm_cmp_val *v = &runs[i].v[k];
			size_t j = (size_t)(uintptr_t)hm_hash_get(idx, v->name);
			struct hm_cmp_metric *x;

			if (!j) {
				x = &m[*nr];
				x->name = v->name;
				x->unit = v->unit;
				x->field = v->field;
				x->type = v->type;
				x->kind = v->kind;
				x->contention = v->contention;
				x->a = hm_arena_alloc(a, (na + 1) * sizeof(double));
				x->b = hm_arena_alloc(a, (nb + 1) * sizeof(double));
				for (size_t q = 0; q < na; q++)
					x->a[q] = v->count ? 0 : NAN;
				for (size_t q = 0; q < nb; q++)
					x->b[q] = v->count ? 0 : NAN;
				hm_hash_put(idx, v->name, (void *)(uintptr_t)++*nr);
			} else {
				x = &m[j - 1];
			}
			(side_b ? x->b : x->a)[i] = v->v;
			++*(side_b ? &x->seen_b : &x->seen_a);
		}
}

static size_t present(const double *v, size_t n, double *out)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (!isnan(v[i]))
			out[k++] = v[i];
	return k;
}

/* How far a metric moved, for sorting: a change from 0 is unbounded, a side without
 * values is last. */
static double magnitude(const struct hm_cmp_metric *m)
{
	if (!m->c.a.n || !m->c.b.n)
		return -1;
	return isnan(m->c.change_pct) ? INFINITY : fabs(m->c.change_pct);
}

/* Mean events per run behind a field or type count (per-1k values times the run's
 * samples), for the HM_CMP_MIN_EVENTS floor. */
static double events(const double *v, const struct hm_cmp_run *runs, size_t n)
{
	double sum = 0;
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (!isnan(v[i])) {
			sum += v[i] * (double)runs[i].samples / HM_CMP_PER;
			k++;
		}
	return k ? sum / (double)k : 0;
}

static void floor_rare(struct hm_cmp_metric *m, const struct hm_cmp_run *ra, size_t na,
		       const struct hm_cmp_run *rb, size_t nb)
{
	if (m->kind != HM_CMP_FIELD && m->kind != HM_CMP_TYPE)
		return;
	/* "lines touched" counts places, not events: 1 -> 2 is a real change, but a line
	 * seen in only some runs (mean below 1) is a stray sample's */
	if (!strcmp(m->unit, "lines")) {
		m->a_events = m->c.a.n ? m->c.a.mean : 0;
		m->b_events = m->c.b.n ? m->c.b.mean : 0;
		m->rare = fmax(m->a_events, m->b_events) < 1;
		m->c.significant &= !m->rare;
		return;
	}
	if (strcmp(m->unit, PER_1K))
		return;
	m->a_events = events(m->a, ra, na);
	m->b_events = events(m->b, rb, nb);
	if (fmax(m->a_events, m->b_events) < HM_CMP_MIN_EVENTS) {
		m->rare = 1;
		m->c.significant = 0;
	}
}

static int cmp_metric(const void *x, const void *y)
{
	const struct hm_cmp_metric *a = x, *b = y;
	double ma = magnitude(a), mb = magnitude(b);

	if (a->c.significant != b->c.significant)
		return b->c.significant - a->c.significant;
	if (a->rare != b->rare)
		return a->rare - b->rare;
	if (ma != mb)
		return ma > mb ? -1 : 1;
	return strcmp(a->name, b->name);
}

int hm_cmp_build(struct hm_arena *a, const struct hm_cmp_run *ra, size_t na,
		 const struct hm_cmp_run *rb, size_t nb, struct hm_cmp *out)
{
	struct hm_hash idx;
	size_t total = 0;
	double *va = hm_arena_alloc(a, (na + 1) * sizeof(double));
	double *vb = hm_arena_alloc(a, (nb + 1) * sizeof(double));

	memset(out, 0, sizeof(*out));
	out->na = na;
	out->nb = nb;
	out->source_a = na ? ra[0].source : HM_SRC_TIMER;
	out->source_b = nb ? rb[0].source : HM_SRC_TIMER;
	for (size_t i = 0; i < na; i++)
		total += ra[i].n;
	for (size_t i = 0; i < nb; i++)
		total += rb[i].n;
	out->m = hm_arena_alloc(a, (total + 1) * sizeof(*out->m));
	hm_hash_init(&idx);
	fill_side(a, &idx, out->m, &out->nr, ra, na, 0, na, nb);
	fill_side(a, &idx, out->m, &out->nr, rb, nb, 1, na, nb);
	hm_hash_free(&idx);
	for (size_t i = 0; i < out->nr; i++) {
		struct hm_cmp_metric *m = &out->m[i];
		size_t ka = present(m->a, na, va), kb = present(m->b, nb, vb);

		hm_stats_compare(va, ka, vb, kb, &m->c);
		floor_rare(m, ra, na, rb, nb);
	}
	hm_cmp_sort(out);
	return 0;
}

void hm_cmp_sort(struct hm_cmp *c)
{
	if (c->nr)
		hm_sort(c->m, c->nr, sizeof(*c->m), cmp_metric);
}

const struct hm_cmp_metric *hm_cmp_find(const struct hm_cmp *c, const char *name)
{
	for (size_t i = 0; i < c->nr; i++)
		if (!strcmp(c->m[i].name, name))
			return &c->m[i];
	return NULL;
}

const char *hm_cmp_presence(const struct hm_cmp_metric *m)
{
	if (m->seen_a && !m->seen_b)
		return "only A";
	if (m->seen_b && !m->seen_a)
		return "only B";
	return NULL;
}

