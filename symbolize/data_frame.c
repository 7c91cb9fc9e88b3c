/* The frame at a pc from DWARF (without DWARF but with BTF, the function symbol holding
 * it: data_btf.c). Each module's subprograms are indexed by address once;
 * each function's variables and parameters (nested blocks and inlined copies included,
 * with the address ranges of their scope) are listed once; a pc then gets those whose
 * scope holds it, with their location-list entry for that pc, the function's frame
 * base, and the CFA rule there from the CFI. dwarf_getscopes would walk the whole unit
 * for every pc. */
#include "symbolize/data_int.h"
#include "symbolize/dwarf_key.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>
#include "core/sort.h"
#include "core/oom.h"

#define TI_MAX_VARS 512

int data_dwarf_reg(uint64_t r)
{
	/* The x86-64 psABI numbering: rax rdx rcx rbx rsi rdi rbp rsp r8..r15, then RA. */
	static const int map[] = {
		HM_REG_AX, HM_REG_DX, HM_REG_CX, HM_REG_BX, HM_REG_SI, HM_REG_DI,
		HM_REG_BP, HM_REG_SP, HM_REG_R8, HM_REG_R9, HM_REG_R10, HM_REG_R11,
		HM_REG_R12, HM_REG_R13, HM_REG_R14, HM_REG_R15,
	};

	return r < sizeof(map) / sizeof(map[0]) ? map[r] : HM_REG_NONE;
}

/* Location expressions this model understands; anything else is NONE. */
static enum hm_ti_loc classify(const Dwarf_Op *ops, size_t n, int *reg, int64_t *off)
{
	unsigned a = n ? ops[0].atom : 0;

	*reg = HM_REG_NONE;
	*off = 0;
	if (n == 1 && a >= DW_OP_reg0 && a <= DW_OP_reg31) {
		*reg = data_dwarf_reg(a - DW_OP_reg0);
		return *reg < 0 ? HM_TI_LOC_NONE : HM_TI_LOC_REG;
	}
	if (n == 1 && a == DW_OP_regx) {
		*reg = data_dwarf_reg(ops[0].number);
		return *reg < 0 ? HM_TI_LOC_NONE : HM_TI_LOC_REG;
	}
	if (n == 1 && a == DW_OP_fbreg) {
		*off = (int64_t)ops[0].number;
		return HM_TI_LOC_FBREG;
	}
	if ((n == 1 || (n == 2 && ops[1].atom == DW_OP_stack_value)) &&
	    ((a >= DW_OP_breg0 && a <= DW_OP_breg31) || a == DW_OP_bregx)) {
		*reg = data_dwarf_reg(a == DW_OP_bregx ? ops[0].number : a - DW_OP_breg0);
		*off = (int64_t)(a == DW_OP_bregx ? ops[0].number2 : ops[0].number);
		if (*reg < 0)
			return HM_TI_LOC_NONE;
		return n == 1 ? HM_TI_LOC_MEM : HM_TI_LOC_VALUE;
	}
	return HM_TI_LOC_NONE;
}

static enum hm_ti_loc location_at(Dwarf_Die *die, int name, uint64_t dpc, int *reg,
				  int64_t *off, int *is_cfa)
{
	Dwarf_Attribute attr;
	Dwarf_Op *expr;
	size_t len;

	*is_cfa = 0;
	if (!dwarf_attr(die, name, &attr) ||
	    dwarf_getlocation_addr(&attr, dpc, &expr, &len, 1) != 1)
		return HM_TI_LOC_NONE;
	if (len == 1 && expr[0].atom == DW_OP_call_frame_cfa)
		*is_cfa = 1;
	return classify(expr, len, reg, off);
}

/* ---- Subprograms by address ---- */

struct ti_fidx {
	uint64_t lo, hi;		/* DWARF addresses */
	struct ti_func *fn;
};

struct ti_fvar {
	uint64_t die;
	uint32_t depth, scope;		/* nesting depth; index of its scope's ranges */
	uint8_t param;
};

struct ti_scope {
	uint32_t nr;
	uint64_t (*r)[2];
};

struct ti_func {
	uint64_t die;
	int loaded;
	uint32_t nr_vars, nr_scopes;
	struct ti_fvar *vars;		/* innermost first */
	struct ti_scope *scopes;	/* [0]: the function itself */
};

/* What one walk of a file's subprograms fills: for a ti on its own thread, or ahead of it
 * on the warm thread (data_warm.c) with a Dwarf and an arena of its own. */
struct fidx_buf {
	Dwarf *dw;
	struct hm_arena *arena;
	struct ti_fidx *v;
	size_t n, cap;
};

static void add_func(struct fidx_buf *b, Dwarf_Die *die)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	struct ti_func *fn = NULL;

	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (lo >= hi)
			continue;
		if (!fn) {
			fn = hm_arena_alloc(b->arena, sizeof(*fn));
			fn->die = hm_dwarf_key(b->dw, die);
		}
		if (b->n == b->cap) {
			b->cap = b->cap ? b->cap * 2 : 1024;
			if (!(b->v = realloc(b->v, b->cap * sizeof(*b->v))))
				hm_oom();
		}
		b->v[b->n++] = (struct ti_fidx){lo, hi, fn};
	}
}

static void scan_funcs(struct fidx_buf *b, Dwarf_Die *parent, int depth)
{
	Dwarf_Die c;

	if (depth > 8 || dwarf_child(parent, &c) != 0)
		return;
	do {
		switch (dwarf_tag(&c)) {
		case DW_TAG_subprogram:
			add_func(b, &c);
			break;
		case DW_TAG_namespace:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
			scan_funcs(b, &c, depth + 1);	/* C++ member functions */
			break;
		default:
			break;
		}
	} while (dwarf_siblingof(&c, &c) == 0);
}

static int cmp_fidx(const void *x, const void *y)
{
	const struct ti_fidx *a = x, *b = y;

	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

static void frame_unit(Dwarf_Die *cu, void *arg)
{
	scan_funcs(arg, cu, 0);
}

int data_frame_scan(Dwarf *dw, struct hm_arena *arena, atomic_int *stop, struct data_index *out)
{
	struct fidx_buf b = {dw, arena, NULL, 0, 0};

	if (dw && data_each_unit(dw, 1, stop, frame_unit, &b)) {
		free(b.v);
		return -1;
	}
	if (b.n)
		hm_sort(b.v, b.n, sizeof(*b.v), cmp_fidx);
	*out = (struct data_index){b.v, b.n};
	return 0;
}

static void index_funcs(struct hm_ti *ti)
{
	struct data_index x = {0};

	ti->fidx_done = 1;
	if (!data_warm_take(ti, DATA_WARM_FUNCS, &x))
		data_frame_scan(ti->dw, &ti->arena, NULL, &x);
	ti->fidx = x.v;
	ti->nr_fidx = x.n;
}

void data_frame_free(struct hm_ti *ti)
{
	free(ti->fidx);
}

static struct ti_func *func_at(struct hm_ti *ti, uint64_t dpc)
{
	size_t lo = 0, hi;

	if (!ti->fidx_done)
		index_funcs(ti);
	hi = ti->nr_fidx;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ti->fidx[mid].lo <= dpc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && dpc < ti->fidx[lo - 1].hi ? ti->fidx[lo - 1].fn : NULL;
}

/* ---- A function's variables and their scopes ---- */

struct fvars {
	struct ti_fvar *v;
	size_t n, cap;
	struct ti_scope *s;
	size_t ns, caps;
};

static uint32_t add_scope(struct hm_ti *ti, struct fvars *fv, Dwarf_Die *die)
{
	Dwarf_Addr base, lo, hi, r[16][2];
	ptrdiff_t off = 0;
	uint32_t n = 0;

	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0 && n < 16) {
		r[n][0] = lo;
		r[n++][1] = hi;
	}
	if (fv->ns == fv->caps) {
		fv->caps = fv->caps ? fv->caps * 2 : 8;
		if (!(fv->s = realloc(fv->s, fv->caps * sizeof(*fv->s))))
			hm_oom();
	}
	fv->s[fv->ns].nr = n;
	fv->s[fv->ns].r = n ? hm_arena_alloc(&ti->arena, n * sizeof(*r)) : NULL;
	if (n)
		memcpy(fv->s[fv->ns].r, r, n * sizeof(*r));
	return (uint32_t)fv->ns++;
}

static void walk_vars(struct hm_ti *ti, struct fvars *fv, Dwarf_Die *scope, uint32_t depth,
		      uint32_t sc)
{
	Dwarf_Die c;

	if (depth > 32 || dwarf_child(scope, &c) != 0)
		return;
	do {
		int tag = dwarf_tag(&c);

		if ((tag == DW_TAG_variable || tag == DW_TAG_formal_parameter) &&
		    dwarf_hasattr(&c, DW_AT_location) && fv->n < TI_MAX_VARS) {
			if (fv->n == fv->cap) {
				fv->cap = fv->cap ? fv->cap * 2 : 16;
				if (!(fv->v = realloc(fv->v, fv->cap * sizeof(*fv->v))))
					hm_oom();
			}
			fv->v[fv->n++] = (struct ti_fvar){hm_dwarf_key(ti->dw, &c), depth, sc,
							  tag == DW_TAG_formal_parameter};
		} else if (tag == DW_TAG_lexical_block || tag == DW_TAG_inlined_subroutine) {
			walk_vars(ti, fv, &c, depth + 1, add_scope(ti, fv, &c));
		}
	} while (dwarf_siblingof(&c, &c) == 0);
}

static int cmp_depth(const void *x, const void *y)
{
	const struct ti_fvar *a = x, *b = y;

	if (a->depth != b->depth)
		return a->depth > b->depth ? -1 : 1;
	return a->die < b->die ? -1 : a->die > b->die;	/* declaration order */
}

static void func_load(struct hm_ti *ti, struct ti_func *fn)
{
	struct fvars fv = {0};
	Dwarf_Die die;

	fn->loaded = 1;
	if (!hm_dwarf_die(ti->dw, fn->die, &die))
		return;
	walk_vars(ti, &fv, &die, 0, add_scope(ti, &fv, &die));
	if (fv.n)
		hm_sort(fv.v, fv.n, sizeof(*fv.v), cmp_depth);
	fn->vars = fv.n ? hm_arena_alloc(&ti->arena, fv.n * sizeof(*fn->vars)) : NULL;
	fn->scopes = hm_arena_alloc(&ti->arena, fv.ns * sizeof(*fn->scopes));
	if (fv.n)
		memcpy(fn->vars, fv.v, fv.n * sizeof(*fn->vars));
	memcpy(fn->scopes, fv.s, fv.ns * sizeof(*fn->scopes));
	fn->nr_vars = (uint32_t)fv.n;
	fn->nr_scopes = (uint32_t)fv.ns;
	free(fv.v);
	free(fv.s);
}

static int in_scope(const struct ti_scope *s, uint64_t dpc)
{
	for (uint32_t i = 0; i < s->nr; i++)
		if (dpc >= s->r[i][0] && dpc < s->r[i][1])
			return 1;
	return 0;
}

/* The variables whose scope holds dpc, innermost first, with their location there. */
static uint32_t frame_vars(struct hm_ti *ti, struct ti_func *fn, uint64_t dpc,
			   struct hm_ti_var *buf)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < fn->nr_vars; i++) {
		const struct ti_fvar *fvar = &fn->vars[i];
		struct hm_ti_var v = {0};
		Dwarf_Attribute a;
		Dwarf_Die die;
		int cfa;

		if (!in_scope(&fn->scopes[fvar->scope], dpc) ||
		    !hm_dwarf_die(ti->dw, fvar->die, &die))
			continue;
		v.loc = location_at(&die, DW_AT_location, dpc, &v.reg, &v.off, &cfa);
		if (v.loc == HM_TI_LOC_NONE)
			continue;
		v.name = dwarf_attr_integrate(&die, DW_AT_name, &a) ? dwarf_formstring(&a) : NULL;
		v.type = hm_ti_type_of(ti, fvar->die);
		v.size = v.type ? v.type->size : 0;
		v.param = fvar->param;
		buf[n++] = v;
	}
	return n;
}

/* The subprogram: name, the address range holding pc, the frame base at pc. */
static void func_info(struct hm_ti_frame *f, Dwarf_Die *sub, uint64_t dpc, int64_t to_file)
{
	Dwarf_Attribute a;
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	int reg, cfa;
	int64_t fboff;
	enum hm_ti_loc fb;

	f->func = dwarf_attr_integrate(sub, DW_AT_name, &a) ? dwarf_formstring(&a) : "?";
	while ((off = dwarf_ranges(sub, off, &base, &lo, &hi)) > 0)
		if (dpc >= lo && dpc < hi) {
			f->lo = lo + (uint64_t)to_file;
			f->hi = hi + (uint64_t)to_file;
			break;
		}
	fb = location_at(sub, DW_AT_frame_base, dpc, &reg, &fboff, &cfa);
	if (cfa) {
		f->fb = HM_TI_FB_CFA;
	} else if (fb == HM_TI_LOC_REG || fb == HM_TI_LOC_MEM) {
		f->fb = HM_TI_FB_REG;	/* DW_OP_bregN off computes reg + off */
		f->fb_reg = reg;
		f->fb_off = fboff;
	}
}

static void cfa_rule(struct hm_ti *ti, struct hm_ti_frame *f, uint64_t pc)
{
	Dwarf_Addr eb = 0, db = 0;

	if (!ti->cfi_done) {
		ti->cfi_done = 1;
		ti->eh_cfi = dwfl_module_eh_cfi(ti->mod, &eb);
		ti->dbg_cfi = dwfl_module_dwarf_cfi(ti->mod, &db);
		ti->eh_cfi_bias = eb;
		ti->dbg_cfi_bias = db;
	}
	for (int i = 0; i < 2; i++) {
		Dwarf_CFI *cfi = i ? ti->dbg_cfi : ti->eh_cfi;
		Dwarf_Addr b = i ? ti->dbg_cfi_bias : ti->eh_cfi_bias;
		Dwarf_Frame *fr;
		Dwarf_Op *ops;
		size_t n;

		if (!cfi || dwarf_cfi_addrframe(cfi, pc + ti->ebias - b, &fr) != 0)
			continue;
		if (dwarf_frame_cfa(fr, &ops, &n) == 0 && n == 1 && ops[0].atom == DW_OP_bregx) {
			f->cfa_reg = data_dwarf_reg(ops[0].number);
			f->cfa_off = (int64_t)ops[0].number2;
		}
		free(fr);
		if (f->cfa_reg != HM_REG_NONE)
			return;
	}
}

static struct hm_ti_frame *frame_build(struct hm_ti *ti, uint64_t pc)
{
	struct hm_ti_frame *f = hm_arena_alloc(&ti->arena, sizeof(*f));
	uint64_t dpc = pc + ti->ebias - ti->dwbias;
	struct ti_func *fn;
	struct hm_ti_var *buf;
	Dwarf_Die die;
	uint32_t n;

	f->fb_reg = f->cfa_reg = HM_REG_NONE;
	if (hm_ti_btf(ti))
		data_btf_frame(ti, f, pc);
	if (!ti->dw || !(fn = func_at(ti, dpc)))
		return f;
	if (!fn->loaded)
		func_load(ti, fn);
	if (!hm_dwarf_die(ti->dw, fn->die, &die))
		return f;
	func_info(f, &die, dpc, (int64_t)ti->dwbias - (int64_t)ti->ebias);
	if (!(buf = malloc((fn->nr_vars ? fn->nr_vars : 1) * sizeof(*buf))))
		hm_oom();
	if ((n = frame_vars(ti, fn, dpc, buf))) {
		struct hm_ti_var *v = hm_arena_alloc(&ti->arena, n * sizeof(*v));

		memcpy(v, buf, n * sizeof(*v));
		f->vars = v;
		f->nr_vars = n;
	}
	free(buf);
	cfa_rule(ti, f, pc);
	return f;
}

const struct hm_ti_frame *hm_ti_frame_at(struct hm_ti *ti, uint64_t pc)
{
	struct hm_ti_frame *f = hm_map64_get(&ti->frames, pc + 1);

	if (!f) {
		f = frame_build(ti, pc);
		hm_map64_put(&ti->frames, pc + 1, f);
	}
	return f;
}

