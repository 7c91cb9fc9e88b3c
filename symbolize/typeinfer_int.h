/* typeinfer.c's view of a function: its instructions decoded once and classified for
 * the backward walk (typeinfer_code.c). */
#ifndef HM_TYPEINFER_INT_H
#define HM_TYPEINFER_INT_H

#include "symbolize/data_int.h"

#define TI_NR_REGS (HM_REG_R15 + 1)

enum { K_OTHER, K_MOV, K_LOAD, K_STEP, K_LEA, K_ADDREG, K_STORE_STATIC };

struct ti_insn {
	uint64_t addr, target;
	int64_t imm;
	uint32_t len, written;
	int8_t kind, dst, src, idx;
	uint8_t jump, uncond, call, endbr;
};

struct ti_code {
	size_t n;
	struct ti_insn *ins;
};

/* The function of frame f, decoded once and kept in ti (never NULL; n 0 when its bytes
 * cannot be read). */
struct ti_code *ti_func_code(struct hm_ti *ti, struct hm_decoder *dec,
			     const struct hm_ti_frame *f);
/* The index of the instruction at pc, or (size_t)-1. */
size_t ti_insn_index(const struct ti_code *c, uint64_t pc);
/* rax rcx rdx rsi rdi r8-r11: a call may change them. */
int ti_caller_saved(int reg);
/* The lazy-init join of a static pointer (typeinfer_code.c). */
int ti_stored_static(const struct ti_code *c, size_t i, size_t j, int reg);

#endif
