/* x86-64 instruction decoding for memory samples (capstone underneath): the memory
 * operands of the instruction at a sampled ip, whether each is a load, a store or a
 * read-modify-write, atomicity, and the exact effective address from sampled registers.
 * Nothing here reads files: callers pass the code bytes and their runtime address.
 * See docs/decode.md. */
#ifndef HM_DECODE_H
#define HM_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

/* Register numbers are perf's x86 numbering (<asm/perf_regs.h>), so that a register
 * number is also its bit in sample_regs_user / sample_regs_intr. */
enum hm_reg {
	HM_REG_NONE = -1,
	HM_REG_AX = 0,
	HM_REG_BX,
	HM_REG_CX,
	HM_REG_DX,
	HM_REG_SI,
	HM_REG_DI,
	HM_REG_BP,
	HM_REG_SP,
	HM_REG_IP,
	HM_REG_FLAGS,
	HM_REG_R8 = 16,
	HM_REG_R9,
	HM_REG_R10,
	HM_REG_R11,
	HM_REG_R12,
	HM_REG_R13,
	HM_REG_R14,
	HM_REG_R15,
};
/* A rip-relative operand has base HM_REG_RIP; its address comes from the instruction's
 * own address and length, never from a sampled register. */
#define HM_REG_RIP HM_REG_IP

enum hm_seg { HM_SEG_NONE, HM_SEG_FS, HM_SEG_GS };

enum hm_memacc {
	HM_ACC_NONE,
	HM_ACC_LOAD,
	HM_ACC_STORE,
	HM_ACC_RMW,
	HM_ACC_PREFETCH,	/* prefetch*: brings the line in, reads no data */
	HM_ACC_FLUSH,		/* clflush, clflushopt, clwb: evicts or writes back the line */
};

struct hm_memop {
	int base, index;	/* enum hm_reg; HM_REG_NONE if absent */
	int scale;		/* 1, 2, 4 or 8 */
	int64_t disp;
	int segment;		/* enum hm_seg */
	uint32_t size;		/* bytes accessed; per element for string instructions; 0 if
				 * unknown (xsave family: depends on XCR0) */
	enum hm_memacc access;
	uint8_t implicit;	/* not an operand: stack slot of push/pop/call/ret/leave/enter,
				 * [rdi] of maskmovdqu */
	uint8_t vsib;		/* gather/scatter: the index is a vector, no single address */
};

struct hm_insn {
	uint64_t addr;
	uint32_t len;
	char text[96];		/* "mov qword ptr [rdi + 8], rax" */
	uint32_t nr_mem;	/* memory operands in mem[], explicit first, in Intel order */
	struct hm_memop mem[2];
	uint8_t lock;		/* lock prefix, or xchg with memory: atomic */
	uint8_t string;		/* movs/stos/cmps/scas/lods/ins/outs */
	uint8_t rep;		/* string instruction with rep/repe/repne */
	uint8_t addr32;		/* 0x67 prefix: the effective address is truncated to 32 bits */
	uint8_t is_call, is_ret, is_jump;
	uint64_t target;	/* destination of a direct call or jump, else 0 */
	uint32_t regs_written;	/* bit per enum hm_reg written (explicitly or implicitly) */
	int mov_src;		/* "mov r64, r64": the source register, else HM_REG_NONE */
};

struct hm_decoder;

/* One decoder per report run; not thread-safe (one capstone handle). */
int hm_decode_open(struct hm_decoder **out, struct hm_err *err);
void hm_decode_close(struct hm_decoder *d);

/* Decodes one instruction at code[0..len) that lives at runtime address addr.
 * Returns 0, or -1 if the bytes are not a valid or complete instruction. */
int hm_decode_insn(struct hm_decoder *d, const uint8_t *code, size_t len, uint64_t addr,
		   struct hm_insn *out);

/* Watchpoints trap after the access: the sampled ip is the next instruction. Given a
 * function's code [code, code + len) at runtime address func_start, decodes forward and
 * returns in out the instruction that ends exactly at ip (the accessing one). -1 if
 * decoding never lands on ip (ip mid-instruction, data in code, ip out of range). */
int hm_decode_prev(struct hm_decoder *d, const uint8_t *code, size_t len, uint64_t func_start,
		   uint64_t ip, struct hm_insn *out);

/* 1 if a direct jump (jmp, jcc, jrcxz, loop*) in the function's code [code, code + len)
 * at runtime address func_start lands on ip, 0 if none does: a timer sample at such an
 * ip may follow the jump rather than the instruction that ends at ip. Indirect jumps
 * (switch tables) are not seen. */
int hm_decode_jumps_to(struct hm_decoder *d, const uint8_t *code, size_t len,
		       uint64_t func_start, uint64_t ip);

#define HM_DECODE_EA_NOREG (-1)	/* a register the operand needs is not in regs_mask */
#define HM_DECODE_EA_VSIB (-2)	/* gather/scatter: one address per vector lane */

/* Effective address of op (an operand of in) from sampled registers: regs holds the values
 * of the registers set in regs_mask, lowest bit first, as in PERF_SAMPLE_REGS_USER /
 * REGS_INTR. The registers must be those before the instruction executed (timer samples).
 * fs_base and gs_base are 0 when unknown; then an fs/gs operand gets *needs_segbase = 1
 * and *ea holds the offset from the segment base (resolve TLS by offset). Returns 0 or
 * HM_DECODE_EA_NOREG / HM_DECODE_EA_VSIB. needs_segbase may be NULL. */
int hm_decode_ea(const struct hm_insn *in, const struct hm_memop *op, uint64_t regs_mask,
		 const uint64_t *regs, uint64_t fs_base, uint64_t gs_base, uint64_t *ea,
		 int *needs_segbase);

/* Value of register reg (enum hm_reg) in a perf regs array; -1 if not in regs_mask. */
int hm_decode_reg(uint64_t regs_mask, const uint64_t *regs, int reg, uint64_t *val);

/* The sample_regs_user (and _intr) mask that lets every x86-64 effective address be
 * computed: the 16 general-purpose registers and ip. */
uint64_t hm_decode_regs_mask(void);

/* "rdi", "r12", "rip"; "?" for anything else. */
const char *hm_decode_reg_name(int reg);

/* Load, store or read-modify-write: the operand reads or writes data. */
static inline int hm_access_is_data(enum hm_memacc a)
{
	return a == HM_ACC_LOAD || a == HM_ACC_STORE || a == HM_ACC_RMW;
}

/* The operand a sample's access is about: the first explicit data operand (not a stack
 * slot of push/call, not a gather's vector of addresses), or NULL. */
static inline const struct hm_memop *hm_decode_data_operand(const struct hm_insn *in)
{
	for (uint32_t i = 0; i < in->nr_mem; i++)
		if (hm_access_is_data(in->mem[i].access) && !in->mem[i].implicit &&
		    !in->mem[i].vsib)
			return &in->mem[i];
	return NULL;
}

/* The operand's address registers still hold their values after the instruction ran
 * (it did not write its base or index), so registers sampled after it give its address. */
static inline int hm_decode_keeps_address(const struct hm_insn *in, const struct hm_memop *op)
{
	return !(op->base >= 0 && op->base < 32 && (in->regs_written >> op->base & 1)) &&
	       !(op->index >= 0 && op->index < 32 && (in->regs_written >> op->index & 1));
}

#endif
