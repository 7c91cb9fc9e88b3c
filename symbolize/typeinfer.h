/* What the DWARF of one ELF file says about a code address: the enclosing function, its
 * frame base and CFA rule, the variables and parameters in scope with their locations at
 * that pc (location lists), variables with static or thread-local storage by address,
 * and the type a register points to at a pc (a variable living in it, or one reached by
 * following register moves and pointer loads backwards). Addresses are the file's own
 * (link-time) addresses; callers subtract the load bias. For symbolize/data*.c. */
#ifndef HM_TYPEINFER_H
#define HM_TYPEINFER_H

#include <gelf.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "symbolize/layout.h"

struct hm_ti;
struct hm_decoder;

/* Opens path through libdwfl (separate debug files by build-id or .gnu_debuglink). An
 * ELF without DWARF opens too: code bytes and symbols still work. lay is the layout of
 * the same file (named aggregates come from it) or NULL. */
int hm_ti_open(const char *path, struct hm_layout *lay, struct hm_ti **out, struct hm_err *err);
/* Code that is no ELF file (the running kernel's, through /proc/kcore and kallsyms):
 * bytes and function extents at its runtime addresses, asked of the caller. */
struct hm_ti_code {
	void *ctx;
	/* Up to len bytes at addr; the number copied, 0 when none are readable. */
	size_t (*read)(void *ctx, uint64_t addr, uint8_t *buf, size_t len);
	/* The function holding addr: 0 with [lo, hi) and its names (aliases of one code,
	 * the preferred first), or -1. */
	int (*func)(void *ctx, uint64_t addr, uint64_t *lo, uint64_t *hi,
		    const char *const **names, size_t *nr_names);
};
/* An hm_ti over such code: no DWARF, no symbols; lay (BTF) types the registers at
 * function entry as for an ELF file without DWARF. */
int hm_ti_open_code(const struct hm_ti_code *code, struct hm_layout *lay, struct hm_ti **out,
		    struct hm_err *err);
void hm_ti_close(struct hm_ti *ti);
int hm_ti_has_dwarf(const struct hm_ti *ti);
/* No DWARF, but lay (hm_ti_open's) is BTF: frames are ELF function symbols and
 * registers are typed from the parameters at function entry (BTF FUNC_PROTO). */
int hm_ti_btf(const struct hm_ti *ti);
Elf *hm_ti_elf(struct hm_ti *ti);	/* the file itself */
Elf *hm_ti_debug_elf(struct hm_ti *ti);	/* the file holding the DWARF, or NULL */
/* Code (or any allocated section's bytes) at file address vaddr: *avail bytes follow. */
const uint8_t *hm_ti_bytes(struct hm_ti *ti, uint64_t vaddr, size_t *avail);

enum hm_ti_loc {
	HM_TI_LOC_NONE,		/* optimized out, entry value, pieces, or a static */
	HM_TI_LOC_REG,		/* the value is in reg */
	HM_TI_LOC_VALUE,	/* the value is reg + off (DW_OP_bregN off; DW_OP_stack_value) */
	HM_TI_LOC_FBREG,	/* in memory at frame base + off */
	HM_TI_LOC_MEM,		/* in memory at reg + off */
};

struct hm_ti_var {
	const char *name;
	const struct hm_type *type;	/* NULL if it cannot be built */
	uint64_t size;
	enum hm_ti_loc loc;
	int reg;			/* enum hm_reg (symbolize/decode.h) */
	int64_t off;
	uint8_t param;
};

enum hm_ti_fb { HM_TI_FB_NONE, HM_TI_FB_CFA, HM_TI_FB_REG };

struct hm_ti_frame {
	const char *func;		/* the containing non-inlined function; NULL if no
					 * DWARF (with BTF only: no function symbol) covers pc */
	uint64_t lo, hi;		/* its address range that holds pc */
	enum hm_ti_fb fb;		/* frame base: the CFA, or fb_reg + fb_off */
	int fb_reg;
	int64_t fb_off;
	int cfa_reg;			/* CFA at pc = cfa_reg + cfa_off; HM_REG_NONE if the
					 * CFI has no simple rule there */
	int64_t cfa_off;
	uint32_t nr_vars;
	const struct hm_ti_var *vars;	/* innermost scope first */
	void *priv;			/* per-register results of hm_ti_reg_pointee */
};

/* The frame at pc, cached: the same pc returns the same pointer. Never NULL. */
const struct hm_ti_frame *hm_ti_frame_at(struct hm_ti *ti, uint64_t pc);

/* What register reg points to just before the instruction at pc executes. */
struct hm_ti_ptr {
	const struct hm_type *pointee;	/* the object's type */
	int64_t delta;			/* reg = object start + delta (exact unless approx) */
	uint8_t approx;			/* walked across a loop or merge: the register may
					 * point at any element; use offsets modulo the size */
	const char *var;		/* the variable the type came from */
	uint8_t global;			/* var is a global or static pointer itself (int
					 * *slots): what it points to has no other name */
};
/* 0 with *out filled, -1 when no typed variable reaches reg. Cached per (pc, reg). */
int hm_ti_reg_pointee(struct hm_ti *ti, struct hm_decoder *dec, uint64_t pc, int reg,
		      struct hm_ti_ptr *out);

/* The general register holding parameter idx of prototype proto (HM_T_FUNC) when the
 * function is entered, by the SysV x86-64 rules (rdi rsi rdx rcx r8 r9; floating
 * values and aggregates over 16 bytes go elsewhere and take none; a returned aggregate
 * over 16 bytes takes rdi). HM_REG_NONE when the parameter is in no general register,
 * or in two, or when an earlier one is an aggregate this does not classify (one mixing
 * integer and floating members). */
int hm_ti_param_reg(const struct hm_type *proto, uint32_t idx);

/* A DWARF variable with static storage (DW_OP_addr) or thread-local storage (offset in
 * the file's PT_TLS block, DW_OP_form_tls_address). */
struct hm_ti_static {
	uint64_t addr, size;
	const char *name;
	const struct hm_type *type;	/* built on first lookup */
	uint64_t die;
	uint8_t tls;
};
/* The variable covering addr, or NULL. The first call indexes the whole file. */
const struct hm_ti_static *hm_ti_static_at(struct hm_ti *ti, uint64_t addr, int tls);

/* Private to typeinfer.c and data_dwarf.c. */
const struct hm_type *hm_ti_type_of(struct hm_ti *ti, uint64_t die_off);
struct hm_arena *hm_ti_arena(struct hm_ti *ti);

#endif
