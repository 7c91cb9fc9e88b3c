/* Accesses named before the object enclosing them was typed: `blue[c[i]]++` through an
 * `int *` is thread_arg_t.blue[5] once a load through a thread_arg_t * gave that object's
 * base, but that load may come later in the recording. Before a batch of accesses goes
 * to the analyzers, those named `int` (heap) or not at all are named again from the
 * objects known by then (symbolize/data_enclose.c), and split when they now cover
 * several members (a rep stos through an untyped pointer, resolve_wide.c). Kernel
 * accesses too: the spin on a mutex's owner word (atomic64_t.counter) becomes
 * ext4_sb_info.s_orphan_lock.owner.counter once ext4_orphan_add's sample typed the
 * ext4_sb_info around it. */
#include "resolve/resolve_int.h"

#include <string.h>

static int is_member(const struct hm_access *a)
{
	return a->field && a->type && hm_type_agg(a->type, NULL) && !strchr(a->field, '<');
}

size_t hm_resolver_enclose(struct hm_resolver *r, struct hm_access *a, struct hm_access *parts,
			   size_t max)
{
	struct hm_data_obj o;
	struct hm_access was;
	int member;

	if (!a->s.addr || a->nr_parts ||
	    (a->method != HM_M_HEAP && a->method != HM_M_UNKNOWN))
		return 0;
	o = (struct hm_data_obj){.method = a->method, .object = a->object, .type = a->type,
				 .base = a->obj_base, .field = a->field, .offset = a->field_off};
	member = is_member(a);
	if (!hm_data_enclose(r->data, a->s.pid, a->s.kernel, a->s.addr, &o))
		return 0;
	if (a->prim && a->method == HM_M_UNKNOWN && o.method >= HM_M_GLOBAL &&
	    o.method <= HM_M_HEAP)
		r->st.prim_named++;	/* a primitive's buffer, named now */
	a->method = o.method;
	a->object = o.object;
	a->type = o.type;
	a->obj_base = o.base;
	a->field = o.field;
	a->field_off = o.offset;
	r->st.member += !member && is_member(a);
	was = *a;
	return max ? resolve_split(r, &was, &o, parts, max) : 1;
}
