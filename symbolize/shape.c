/* Holes, padding and cache-line placement, with pahole's conventions: a bitfield is
 * shown at its storage unit (offset of the unit, bit inside it); a bit hole ends at
 * the next member or the end of the unit, whichever comes first; what lies beyond the
 * unit is a byte hole. */
#include "symbolize/shape.h"

#include <string.h>

static uint64_t unit_bytes(const struct hm_member *m)
{
	const struct hm_type *t = hm_type_strip(m->type);

	return t && t->size ? t->size : 1;
}

static void place(const struct hm_member *m, struct hm_member_shape *ms)
{
	ms->m = m;
	ms->forced = m->align != 0;
	ms->align = m->align ? m->align : hm_type_align(m->type);
	if (m->bit_size) {
		uint64_t ub = unit_bytes(m);

		ms->size = ub;
		ms->offset = m->bit_offset / (ub * 8) * ub;
		ms->bit_in_unit = (uint32_t)(m->bit_offset - ms->offset * 8);
	} else {
		ms->offset = m->bit_offset / 8;
		ms->size = m->type ? m->type->size : 0;
	}
}

/* End of a member in bits: the last bit used, and the end of its storage unit. */
static uint64_t end_bits(const struct hm_member_shape *ms)
{
	return ms->m->bit_size ? ms->m->bit_offset + ms->m->bit_size : (ms->offset + ms->size) * 8;
}

static uint64_t unit_end_bits(const struct hm_member_shape *ms)
{
	return (ms->offset + ms->size) * 8;
}

/* run_end: the end of the storage unit that opened the current run of bitfields; a
 * bool:1 after an unsigned int:3 still lives in the int's unit. */
static void gap(struct hm_shape *s, struct hm_member_shape *prev, const struct hm_member_shape *cur,
		uint64_t run_end)
{
	uint64_t start = cur->m->bit_offset, pend = end_bits(prev);
	uint64_t bytes_from, bits = 0, bytes = 0;

	if (prev->m->bit_size) {
		uint64_t uend = run_end > unit_end_bits(prev) ? run_end : unit_end_bits(prev);
		uint64_t stop = start < uend ? start : uend;

		bits = stop > pend ? stop - pend : 0;
		bytes_from = uend / 8;
	} else {
		bytes_from = pend / 8;
		if (cur->m->bit_size && start > cur->offset * 8 && cur->offset * 8 >= pend)
			bits = start - cur->offset * 8;
	}
	if (cur->offset > bytes_from)
		bytes = cur->offset - bytes_from;
	prev->bit_hole_after = (uint32_t)bits;
	prev->hole_after = bytes;
	if (bits) {
		s->nr_bit_holes++;
		s->sum_bit_holes += bits;
	}
	if (bytes) {
		s->nr_holes++;
		s->sum_holes += bytes;
		if (cur->forced) {
			s->nr_forced_holes++;
			s->sum_forced_holes += bytes;
		}
	}
}

/* A first member that is a bitfield not starting at bit 0 leaves a hole before it. */
static void lead_bit_hole(struct hm_shape *s, const struct hm_member_shape *first)
{
	s->lead_bit_hole = first->bit_in_unit;
	s->nr_bit_holes++;
	s->sum_bit_holes += first->bit_in_unit;
}

static void line_info(struct hm_member_shape *ms, uint32_t line)
{
	uint64_t first = ms->m->bit_offset / 8;
	uint64_t bits = ms->m->bit_size ? ms->m->bit_size : ms->size * 8;
	uint64_t last = bits ? (ms->m->bit_offset + bits - 1) / 8 : first;

	ms->line = first / line;
	ms->straddles = last / line != ms->line;
}

static int is_misaligned(const struct hm_member_shape *ms)
{
	return !ms->m->bit_size && ms->align > 1 && ms->offset % ms->align != 0;
}

uint64_t hm_shape_padding(const struct hm_type *t)
{
	uint32_t nr;
	const struct hm_member *m;
	uint64_t end = 0;

	t = hm_type_strip(t);
	if (!hm_type_is_aggregate(t) || t->kind == HM_T_UNION)
		return 0;
	m = hm_type_members(t, &nr);
	for (uint32_t i = 0; i < nr; i++) {
		struct hm_member_shape ms;
		uint64_t e;

		memset(&ms, 0, sizeof(ms));
		place(&m[i], &ms);
		e = m[i].bit_size ? unit_end_bits(&ms) / 8 : ms.offset + ms.size;
		if (e > end)
			end = e;
	}
	return nr && t->size > end ? t->size - end : 0;
}

void hm_shape_compute(struct hm_arena *a, const struct hm_type *t, uint32_t line_size,
		      struct hm_shape *s)
{
	const struct hm_member *m;
	uint32_t nr;
	uint64_t max_align = 1, end_b = 0, uend_b = 0, run_end = 0;

	memset(s, 0, sizeof(*s));
	t = hm_type_strip(t);
	s->type = t;
	s->line_size = line_size ? line_size : 64;
	s->size = t->size;
	s->cachelines = (t->size + s->line_size - 1) / s->line_size;
	m = hm_type_members(t, &nr);
	s->nr = nr;
	s->ms = hm_arena_alloc(a, (nr ? nr : 1) * sizeof(*s->ms));
	for (uint32_t i = 0; i < nr; i++) {
		struct hm_member_shape *ms = &s->ms[i];

		place(&m[i], ms);
		line_info(ms, s->line_size);
		if (ms->align > max_align)
			max_align = ms->align;
		s->nr_forced += ms->forced;
		s->packed |= is_misaligned(ms);
		if (m[i].bit_size)
			s->sum_bitfield_bits += m[i].bit_size;
		else
			s->sum_members += ms->size;
		if ((ms->sub_padding = hm_shape_padding(m[i].type)) && !m[i].bit_size) {
			s->nr_paddings++;
			s->sum_paddings += ms->sub_padding;
		}
		if (t->kind != HM_T_UNION && i > 0)
			gap(s, &s->ms[i - 1], ms, run_end);
		else if (t->kind != HM_T_UNION && m[i].bit_size && ms->bit_in_unit)
			lead_bit_hole(s, ms);
		if (!m[i].bit_size)
			run_end = 0;
		else if (!run_end || m[i].bit_offset >= run_end)
			run_end = unit_end_bits(ms);
		if (end_bits(ms) >= end_b) {
			end_b = end_bits(ms);
			uend_b = m[i].bit_size ? (run_end > unit_end_bits(ms) ? run_end
									  : unit_end_bits(ms))
					       : end_b;
		}
	}
	if (nr && t->size % max_align)
		s->packed = 1;
	s->align = s->packed ? 1 : max_align;
	if (t->align > s->align)
		s->align = t->align;
	if (uend_b > end_b)
		s->bit_padding = uend_b - end_b;
	if (t->kind != HM_T_UNION && t->size * 8 > uend_b)
		s->padding = t->size - (uend_b + 7) / 8;	/* all of it when memberless */
}
