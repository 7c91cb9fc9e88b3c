/* Builds the c2c view: Pareto rows keyed by line, offset and the coalesced keys, lines
 * summed from their rows, perf's shared-line totals, filter and order (c2c_view.h). */
#include "analyzer/c2c_view.h"

#include <stdlib.h>
#include <string.h>

#include "core/oom.h"
#include "core/sort.h"

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p)
		hm_oom();	/* as the arena does */
	return p;
}

struct key {
	uint64_t line, ip;
	uint32_t space, off, pid, tid;
};

struct slot {
	struct key k;
	uint32_t id1;			/* entry index + 1; 0: empty */
};

struct tab {
	struct slot *s;
	size_t cap, len;
};

struct hm_c2c_acc {
	struct hm_c2c_opts o;
	uint32_t line_size;
	struct tab ents_t, lines_t;
	struct hm_c2c_ent *ents;
	size_t nr_ents, cap_ents;
	struct key *lines;		/* line and space only */
	size_t nr_lines, cap_lines;
	uint64_t by_source[3];
	struct hm_c2c_stats all;
};

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

static uint64_t key_hash(const struct key *k)
{
	uint64_t h = mix(mix(mix(0, k->line), k->ip), (uint64_t)k->space << 32 | k->off);

	return mix(h, (uint64_t)k->pid << 32 | k->tid);
}

static int key_eq(const struct key *a, const struct key *b)
{
	return a->line == b->line && a->ip == b->ip && a->space == b->space &&
	       a->off == b->off && a->pid == b->pid && a->tid == b->tid;
}

static void tab_grow(struct tab *t)
{
	struct tab n = { .cap = t->cap ? t->cap * 2 : 1024 };

	n.s = xcalloc(n.cap, sizeof(*n.s));
	for (size_t i = 0; i < t->cap; i++) {
		size_t j;

		if (!t->s[i].id1)
			continue;
		for (j = key_hash(&t->s[i].k) & (n.cap - 1); n.s[j].id1; j = (j + 1) & (n.cap - 1))
			;
		n.s[j] = t->s[i];
	}
	n.len = t->len;
	free(t->s);
	*t = n;
}

/* The index of k, and *fresh when it was inserted now (with id len). */
static uint32_t tab_get(struct tab *t, const struct key *k, int *fresh)
{
	size_t j;

	if ((t->len + 1) * 2 > t->cap)
		tab_grow(t);
	for (j = key_hash(k) & (t->cap - 1); t->s[j].id1; j = (j + 1) & (t->cap - 1))
		if (key_eq(&t->s[j].k, k)) {
			*fresh = 0;
			return t->s[j].id1 - 1;
		}
	t->s[j].k = *k;
	t->s[j].id1 = (uint32_t)++t->len;
	*fresh = 1;
	return (uint32_t)(t->len - 1);
}

struct hm_c2c_acc *hm_c2c_acc_new(uint32_t line_size, const struct hm_c2c_opts *o)
{
	struct hm_c2c_acc *c = xcalloc(1, sizeof(*c));

	c->o = *o;
	c->line_size = line_size ? line_size : 64;
	return c;
}

static uint32_t line_of(struct hm_c2c_acc *c, const struct key *k)
{
	struct key lk = { .line = k->line, .space = k->space };
	int fresh;
	uint32_t id = tab_get(&c->lines_t, &lk, &fresh);

	if (fresh) {
		if (c->nr_lines == c->cap_lines) {
			c->cap_lines = c->cap_lines ? c->cap_lines * 2 : 256;
			c->lines = hm_xrealloc(c->lines, c->cap_lines * sizeof(*c->lines));
		}
		c->lines[c->nr_lines++] = lk;
	}
	return id;
}

static struct hm_c2c_ent *ent_of(struct hm_c2c_acc *c, const struct hm_access *x)
{
	struct key k = { .line = x->s.addr & ~(uint64_t)(c->line_size - 1),
			 .space = hm_lines_space(x) };
	struct hm_c2c_ent *e;
	int fresh;
	uint32_t id;

	k.off = (uint32_t)(x->s.addr - k.line);
	k.ip = c->o.coalesce & HM_C2C_BY_IADDR ? x->s.ip : 0;
	k.pid = c->o.coalesce & (HM_C2C_BY_PID | HM_C2C_BY_TID) ? x->s.pid : 0;
	k.tid = c->o.coalesce & HM_C2C_BY_TID ? x->s.tid : 0;
	id = tab_get(&c->ents_t, &k, &fresh);
	if (!fresh)
		return &c->ents[id];
	if (c->nr_ents == c->cap_ents) {
		c->cap_ents = c->cap_ents ? c->cap_ents * 2 : 1024;
		c->ents = hm_xrealloc(c->ents, c->cap_ents * sizeof(*c->ents));
	}
	e = &c->ents[c->nr_ents++];
	memset(e, 0, sizeof(*e));
	e->off = k.off;
	e->pid = k.pid;
	e->tid = k.tid;
	e->ip = x->s.ip;
	e->field = x->field;
	e->object = x->object;
	e->func = x->func;
	e->file = x->file;
	e->line = x->line;
	e->line_idx = line_of(c, &k);
	return e;
}

/* perf's compute_stats: a load's latency goes to its first class in this order. */
static int cyc_class(const struct hm_c2c_stats *one)
{
	if (one->hitm_remote)
		return HM_CYC_RMT_HITM;
	if (one->hitm_local)
		return HM_CYC_LCL_HITM;
	if (one->peer_remote)
		return HM_CYC_RMT_PEER;
	if (one->peer_local)
		return HM_CYC_LCL_PEER;
	return one->loads ? HM_CYC_LOAD : -1;
}

static void add_one(struct hm_c2c_acc *c, const struct hm_access *x)
{
	struct hm_c2c_ent *e;
	struct hm_c2c_stats one = { 0 };
	int cls;

	if (x->s.source < 3)
		c->by_source[x->s.source]++;
	if (x->s.source == HM_SRC_PMU)
		hm_c2c_add_access(&c->all, x);
	if (!x->s.addr)
		return;
	e = ent_of(c, x);
	e->records++;
	e->loads += x->s.op == HM_OP_LOAD;
	e->stores += x->s.op == HM_OP_STORE;
	if (x->s.cpu < HM_C2C_CPU_WORDS * 64)
		e->cpus[x->s.cpu / 64] |= 1ull << (x->s.cpu % 64);
	if (x->s.source != HM_SRC_PMU)
		return;
	hm_c2c_add_access(&one, x);
	hm_c2c_merge(&e->st, &one);
	if ((cls = cyc_class(&one)) >= 0) {
		e->cyc_n[cls]++;
		e->cyc_sum[cls] += x->s.weight;
	}
}

void hm_c2c_acc_add(struct hm_c2c_acc *c, const struct hm_access *acc, size_t n)
{
	for (size_t i = 0; i < n; i++)
		add_one(c, &acc[i]);
}

uint64_t hm_c2c_metric(const struct hm_c2c_stats *st, enum hm_c2c_display d)
{
	switch (d) {
	case HM_C2C_LCL: return st->hitm_local;
	case HM_C2C_RMT: return st->hitm_remote;
	case HM_C2C_PEER: return hm_c2c_peer(st);
	case HM_C2C_TOT: break;
	}
	return hm_c2c_hitm(st);
}

static const char *const display_names[] = { "tot", "lcl", "rmt", "peer" };

const char *hm_c2c_display_name(enum hm_c2c_display d)
{
	return (unsigned)d < 4 ? display_names[d] : "tot";
}

int hm_c2c_display_parse(const char *s)
{
	for (int i = 0; i < 4; i++)
		if (!strcmp(s, display_names[i]))
			return i;
	return -1;
}

unsigned hm_c2c_coalesce_parse(const char *s, const char **bad, size_t *bad_len)
{
	static const struct { const char *name; unsigned bit; } keys[] = {
		{ "iaddr", HM_C2C_BY_IADDR }, { "pid", HM_C2C_BY_PID }, { "tid", HM_C2C_BY_TID },
	};
	unsigned out = 0;

	for (const char *p = s;; p++) {
		size_t len = strcspn(p, ","), i;

		for (i = 0; i < 3; i++)
			if (len == strlen(keys[i].name) && !strncmp(p, keys[i].name, len))
				break;
		if (i == 3) {
			*bad = p;
			*bad_len = len;
			return 0;
		}
		out |= keys[i].bit;
		p += len;
		if (!*p)
			return out;
	}
}

static uint32_t popcount(const uint64_t *w)
{
	uint32_t n = 0;

	for (int i = 0; i < HM_C2C_CPU_WORDS; i++)
		n += (uint32_t)__builtin_popcountll(w[i]);
	return n;
}

/* Pareto order, as perf sorts a line's rows: offset, then the coalesced keys. */
static int cmp_ent(const void *x, const void *y)
{
	const struct hm_c2c_ent *a = x, *b = y;

	if (a->line_idx != b->line_idx)
		return a->line_idx < b->line_idx ? -1 : 1;
	if (a->off != b->off)
		return a->off < b->off ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return a->ip < b->ip ? -1 : a->ip > b->ip;
}

static int cmp_line_ref(const void *x, const void *y)
{
	const struct hm_line *a = *(const struct hm_line *const *)x;
	const struct hm_line *b = *(const struct hm_line *const *)y;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

static const struct hm_line *find_line(const struct hm_line **ix, size_t n, uint32_t pid,
				       uint64_t addr)
{
	struct hm_line want = { .addr = addr, .pid = pid };
	const struct hm_line *w = &want, **hit;

	hit = n ? bsearch(&w, ix, n, sizeof(*ix), cmp_line_ref) : NULL;
	return hit ? *hit : NULL;
}

static void sum_line(struct hm_c2c_cl *cl)
{
	for (uint32_t i = 0; i < cl->nr_ents; i++) {
		struct hm_c2c_ent *e = &cl->ents[i];

		hm_c2c_merge(&cl->st, &e->st);
		cl->records += e->records;
		cl->loads += e->loads;
		cl->stores += e->stores;
		for (int w = 0; w < HM_C2C_CPU_WORDS; w++)
			cl->cpus[w] |= e->cpus[w];
		e->nr_cpus = popcount(e->cpus);
	}
	cl->nr_cpus = popcount(cl->cpus);
}

/* Which lines count as shared (perf: HITM or peer loads on them; timer and watch: a
 * sharing verdict or contention), and the totals over those. */
static void mark_shared(struct hm_c2c_view *v)
{
	for (size_t i = 0; i < v->nr; i++) {
		struct hm_c2c_cl *cl = &v->cls[i];

		if (v->data_src)
			cl->shared = hm_c2c_hitm(&cl->st) || hm_c2c_peer(&cl->st);
		else
			cl->shared = cl->line && (hm_verdict_shared(cl->line->verdict) ||
						  cl->line->contention);
		if (!cl->shared)
			continue;
		v->nr_shared++;
		hm_c2c_merge(&v->shared, &cl->st);
		v->shared_loads += cl->loads;
		v->shared_stores += cl->stores;
		v->shared_locked += cl->line ? cl->line->locked : 0;
	}
}

/* perf's he__display: a line shows when its metric is at least 0.1% of the shared
 * lines' (DISPLAY_LINE_LIMIT); --show-all shows every line. */
static int shown(const struct hm_c2c_view *v, const struct hm_c2c_cl *cl)
{
	uint64_t sum;

	if (v->o.show_all)
		return 1;
	if (!v->data_src)
		return cl->shared;
	sum = hm_c2c_metric(&v->shared, v->o.display);
	return sum && (double)hm_c2c_metric(&cl->st, v->o.display) / (double)sum >= 0.001;
}

static uint64_t rank_of(const struct hm_c2c_view *v, const struct hm_c2c_cl *cl)
{
	if (v->data_src)
		return hm_c2c_metric(&cl->st, v->o.display);
	return cl->line ? cl->line->contention : 0;
}

static int cmp_cl(const void *x, const void *y)
{
	const struct hm_c2c_cl *a = x, *b = y;

	if (a->shown != b->shown)
		return a->shown ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank > b->rank ? -1 : 1;
	if (a->records != b->records)
		return a->records > b->records ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

static const struct hm_line **line_index(const struct hm_lines *l)
{
	const struct hm_line **ix;

	if (!l || !l->nr)
		return NULL;
	ix = xcalloc(l->nr, sizeof(*ix));
	for (size_t i = 0; i < l->nr; i++)
		ix[i] = &l->lines[i];
	hm_sort(ix, l->nr, sizeof(*ix), cmp_line_ref);
	return ix;
}

void hm_c2c_acc_end(struct hm_c2c_acc *c, struct hm_arena *a, const struct hm_lines *l,
		    struct hm_c2c_view *out)
{
	const struct hm_line **ix = line_index(l);
	size_t at = 0;

	memset(out, 0, sizeof(*out));
	out->o = c->o;
	out->line_size = c->line_size;
	out->all = c->all;
	out->source = l ? l->source : HM_SRC_PMU;
	out->data_src = c->by_source[HM_SRC_PMU] && (!l || l->source == HM_SRC_PMU);
	for (size_t i = 0; i < c->nr_ents; i++)
		c->ents[i].metric = hm_c2c_metric(&c->ents[i].st, c->o.display);
	hm_sort(c->ents, c->nr_ents, sizeof(*c->ents), cmp_ent);
	out->nr = c->nr_lines;
	out->cls = hm_arena_alloc(a, (out->nr ? out->nr : 1) * sizeof(*out->cls));
	for (size_t i = 0; i < out->nr; i++) {
		struct hm_c2c_cl *cl = &out->cls[i];
		size_t from = at;

		while (at < c->nr_ents && c->ents[at].line_idx == i)
			at++;
		cl->addr = c->lines[i].line;
		cl->pid = c->lines[i].space;
		cl->nr_ents = (uint32_t)(at - from);
		cl->ents = hm_arena_alloc(a, (cl->nr_ents ? cl->nr_ents : 1) * sizeof(*cl->ents));
		memcpy(cl->ents, c->ents + from, cl->nr_ents * sizeof(*cl->ents));
		cl->line = find_line(ix, l ? l->nr : 0, cl->pid, cl->addr);
		sum_line(cl);
	}
	mark_shared(out);
	for (size_t i = 0; i < out->nr; i++) {
		out->cls[i].shown = shown(out, &out->cls[i]);
		out->cls[i].rank = rank_of(out, &out->cls[i]);
		out->nr_shown += out->cls[i].shown;
	}
	hm_sort(out->cls, out->nr, sizeof(*out->cls), cmp_cl);
	free(ix);
	free(c->ents_t.s);
	free(c->lines_t.s);
	free(c->ents);
	free(c->lines);
	free(c);
}
