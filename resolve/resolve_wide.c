/* A sample whose access covers several members, as one access per member: gcc -O2's
 * 16-byte movdqu over `ops` and `bytes`, a rep stos over a struct. Named by its first
 * byte's member alone, the others would vanish from lines, sharing, the heat map and
 * whatif; split, each is credited with its own bytes (symbolize/data_split.c has the
 * rule). */
#include "resolve/resolve_int.h"

#include <string.h>

size_t resolve_split(struct hm_resolver *r, const struct hm_access *a,
		     const struct hm_data_obj *obj, struct hm_access *out, size_t max)
{
	struct hm_data_part parts[HM_RESOLVE_MAX_PARTS];
	size_t n;

	if (max > HM_RESOLVE_MAX_PARTS)
		max = HM_RESOLVE_MAX_PARTS;
	/* A watchpoint's address is that of its range, not of the access (resolve_addr.c,
	 * watch_addr): only accesses whose first byte is known split. */
	if (max < 2 || !a->s.addr || a->s.size < 2 || !a->field || a->s.source == HM_SRC_WATCH ||
	    a->nr_parts || (obj->base && a->s.addr != obj->base + obj->offset))
		return 1;
	n = hm_data_split(r->data, obj, a->s.size, parts, max);
	if (n < 2)
		return 1;
	for (size_t i = 0; i < n; i++) {
		struct hm_access *p = &out[i];

		*p = *a;
		p->s.addr = a->s.addr + parts[i].at;
		p->s.size = parts[i].size;
		p->field_off = parts[i].offset;
		p->obj_base = p->s.addr - parts[i].offset;
		p->field = parts[i].field;
		if (a->method == HM_M_GLOBAL || a->method == HM_M_TLS || a->method == HM_M_STACK)
			p->field = type_field(r, p);
		p->wide_size = a->s.size;
		p->part_off = parts[i].at;
		p->part = (uint16_t)i;
		p->nr_parts = (uint16_t)n;
	}
	r->st.wide++;
	r->st.wide_parts += n;
	return n;
}

size_t hm_resolver_sample_parts(struct hm_resolver *r, const struct hm_perf_event *ev,
				struct hm_access *out, size_t max)
{
	struct hm_access a;
	size_t n;

	hm_resolver_sample(r, ev, out);
	/* a kept site (resolve.c, smemo) knows whether an access of this size splits */
	if (r->smemo_single && *r->smemo_single == out->s.size && out->s.size)
		return 1;
	a = *out;
	n = resolve_split(r, &a, &r->obj, out, max);
	if (n == 1 && max > 1 && r->smemo_single)
		*r->smemo_single = out->s.size;
	return n;
}
