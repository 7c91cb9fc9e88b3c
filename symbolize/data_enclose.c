/* Enclosing objects: `int *blue = arg->blue; blue[i]++` is typed `int` by its register,
 * yet its address lies inside a thread_arg_t that another sample of the same process
 * typed with its base and size known (arg->len loaded through a thread_arg_t *). A person
 * names it from the outermost object: thread_arg_t.blue[246]. Each process keeps the heap
 * objects its samples typed exactly, outermost only, as disjoint address ranges (a
 * later typing across a known one's ends replaces it: the memory was freed and used
 * again); an access inside one is named from it. Globals need none of this: they are found by
 * address before anything else (data_resolve.c).
 *
 * The kernel alike, with one set of objects for all its samples whatever process ran
 * them: mutex_spin_on_owner reads lock->owner through a struct mutex *, typed
 * atomic64_t.counter, but ext4_orphan_add's access through the struct ext4_sb_info *
 * around it gave that object's base (address - member offset) and size (DWARF or BTF),
 * so the spin is ext4_sb_info.s_orphan_lock.owner.counter. */
#include "symbolize/data_int.h"

#include <stdlib.h>
#include <string.h>
#include "core/oom.h"

#define KNOWN_MAX (1u << 16)	/* objects kept per process: beyond, new ones are not */

/* The first known object whose base is >= addr (lower bound). */
static size_t lower(const struct data_proc *p, uint64_t addr)
{
	size_t lo = 0, hi = p->nr_known;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->known[mid].base < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const struct data_known *data_known_at(const struct data_proc *p, uint64_t addr)
{
	size_t i = p ? lower(p, addr + 1) : 0;	/* the first beyond addr: the one before
						 * may hold it */

	if (!i || addr >= p->known[i - 1].base + p->known[i - 1].size)
		return NULL;
	return &p->known[i - 1];
}

static int same_type(const struct hm_type *a, const struct hm_type *b)
{
	const char *na, *nb;

	a = hm_type_strip(a);
	b = hm_type_strip(b);
	if (a == b)
		return 1;
	if (!a || !b || a->kind != b->kind || a->size != b->size)
		return 0;
	if (a->kind == HM_T_ARRAY)
		return a->nelems == b->nelems && same_type(a->ref, b->ref);
	na = hm_type_name(a);
	nb = hm_type_name(b);
	return na && nb && !strcmp(na, nb);	/* one type, read from two units */
}

/* Whether t holds, at byte off, a member or array element (at any depth) of type want:
 * a mutex at ext4_sb_info + 600 is s_orphan_lock, an atomic64_t there its owner. Else an
 * object typed there is none of t's: t's memory was freed and used again. */
static int holds_at(const struct hm_type *t, uint64_t off, const struct hm_type *want,
		    int depth)
{
	const struct hm_member *m;
	uint64_t es;
	uint32_t nr;

	t = t ? hm_type_strip(t) : NULL;
	if (!t || depth > 16)
		return 0;
	if (!off && same_type(t, want))
		return 1;
	if (t->kind == HM_T_ARRAY) {
		es = t->ref ? hm_type_strip(t->ref)->size : 0;
		if (!es || (t->nelems && off >= es * t->nelems))
			return 0;
		return holds_at(t->ref, off % es, want, depth + 1);
	}
	if (!hm_type_is_aggregate(t) || !(m = hm_type_members(t, &nr)))
		return 0;
	for (uint32_t i = 0; i < nr; i++) {	/* a union's members overlap: try each */
		uint64_t mo = m[i].bit_offset / 8, ms;

		if (m[i].bit_size || !m[i].type || off < mo)
			continue;
		ms = hm_type_strip(m[i].type)->size;
		if ((off < mo + ms || !ms) && holds_at(m[i].type, off - mo, want, depth + 1))
			return 1;
	}
	return 0;
}

void data_known_note(struct data_proc *p, uint64_t base, const struct hm_type *t,
		     const char *label, const char *prefix)
{
	uint64_t size = t ? hm_type_strip(t)->size : 0, end = base + size;
	size_t lo, hi;

	if (!p || !base || !size || end < base || p->nr_known >= KNOWN_MAX)
		return;
	lo = lower(p, base);
	if (lo && p->known[lo - 1].base + p->known[lo - 1].size > base) {
		if (p->known[lo - 1].base + p->known[lo - 1].size >= end &&
		    holds_at(p->known[lo - 1].type, base - p->known[lo - 1].base, t, 0))
			return;	/* inside one known already, as its member: the outer
				 * names it */
		lo--;	/* across its end, or none of its members: reused */
	}
	for (hi = lo; hi < p->nr_known && p->known[hi].base < end; hi++)
		;
	if (hi - lo == 1 && p->known[lo].base == base && p->known[lo].size == size &&
	    p->known[lo].type == t)
		return;	/* the same object again (the common case) */
	/* The objects [lo, hi) lie inside the new one, or across its ends: memory freed and
	 * allocated again as something else, whose latest typing is the one that holds. */
	if (hi == lo && p->nr_known == p->cap_known) {
		p->cap_known = p->cap_known ? 2 * p->cap_known : 64;
		p->known = realloc(p->known, p->cap_known * sizeof(*p->known));
		if (!p->known)
			hm_oom();	/* as the arena does */
	}
	memmove(&p->known[lo + 1], &p->known[hi], (p->nr_known - hi) * sizeof(*p->known));
	p->nr_known = p->nr_known - (hi - lo) + 1;
	p->known[lo] = (struct data_known){base, size, t, label, prefix};
}

/* Whether out (a heap result, or nothing) lies inside a known object bigger than what
 * out names; then out is named from it. */
int data_enclose(struct hm_data *d, const struct data_proc *p, uint64_t addr,
		 struct hm_data_obj *out)
{
	const struct data_known *k = addr && p ? data_known_at(p, addr) : NULL;
	const struct hm_type *cur = out->type ? hm_type_strip(out->type) : NULL;
	uint64_t off;

	if (!k || (out->method != HM_M_HEAP && out->method != HM_M_UNKNOWN))
		return 0;
	if (out->method == HM_M_HEAP && cur && hm_type_is_aggregate(cur)) {
		if (!out->base || out->base < k->base ||
		    out->base + cur->size > k->base + k->size || cur->size >= k->size ||
		    !holds_at(k->type, out->base - k->base, cur, 0))
			return 0;	/* the object itself, not inside this one, or not
					 * as its member (the memory was used again) */
	}
	off = addr - k->base;
	out->method = HM_M_HEAP;
	out->object = k->label;
	out->type = k->type;
	out->base = k->base;
	out->offset = off;
	out->prefix = k->prefix;
	out->field = data_field(d, k->prefix, k->type, off);
	out->hint = NULL;
	d->st.enclosed++;
	d->st.kernel_enclosed += p == &d->kproc;
	return 1;
}

struct data_proc *data_known_space(struct hm_data *d, uint32_t pid, int kernel,
				   uint64_t addr, int create)
{
	if (!kernel)
		return data_proc_get(d, pid, create);
	return addr >> 63 ? &d->kproc : NULL;
}

int hm_data_enclose(struct hm_data *d, uint32_t pid, int kernel, uint64_t addr,
		    struct hm_data_obj *obj)
{
	const struct data_proc *p = d ? data_known_space(d, pid, kernel, addr, 0) : NULL;
	enum hm_method was = obj->method;

	if (!p || !p->nr_known || !data_enclose(d, p, addr, obj))
		return 0;
	if (was != HM_M_HEAP && (unsigned)was < HM_M__COUNT && d->st.by_method[was]) {
		d->st.by_method[was]--;	/* counted when it was named */
		d->st.by_method[HM_M_HEAP]++;
		d->st.kernel_heap += (uint64_t)kernel;
	}
	return 1;
}
