/* Which instruction a timer sample is charged to (docs/decode.md, Skid). A cpu-clock
 * interrupt is taken at an instruction boundary once the oldest instruction in flight
 * retires, so the sampled ip is the instruction after the one that held up retirement:
 * after a load that missed or waited for a contended line, and, measured here, after a
 * store that missed too. The sample is charged to the instruction that ends at ip when
 * it accessed memory, whatever the instruction at ip does; to the one at ip otherwise. */
#ifndef HM_SKID_H
#define HM_SKID_H

#include "symbolize/decode.h"

enum hm_skid_rule {
	HM_SKID_NONE,		/* neither accesses memory (or nothing could be decoded) */
	HM_SKID_AT_IP,		/* the instruction at ip: the one before it is no access */
	HM_SKID_BEFORE,		/* the instruction before ip, address from the registers */
	HM_SKID_LOST,		/* the instruction before ip, which overwrote its own address
				 * registers (mov rax, [rax]): charged to it, no address */
};

struct hm_skid_pick {
	enum hm_skid_rule rule;
	const struct hm_insn *in;	/* the charged instruction (at or before), or NULL */
	const struct hm_memop *op;	/* its data operand */
	unsigned over : 1;		/* BEFORE/LOST while the instruction at ip also accesses
					 * memory: the case that charging at ip got wrong */
	unsigned jump_target : 1;	/* the one before ip was not used: ip is a jump target */
};

/* at: the instruction at the sampled ip (NULL: not decoded); before: the one that ends at
 * ip in address order (NULL: not found); jump_target: a direct jump lands on ip, so the
 * instruction that ran before ip may be that jump. Pure: no registers, no files. */
struct hm_skid_pick hm_skid_choose(const struct hm_insn *at, const struct hm_insn *before,
				   int jump_target);

#endif
