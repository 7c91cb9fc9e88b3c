/* The replay: every access moved to where the plan puts its object and field. Objects
 * are placed once over the whole run (hm_wi_objects, from its summary: whatif_sum.c);
 * the accesses can then be moved one
 * batch at a time (hm_wi_replay_batch). whatif_run.c builds the lines of both sides and
 * matches them. */
#include "analyzer/whatif.h"

#include <stdlib.h>
#include <string.h>
#include "core/sort.h"
#include "core/oom.h"

struct oref {
	uint32_t space;
	uint64_t base;
	uint32_t idx;			/* access */
};

static uint32_t space_of(const struct hm_access *x)
{
	return hm_lines_space(x);
}

static int cmp_oref(const void *x, const void *y)
{
	const struct oref *a = x, *b = y;

	if (a->space != b->space)
		return a->space < b->space ? -1 : 1;
	if (a->base != b->base)
		return a->base < b->base ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static uint64_t round_up(uint64_t x, uint64_t a)
{
	return a > 1 ? (x + a - 1) / a * a : x;
}

/* One object: the accesses refs[lo, hi) with one base. */
struct obj {
	uint64_t old_ext, new_size;
	uint32_t align;
	int changes;
};

static void measure(const struct hm_wi_plan *p, const struct hm_access *acc,
		    const struct oref *r, size_t lo, size_t hi, struct obj *o)
{
	const struct hm_type *t = NULL;

	memset(o, 0, sizeof(*o));
	for (size_t k = lo; k < hi; k++) {
		const struct hm_access *x = &acc[r[k].idx];
		uint64_t end = x->field_off + (x->s.size ? x->s.size : 1), size;
		uint32_t al = 1;
		const struct hm_type *xt = hm_type_strip(x->type);

		if (xt && xt->size > o->old_ext)
			o->old_ext = xt->size;
		if (end > o->old_ext)
			o->old_ext = end;
		if (!o->changes && xt && hm_whatif_object(p, xt, &size, &al) == 0) {
			o->changes = 1;
			o->new_size = size;
			o->align = al;
		}
		if (!t)
			t = xt;
	}
	if (!o->changes) {
		o->new_size = o->old_ext;
		o->align = t ? hm_type_align(t) : 1;
	}
	if (o->new_size < o->old_ext && !o->changes)
		o->new_size = o->old_ext;
}

/* An object and where the replay puts it. */
struct hm_wi_obj {
	uint32_t space;
	uint64_t base, new_base;
	int changes;
};

static int cmp_wobj(const void *x, const void *y)
{
	const struct hm_wi_obj *a = x, *b = y;

	if (a->space != b->space)
		return a->space < b->space ? -1 : 1;
	return a->base < b->base ? -1 : a->base > b->base;
}

/* The plan's map of (type, offset), remembered for a batch: a run's accesses go to few
 * fields, and the map is a function of the two (its types' new layouts are made once). */
#define MEMO 64

struct memo {
	const struct hm_type *t;	/* NULL: empty */
	uint64_t off, new_off;
	int rc;
};

static int map_memo(const struct hm_wi_plan *p, struct memo *m, const struct hm_type *t,
		    uint64_t off, uint64_t *new_off)
{
	struct memo *e = &m[((uintptr_t)t >> 4 ^ off * 0x9e3779b9u) % MEMO];

	if (!t || e->t != t || e->off != off) {
		const char *absent = NULL;

		*e = (struct memo){t, off, off, 0};
		e->rc = p->map->map(p->map, t, off, &e->new_off, &absent);
	}
	*new_off = e->new_off;
	return e->rc;
}

/* Moves access y of object o where the plan puts it; *flag = 1 for an access to a changed
 * object. */
static void place(const struct hm_wi_plan *p, struct memo *m, const struct hm_wi_obj *o,
		  struct hm_access *y, uint8_t *flag, struct hm_wi_counts *c)
{
	uint64_t off, addr = y->s.addr, skew = y->s.addr - y->obj_base - y->field_off;
	int rc = map_memo(p, m, y->type, y->field_off, &off);

	if (rc == -1) {
		y->s.addr = 0;
		c->dropped++;
		return;
	}
	if (rc)
		off = y->field_off;
	y->obj_base = o->new_base;
	y->field_off = off;
	y->s.addr = o->new_base + off + skew;
	if (o->changes || rc == 0) {
		c->affected += !y->part;	/* samples: a wide one once */
		if (flag)
			*flag = 1;
	}
	c->moved += y->s.addr != addr && !y->part;
}

/* Objects keep their base unless their alignment grew (rounded up) or an object before
 * them in the address space grew into them (moved up past it). An object that starts
 * inside the previous one's old extent moves with it. Returns the objects by (space,
 * base), *nr of them: what the accesses need to be replayed one batch at a time. */
struct hm_wi_obj *hm_wi_objects(const struct hm_wi_plan *p, const struct hm_wi_sum *sum,
				struct hm_wi_counts *c, size_t *nr)
{
	const struct hm_access *acc = sum->acc;
	size_t n = sum->n;
	struct oref *r = malloc((n ? n : 1) * sizeof(*r));
	struct hm_wi_obj *v;
	size_t m = 0;
	uint64_t end = 0, cont_end = 0;
	int64_t shift = 0;

	if (!r)
		hm_oom();	/* as the arena does */
	memset(c, 0, sizeof(*c));
	c->total = sum->total;
	c->with_addr = sum->with_addr;
	for (size_t i = 0; i < n; i++) {
		if (acc[i].s.addr && acc[i].obj_base)
			r[m++] = (struct oref){space_of(&acc[i]), acc[i].obj_base, (uint32_t)i};
	}
	hm_sort(r, m, sizeof(*r), cmp_oref);
	*nr = 0;
	for (size_t lo = 0, hi; lo < m; lo = hi) {
		for (hi = lo + 1; hi < m && r[hi].space == r[lo].space && r[hi].base == r[lo].base; hi++)
			;
		(*nr)++;
	}
	if (!(v = malloc((*nr ? *nr : 1) * sizeof(*v))))
		hm_oom();
	*nr = 0;
	for (size_t lo = 0, hi; lo < m; lo = hi) {
		struct obj o;
		uint64_t nb;

		for (hi = lo + 1; hi < m && r[hi].space == r[lo].space && r[hi].base == r[lo].base; hi++)
			;
		if (!lo || r[lo].space != r[lo - 1].space)
			end = cont_end = 0;
		measure(p, acc, r, lo, hi, &o);
		/* malloc does not honour the type's alignment: only aligned_alloc would. A
		 * kernel heap object is a slab cache's, for which that advice is wrong: a
		 * cache made by KMEM_CACHE aligns as the type asks (one made with align 0 may
		 * not: the replay assumes the former) */
		if (acc[r[lo].idx].method == HM_M_HEAP && !acc[r[lo].idx].s.kernel &&
		    !p->aligned_alloc &&
		    o.align > HM_WI_MALLOC_ALIGN) {
			o.align = HM_WI_MALLOC_ALIGN;
			c->heap_held++;
		}
		if (r[lo].base < cont_end) {
			nb = (uint64_t)((int64_t)r[lo].base + shift);
		} else {
			nb = round_up(r[lo].base > end ? r[lo].base : end, o.align);
			shift = (int64_t)(nb - r[lo].base);
			cont_end = r[lo].base + o.old_ext;
		}
		if (nb + o.new_size > end)
			end = nb + o.new_size;
		c->objects++;
		c->objects_moved += nb != r[lo].base;
		v[(*nr)++] = (struct hm_wi_obj){r[lo].space, r[lo].base, nb, o.changes};
	}
	free(r);
	return v;
}

/* acc[0, n) replayed into out (acc itself: in place); flags[i] = 1 for accesses to
 * changed objects. */
void hm_wi_replay_batch(const struct hm_wi_plan *p, const struct hm_wi_obj *ob, size_t nob,
			 const struct hm_access *acc, size_t n, struct hm_access *out,
			 uint8_t *flags, struct hm_wi_counts *c)
{
	struct memo m[MEMO] = {{0}};
	const struct hm_wi_obj *o = NULL;	/* the last access's object */

	if (out != acc)
		memcpy(out, acc, n * sizeof(*out));
	if (flags)
		memset(flags, 0, n);
	for (size_t i = 0; i < n; i++) {
		struct hm_wi_obj key = {space_of(&out[i]), out[i].obj_base, 0, 0};

		if (!out[i].s.addr || !out[i].obj_base)
			continue;
		if ((!o || cmp_wobj(&key, o)) &&
		    !(o = bsearch(&key, ob, nob, sizeof(*ob), cmp_wobj)))
			continue;
		place(p, m, o, &out[i], flags ? &flags[i] : NULL, c);
	}
}

void hm_whatif_replay(const struct hm_wi_plan *p, const struct hm_access *acc, size_t n,
		      struct hm_access *out, struct hm_wi_counts *c)
{
	size_t nob;
	struct hm_wi_sum sum;
	struct hm_wi_obj *ob;

	hm_wi_sum_init(&sum, p->line_size);
	hm_wi_sum_add(&sum, acc, n);
	ob = hm_wi_objects(p, &sum, c, &nob);
	hm_wi_replay_batch(p, ob, nob, acc, n, out, NULL, c);
	free(ob);
	hm_wi_sum_free(&sum);
}
