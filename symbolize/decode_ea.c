/* Effective addresses of decoded memory operands from perf's sampled registers. */
#include "decode.h"

#include <asm/perf_regs.h>

/* enum hm_reg is perf's numbering so that a register is its bit in sample_regs_*. */
#define SAME(a, b) ((int)(a) == (int)(b))
_Static_assert(SAME(HM_REG_AX, PERF_REG_X86_AX) && SAME(HM_REG_SP, PERF_REG_X86_SP) &&
		       SAME(HM_REG_IP, PERF_REG_X86_IP) && SAME(HM_REG_FLAGS, PERF_REG_X86_FLAGS) &&
		       SAME(HM_REG_R8, PERF_REG_X86_R8) && SAME(HM_REG_R15, PERF_REG_X86_R15),
	       "enum hm_reg must follow <asm/perf_regs.h>");

int hm_decode_reg(uint64_t regs_mask, const uint64_t *regs, int reg, uint64_t *val)
{
	uint64_t bit;

	if (reg < 0 || reg >= 64)
		return -1;
	bit = 1ULL << reg;
	if (!(regs_mask & bit))
		return -1;
	/* perf stores the sampled registers densely, in increasing bit order. */
	*val = regs[__builtin_popcountll(regs_mask & (bit - 1))];
	return 0;
}

int hm_decode_ea(const struct hm_insn *in, const struct hm_memop *op, uint64_t regs_mask,
		 const uint64_t *regs, uint64_t fs_base, uint64_t gs_base, uint64_t *ea,
		 int *needs_segbase)
{
	uint64_t a = (uint64_t)op->disp, v, seg;

	if (needs_segbase)
		*needs_segbase = 0;
	if (op->vsib)
		return HM_DECODE_EA_VSIB;
	/* rip-relative counts from the next instruction; the sampled ip is not needed (and
	 * for a watchpoint hit it is that next instruction, not this one). */
	if (op->base == HM_REG_RIP)
		a += in->addr + in->len;
	else if (op->base != HM_REG_NONE) {
		if (hm_decode_reg(regs_mask, regs, op->base, &v) < 0)
			return HM_DECODE_EA_NOREG;
		a += v;
	}
	if (op->index != HM_REG_NONE) {
		if (hm_decode_reg(regs_mask, regs, op->index, &v) < 0)
			return HM_DECODE_EA_NOREG;
		a += v * (uint64_t)op->scale;
	}
	if (in->addr32)
		a = (uint32_t)a;
	/* In 64-bit mode only fs and gs have a base; perf samples their selectors, not
	 * their bases (those live in MSRs), so the caller supplies them. */
	if (op->segment == HM_SEG_FS || op->segment == HM_SEG_GS) {
		seg = op->segment == HM_SEG_FS ? fs_base : gs_base;
		if (seg)
			a += seg;
		else if (needs_segbase)
			*needs_segbase = 1;
	}
	*ea = a;
	return 0;
}

uint64_t hm_decode_regs_mask(void)
{
	uint64_t m = 0;

	for (int r = HM_REG_AX; r <= HM_REG_IP; r++)
		m |= 1ULL << r;
	for (int r = HM_REG_R8; r <= HM_REG_R15; r++)
		m |= 1ULL << r;
	return m;
}

const char *hm_decode_reg_name(int reg)
{
	static const char *const names[] = {
		[HM_REG_AX] = "rax", [HM_REG_BX] = "rbx", [HM_REG_CX] = "rcx",
		[HM_REG_DX] = "rdx", [HM_REG_SI] = "rsi", [HM_REG_DI] = "rdi",
		[HM_REG_BP] = "rbp", [HM_REG_SP] = "rsp", [HM_REG_IP] = "rip",
		[HM_REG_FLAGS] = "flags", [HM_REG_R8] = "r8", [HM_REG_R9] = "r9",
		[HM_REG_R10] = "r10", [HM_REG_R11] = "r11", [HM_REG_R12] = "r12",
		[HM_REG_R13] = "r13", [HM_REG_R14] = "r14", [HM_REG_R15] = "r15",
	};

	if (reg < 0 || reg >= (int)(sizeof(names) / sizeof(names[0])) || !names[reg])
		return "?";
	return names[reg];
}
