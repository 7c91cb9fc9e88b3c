/* The timer attribution model; measured in docs/decode.md (Skid). */
#include "resolve/skid.h"

#include <stddef.h>

/* The instruction before ip ran just before it unless control came from elsewhere: a
 * call, jump or return does not fall through to the next address, and a jump target
 * is also reached by its jump. */
static int falls_through(const struct hm_insn *before, int jump_target)
{
	return before && !jump_target && !before->is_call && !before->is_jump &&
	       !before->is_ret;
}

struct hm_skid_pick hm_skid_choose(const struct hm_insn *at, const struct hm_insn *before,
				   int jump_target)
{
	struct hm_skid_pick p = {.rule = HM_SKID_NONE};
	const struct hm_memop *bop = NULL, *aop = at ? hm_decode_data_operand(at) : NULL;

	if (falls_through(before, jump_target))
		bop = hm_decode_data_operand(before);
	else if (before && jump_target && hm_decode_data_operand(before))
		p.jump_target = 1;
	if (bop) {
		/* The access that held up retirement, load or store (a store that misses
		 * stalls as a load does: 97% of samples after one, docs/decode.md). */
		p.rule = hm_decode_keeps_address(before, bop) ? HM_SKID_BEFORE : HM_SKID_LOST;
		p.in = before;
		p.op = bop;
		p.over = aop != NULL;
	} else if (aop) {
		p.rule = HM_SKID_AT_IP;
		p.in = at;
		p.op = aop;
	}
	return p;
}
