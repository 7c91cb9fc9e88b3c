/* The shape of one aggregate as pahole computes it: member positions, byte and bit
 * holes, padding, cache-line placement and the summary counts. */
#ifndef HM_SHAPE_H
#define HM_SHAPE_H

#include "symbolize/layout.h"

struct hm_member_shape {
	const struct hm_member *m;
	uint64_t offset;		/* bytes; the storage unit's offset for bitfields */
	uint64_t size;			/* bytes; the storage unit's size for bitfields */
	uint32_t bit_in_unit;		/* bitfields: first bit inside the unit */
	uint32_t align;			/* natural or explicit alignment */
	uint64_t hole_after;		/* bytes of hole before the next member */
	uint32_t bit_hole_after;	/* bits of hole before the next member */
	uint64_t line;			/* cache line of the first byte */
	uint64_t sub_padding;		/* trailing padding of an embedded struct */
	uint8_t straddles;		/* crosses a cache-line boundary */
	uint8_t forced;			/* explicit __aligned__ on the member */
};

struct hm_shape {
	const struct hm_type *type;
	uint32_t line_size;
	uint32_t nr;
	struct hm_member_shape *ms;
	uint64_t size, cachelines, align;
	uint64_t sum_members;		/* bytes of non-bitfield members */
	uint64_t sum_bitfield_bits;
	uint64_t nr_holes, sum_holes, nr_bit_holes, sum_bit_holes;
	uint64_t padding, bit_padding;
	uint32_t lead_bit_hole;		/* bits before a first member that is a bitfield */
	uint64_t nr_paddings, sum_paddings;	/* embedded structs with trailing padding */
	uint64_t nr_forced, nr_forced_holes, sum_forced_holes;
	int packed;			/* inferred: some member is misaligned */
};

/* Computes t's shape (t must be an aggregate); arrays come from a. */
void hm_shape_compute(struct hm_arena *a, const struct hm_type *t, uint32_t line_size,
		      struct hm_shape *out);
/* Trailing padding of an aggregate, 0 for anything else. */
uint64_t hm_shape_padding(const struct hm_type *t);

#endif
