/* Per-line aggregation in O(n): one pass numbers the lines through a hash table, a counting
 * sort copies each access as a compact record into its line's bucket (input order kept,
 * then time order, usually already so), and lines_fill.c fills each line. */
#include "analyzer/lines.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/lines_int.h"
#include "core/sort.h"
#include "core/oom.h"

int hm_lines_locked(const struct hm_access *x)
{
	return x->locked || (x->s.source == HM_SRC_PMU && hm_c2c_is_locked(x->s.data_src));
}

int hm_lines_writes(const struct hm_access *x)
{
	return x->s.op == HM_OP_STORE || hm_lines_locked(x);
}

/* --- counting table: (kind, row, id) -> counts, open addressing --- */

static uint64_t mix(uint64_t k1, uint64_t k2)
{
	uint64_t h = (k1 * 0x9e3779b97f4a7c15ull) ^ (k2 + 0x632be59bd9b4e019ull + (k1 << 6));

	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 32);
}

static void ctab_grow(struct ctab *t)
{
	struct cent *old = t->e;
	size_t ocap = t->cap;

	t->cap = t->cap ? 2 * t->cap : 1024;
	t->e = calloc(t->cap, sizeof(*t->e));
	t->slots = realloc(t->slots, t->cap / 2 * sizeof(*t->slots));
	if (!t->e || !t->slots)
		hm_oom();	/* as the arena does: no report without memory */
	t->len = 0;
	for (size_t i = 0; i < ocap; i++) {
		size_t j;

		if (!old[i].used)
			continue;
		for (j = mix(old[i].k1, old[i].k2) & (t->cap - 1); t->e[j].used;
		     j = (j + 1) & (t->cap - 1))
			;
		t->e[j] = old[i];
		t->slots[t->len++] = (uint32_t)j;
	}
	free(old);
}

struct cent *hm_lines_ctab_get(struct ctab *t, uint64_t k1, uint64_t k2, const struct hm_access *x)
{
	size_t j;

	if (2 * (t->len + 1) > t->cap)
		ctab_grow(t);
	for (j = mix(k1, k2) & (t->cap - 1); t->e[j].used; j = (j + 1) & (t->cap - 1))
		if (t->e[j].k1 == k1 && t->e[j].k2 == k2)
			return &t->e[j];
	t->e[j] = (struct cent){ .k1 = k1, .k2 = k2, .used = 1, .x = x };
	t->slots[t->len++] = (uint32_t)j;
	return &t->e[j];
}

void hm_lines_ctab_clear(struct ctab *t)
{
	for (size_t i = 0; i < t->len; i++)
		t->e[t->slots[i]].used = 0;
	t->len = 0;
}

static void ctab_free(struct ctab *t)
{
	free(t->e);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

/* --- grouping --- */

/* User addresses belong to their process; the kernel half is one space for all; each
 * CPU's per-CPU area is a space of its own (the same offset is another CPU's copy). A
 * user-mode access at a kernel-half "address" is an offset from its thread pointer
 * (%fs:-8: a timer sample's static TLS, whose segment base perf does not sample): each
 * thread's block is its own space, so two threads' copies never share a line. */
uint32_t hm_lines_space(const struct hm_access *x)
{
	if (x->percpu)
		return HM_LINES_PERCPU_PID(x->s.cpu);
	if ((int64_t)x->s.addr >= 0)
		return x->s.pid;
	return x->s.kernel ? HM_LINES_KERNEL_PID : HM_LINES_TLS_SPACE | (x->s.tid & HM_LINES_TID_MASK);
}

static int cmp_time(const void *x, const void *y)
{
	const struct hm_lrec *a = x, *b = y;

	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* The compact record: what the per-line passes read. */
static void to_lrec(const struct hm_access *x, uint32_t i, uint32_t line_size,
		    struct hm_lrec *r)
{
	r->time = x->s.time;
	r->ip = x->s.ip;
	r->idx = i;
	r->pid = x->s.pid;
	r->tid = x->s.tid;
	r->cpu = x->s.cpu;
	r->size = x->s.size > UINT16_MAX ? UINT16_MAX : (uint16_t)x->s.size;
	r->off = (uint16_t)(x->s.addr & (line_size - 1));
	r->op = x->s.op;
	r->source = x->s.source;
	r->locked = (uint8_t)hm_lines_locked(x);
	r->writes = (uint8_t)hm_lines_writes(x);
	r->spin = x->spin;
}

/* recs[start[l] .. start[l + 1]) holds line l's accesses in time order. */
static void bucket(struct ctx *c, size_t n, const uint32_t *line_of, size_t nl)
{
	for (size_t i = 0; i < n; i++)
		if (line_of[i] != UINT32_MAX)
			c->start[line_of[i] + 1]++;
	for (size_t l = 0; l < nl; l++)
		c->start[l + 1] += c->start[l];
	for (size_t i = 0; i < n; i++) {
		uint32_t l = line_of[i];

		if (l != UINT32_MAX)
			to_lrec(&c->acc[i], (uint32_t)i, c->line_size,
				&c->recs[c->start[l] + c->fill[l]++]);
	}
	for (size_t l = 0; l < nl; l++) {
		struct hm_lrec *r = &c->recs[c->start[l]];
		size_t m = c->start[l + 1] - c->start[l];

		for (size_t i = 1; i < m; i++) {
			if (r[i].time < r[i - 1].time) {
				hm_sort(r, m, sizeof(*r), cmp_time);
				break;
			}
		}
	}
}

/* --- lines --- */

/* Sort keys copied out of the lines, so that sorting does not chase line structs. */
struct lkey {
	uint64_t contention, records, addr;
	uint32_t pid, idx;
	int shared;
};

static int cmp_lkey(const void *x, const void *y)
{
	const struct lkey *a = x, *b = y;

	if (a->shared != b->shared)
		return a->shared ? -1 : 1;
	if (a->contention != b->contention)
		return a->contention > b->contention ? -1 : 1;
	if (a->records != b->records)
		return a->records > b->records ? -1 : 1;
	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

uint64_t hm_lines_measure(enum hm_source src, const struct hm_c2c_stats *c2c,
			  uint64_t conflicts, uint64_t transfers)
{
	if (src == HM_SRC_PMU)
		return c2c ? hm_c2c_hitm(c2c) : 0;
	return src == HM_SRC_WATCH ? transfers : conflicts;
}

void hm_lines_set_source(struct hm_lines *l, enum hm_source src)
{
	l->source = src;
	for (size_t i = 0; i < l->nr; i++) {
		struct hm_line *ln = &l->lines[i];

		ln->contention = hm_lines_measure(src, ln->c2c, ln->conflicts, ln->transfers);
		for (uint32_t j = 0; j < ln->nr_fields; j++) {
			struct hm_lfield *f = &ln->fields[j];

			f->contention = hm_lines_measure(src, f->c2c, f->conflicts, f->transfers);
		}
	}
}

/* Shared lines first: a false-sharing line whose threads never met inside the conflict
 * window (contention 0) still outranks every private line. */
void hm_lines_rank(struct hm_lines *l)
{
	struct lkey *keys = malloc((l->nr ? l->nr : 1) * sizeof(*keys));

	if (!keys)
		hm_oom();	/* as the arena does */
	for (size_t i = 0; i < l->nr; i++) {
		const struct hm_line *ln = &l->lines[i];

		keys[i] = (struct lkey){ ln->contention, ln->records, ln->addr, ln->pid,
					 (uint32_t)i, hm_verdict_shared(ln->verdict) };
	}
	hm_sort(keys, l->nr, sizeof(*keys), cmp_lkey);
	/* Line i takes line keys[i].idx, one cycle of the permutation at a time: no second
	 * array of lines, which at millions of lines would be the peak of the run. */
	for (size_t i = 0; i < l->nr; i++) {
		struct hm_line tmp;
		size_t j = i;

		if (keys[i].idx == UINT32_MAX)
			continue;
		tmp = l->lines[i];
		while (keys[j].idx != i) {
			size_t k = keys[j].idx;

			l->lines[j] = l->lines[k];
			keys[j].idx = UINT32_MAX;
			j = k;
		}
		l->lines[j] = tmp;
		keys[j].idx = UINT32_MAX;
	}
	free(keys);
}

/* (address space, line) -> line number, open addressing. */
struct lslot {
	uint64_t line;
	uint32_t space, id1;		/* id + 1; 0: empty */
};

struct ltab {
	struct lslot *s;
	size_t cap, len;
};

static void ltab_grow(struct ltab *t)
{
	struct lslot *old = t->s;
	size_t ocap = t->cap;

	t->cap = t->cap ? 2 * t->cap : 1024;
	t->s = calloc(t->cap, sizeof(*t->s));
	if (!t->s)
		hm_oom();	/* as the arena does */
	for (size_t i = 0; i < ocap; i++) {
		size_t j;

		if (!old[i].id1)
			continue;
		for (j = mix(old[i].space, old[i].line) & (t->cap - 1); t->s[j].id1;
		     j = (j + 1) & (t->cap - 1))
			;
		t->s[j] = old[i];
	}
	free(old);
}

static uint32_t ltab_id(struct ltab *t, uint32_t space, uint64_t line)
{
	size_t j;

	if (2 * (t->len + 1) > t->cap)
		ltab_grow(t);
	for (j = mix(space, line) & (t->cap - 1); t->s[j].id1; j = (j + 1) & (t->cap - 1))
		if (t->s[j].line == line && t->s[j].space == space)
			return t->s[j].id1 - 1;
	t->s[j] = (struct lslot){ line, space, (uint32_t)++t->len };
	return (uint32_t)(t->len - 1);
}

/* Totals over every access, placed or not, per-thread counts, and the line of each
 * placed access (UINT32_MAX: none); returns the number of lines. */
static size_t totals(struct ctx *c, size_t n, struct hm_lines *out, uint32_t *line_of)
{
	struct ltab lt = { 0 };
	size_t nl;

	for (size_t i = 0; i < n; i++) {
		const struct hm_access *x = &c->acc[i];
		struct cent *e;

		line_of[i] = x->s.addr ? ltab_id(&lt, hm_lines_space(x),
						 x->s.addr & ~(uint64_t)(c->line_size - 1))
				       : UINT32_MAX;
		if (x->part)
			continue;	/* a wide access's other members: one sample */
		out->total++;
		out->cpus_known |= x->s.cpu != c->acc[0].s.cpu;
		out->with_addr += x->s.addr != 0;
		out->resolved += x->s.addr && x->object &&
				 x->method != HM_M_UNKNOWN && x->method != HM_M_NOADDR;
		if (x->prim && x->s.addr) {
			out->prim++;
			out->prim_resolved += x->object && x->method != HM_M_UNKNOWN &&
					      x->method != HM_M_NOADDR;
		}
		if (x->s.source < 3)
			out->by_source[x->s.source]++;
		if ((unsigned)x->method < HM_M__COUNT)
			out->by_method[x->method]++;
		if (x->s.source == HM_SRC_PMU)
			hm_c2c_add_access(&out->c2c, x);
		e = hm_lines_ctab_get(&c->t, 0, (uint64_t)x->s.pid << 32 | x->s.tid, NULL);
		e->records++;
		e->loads += x->s.op == HM_OP_LOAD;
		e->stores += x->s.op == HM_OP_STORE;
		e->locked += hm_lines_locked(x);
	}
	out->first_cpu = n ? c->acc[0].s.cpu : 0;
	out->nr_threads = hm_lines_snapshot(c);
	out->threads = hm_lines_to_counts(c->a, c->ents, out->nr_threads, 0);
	hm_lines_ctab_clear(&c->t);
	nl = lt.len;
	free(lt.s);
	return nl;
}

enum hm_source hm_lines_majority(const struct hm_lines *l)
{
	const uint64_t *s = l->by_source;

	if (s[HM_SRC_PMU] >= s[HM_SRC_WATCH] && s[HM_SRC_PMU] >= s[HM_SRC_TIMER])
		return HM_SRC_PMU;
	return s[HM_SRC_WATCH] >= s[HM_SRC_TIMER] ? HM_SRC_WATCH : HM_SRC_TIMER;
}

static void ctx_free(struct ctx *c)
{
	free(c->recs);
	free(c->start);
	free(c->fill);
	free(c->fidx);
	free(c->ev);
	free(c->remap);
	free(c->ents);
	free(c->sites);
	ctab_free(&c->t);
}

static int ctx_alloc(struct ctx *c, size_t n)
{
	size_t m = n ? n : 1;

	c->recs = malloc(m * sizeof(*c->recs));
	c->start = calloc(m + 1, sizeof(*c->start));
	c->fill = calloc(m, sizeof(*c->fill));
	c->fidx = malloc(m * sizeof(*c->fidx));
	c->ev = malloc(m * sizeof(*c->ev));
	c->remap = malloc(m * sizeof(*c->remap));
	return c->recs && c->start && c->fill && c->fidx && c->ev && c->remap ? 0 : -1;
}

int hm_lines_build_batch(struct hm_arena *a, const struct hm_access *acc, size_t n,
			 uint32_t line_size, uint64_t window_ns, int all_sites,
			 const struct hm_lines_acc *from, struct hm_lines *out,
			 struct hm_err *err)
{
	struct ctx c = { .a = a, .acc = acc, .line_size = line_size, .all_sites = all_sites,
			 .from = from };
	uint32_t *line_of;
	size_t nl;

	memset(out, 0, sizeof(*out));
	if (line_size < 16 || line_size > 4096 || (line_size & (line_size - 1)))
		return hm_err_set(err, HM_EXIT_USAGE,
				  "line size %u is not a power of two from 16 to 4096: use 64, "
				  "or 128 where the adjacent-line prefetcher pairs lines",
				  line_size);
	if (n >= UINT32_MAX)
		return hm_err_set(err, HM_EXIT_INPUT, "%zu accesses are more than one report "
				  "handles (%u): report on a shorter recording", n, UINT32_MAX - 1);
	c.window_ns = window_ns ? window_ns : HM_LINES_WINDOW_NS;
	line_of = malloc((n ? n : 1) * sizeof(*line_of));
	if (!line_of || ctx_alloc(&c, n)) {
		free(line_of);
		ctx_free(&c);
		return hm_err_set(err, HM_EXIT_ENV, "out of memory for %zu accesses: %s", n,
				  strerror(ENOMEM));
	}
	out->line_size = line_size;
	out->window_ns = c.window_ns;
	nl = totals(&c, n, out, line_of);
	bucket(&c, n, line_of, nl);
	free(line_of);
	out->lines = hm_arena_alloc(a, (nl ? nl : 1) * sizeof(*out->lines));
	for (size_t l = 0; l < nl; l++)
		hm_lines_fill(&c, &out->lines[out->nr++], &c.recs[c.start[l]],
			  c.start[l + 1] - c.start[l]);
	ctx_free(&c);
	return 0;
}

int hm_lines_build(struct hm_arena *a, const struct hm_access *acc, size_t n,
		   uint32_t line_size, uint64_t window_ns, struct hm_lines *out,
		   struct hm_err *err)
{
	if (hm_lines_build_batch(a, acc, n, line_size, window_ns, 0, NULL, out, err))
		return -1;
	hm_lines_set_source(out, hm_lines_majority(out));
	hm_sharing_classify(a, out);
	return 0;
}

const char *hm_verdict_name(enum hm_verdict v)
{
	switch (v) {
	case HM_V_FALSE_SHARING: return "false_sharing";
	case HM_V_TRUE_SHARING: return "true_sharing";
	case HM_V_READ_ONLY: return "read_only";
	case HM_V_FEW_SAMPLES: return "too_few_samples";
	case HM_V_PRIVATE: break;
	}
	return "private";
}

int hm_verdict_shared(enum hm_verdict v)
{
	return v == HM_V_FALSE_SHARING || v == HM_V_TRUE_SHARING;
}

const char *hm_confidence_name(enum hm_confidence c)
{
	switch (c) {
	case HM_CONF_HIGH: return "high";
	case HM_CONF_MEDIUM: return "medium";
	case HM_CONF_LOW: return "low";
	case HM_CONF_NONE: break;
	}
	return "none";
}

const char *hm_source_name(enum hm_source s)
{
	return s == HM_SRC_TIMER ? "timer" : s == HM_SRC_WATCH ? "watch" : "pmu";
}

const char *hm_contention_name(enum hm_source s)
{
	return s == HM_SRC_TIMER ? "conflicts" : s == HM_SRC_WATCH ? "transfers" : "HITM";
}

