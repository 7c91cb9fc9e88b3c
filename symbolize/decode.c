/* capstone's x86-64 decoding turned into struct hm_insn: memory operands with their
 * access kind, corrected where capstone 4 gets the access wrong (docs/decode.md). */
#include "decode.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <capstone/capstone.h>

struct hm_decoder {
	csh cs;
	cs_insn *ci;	/* one scratch instruction, detail allocated once */
};

/* capstone 4 sorts a table of its own (X86_insn_reg_intel's) the first time it prints an
 * instruction, with no lock, so two decoders' first instructions at once race on it
 * (ThreadSanitizer saw it when compare loaded two runs at once). One instruction is
 * decoded once per process before a decoder is handed out; pthread_once makes a second
 * opener wait for it. */
static pthread_once_t warm_once = PTHREAD_ONCE_INIT;

static void warm_up(void)
{
	static const uint8_t mov[] = {0x48, 0x8b, 0x03};	/* mov rax, [rbx] */
	cs_insn *ci;
	size_t n;
	csh cs;

	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
		return;	/* hm_decode_open says why */
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	if ((n = cs_disasm(cs, mov, sizeof(mov), 0x1000, 1, &ci)))
		cs_free(ci, n);
	cs_close(&cs);
}

int hm_decode_open(struct hm_decoder **out, struct hm_err *err)
{
	struct hm_decoder *d = calloc(1, sizeof(*d));
	cs_err ce;

	*out = NULL;
	if (!d)
		return hm_err_set(err, HM_EXIT_ENV, "decoder: out of memory");
	pthread_once(&warm_once, warm_up);
	ce = cs_open(CS_ARCH_X86, CS_MODE_64, &d->cs);
	if (ce != CS_ERR_OK) {
		free(d);
		return hm_err_set(err, HM_EXIT_ENV,
				  "decoder: capstone cannot open x86-64: %s; install a capstone "
				  "built with x86 support (Debian: libcapstone4)",
				  cs_strerror(ce));
	}
	/* Detail must be on when the scratch insn is allocated: cs_malloc sizes it then. */
	cs_option(d->cs, CS_OPT_DETAIL, CS_OPT_ON);
	d->ci = cs_malloc(d->cs);
	if (!d->ci) {
		cs_close(&d->cs);
		free(d);
		return hm_err_set(err, HM_EXIT_ENV, "decoder: out of memory");
	}
	*out = d;
	return 0;
}

void hm_decode_close(struct hm_decoder *d)
{
	if (!d)
		return;
	cs_free(d->ci, 1);
	cs_close(&d->cs);
	free(d);
}

/* Every width of a general-purpose register names the same perf register. */
static int gpr(unsigned r)
{
	switch (r) {
	case X86_REG_RAX: case X86_REG_EAX: case X86_REG_AX: case X86_REG_AL: case X86_REG_AH:
		return HM_REG_AX;
	case X86_REG_RBX: case X86_REG_EBX: case X86_REG_BX: case X86_REG_BL: case X86_REG_BH:
		return HM_REG_BX;
	case X86_REG_RCX: case X86_REG_ECX: case X86_REG_CX: case X86_REG_CL: case X86_REG_CH:
		return HM_REG_CX;
	case X86_REG_RDX: case X86_REG_EDX: case X86_REG_DX: case X86_REG_DL: case X86_REG_DH:
		return HM_REG_DX;
	case X86_REG_RSI: case X86_REG_ESI: case X86_REG_SI: case X86_REG_SIL:
		return HM_REG_SI;
	case X86_REG_RDI: case X86_REG_EDI: case X86_REG_DI: case X86_REG_DIL:
		return HM_REG_DI;
	case X86_REG_RBP: case X86_REG_EBP: case X86_REG_BP: case X86_REG_BPL:
		return HM_REG_BP;
	case X86_REG_RSP: case X86_REG_ESP: case X86_REG_SP: case X86_REG_SPL:
		return HM_REG_SP;
	case X86_REG_RIP: case X86_REG_EIP:
		return HM_REG_RIP;
	case X86_REG_R8: case X86_REG_R8D: case X86_REG_R8W: case X86_REG_R8B:
		return HM_REG_R8;
	case X86_REG_R9: case X86_REG_R9D: case X86_REG_R9W: case X86_REG_R9B:
		return HM_REG_R9;
	case X86_REG_R10: case X86_REG_R10D: case X86_REG_R10W: case X86_REG_R10B:
		return HM_REG_R10;
	case X86_REG_R11: case X86_REG_R11D: case X86_REG_R11W: case X86_REG_R11B:
		return HM_REG_R11;
	case X86_REG_R12: case X86_REG_R12D: case X86_REG_R12W: case X86_REG_R12B:
		return HM_REG_R12;
	case X86_REG_R13: case X86_REG_R13D: case X86_REG_R13W: case X86_REG_R13B:
		return HM_REG_R13;
	case X86_REG_R14: case X86_REG_R14D: case X86_REG_R14W: case X86_REG_R14B:
		return HM_REG_R14;
	case X86_REG_R15: case X86_REG_R15D: case X86_REG_R15W: case X86_REG_R15B:
		return HM_REG_R15;
	default:	/* riz/eiz (no index), vector, mask, segment registers */
		return HM_REG_NONE;
	}
}

static bool in_list(unsigned id, const unsigned *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (list[i] == id)
			return true;
	return false;
}

#define IN(id, list) in_list((id), (list), sizeof(list) / sizeof((list)[0]))

/* Address computations, not accesses; capstone also decodes the MPX bnd* hint space as
 * nop. */
static const unsigned not_access[] = { X86_INS_LEA, X86_INS_NOP };

static const unsigned prefetch[] = {
	X86_INS_PREFETCH, X86_INS_PREFETCHNTA, X86_INS_PREFETCHT0, X86_INS_PREFETCHT1,
	X86_INS_PREFETCHT2, X86_INS_PREFETCHW,
	X86_INS_VGATHERPF0DPD, X86_INS_VGATHERPF0DPS, X86_INS_VGATHERPF0QPD,
	X86_INS_VGATHERPF0QPS, X86_INS_VGATHERPF1DPD, X86_INS_VGATHERPF1DPS,
	X86_INS_VGATHERPF1QPD, X86_INS_VGATHERPF1QPS,
	X86_INS_VSCATTERPF0DPD, X86_INS_VSCATTERPF0DPS, X86_INS_VSCATTERPF0QPD,
	X86_INS_VSCATTERPF0QPS, X86_INS_VSCATTERPF1DPD, X86_INS_VSCATTERPF1DPS,
	X86_INS_VSCATTERPF1QPD, X86_INS_VSCATTERPF1QPS,
};

static const unsigned flush[] = { X86_INS_CLFLUSH, X86_INS_CLFLUSHOPT, X86_INS_CLWB };

/* The index of these is a vector register (VSIB). capstone 4 names a general register
 * for the EVEX scatter forms ("vpscatterdd [rdi + rcx*4]" for zmm1), so never trust it. */
static const unsigned vsib[] = {
	X86_INS_VGATHERDPD, X86_INS_VGATHERDPS, X86_INS_VGATHERQPD, X86_INS_VGATHERQPS,
	X86_INS_VPGATHERDD, X86_INS_VPGATHERDQ, X86_INS_VPGATHERQD, X86_INS_VPGATHERQQ,
	X86_INS_VSCATTERDPD, X86_INS_VSCATTERDPS, X86_INS_VSCATTERQPD, X86_INS_VSCATTERQPS,
	X86_INS_VPSCATTERDD, X86_INS_VPSCATTERDQ, X86_INS_VPSCATTERQD, X86_INS_VPSCATTERQQ,
	X86_INS_VGATHERPF0DPD, X86_INS_VGATHERPF0DPS, X86_INS_VGATHERPF0QPD,
	X86_INS_VGATHERPF0QPS, X86_INS_VGATHERPF1DPD, X86_INS_VGATHERPF1DPS,
	X86_INS_VGATHERPF1QPD, X86_INS_VGATHERPF1QPS,
	X86_INS_VSCATTERPF0DPD, X86_INS_VSCATTERPF0DPS, X86_INS_VSCATTERPF0QPD,
	X86_INS_VSCATTERPF0QPS, X86_INS_VSCATTERPF1DPD, X86_INS_VSCATTERPF1DPS,
	X86_INS_VSCATTERPF1QPD, X86_INS_VSCATTERPF1QPS,
};

/* capstone 4.0.2 marks the memory operand of these read-only; they always write it back
 * (cmpxchg writes even when the comparison fails). */
static const unsigned quirk_rmw[] = {
	X86_INS_CMPXCHG, X86_INS_CMPXCHG8B, X86_INS_CMPXCHG16B,
	X86_INS_ROL, X86_INS_ROR, X86_INS_RCL, X86_INS_RCR,
};

/* Read their memory operand only. capstone 4.0.2 marks test's read-write and frstor's
 * write. */
static const unsigned always_load[] = {
	X86_INS_CMP, X86_INS_TEST, X86_INS_BT, X86_INS_FLDCW, X86_INS_FLDENV, X86_INS_FRSTOR,
	X86_INS_FXRSTOR, X86_INS_FXRSTOR64, X86_INS_XRSTOR, X86_INS_XRSTOR64, X86_INS_XRSTORS,
	X86_INS_XRSTORS64, X86_INS_LDMXCSR, X86_INS_VLDMXCSR,
};

/* Write their memory operand only. capstone 4.0.2 marks fst, fstp m32/m64, fist,
 * fistp m16/m32, fisttp, fnstcw, (v)stmxcsr and ins's [rdi] read-only. */
static const unsigned always_store[] = {
	X86_INS_FST, X86_INS_FSTP, X86_INS_FIST, X86_INS_FISTP, X86_INS_FISTTP, X86_INS_FBSTP,
	X86_INS_FNSTCW, X86_INS_FNSTSW, X86_INS_FNSTENV, X86_INS_FNSAVE, X86_INS_FXSAVE,
	X86_INS_FXSAVE64, X86_INS_XSAVE, X86_INS_XSAVE64, X86_INS_XSAVEC, X86_INS_XSAVEC64,
	X86_INS_XSAVEOPT, X86_INS_XSAVEOPT64, X86_INS_XSAVES, X86_INS_XSAVES64,
	X86_INS_STMXCSR, X86_INS_VSTMXCSR, X86_INS_SGDT, X86_INS_SIDT, X86_INS_SLDT,
	X86_INS_STR, X86_INS_SMSW, X86_INS_INSB, X86_INS_INSW, X86_INS_INSD,
};

static const unsigned xsave_family[] = {
	X86_INS_XSAVE, X86_INS_XSAVE64, X86_INS_XSAVEC, X86_INS_XSAVEC64, X86_INS_XSAVEOPT,
	X86_INS_XSAVEOPT64, X86_INS_XSAVES, X86_INS_XSAVES64, X86_INS_XRSTOR,
	X86_INS_XRSTOR64, X86_INS_XRSTORS, X86_INS_XRSTORS64,
};

/* Legacy prefixes and the first opcode byte, read from the bytes themselves: capstone's
 * prefix[] keeps one byte per group, so "xacquire lock" would hide one of them. */
struct prefixes {
	bool lock, rep, opsize16, string;
};

static struct prefixes scan_prefixes(const uint8_t *b, size_t n)
{
	struct prefixes p = { 0 };
	size_t i = 0;

	for (; i < n; i++) {
		uint8_t c = b[i];

		if (c == 0xf0)
			p.lock = true;
		else if (c == 0xf2 || c == 0xf3)
			p.rep = true;
		else if (c == 0x66)
			p.opsize16 = true;
		else if (c != 0x67 && c != 0x2e && c != 0x36 && c != 0x3e && c != 0x26 &&
			 c != 0x64 && c != 0x65)
			break;
	}
	if (i < n && (b[i] & 0xf0) == 0x40)	/* REX */
		i++;
	if (i < n) {
		uint8_t op = b[i];

		p.string = (op >= 0xa4 && op <= 0xa7) || (op >= 0xaa && op <= 0xaf) ||
			   (op >= 0x6c && op <= 0x6f);
	}
	p.rep = p.rep && p.string;
	return p;
}

static enum hm_memacc cs_access(uint8_t ac)
{
	switch (ac & (CS_AC_READ | CS_AC_WRITE)) {
	case CS_AC_WRITE:
		return HM_ACC_STORE;
	case CS_AC_READ | CS_AC_WRITE:
		return HM_ACC_RMW;
	default:	/* READ, or no flag at all: a read is the safe reading */
		return HM_ACC_LOAD;
	}
}

/* Access kind of memory operand i, or HM_ACC_NONE if it is not an access. */
static enum hm_memacc mem_access(const cs_insn *ci, unsigned i, bool string)
{
	const cs_x86 *x = &ci->detail->x86;
	unsigned id = ci->id;

	if (IN(id, not_access))
		return HM_ACC_NONE;
	if (IN(id, prefetch))
		return HM_ACC_PREFETCH;
	if (IN(id, flush))
		return HM_ACC_FLUSH;
	if (IN(id, quirk_rmw))
		return HM_ACC_RMW;
	if (IN(id, always_load))
		return HM_ACC_LOAD;
	if (IN(id, always_store))
		return HM_ACC_STORE;
	/* In Intel order the first operand is the destination. capstone 4.0.2 marks many
	 * stores read-only (movups, movdqa, movq, movhps, movntps, pextrd, movbe to memory,
	 * and every VEX/EVEX store: vmovdqa, vmovups, vextracti128, vmaskmovps, vpscatterdd...);
	 * a memory destination that is only read exists only for compares and cmps. */
	if (i == 0 && x->op_count >= 2 && !string &&
	    (x->operands[0].access & (CS_AC_READ | CS_AC_WRITE)) == CS_AC_READ)
		return HM_ACC_STORE;
	return cs_access(x->operands[i].access);
}

static uint32_t mem_size(const cs_insn *ci, const cs_x86_op *op)
{
	switch (ci->id) {
	case X86_INS_FXSAVE: case X86_INS_FXSAVE64: case X86_INS_FXRSTOR: case X86_INS_FXRSTOR64:
		return 512;	/* capstone 4 says 8 */
	case X86_INS_FNSAVE: case X86_INS_FRSTOR:
		return 108;	/* 64-bit mode, 32-bit operand size layout */
	default:
		break;
	}
	if (IN(ci->id, xsave_family))
		return 0;	/* depends on XCR0 and the mask in edx:eax */
	return op->size;
}

static void add_mem(struct hm_insn *out, const struct hm_memop *m)
{
	if (out->nr_mem < sizeof(out->mem) / sizeof(out->mem[0]))
		out->mem[out->nr_mem++] = *m;
}

static void explicit_mems(struct hm_insn *out, const cs_insn *ci, const struct prefixes *p)
{
	const cs_x86 *x = &ci->detail->x86;

	for (unsigned i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];
		struct hm_memop m = { 0 };

		if (op->type != X86_OP_MEM)
			continue;
		m.access = mem_access(ci, i, p->string);
		if (m.access == HM_ACC_NONE)
			continue;
		m.base = gpr(op->mem.base);
		m.index = gpr(op->mem.index);
		m.scale = op->mem.scale ? op->mem.scale : 1;
		m.disp = op->mem.disp;
		m.segment = op->mem.segment == X86_REG_FS ? HM_SEG_FS :
			    op->mem.segment == X86_REG_GS ? HM_SEG_GS : HM_SEG_NONE;
		m.size = mem_size(ci, op);
		if (IN(ci->id, vsib)) {
			m.vsib = 1;
			m.index = HM_REG_NONE;
		}
		/* pop computes a [rsp + d] destination after incrementing rsp (SDM, POP). */
		if (ci->id == X86_INS_POP && m.base == HM_REG_SP)
			m.disp += p->opsize16 ? 2 : 8;
		add_mem(out, &m);
	}
}

/* Memory that push/pop/call/ret/leave/enter (the stack slot) and maskmovdqu ([rdi])
 * touch without naming it as an operand. */
static void implicit_stack(struct hm_insn *out, const cs_insn *ci, const struct prefixes *p)
{
	struct hm_memop m = { .base = HM_REG_SP, .index = HM_REG_NONE, .scale = 1,
			      .implicit = 1 };
	uint32_t sz = p->opsize16 ? 2 : 8;

	switch (ci->id) {
	case X86_INS_PUSH: case X86_INS_PUSHF: case X86_INS_PUSHFQ:
		m.access = HM_ACC_STORE, m.size = sz, m.disp = -(int64_t)sz;
		break;
	case X86_INS_POP: case X86_INS_POPF: case X86_INS_POPFQ:
		m.access = HM_ACC_LOAD, m.size = sz;
		break;
	case X86_INS_CALL:
		m.access = HM_ACC_STORE, m.size = 8, m.disp = -8;
		break;
	case X86_INS_RET:
		m.access = HM_ACC_LOAD, m.size = 8;
		break;
	case X86_INS_LEAVE:	/* mov rsp, rbp; pop rbp */
		m.access = HM_ACC_LOAD, m.size = 8, m.base = HM_REG_BP;
		break;
	case X86_INS_ENTER:	/* push rbp first; nested frames (level > 0) copy more */
		m.access = HM_ACC_STORE, m.size = 8, m.disp = -8;
		break;
	case X86_INS_MASKMOVDQU: case X86_INS_VMASKMOVDQU:	/* bytes chosen by a mask */
		m.access = HM_ACC_STORE, m.size = 16, m.base = HM_REG_DI;
		break;
	default:
		return;
	}
	add_mem(out, &m);
}

static void control_flow(struct hm_insn *out, const cs_insn *ci)
{
	const cs_detail *det = ci->detail;
	bool relative = false;

	for (unsigned i = 0; i < det->groups_count; i++) {
		switch (det->groups[i]) {
		case CS_GRP_CALL:
			out->is_call = 1;
			break;
		case CS_GRP_RET: case CS_GRP_IRET:
			out->is_ret = 1;
			break;
		case CS_GRP_JUMP:
			out->is_jump = 1;
			break;
		case CS_GRP_BRANCH_RELATIVE:
			relative = true;
			break;
		default:
			break;
		}
	}
	if (relative && det->x86.op_count >= 1 && det->x86.operands[0].type == X86_OP_IMM)
		out->target = (uint64_t)det->x86.operands[0].imm;
}

static void registers(struct hm_insn *out, struct hm_decoder *d, const cs_insn *ci)
{
	const cs_x86 *x = &ci->detail->x86;
	cs_regs rd, wr;
	uint8_t nrd = 0, nwr = 0;

	if (cs_regs_access(d->cs, ci, rd, &nrd, wr, &nwr) == CS_ERR_OK) {
		for (unsigned i = 0; i < nwr; i++) {
			int r = gpr(wr[i]);

			if (r >= 0 && r != HM_REG_RIP)
				out->regs_written |= 1u << r;
		}
	}
	/* cmpxchg loads the old value into rax when the comparison fails; capstone 4 does
	 * not list it. */
	if (ci->id == X86_INS_CMPXCHG)
		out->regs_written |= 1u << HM_REG_AX;
	out->mov_src = HM_REG_NONE;
	if (ci->id == X86_INS_MOV && x->op_count == 2 && x->operands[0].type == X86_OP_REG &&
	    x->operands[1].type == X86_OP_REG && x->operands[0].size == 8 &&
	    x->operands[1].size == 8 && gpr(x->operands[0].reg) >= 0)
		out->mov_src = gpr(x->operands[1].reg);
}

/* "mnemonic operands", cut to fit: the text is for people, the fields are for code. */
static void set_text(char *dst, size_t cap, const char *mnemonic, const char *ops)
{
	size_t n = strlen(mnemonic), m = strlen(ops);

	if (n > cap - 1)
		n = cap - 1;
	memcpy(dst, mnemonic, n);
	if (m && n + 1 < cap - 1) {
		dst[n++] = ' ';
		if (m > cap - 1 - n)
			m = cap - 1 - n;
		memcpy(dst + n, ops, m);
		n += m;
	}
	dst[n] = 0;
}

static void fill(struct hm_insn *out, struct hm_decoder *d, const cs_insn *ci)
{
	struct prefixes p = scan_prefixes(ci->bytes, ci->size);
	const cs_x86 *x = &ci->detail->x86;

	memset(out, 0, sizeof(*out));
	out->addr = ci->address;
	out->len = ci->size;
	set_text(out->text, sizeof(out->text), ci->mnemonic, ci->op_str);
	out->string = p.string;
	out->rep = p.rep;
	out->addr32 = x->addr_size == 4;
	explicit_mems(out, ci, &p);
	implicit_stack(out, ci, &p);
	/* xchg with memory asserts LOCK whether or not the prefix is there (SDM, XCHG). */
	out->lock = p.lock || (ci->id == X86_INS_XCHG && out->nr_mem > 0);
	control_flow(out, ci);
	registers(out, d, ci);
}

int hm_decode_insn(struct hm_decoder *d, const uint8_t *code, size_t len, uint64_t addr,
		   struct hm_insn *out)
{
	const uint8_t *p = code;
	size_t n = len;
	uint64_t a = addr;

	if (!len || !cs_disasm_iter(d->cs, &p, &n, &a, d->ci))
		return -1;
	fill(out, d, d->ci);
	return 0;
}

int hm_decode_prev(struct hm_decoder *d, const uint8_t *code, size_t len, uint64_t func_start,
		   uint64_t ip, struct hm_insn *out)
{
	const uint8_t *p = code;
	size_t n = len;
	uint64_t a = func_start;
	uint64_t found = 0;
	bool hit = false;

	if (ip <= func_start || ip - func_start > len)
		return -1;
	/* The walk needs lengths only; detail is what costs in capstone. */
	cs_option(d->cs, CS_OPT_DETAIL, CS_OPT_OFF);
	while (cs_disasm_iter(d->cs, &p, &n, &a, d->ci)) {
		if (a == ip) {
			found = d->ci->address;
			hit = true;
			break;
		}
		if (a > ip)
			break;
	}
	cs_option(d->cs, CS_OPT_DETAIL, CS_OPT_ON);
	if (!hit)
		return -1;
	return hm_decode_insn(d, code + (found - func_start), (size_t)(ip - found), found, out);
}

/* A direct branch's target, from capstone's text without detail ("jne 0x401020"): the
 * operand of a direct jump is printed as one absolute address. */
static bool direct_target(const cs_insn *ci, uint64_t *target)
{
	char *end;

	if (ci->mnemonic[0] != 'j' && strncmp(ci->mnemonic, "loop", 4))
		return false;
	if (strncmp(ci->op_str, "0x", 2))
		return false;
	*target = strtoull(ci->op_str, &end, 16);
	return *end == 0;
}

int hm_decode_jumps_to(struct hm_decoder *d, const uint8_t *code, size_t len,
		       uint64_t func_start, uint64_t ip)
{
	const uint8_t *p = code;
	size_t n = len;
	uint64_t a = func_start, t;
	int hit = 0;

	cs_option(d->cs, CS_OPT_DETAIL, CS_OPT_OFF);
	while (!hit && n && cs_disasm_iter(d->cs, &p, &n, &a, d->ci))
		hit = direct_target(d->ci, &t) && t == ip;
	cs_option(d->cs, CS_OPT_DETAIL, CS_OPT_ON);
	return hit;
}
