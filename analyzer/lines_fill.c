/* One line: its rows by (offset, size), their threads, CPUs and code sites, the line's
 * own lists, PMU counters and latency, and the objects on it. */
#include "analyzer/lines_int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "core/sort.h"
#include "core/oom.h"

static void count(struct cent *e, const struct hm_lrec *r)
{
	e->records++;
	e->loads += r->op == HM_OP_LOAD;
	e->stores += r->op == HM_OP_STORE;
	e->locked += r->locked;
	e->writes += r->writes;
}

static int cmp_cent(const void *x, const void *y)
{
	const struct cent *a = x, *b = y;

	if (a->k1 != b->k1)
		return a->k1 < b->k1 ? -1 : 1;
	if (a->records != b->records)
		return a->records > b->records ? -1 : 1;
	return a->k2 < b->k2 ? -1 : a->k2 > b->k2;
}

static int cmp_cent_key(const void *x, const void *y)
{
	const struct cent *a = x, *b = y;

	return a->k2 < b->k2 ? -1 : a->k2 > b->k2;
}

/* The table's entries, by kind and row, then busiest first; returns how many. */
size_t hm_lines_snapshot(struct ctx *c)
{
	if (!c->t.len)
		return 0;
	if (c->t.len > c->cap_ents) {
		c->cap_ents = c->t.len * 2;
		c->ents = realloc(c->ents, c->cap_ents * sizeof(*c->ents));
		if (!c->ents)
			hm_oom();	/* as the arena does */
	}
	for (size_t i = 0; i < c->t.len; i++)
		c->ents[i] = c->t.e[c->t.slots[i]];
	hm_sort(c->ents, c->t.len, sizeof(*c->ents), cmp_cent);
	return c->t.len;
}

struct hm_count *hm_lines_to_counts(struct hm_arena *a, const struct cent *e, size_t n, int by_cpu)
{
	struct hm_count *out = hm_arena_alloc(a, (n ? n : 1) * sizeof(*out));

	for (size_t i = 0; i < n; i++) {
		out[i].id = (uint32_t)e[i].k2;
		out[i].pid = by_cpu ? 0 : (uint32_t)(e[i].k2 >> 32);
		out[i].records = e[i].records;
		out[i].loads = e[i].loads;
		out[i].stores = e[i].stores;
		out[i].locked = e[i].locked;
		out[i].writes = e[i].writes;
	}
	return out;
}

static int cmp_str(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

/* Same function and line: one site, whatever the ip. */
static int cmp_site_where(const void *x, const void *y)
{
	const struct hm_site *a = x, *b = y;
	int r;

	if (!a->func != !b->func)
		return a->func ? -1 : 1;
	if (!a->func)
		return a->ip < b->ip ? -1 : a->ip > b->ip;
	if ((r = strcmp(a->func, b->func)) || (r = cmp_str(a->file, b->file)))
		return r;
	return a->line < b->line ? -1 : a->line > b->line;
}

static int cmp_site_count(const void *x, const void *y)
{
	const struct hm_site *a = x, *b = y;

	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return a->ip < b->ip ? -1 : a->ip > b->ip;
}

/* A row's sites from its per-ip entries: merged by function and line, top few kept. */
static void to_sites(struct ctx *c, struct hm_lfield *f, const struct cent *e, size_t n)
{
	size_t k = 0;

	if (n > c->cap_sites) {
		c->cap_sites = 2 * n;
		c->sites = realloc(c->sites, c->cap_sites * sizeof(*c->sites));
		if (!c->sites)
			hm_oom();	/* as the arena does */
	}
	for (size_t i = 0; i < n; i++)
		c->sites[i] = (struct hm_site){ e[i].x->func, e[i].x->file, e[i].x->line, e[i].k2,
						e[i].records };
	hm_sort(c->sites, n, sizeof(*c->sites), cmp_site_where);
	for (size_t i = 0; i < n; i++) {
		if (k && !cmp_site_where(&c->sites[k - 1], &c->sites[i])) {
			c->sites[k - 1].count += c->sites[i].count;
			if (c->sites[i].ip < c->sites[k - 1].ip)
				c->sites[k - 1].ip = c->sites[i].ip;
		} else {
			c->sites[k++] = c->sites[i];
		}
	}
	hm_sort(c->sites, k, sizeof(*c->sites), cmp_site_count);
	f->nr_sites_all = (uint32_t)k;
	f->nr_sites = k < HM_LINES_TOP_SITES || c->all_sites ? (uint32_t)k : HM_LINES_TOP_SITES;
	f->sites = hm_arena_alloc(c->a, f->nr_sites * sizeof(*f->sites));
	memcpy(f->sites, c->sites, f->nr_sites * sizeof(*f->sites));
}

static const char *row_name(struct hm_arena *a, const struct hm_access *x, uint32_t off,
			    int *named)
{
	*named = x->field != NULL;
	if (x->field)
		return x->field;
	if (x->object && x->obj_base)
		return hm_arena_printf(a, "%s+0x%" PRIx64, x->object, x->field_off);
	return hm_arena_printf(a, "+0x%x", off);
}

/* Rows by (offset, size); fidx[i] becomes access i's row. A row is named by its first
 * access that has a field (entry used == 2), else by its first access. */
static void line_rows(struct ctx *c, struct hm_line *ln, const struct hm_lrec *r, size_t m)
{
	uint32_t nr = 0;
	size_t n;

	for (size_t i = 0; i < m; i++) {
		struct cent *e = hm_lines_ctab_get(&c->t, (uint64_t)K_ROW << 32,
						   (uint64_t)r[i].off << 32 | r[i].size, NULL);

		if (!e->records++) {
			e->aux = nr++;
			e->x = &c->acc[r[i].idx];
			e->used = 1 + (e->x->field != NULL);
		} else if (e->used == 1 && c->acc[r[i].idx].field) {
			e->x = &c->acc[r[i].idx];
			e->used = 2;
		}
		c->fidx[i] = e->aux;
	}
	n = hm_lines_snapshot(c);
	hm_sort(c->ents, n, sizeof(*c->ents), cmp_cent_key);	/* offset, then size */
	ln->nr_fields = nr;
	ln->fields = hm_arena_alloc(c->a, nr * sizeof(*ln->fields));
	for (size_t k = 0; k < n; k++) {
		struct hm_lfield *f = &ln->fields[k];
		const struct hm_access *x = c->ents[k].x;

		c->remap[c->ents[k].aux] = (uint32_t)k;
		f->offset = (uint32_t)(c->ents[k].k2 >> 32);
		f->size = x->s.size;
		f->field = row_name(c->a, x, f->offset, &f->named);
		f->object = x->object;
		f->type = x->type;
		f->obj_base = x->obj_base;
		f->field_off = x->field_off;
		f->method = x->method;
		f->alloc_site = x->alloc_site;
	}
	for (size_t i = 0; i < m; i++)
		c->fidx[i] = c->remap[c->fidx[i]];
	hm_lines_ctab_clear(&c->t);
}

static void count_pmu(struct ctx *c, struct hm_line *ln, struct hm_lfield *f,
		      const struct hm_access *x)
{
	if (!ln->c2c) {
		ln->c2c = hm_arena_alloc(c->a, sizeof(*ln->c2c));
		ln->lat = hm_arena_alloc(c->a, HM_LVL__COUNT * sizeof(*ln->lat));
	}
	if (!f->c2c)
		f->c2c = hm_arena_alloc(c->a, sizeof(*f->c2c));
	hm_c2c_add_access(ln->c2c, x);
	hm_c2c_add_access(f->c2c, x);
	if (x->s.op == HM_OP_LOAD) {
		enum hm_c2c_level lv = hm_c2c_level(x->s.data_src);

		ln->lat[lv].n++;
		ln->lat[lv].sum += x->s.weight;
	}
}

static void line_count(struct ctx *c, struct hm_line *ln, const struct hm_lrec *r, size_t m)
{
	for (size_t i = 0; i < m; i++) {
		const struct hm_lrec *x = &r[i];
		uint64_t row = c->fidx[i], who = (uint64_t)x->pid << 32 | x->tid;
		struct hm_lfield *f = &ln->fields[row];
		struct cent *site;

		if (!ln->records++ || x->time < ln->t_first)
			ln->t_first = x->time;
		if (x->time > ln->t_last)
			ln->t_last = x->time;
		ln->loads += x->op == HM_OP_LOAD;
		ln->stores += x->op == HM_OP_STORE;
		ln->locked += x->locked;
		ln->spin += x->spin;
		f->spin += x->spin;
		f->records++;
		f->loads += x->op == HM_OP_LOAD;
		f->stores += x->op == HM_OP_STORE;
		f->locked += x->locked;
		if (x->source == HM_SRC_PMU)
			count_pmu(c, ln, f, &c->acc[x->idx]);
		count(hm_lines_ctab_get(&c->t, (uint64_t)K_THREAD << 32 | row, who, NULL), x);
		count(hm_lines_ctab_get(&c->t, (uint64_t)K_CPU << 32 | row, x->cpu, NULL), x);
		site = hm_lines_ctab_get(&c->t, (uint64_t)K_SITE << 32 | row, x->ip, NULL);
		if (!site->records++)
			site->x = &c->acc[x->idx];
		if (ln->nr_fields > 1) {
			count(hm_lines_ctab_get(&c->t, (uint64_t)K_LTHREAD << 32, who, NULL), x);
			count(hm_lines_ctab_get(&c->t, (uint64_t)K_LCPU << 32, x->cpu, NULL), x);
		}
	}
}

/* Threads, CPUs and sites of the line and its rows, from the counting table. */
static void line_extract(struct ctx *c, struct hm_line *ln)
{
	size_t n = hm_lines_snapshot(c);

	for (size_t b = 0, e; b < n; b = e) {
		const struct cent *g = &c->ents[b];
		uint32_t kind = (uint32_t)(g->k1 >> 32), nr;
		struct hm_lfield *f = &ln->fields[(uint32_t)g->k1];

		for (e = b + 1; e < n && c->ents[e].k1 == g->k1; e++)
			;
		nr = (uint32_t)(e - b);
		if (kind == K_THREAD) {
			f->threads = hm_lines_to_counts(c->a, g, nr, 0);
			f->nr_threads = nr;
		} else if (kind == K_CPU) {
			f->cpus = hm_lines_to_counts(c->a, g, nr, 1);
			f->nr_cpus = nr;
		} else if (kind == K_SITE) {
			to_sites(c, f, g, nr);
		} else if (kind == K_LTHREAD) {
			ln->threads = hm_lines_to_counts(c->a, g, nr, 0);
			ln->nr_threads = nr;
		} else if (kind == K_LCPU) {
			ln->cpus = hm_lines_to_counts(c->a, g, nr, 1);
			ln->nr_cpus = nr;
		}
	}
	if (ln->nr_fields == 1) {	/* one row: the line's lists are the row's */
		ln->threads = ln->fields[0].threads;
		ln->nr_threads = ln->fields[0].nr_threads;
		ln->cpus = ln->fields[0].cpus;
		ln->nr_cpus = ln->fields[0].nr_cpus;
	}
	hm_lines_ctab_clear(&c->t);
}

/* The objects on the line, most accessed first, at most three names. */
const char *hm_lines_object(struct hm_arena *a, const struct hm_line *ln)
{
	const char *names[3] = { NULL, NULL, NULL };
	uint64_t counts[3] = { 0, 0, 0 };
	size_t n = 0;

	for (uint32_t i = 0; i < ln->nr_fields; i++) {
		const char *obj = ln->fields[i].object;
		uint64_t recs = 0;
		size_t j;

		for (j = 0; j < n && obj && strcmp(names[j], obj); j++)
			;
		if (!obj || j < n)
			continue;
		for (uint32_t k = i; k < ln->nr_fields; k++)
			if (ln->fields[k].object && !strcmp(ln->fields[k].object, obj))
				recs += ln->fields[k].records;
		for (j = 0; j < 3 && j < n && recs <= counts[j]; j++)
			;
		if (j == 3)
			continue;
		n += n < 3;
		memmove(&names[j + 1], &names[j], (n - 1 - j) * sizeof(names[0]));
		memmove(&counts[j + 1], &counts[j], (n - 1 - j) * sizeof(counts[0]));
		names[j] = obj;
		counts[j] = recs;
	}
	if (HM_LINES_IS_TLS(ln->pid))	/* one thread's copy */
		return hm_arena_printf(a, "%s (thread %u)", names[0] ? names[0] : "tls",
				       ln->pid & HM_LINES_TID_MASK);
	if (n <= 1)
		return names[0];
	if (n == 2)
		return hm_arena_printf(a, "%s, %s", names[0], names[1]);
	return hm_arena_printf(a, "%s, %s, %s", names[0], names[1], names[2]);
}

void hm_lines_fill(struct ctx *c, struct hm_line *ln, const struct hm_lrec *r, size_t m)
{
	const struct hm_access *x0 = &c->acc[r[0].idx];

	ln->addr = x0->s.addr & ~(uint64_t)(c->line_size - 1);
	ln->pid = hm_lines_space(x0);
	line_rows(c, ln, r, m);
	line_count(c, ln, r, m);
	line_extract(c, ln);
	hm_sharing_interleave(c->a, ln, r, c->fidx, m, c->window_ns, c->ev,
			      c->from ? hm_lines_acc_carry(c->from, ln->pid, ln->addr) : NULL,
			      c->from != NULL);
	ln->object = hm_lines_object(c->a, ln);
}

