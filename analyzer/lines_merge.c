/* hm_lines from batches: each batch of accesses is built by hm_lines_build_batch in a
 * scratch arena and folded into per-line tables that live in the caller's arena, so a
 * report holds one batch of samples at a time. Arrays here grow by powers of two inside
 * the arena: what a growth leaves behind is at most what is kept. */
#include "analyzer/lines.h"

#include <stdlib.h>
#include <string.h>

#include "analyzer/lines_int.h"
#include "core/sort.h"
#include "core/oom.h"

/* Arrays start with room for one: most lines have one or two rows, threads and CPUs,
 * and four of each was most of a line's memory (docs/report.md, Memory). */
size_t hm_lines_pow2cap(size_t n)
{
	size_t c = 1;

	while (c < n)
		c <<= 1;
	return c;
}

void *hm_lines_grow(struct hm_arena *a, void *p, size_t n, size_t add, size_t size)
{
	void *q;

	if (p && n + add <= hm_lines_pow2cap(n))
		return p;
	q = hm_arena_alloc(a, hm_lines_pow2cap(n + add) * size);
	if (n)
		memcpy(q, p, n * size);
	return q;
}

uint64_t hm_lines_mix(uint64_t pid, uint64_t addr)
{
	uint64_t h = (addr ^ (pid << 47)) * 0x9e3779b97f4a7c15ull;

	return h ^ (h >> 31);
}

struct hm_lines_acc *hm_lines_acc_new(struct hm_arena *a, uint32_t line_size,
				      uint64_t window_ns)
{
	struct hm_lines_acc *m = calloc(1, sizeof(*m));

	if (!m)
		hm_oom();	/* as the arena does */
	m->a = a;
	m->line_size = line_size;
	m->window_ns = window_ns ? window_ns : HM_LINES_WINDOW_NS;
	m->l.line_size = line_size;
	m->l.window_ns = m->window_ns;
	hm_arena_init(&m->own);
	return m;
}

void hm_lines_acc_set_max(struct hm_lines_acc *m, size_t max_lines)
{
	m->max_lines = max_lines;
	m->l.max_lines = max_lines;
}

static void slots_grow(struct hm_lines_acc *m)
{
	struct mslot *old = m->slots;
	size_t ocap = m->cap_slots;

	m->cap_slots = ocap ? 2 * ocap : 1024;
	if (!(m->slots = calloc(m->cap_slots, sizeof(*m->slots))))
		hm_oom();
	for (size_t i = 0; i < ocap; i++) {
		size_t j;

		if (!old[i].id1)
			continue;
		for (j = hm_lines_mix(old[i].pid, old[i].addr) & (m->cap_slots - 1); m->slots[j].id1;
		     j = (j + 1) & (m->cap_slots - 1))
			;
		m->slots[j] = old[i];
	}
	free(old);
}

void hm_lines_acc_reindex(struct hm_lines_acc *m)
{
	size_t cap = 1024;

	while (cap < 2 * (m->l.nr + 1))
		cap <<= 1;
	free(m->slots);
	if (!(m->slots = calloc(cap, sizeof(*m->slots))))
		hm_oom();
	m->cap_slots = cap;
	for (size_t i = 0; i < m->l.nr; i++) {
		const struct hm_line *ln = &m->l.lines[i];
		size_t j;

		for (j = hm_lines_mix(ln->pid, ln->addr) & (cap - 1); m->slots[j].id1;
		     j = (j + 1) & (cap - 1))
			;
		m->slots[j] = (struct mslot){ ln->addr, ln->pid, (uint32_t)(i + 1) };
	}
}

static struct hm_line *line_get(struct hm_lines_acc *m, uint32_t pid, uint64_t addr)
{
	size_t j;

	if (2 * (m->l.nr + 1) > m->cap_slots)
		slots_grow(m);
	for (j = hm_lines_mix(pid, addr) & (m->cap_slots - 1); m->slots[j].id1;
	     j = (j + 1) & (m->cap_slots - 1))
		if (m->slots[j].addr == addr && m->slots[j].pid == pid)
			return &m->l.lines[m->slots[j].id1 - 1];
	if (m->l.nr == m->cap_lines) {
		m->cap_lines = m->cap_lines ? 2 * m->cap_lines : 256;
		m->l.lines = realloc(m->l.lines, m->cap_lines * sizeof(*m->l.lines));
		if (!m->l.lines)
			hm_oom();
	}
	m->slots[j] = (struct mslot){ addr, pid, (uint32_t)++m->l.nr };
	memset(&m->l.lines[m->l.nr - 1], 0, sizeof(struct hm_line));
	m->l.lines[m->l.nr - 1].addr = addr;
	m->l.lines[m->l.nr - 1].pid = pid;
	return &m->l.lines[m->l.nr - 1];
}

const struct hm_icarry *hm_lines_acc_carry(const struct hm_lines_acc *m, uint32_t pid,
					   uint64_t addr)
{
	size_t j;

	if (!m->cap_slots)
		return NULL;
	for (j = hm_lines_mix(pid, addr) & (m->cap_slots - 1); m->slots[j].id1;
	     j = (j + 1) & (m->cap_slots - 1))
		if (m->slots[j].addr == addr && m->slots[j].pid == pid)
			return m->l.lines[m->slots[j].id1 - 1].carry;
	return NULL;
}

static void add_counts(struct hm_arena *a, struct hm_count **dst, uint32_t *nd,
		       const struct hm_count *src, uint32_t ns)
{
	for (uint32_t i = 0; i < ns; i++) {
		const struct hm_count *s = &src[i];
		uint32_t j;

		for (j = 0; j < *nd && ((*dst)[j].id != s->id || (*dst)[j].pid != s->pid); j++)
			;
		if (j == *nd) {
			*dst = hm_lines_grow(a, *dst, *nd, 1, sizeof(**dst));
			(*dst)[(*nd)++] = *s;
			continue;
		}
		(*dst)[j].records += s->records;
		(*dst)[j].loads += s->loads;
		(*dst)[j].stores += s->stores;
		(*dst)[j].locked += s->locked;
		(*dst)[j].writes += s->writes;
	}
}

static int same_site(const struct hm_site *a, const struct hm_site *b)
{
	if (!a->func || !b->func)
		return !a->func && !b->func && a->ip == b->ip;
	return !strcmp(a->func, b->func) && a->line == b->line &&
	       !strcmp(a->file ? a->file : "", b->file ? b->file : "");
}

static void add_sites(struct hm_arena *a, struct hm_lfield *d, const struct hm_lfield *f)
{
	for (uint32_t i = 0; i < f->nr_sites; i++) {
		uint32_t j;

		for (j = 0; j < d->nr_sites && !same_site(&d->sites[j], &f->sites[i]); j++)
			;
		if (j == d->nr_sites) {
			d->sites = hm_lines_grow(a, d->sites, d->nr_sites, 1, sizeof(*d->sites));
			d->sites[d->nr_sites++] = f->sites[i];
			continue;
		}
		d->sites[j].count += f->sites[i].count;
		if (f->sites[i].ip < d->sites[j].ip)
			d->sites[j].ip = f->sites[i].ip;
	}
}

static void add_c2c(struct hm_arena *a, struct hm_c2c_stats **dst,
		    const struct hm_c2c_stats *src)
{
	if (!src)
		return;
	if (!*dst)
		*dst = hm_arena_alloc(a, sizeof(**dst));
	hm_c2c_merge(*dst, src);
}

static void name_row(struct hm_arena *a, struct hm_lfield *d, const struct hm_lfield *f)
{
	d->named = f->named;
	/* a named row's field is the resolver's string; an unnamed one was printed into
	 * the batch's arena */
	d->field = f->named ? f->field : hm_arena_strdup(a, f->field);
	d->object = f->object;
	d->type = f->type;
	d->obj_base = f->obj_base;
	d->field_off = f->field_off;
	d->method = f->method;
	d->alloc_site = f->alloc_site;
}

/* The merged row of batch row f, made if new. */
static uint32_t add_row(struct hm_arena *a, struct hm_line *d, const struct hm_lfield *f)
{
	struct hm_lfield *g;
	uint32_t j;

	for (j = 0; j < d->nr_fields && (d->fields[j].offset != f->offset ||
					 d->fields[j].size != f->size); j++)
		;
	if (j == d->nr_fields) {
		d->fields = hm_lines_grow(a, d->fields, d->nr_fields, 1, sizeof(*d->fields));
		g = &d->fields[d->nr_fields++];
		memset(g, 0, sizeof(*g));
		g->offset = f->offset;
		g->size = f->size;
		name_row(a, g, f);
	} else if (!(g = &d->fields[j])->named && f->named) {
		name_row(a, g, f);
	}
	g->records += f->records;
	g->loads += f->loads;
	g->stores += f->stores;
	g->locked += f->locked;
	g->spin += f->spin;
	g->conflicts += f->conflicts;
	g->transfers += f->transfers;
	add_c2c(a, &g->c2c, f->c2c);
	add_counts(a, &g->threads, &g->nr_threads, f->threads, f->nr_threads);
	add_counts(a, &g->cpus, &g->nr_cpus, f->cpus, f->nr_cpus);
	add_sites(a, g, f);
	return j;
}

static void add_inter(struct hm_arena *a, struct hm_line *d, uint32_t x, uint32_t y,
		      uint64_t n)
{
	uint32_t lo = x < y ? x : y, hi = x < y ? y : x, j;

	for (j = 0; j < d->nr_inter && (d->inter[j].a != lo || d->inter[j].b != hi); j++)
		;
	if (j == d->nr_inter) {
		d->inter = hm_lines_grow(a, d->inter, d->nr_inter, 1, sizeof(*d->inter));
		d->inter[d->nr_inter++] = (struct hm_rowpair){ lo, hi, 0 };
	}
	d->inter[j].n += n;
}

/* A row of the batch's carry in the merged line's numbering. */
static uint32_t merged_row(const struct hm_lines_acc *m, uint32_t row)
{
	return row & HM_ROW_CARRIED ? row & ~HM_ROW_CARRIED : m->map[row];
}

/* The batch's events with rows carried in (sharing.c), then the line's state after the
 * batch, kept for the next one: as if the batches were one. */
static void carry_on(struct hm_lines_acc *m, struct hm_line *d, const struct hm_line *ln)
{
	struct hm_icarry c;

	for (uint32_t k = 0; k < ln->nr_edges; k++) {
		const struct hm_iedge *e = &ln->edges[k];
		uint32_t to = m->map[e->to];

		if (e->conflict && e->from != to)
			d->fields[e->from].conflicts++;
		add_inter(&m->own, d, e->from, to, 1);
	}
	if (!ln->carry)
		return;
	c = *ln->carry;
	c.prev_row = merged_row(m, c.prev_row);
	c.own.w_row = merged_row(m, c.own.w_row);
	for (uint32_t i = 0; i < c.own.ns && i < 2; i++)
		c.own.s_row[i] = merged_row(m, c.own.s_row[i]);
	if (!d->carry)
		d->carry = hm_arena_alloc(&m->own, sizeof(*d->carry));
	*d->carry = c;
}

static void add_line(struct hm_lines_acc *m, const struct hm_line *ln)
{
	struct hm_arena *a = &m->own;
	struct hm_line *d;

	/* A dropped line stays dropped: what is kept is exact from its first access. */
	if (m->nr_gone && hm_lines_acc_gone(m, ln->pid, ln->addr)) {
		m->l.dropped_records += ln->records;
		return;
	}
	d = line_get(m, ln->pid, ln->addr);

	if (!d->records || ln->t_first < d->t_first)
		d->t_first = ln->t_first;
	if (ln->t_last > d->t_last)
		d->t_last = ln->t_last;
	d->records += ln->records;
	d->loads += ln->loads;
	d->stores += ln->stores;
	d->locked += ln->locked;
	d->spin += ln->spin;
	d->conflicts += ln->conflicts;
	d->transfers += ln->transfers;
	add_c2c(a, &d->c2c, ln->c2c);
	if (ln->lat) {
		if (!d->lat)
			d->lat = hm_arena_alloc(a, HM_LVL__COUNT * sizeof(*d->lat));
		for (int i = 0; i < HM_LVL__COUNT; i++) {
			d->lat[i].n += ln->lat[i].n;
			d->lat[i].sum += ln->lat[i].sum;
		}
	}
	add_counts(a, &d->threads, &d->nr_threads, ln->threads, ln->nr_threads);
	add_counts(a, &d->cpus, &d->nr_cpus, ln->cpus, ln->nr_cpus);
	if (ln->nr_fields > m->cap_map) {
		m->cap_map = 2 * ln->nr_fields;
		if (!(m->map = realloc(m->map, m->cap_map * sizeof(*m->map))))
			hm_oom();
	}
	for (uint32_t k = 0; k < ln->nr_fields; k++)
		m->map[k] = add_row(a, d, &ln->fields[k]);
	for (uint32_t k = 0; k < ln->nr_inter; k++)
		add_inter(a, d, m->map[ln->inter[k].a], m->map[ln->inter[k].b],
			  ln->inter[k].n);
	carry_on(m, d, ln);
}

int hm_lines_acc_add(struct hm_lines_acc *m, const struct hm_access *acc, size_t n,
		     struct hm_err *err)
{
	struct hm_arena scratch;
	struct hm_lines b;
	struct hm_lines *l = &m->l;

	if (!n)
		return 0;
	hm_arena_init(&scratch);
	if (hm_lines_build_batch(&scratch, acc, n, m->line_size, m->window_ns, 1, m, &b, err)) {
		hm_arena_free(&scratch);
		return -1;
	}
	l->total += b.total;
	l->with_addr += b.with_addr;
	l->resolved += b.resolved;
	l->prim += b.prim;
	l->prim_resolved += b.prim_resolved;
	l->cpus_known |= b.cpus_known || (m->have_cpu && b.first_cpu != l->first_cpu);
	if (!m->have_cpu) {
		m->have_cpu = 1;
		l->first_cpu = b.first_cpu;
	}
	for (int i = 0; i < 3; i++)
		l->by_source[i] += b.by_source[i];
	for (int i = 0; i < HM_M__COUNT; i++)
		l->by_method[i] += b.by_method[i];
	hm_c2c_merge(&l->c2c, &b.c2c);
	{
		uint32_t nt = (uint32_t)l->nr_threads;

		add_counts(m->a, &l->threads, &nt, b.threads, (uint32_t)b.nr_threads);
		l->nr_threads = nt;
	}
	for (size_t i = 0; i < b.nr; i++)
		add_line(m, &b.lines[i]);
	hm_arena_free(&scratch);
	/* A quarter over the limit before pruning, so that a prune (a copy of the kept
	 * lines) comes once per max_lines / 4 new lines, not once per batch. */
	if (m->max_lines && l->nr > m->max_lines + m->max_lines / 4)
		hm_lines_acc_prune(m);
	return 0;
}

/* --- the end: the order hm_lines_build gives --- */

static int cmp_count(const void *x, const void *y)
{
	const struct hm_count *a = x, *b = y;

	if (a->records != b->records)
		return a->records > b->records ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

static int cmp_site(const void *x, const void *y)
{
	const struct hm_site *a = x, *b = y;

	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return a->ip < b->ip ? -1 : a->ip > b->ip;
}

struct rowkey {
	uint32_t offset, size, old;
};

static int cmp_rowkey(const void *x, const void *y)
{
	const struct rowkey *a = x, *b = y;

	if (a->offset != b->offset)
		return a->offset < b->offset ? -1 : 1;
	return a->size < b->size ? -1 : a->size > b->size;
}

static int cmp_inter(const void *x, const void *y)
{
	const struct hm_rowpair *a = x, *b = y;

	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	return a->b < b->b ? -1 : a->b > b->b;
}

static void sort_rows(struct hm_lines_acc *m, struct hm_line *ln)
{
	uint32_t n = ln->nr_fields;
	struct rowkey *k = malloc((n ? n : 1) * sizeof(*k));
	struct hm_lfield *f = malloc((n ? n : 1) * sizeof(*f));

	if (n > m->cap_map) {
		m->cap_map = 2 * n;
		m->map = realloc(m->map, m->cap_map * sizeof(*m->map));
	}
	if (!k || !f || (n && !m->map))
		hm_oom();	/* as the arena does */
	for (uint32_t i = 0; i < n; i++)
		k[i] = (struct rowkey){ ln->fields[i].offset, ln->fields[i].size, i };
	hm_sort(k, n, sizeof(*k), cmp_rowkey);
	for (uint32_t i = 0; i < n; i++) {
		f[i] = ln->fields[k[i].old];
		m->map[k[i].old] = i;
	}
	if (n)
		memcpy(ln->fields, f, n * sizeof(*f));	/* in place: no second copy kept */
	free(f);
	for (uint32_t i = 0; i < ln->nr_inter; i++) {
		uint32_t x = m->map[ln->inter[i].a], y = m->map[ln->inter[i].b];

		ln->inter[i].a = x < y ? x : y;
		ln->inter[i].b = x < y ? y : x;
	}
	hm_sort(ln->inter, ln->nr_inter, sizeof(*ln->inter), cmp_inter);
	free(k);
}

static void finish_line(struct hm_lines_acc *m, struct hm_line *ln)
{
	sort_rows(m, ln);
	for (uint32_t i = 0; i < ln->nr_fields; i++) {
		struct hm_lfield *f = &ln->fields[i];

		hm_sort(f->threads, f->nr_threads, sizeof(*f->threads), cmp_count);
		hm_sort(f->cpus, f->nr_cpus, sizeof(*f->cpus), cmp_count);
		hm_sort(f->sites, f->nr_sites, sizeof(*f->sites), cmp_site);
		f->nr_sites_all = f->nr_sites;
		if (f->nr_sites > HM_LINES_TOP_SITES)
			f->nr_sites = HM_LINES_TOP_SITES;
	}
	hm_sort(ln->threads, ln->nr_threads, sizeof(*ln->threads), cmp_count);
	hm_sort(ln->cpus, ln->nr_cpus, sizeof(*ln->cpus), cmp_count);
	ln->object = hm_lines_object(m->a, ln);
}

void hm_lines_acc_end(struct hm_lines_acc *m, struct hm_lines *out)
{
	struct hm_lines *l = &m->l;
	struct hm_line *lines;

	if (m->max_lines && l->nr > m->max_lines)
		hm_lines_acc_prune(m);	/* the last batches' quarter over the limit */
	hm_arena_adopt(m->a, &m->own);
	free(m->slots);
	m->slots = NULL;
	free(m->gone);
	m->gone = NULL;
	for (size_t i = 0; i < l->nr; i++)
		finish_line(m, &l->lines[i]);
	/* The growth's slack goes before the copy into the arena: at millions of lines the
	 * two arrays side by side are the run's peak. */
	if (l->nr && l->nr < m->cap_lines && (lines = realloc(l->lines, l->nr * sizeof(*lines))))
		l->lines = lines;
	lines = hm_arena_alloc(m->a, (l->nr ? l->nr : 1) * sizeof(*lines));
	if (l->nr)
		memcpy(lines, l->lines, l->nr * sizeof(*lines));
	free(l->lines);
	l->lines = lines;
	hm_sort(l->threads, l->nr_threads, sizeof(*l->threads), cmp_count);
	hm_lines_set_source(l, hm_lines_majority(l));
	hm_sharing_classify(m->a, l);
	*out = *l;
	free(m->map);
	free(m);
}

void hm_lines_acc_free(struct hm_lines_acc *m)
{
	if (!m)
		return;
	hm_arena_free(&m->own);
	free(m->slots);
	free(m->gone);
	free(m->l.lines);
	free(m->map);
	free(m);
}
