/* The live-allocation map: probe samples paired into allocations (entry and return by
 * thread, in time order), then replayed in time order so that a lookup at time t sees
 * exactly the allocations live at t. */
#include "resolve/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/hash.h"
#include "core/oom.h"
#include "core/sort.h"

/* One probe sample, as recorded: arguments (di, si, dx) or result (ax, sp). */
struct raw {
	uint64_t time, ip, r[3];
	uint32_t pid, tid;
	uint8_t kind, ret;
	const uint8_t *stack;		/* posix_memalign's return: the caller's stack at sp */
	uint64_t stack_len;
	size_t seq;
};

#define STACK_MAX 8			/* nested entries per thread (realloc -> malloc) */

struct tstack {
	uint32_t n;
	const struct raw *e[STACK_MAX];
};

struct op {
	uint64_t time, seq, v;		/* v: object index, or the freed address */
	uint32_t pid;
	uint8_t is_free;
};

struct hm_alloc_map {
	struct hm_arena ar;
	struct raw *raw;
	size_t nraw, capraw;
	struct hm_alloc_obj *objs;
	size_t nobj, capobj;
	struct op *ops;
	size_t nops, capops;
	uint32_t *live;			/* objects live at `now`, by (pid, base) */
	size_t nlive, caplive;
	size_t cursor;			/* ops applied */
	struct hm_hash names;		/* interned object and field names */
};

/* Event names after "hitmap:", and what a site calls the function. */
static const char *const kind_names[HM_AK__COUNT] = {
	"malloc", "calloc", "realloc", "free", "aligned_alloc", "memalign", "posix_memalign",
	"new", "new_array",
};
static const char *const kind_labels[HM_AK__COUNT] = {
	"malloc", "calloc", "realloc", "free", "aligned_alloc", "memalign", "posix_memalign",
	"new", "new[]",
};

int hm_alloc_event_kind(const char *name, int *ret)
{
	size_t len;

	if (!name || strncmp(name, "hitmap:", 7))
		return -1;
	name += 7;
	len = strlen(name);
	*ret = len > 4 && !strcmp(name + len - 4, "_ret");
	if (*ret)
		len -= 4;
	/* operator new's aligned and nothrow forms (collectors/alloc.c): new, new[] */
	if (len >= 6 && !strncmp(name, "new", 3) &&
	    (!strncmp(name + len - 3, "_al", 3) || !strncmp(name + len - 3, "_nt", 3)))
		len -= 3;
	for (int k = 0; k < HM_AK__COUNT; k++)
		if (strlen(kind_names[k]) == len && !strncmp(kind_names[k], name, len))
			return k;
	return -1;
}

int hm_alloc_is_sample(const struct hm_perf_event *ev)
{
	int ret;

	return ev->type == PERF_RECORD_SAMPLE && ev->attr &&
	       hm_alloc_event_kind(ev->attr->name, &ret) >= 0;
}

struct hm_alloc_map *hm_alloc_map_new(void)
{
	struct hm_alloc_map *m = calloc(1, sizeof(*m));

	if (!m)
		hm_oom();
	hm_arena_init(&m->ar);
	hm_hash_init(&m->names);
	return m;
}

void hm_alloc_map_free(struct hm_alloc_map *m)
{
	if (!m)
		return;
	free(m->raw);
	free(m->objs);
	free(m->ops);
	free(m->live);
	hm_hash_free(&m->names);
	hm_arena_free(&m->ar);
	free(m);
}

static void *grow(void *p, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return p;
	*cap = *cap ? *cap * 2 : 256;
	if (!(p = realloc(p, *cap * size)))
		hm_oom();
	return p;
}

/* Register bit's value in the sample (perf_regs x86-64 numbering), 0 if not sampled. */
static uint64_t reg(const struct hm_perf_regs *r, int bit)
{
	uint32_t idx = 0;

	if (r->abi == PERF_SAMPLE_REGS_ABI_NONE || !(r->mask >> bit & 1))
		return 0;
	for (int b = 0; b < bit; b++)
		idx += (uint32_t)(r->mask >> b & 1);
	return idx < r->nr ? r->regs[idx] : 0;
}

void hm_alloc_map_add(struct hm_alloc_map *m, const struct hm_perf_event *ev)
{
	const struct hm_perf_sample *s = &ev->sample;
	struct raw *x;
	int ret, kind = hm_alloc_event_kind(ev->attr ? ev->attr->name : NULL, &ret);

	if (kind < 0)
		return;
	m->raw = grow(m->raw, &m->capraw, m->nraw, sizeof(*m->raw));
	x = &m->raw[m->nraw];
	*x = (struct raw){.time = s->time, .ip = s->ip, .pid = s->pid, .tid = s->tid,
			  .kind = (uint8_t)kind, .ret = (uint8_t)ret, .seq = m->nraw};
	if (ret) {
		x->r[0] = reg(&s->regs_user, 0);	/* ax */
		x->r[1] = reg(&s->regs_user, 7);	/* sp */
	} else {
		x->r[0] = reg(&s->regs_user, 5);	/* di */
		x->r[1] = reg(&s->regs_user, 4);	/* si */
		x->r[2] = reg(&s->regs_user, 3);	/* dx */
	}
	if (ret && kind == HM_AK_POSIX_MEMALIGN && s->stack && s->stack_dyn_size) {
		uint8_t *copy = hm_arena_alloc(&m->ar, s->stack_dyn_size);

		memcpy(copy, s->stack, s->stack_dyn_size);
		x->stack = copy;
		x->stack_len = s->stack_dyn_size;
	}
	m->nraw++;
}

static int cmp_raw(const void *pa, const void *pb)
{
	const struct raw *a = pa, *b = pb;

	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static void add_op(struct hm_alloc_map *m, uint64_t time, uint32_t pid, int is_free, uint64_t v)
{
	m->ops = grow(m->ops, &m->capops, m->nops, sizeof(*m->ops));
	m->ops[m->nops] = (struct op){time, m->nops, v, pid, (uint8_t)is_free};
	m->nops++;
}

/* posix_memalign stores its result through its first argument, usually a local of the
 * caller: read it from the stack copied at return, when it lies there. */
static uint64_t memalign_result(const struct raw *entry, const struct raw *r)
{
	uint64_t at = entry->r[0], sp = r->r[1], v;

	if (r->r[0] != 0 || !r->stack || at < sp || at - sp + 8 > r->stack_len)
		return 0;
	memcpy(&v, r->stack + (at - sp), 8);
	return v;
}

/* An entry and its return: the allocation made. */
static void pair(struct hm_alloc_map *m, const struct raw *e, const struct raw *r)
{
	uint64_t base = r->r[0], size;

	switch (e->kind) {
	case HM_AK_CALLOC: size = e->r[0] * e->r[1]; break;
	case HM_AK_MALLOC:
	case HM_AK_NEW:
	case HM_AK_NEW_ARRAY: size = e->r[0]; break;
	case HM_AK_POSIX_MEMALIGN: size = e->r[2]; base = memalign_result(e, r); break;
	default: size = e->r[1]; break;	/* realloc(p, n), aligned_alloc(a, n), memalign(a, n) */
	}
	/* Both at the call's time: between call and return only the allocator knows the
	 * block (calloc zeroes it, realloc copies into it), and its writes are the block's.
	 * The old block first, so that realloc in place keeps the new one. */
	if (e->kind == HM_AK_REALLOC && e->r[0] && (base || !size))
		add_op(m, e->time, r->pid, 1, e->r[0]);
	if (!base || !size)
		return;
	m->objs = grow(m->objs, &m->capobj, m->nobj, sizeof(*m->objs));
	m->objs[m->nobj] = (struct hm_alloc_obj){
		.base = base, .size = size, .t_entry = e->time, .t_alloc = r->time,
		.t_free = UINT64_MAX, .site_ip = r->ip, .pid = r->pid, .tid = r->tid,
		.kind = e->kind,
	};
	add_op(m, e->time, r->pid, 0, m->nobj++);
}

static void take(struct hm_alloc_map *m, struct hm_map64 *threads, const struct raw *x)
{
	uint64_t key = 1ULL << 63 | (uint64_t)x->pid << 32 | x->tid;
	struct tstack *st = hm_map64_get(threads, key);

	if (!st) {
		st = hm_arena_alloc(&m->ar, sizeof(*st));
		memset(st, 0, sizeof(*st));
		hm_map64_put(threads, key, st);
	}
	if (!x->ret && x->kind == HM_AK_FREE) {
		if (x->r[0])
			add_op(m, x->time, x->pid, 1, x->r[0]);
	} else if (!x->ret) {
		if (st->n == STACK_MAX)	/* returns lost: keep the newest */
			memmove(st->e, st->e + 1, --st->n * sizeof(st->e[0]));
		st->e[st->n++] = x;
	} else {
		/* the newest entry of this kind; newer ones lost their return */
		for (uint32_t i = st->n; i-- > 0;)
			if (st->e[i]->kind == x->kind) {
				pair(m, st->e[i], x);
				st->n = i;
				break;
			}
	}
}

static int cmp_op(const void *pa, const void *pb)
{
	const struct op *a = pa, *b = pb;

	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Position of the first live object not before (pid, addr). */
static size_t live_lower(const struct hm_alloc_map *m, uint32_t pid, uint64_t addr)
{
	size_t lo = 0, hi = m->nlive;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct hm_alloc_obj *o = &m->objs[m->live[mid]];

		if (o->pid < pid || (o->pid == pid && o->base < addr))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void live_remove(struct hm_alloc_map *m, size_t at, uint64_t time)
{
	m->objs[m->live[at]].t_free = time;
	memmove(&m->live[at], &m->live[at + 1], (m->nlive - at - 1) * sizeof(*m->live));
	m->nlive--;
}

/* The allocation a live one's call made inside it (realloc's malloc): the outer one is
 * the program's. */
static int nested(const struct hm_alloc_map *m, const struct hm_alloc_obj *o, size_t at)
{
	for (size_t i = at ? at - 1 : 0; i < m->nlive; i++) {
		const struct hm_alloc_obj *l = &m->objs[m->live[i]];

		if (l->pid != o->pid || l->base >= o->base + o->size)
			break;
		if (l->base + l->size > o->base && l->tid == o->tid && l->t_entry <= o->t_entry &&
		    o->t_alloc <= l->t_alloc)
			return 1;
	}
	return 0;
}

static void apply(struct hm_alloc_map *m, const struct op *op)
{
	struct hm_alloc_obj *o;
	size_t at;

	if (op->is_free) {
		at = live_lower(m, op->pid, op->v);
		if (at < m->nlive && m->objs[m->live[at]].pid == op->pid &&
		    m->objs[m->live[at]].base == op->v)
			live_remove(m, at, op->time);
		return;
	}
	o = &m->objs[op->v];
	at = live_lower(m, o->pid, o->base);
	if (nested(m, o, at))
		return;
	/* malloc never hands out live memory: an overlap is a free we did not see (probes
	 * paused by the budget), so the older object ends here */
	if (at > 0 && m->objs[m->live[at - 1]].pid == o->pid &&
	    m->objs[m->live[at - 1]].base + m->objs[m->live[at - 1]].size > o->base)
		live_remove(m, --at, op->time);
	while (at < m->nlive && m->objs[m->live[at]].pid == o->pid &&
	       m->objs[m->live[at]].base < o->base + o->size)
		live_remove(m, at, op->time);
	m->live = grow(m->live, &m->caplive, m->nlive, sizeof(*m->live));
	memmove(&m->live[at + 1], &m->live[at], (m->nlive - at) * sizeof(*m->live));
	m->live[at] = (uint32_t)op->v;
	m->nlive++;
}

void hm_alloc_map_seal(struct hm_alloc_map *m)
{
	struct hm_map64 threads;

	if (m->nraw)
		hm_sort(m->raw, m->nraw, sizeof(*m->raw), cmp_raw);
	hm_map64_init(&threads);
	for (size_t i = 0; i < m->nraw; i++)
		take(m, &threads, &m->raw[i]);
	hm_map64_free(&threads);
	if (m->nops)
		hm_sort(m->ops, m->nops, sizeof(*m->ops), cmp_op);
	/* one replay sets every object's end; lookups then replay again from the start */
	for (size_t i = 0; i < m->nops; i++)
		apply(m, &m->ops[i]);
	m->nlive = 0;
	m->cursor = 0;
	for (size_t i = 0; i < m->nobj; i++)
		m->objs[i].site = NULL;
}

size_t hm_alloc_map_count(const struct hm_alloc_map *m, const struct hm_alloc_obj **objs)
{
	if (objs)
		*objs = m->objs;
	return m->nobj;
}

const struct hm_alloc_obj *hm_alloc_map_find(struct hm_alloc_map *m, uint32_t pid,
					     uint64_t addr, uint64_t time)
{
	const struct hm_alloc_obj *o;
	size_t at;

	/* the same replay as the seal's: the ends it sets are the ones the seal found */
	while (m->cursor < m->nops && m->ops[m->cursor].time <= time)
		apply(m, &m->ops[m->cursor++]);
	at = live_lower(m, pid, addr + 1);
	if (at == 0)
		return NULL;
	o = &m->objs[m->live[at - 1]];
	return o->pid == pid && addr >= o->base && addr < o->base + o->size ? o : NULL;
}

/* --- naming accesses --- */

static const char *intern(struct hm_alloc_map *m, const char *s)
{
	char *v = hm_hash_get(&m->names, s);

	if (!v) {
		v = hm_arena_strdup(&m->ar, s);
		hm_hash_put(&m->names, v, v);
	}
	return v;
}

/* "calloc at alloc_array.c:51": the line of the call, which is the instruction before
 * the return address (that one may be the next statement's). */
static const char *site_name(struct hm_alloc_map *m, struct hm_code *code, struct hm_alloc_obj *o)
{
	struct hm_code_loc loc = {0};
	const char *kind = kind_labels[o->kind], *file;

	if (o->site)
		return o->site;
	if (code && hm_code_lookup(code, o->pid, o->site_ip - 1, 0, &loc) == 0 && loc.file &&
	    loc.line) {
		file = strrchr(loc.file, '/') ? strrchr(loc.file, '/') + 1 : loc.file;
		o->site = hm_arena_printf(&m->ar, "%s at %s:%d", kind, file, loc.line);
	} else if (loc.func) {
		o->site = hm_arena_printf(&m->ar, "%s in %s+0x%llx", kind, loc.func,
					  (unsigned long long)(o->site_ip - loc.func_start));
	} else {
		o->site = hm_arena_printf(&m->ar, "%s at 0x%llx", kind,
					  (unsigned long long)o->site_ip);
	}
	return o->site;
}

/* A typed access whose object starts on an element boundary of the allocation: the
 * element in the names ("thread_arg_t[1].ops"); 0 when the type does not fit. */
static int name_typed(struct hm_alloc_map *m, struct hm_access *x,
		      const struct hm_alloc_obj *o, uint32_t line_size)
{
	uint64_t tsize = x->type ? x->type->size : 0, off = x->obj_base - o->base;
	const char *field = x->field, *dot, *tname;
	char label[256], buf[768];
	size_t plen;

	/* elements of a struct only: a scalar type at the address says less than the
	 * allocation does (a watch sample typed size_t, an int * into the block) */
	if (!tsize || !x->obj_base || x->obj_base < o->base || off >= o->size || off % tsize ||
	    !hm_type_is_aggregate(hm_type_strip(x->type)))
		return 0;
	x->alloc_elem = off / tsize;
	tname = hm_type_name(x->type);
	dot = field ? strchr(field, '.') : NULL;
	plen = field ? (size_t)(dot ? dot - field : (ptrdiff_t)strlen(field)) : 0;
	if (field && memchr(field, '[', plen))
		return 0;	/* already an element of a named array */
	if (!plen)
		plen = strlen(tname ? tname : "?"), field = tname ? tname : "?";
	if (o->size >= 2 * tsize)
		snprintf(label, sizeof(label), "%.*s[%llu]", (int)plen, field,
			 (unsigned long long)x->alloc_elem);
	else
		snprintf(label, sizeof(label), "%.*s", (int)plen, field);
	snprintf(buf, sizeof(buf), "%s%s", label, dot ? dot : "");
	if (x->field)
		x->field = intern(m, buf);
	/* One object name per allocation, not per element: the sharing fixes compare
	 * objects, and two elements of one array get the array's fix (align the type). */
	snprintf(buf, sizeof(buf), "%.*s (%s, %s+%llu in its line)", (int)plen, field,
		 x->alloc_site, o->size >= 2 * tsize ? "array at " : "at ",
		 (unsigned long long)(o->base % line_size));
	x->object = intern(m, buf);
	return 1;
}

/* A scalar access typed through a global pointer (`int *slots`, `slots[tid]++`) at an
 * element boundary of the block: the element, as the program writes it ("slots[1]").
 * 0 when it is not one. */
static int scalar_elem(const struct hm_access *x, const struct hm_alloc_obj *o, char *buf,
		       size_t len)
{
	const struct hm_type *t = x->type ? hm_type_strip(x->type) : NULL;
	uint64_t off = x->s.addr - o->base;
	const char *name = x->field;

	if (!t || hm_type_is_aggregate(t) || !t->size || off % t->size ||
	    (x->s.size && x->s.size > t->size) || x->method != HM_M_HEAP)
		return 0;
	/* named by its pointer only (symbolize/data_resolve.c: a global pointer, which the
	 * block's start was stored to); a bare type ("int") may sit anywhere in the block */
	if (!name || strpbrk(name, "<[ ") ||
	    (hm_type_name(x->type) && !strcmp(name, hm_type_name(x->type))))
		return 0;
	snprintf(buf, len, "%s[%llu]", name, (unsigned long long)(off / t->size));
	return 1;
}

/* An access nothing else named: the allocation is the object. inside: the allocator's
 * own write before it returned the block, which never names a row (the lines view names
 * a row by its first access with a field: that would be calloc's memset). */
static void name_untyped(struct hm_alloc_map *m, struct hm_access *x,
			 const struct hm_alloc_obj *o, uint32_t line_size, int inside)
{
	char buf[768], elem[300];
	const struct hm_type *t = x->type ? hm_type_strip(x->type) : NULL;
	int scalar = !inside && scalar_elem(x, o, elem, sizeof(elem));

	if (scalar && o->size >= 2 * t->size)	/* "int[2] (malloc at ..., array at +32 ..)" */
		snprintf(buf, sizeof(buf), "%s[%llu] (%s, array at +%llu in its line)",
			 hm_type_name(x->type), (unsigned long long)(o->size / t->size),
			 x->alloc_site, (unsigned long long)(o->base % line_size));
	else
		snprintf(buf, sizeof(buf), "%llu bytes (%s, at +%llu in its line)",
			 (unsigned long long)o->size, x->alloc_site,
			 (unsigned long long)(o->base % line_size));
	x->object = intern(m, buf);
	if (!scalar)
		snprintf(elem, sizeof(elem), "<%s>+0x%llx", x->alloc_site,
			 (unsigned long long)(x->s.addr - o->base));
	x->field = inside ? NULL : intern(m, elem);
	x->obj_base = o->base;
	x->field_off = x->s.addr - o->base;
	x->type = NULL;
	x->method = HM_M_HEAP;
}

/* A typed object that does not fit in the live block holding the access is not that
 * block's: glibc's free writes its malloc_chunk (whose fd and bk are the block's first
 * 16 bytes) and the enclosing-object pass may then type the block's own accesses by it. */
static int outside(const struct hm_access *x, const struct hm_alloc_obj *o)
{
	uint64_t tsize = x->type ? x->type->size : 0;

	return tsize && x->obj_base && hm_type_is_aggregate(hm_type_strip(x->type)) &&
	       (x->obj_base < o->base || x->obj_base + tsize > o->base + o->size);
}

struct tkey {
	uint64_t time;
	size_t i;
};

static int cmp_tkey(const void *pa, const void *pb)
{
	const struct tkey *a = pa, *b = pb;

	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

void hm_alloc_name_one(struct hm_alloc_map *m, struct hm_code *code, struct hm_access *x,
		       uint32_t line_size)
{
	const struct hm_alloc_obj *o;

	if (!m->nobj || !x->s.addr || x->s.kernel || x->method == HM_M_GLOBAL ||
	    x->method == HM_M_TLS || x->method == HM_M_STACK)
		return;
	if (!(o = hm_alloc_map_find(m, x->s.pid, x->s.addr, x->s.time)))
		return;
	x->alloc_site = site_name(m, code, (struct hm_alloc_obj *)o);
	x->alloc_base = o->base;
	x->alloc_size = o->size;
	if (x->s.tid == o->tid && x->s.time <= o->t_alloc)
		name_untyped(m, x, o, line_size, 1);
	else if (outside(x, o))
		name_untyped(m, x, o, line_size, 0);
	else if (!name_typed(m, x, o, line_size) &&
		 (x->method == HM_M_UNKNOWN || !x->field || !x->type ||
		  !hm_type_is_aggregate(hm_type_strip(x->type))))
		name_untyped(m, x, o, line_size, 0);
}

void hm_alloc_name(struct hm_alloc_map *m, struct hm_code *code, struct hm_access *acc,
		   size_t n, uint32_t line_size)
{
	struct tkey *k = n ? malloc(n * sizeof(*k)) : NULL;
	int sorted = 1;

	if (!k || !m->nobj) {
		free(k);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		k[i] = (struct tkey){acc[i].s.time, i};
		sorted &= !i || acc[i - 1].s.time <= acc[i].s.time;
	}
	if (!sorted)	/* a streamed batch comes in time order already (load.c) */
		hm_sort(k, n, sizeof(*k), cmp_tkey);
	for (size_t j = 0; j < n; j++)
		hm_alloc_name_one(m, code, &acc[k[j].i], line_size);
	free(k);
}
