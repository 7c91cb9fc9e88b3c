/* Register -> type at a pc. A register's type is that of the pointer variable living in
 * it there (the frame from data_frame.c); when none does, the function is decoded and
 * walked back from pc through register copies, pointer steps (add/sub/lea) and pointer
 * loads (mov reg, [typed + disp], a pointer kept in the frame) to a register that holds
 * a typed variable, or, without DWARF, to the function's entry where an argument
 * register holds a parameter typed by BTF. */
#include "symbolize/typeinfer_int.h"

#include <stdlib.h>
#include <string.h>

#define TI_MAX_STEPS 256	/* instructions walked back on one path */
#define TI_MAX_CHAIN 3		/* pointer loads followed: a->b->c */
#define TI_MAX_ASSUME HM_TI_MAX_ASSUME
#define TI_WALK_BUDGET 4096	/* instructions walked for one question, all paths */

struct ti_regres {
	int8_t state;		/* 0 not asked, 1 typed, -1 not typed */
	struct hm_ti_ptr p;
};

/* A loop back to a merge point whose body rewrites the register (a callee-saved
 * register reused for a count and the pointer put back before the jump, as the kernel's
 * filemap_read does with iocb): the walk goes on, and once it has a type, the register
 * at the jump must be shown to hold that type too (check_pending). */
#define TI_MAX_PENDING 4

struct pending {
	uint64_t jump, merge;		/* the jump back and its target */
	int reg;
	int64_t delta;			/* the walk's delta at the merge point */
};

/* A jump forward to a merge point the walk went through by falling into it: the way
 * in when the fall-through path only comes around a loop (try_alts). */
#define TI_MAX_ALTS 4

struct alt {
	uint64_t jump, merge;
	int reg;
	int64_t delta;			/* the walk's delta at the merge point */
	uint32_t nr_pending;		/* the walk's pending loops then */
};

/* The walk's state: *reg at the current instruction = the object start + delta. */
struct walk {
	int reg, approx;
	int64_t delta;
	uint32_t nr_pending, nr_alts;
	struct pending pending[TI_MAX_PENDING];
	struct alt alts[TI_MAX_ALTS];
};

/* (merge, reg) being shown to hold a type by a walk from a jump back to it: a walk that
 * meets it again assumes so (the loop's own jump adds nothing). */
static int assumed(const struct hm_ti *ti, uint64_t merge, int reg)
{
	for (uint32_t k = 0; k < ti->nr_assume; k++)
		if (ti->assume[k] == (merge << 5 | (uint64_t)reg))
			return 1;
	return 0;
}

static int track(struct hm_ti *ti, struct hm_decoder *dec, uint64_t pc, int reg, int depth,
		 struct hm_ti_ptr *out);

/* track() of reg from the jump at from, assuming (merge, reg) meanwhile; -1 when as many
 * as can be are assumed already. */
static int track_assuming(struct hm_ti *ti, struct hm_decoder *dec, uint64_t merge, int reg,
			  uint64_t from, int depth, struct hm_ti_ptr *out)
{
	int rc;

	if (ti->nr_assume == TI_MAX_ASSUME)
		return -1;
	ti->assume[ti->nr_assume++] = merge << 5 | (uint64_t)reg;
	rc = track(ti, dec, from, reg, depth, out);
	ti->nr_assume--;
	return rc;
}

/* Whether an instruction of ins[from..to] writes reg (a step too) or a call there may. */
static int writes_between(const struct ti_code *c, size_t from, size_t to, int reg)
{
	for (size_t k = from; k <= to && k < c->n; k++)
		if ((c->ins[k].call && ti_caller_saved(reg)) || (c->ins[k].written & (1u << reg)))
			return 1;
	return 0;
}

/* ins[i] is a jump target: every loop back to it may only step reg (p += k), so reg
 * keeps its type around the loop, or rewrites it and is left to check_pending (w).
 * Returns -1 if some path rewrites it and no more can be left pending, 1 if a jump to
 * ins[i] may bring reg at another delta (the result is approximate), 0 if none can: no
 * jump to it, or only conditional jumps forward past instructions that leave reg alone
 * and loops that never touch it (reg there is the value the walk follows). */
static int merge_ok(const struct hm_ti *ti, const struct ti_code *c, size_t i, int reg,
		    struct walk *w)
{
	int target = 0;

	for (size_t j = 0; j < c->n; j++) {
		int stored;

		if (!c->ins[j].jump || c->ins[j].target != c->ins[i].addr)
			continue;
		stored = ti_stored_static(c, i, j, reg);
		if (j < i ? c->ins[j].uncond || writes_between(c, j + 1, i - 1, reg)
			  : writes_between(c, i, j, reg) || stored)
			target = 1;
		if (j < i && w && w->nr_alts < TI_MAX_ALTS)
			w->alts[w->nr_alts++] = (struct alt){c->ins[j].addr, c->ins[i].addr, reg,
							     w->delta, w->nr_pending};
		if (stored)
			continue;
		for (size_t k = i; j >= i && k <= j; k++) {
			const struct ti_insn *t = &c->ins[k];

			if ((t->call && ti_caller_saved(reg)) ||
			    ((t->written & (1u << reg)) &&
			     !(t->dst == reg && (t->kind == K_STEP ||
						 (t->kind == K_LEA && t->src == reg))))) {
				if (assumed(ti, c->ins[i].addr, reg))
					break;
				if (!w || w->nr_pending == TI_MAX_PENDING)
					return -1;
				w->pending[w->nr_pending++] =
					(struct pending){c->ins[j].addr, c->ins[i].addr, reg, w->delta};
				break;
			}
		}
	}
	return target;
}

/* The type a pointer-typed t points to, kept unstripped (a typedef names an anonymous
 * struct); NULL for void, char and functions: those name nothing. */
static const struct hm_type *pointee(const struct hm_type *t)
{
	const struct hm_type *s;

	t = hm_type_strip(t);
	if (!t || t->kind != HM_T_PTR || !t->ref)
		return NULL;
	s = hm_type_strip(t->ref);
	if (!s || !s->size || s->kind == HM_T_VOID || s->kind == HM_T_FUNC ||
	    s->kind == HM_T_FWD || (s->kind == HM_T_BASE && s->size == 1))
		return NULL;
	return t->ref;
}

static int var_in_reg(struct hm_ti *ti, uint64_t pc, int reg, struct hm_ti_ptr *out)
{
	const struct hm_ti_frame *f = hm_ti_frame_at(ti, pc);

	for (uint32_t i = 0; i < f->nr_vars; i++) {
		const struct hm_ti_var *v = &f->vars[i];
		const struct hm_type *p;

		if ((v->loc != HM_TI_LOC_REG && v->loc != HM_TI_LOC_VALUE) || v->reg != reg ||
		    !(p = pointee(v->type)))
			continue;
		out->pointee = p;
		out->delta = v->loc == HM_TI_LOC_VALUE ? -v->off : 0;
		out->approx = 0;
		out->global = 0;
		out->var = v->name;
		return 1;
	}
	return 0;
}

/* Without DWARF: at the function's first instruction reg holds a parameter, typed by
 * BTF (data_btf.c). */
static int entry_param(struct hm_ti *ti, const struct hm_ti_frame *f, int reg,
		       struct hm_ti_ptr *out)
{
	uint32_t idx;
	const struct hm_type *t = data_btf_entry_param(ti, f, reg, &idx), *p;

	if (!t || !(p = pointee(t)))
		return 0;
	out->pointee = p;
	out->delta = 0;
	out->approx = 0;
	out->global = 0;
	out->var = hm_arena_printf(&ti->arena, "%s() parameter %u", f->func, idx + 1);
	return 1;
}

static int64_t wrap(int64_t off, uint64_t size)
{
	int64_t m = off % (int64_t)size;

	return m < 0 ? m + (int64_t)size : m;
}

/* The pointer type of what sits at [base + imm] when base (rsp, rbp) addresses the
 * frame: a pointer variable kept in memory (-O0, volatile, spilled). */
static const struct hm_type *frame_slot(struct hm_ti *ti, uint64_t pc, int base, int64_t imm,
					const char **name)
{
	const struct hm_ti_frame *f = hm_ti_frame_at(ti, pc);

	for (uint32_t i = 0; i < f->nr_vars; i++) {
		const struct hm_ti_var *v = &f->vars[i];
		const struct hm_type *leaf;
		uint64_t within;
		int64_t start;
		char path[256];

		if (v->loc == HM_TI_LOC_FBREG && f->fb == HM_TI_FB_CFA && f->cfa_reg == base)
			start = f->cfa_off + v->off;
		else if (v->loc == HM_TI_LOC_FBREG && f->fb == HM_TI_FB_REG && f->fb_reg == base)
			start = f->fb_off + v->off;
		else if (v->loc == HM_TI_LOC_MEM && v->reg == base)
			start = v->off;
		else
			continue;
		if (imm < start || (uint64_t)(imm - start) >= v->size || !v->type)
			continue;
		*name = v->name;
		if (imm == start && pointee(v->type))
			return v->type;
		leaf = hm_layout_field_at(v->type, (uint64_t)(imm - start), path, sizeof(path),
					  &within);
		return leaf && !within && pointee(leaf) ? leaf : NULL;
	}
	return NULL;
}

/* reg = *(src + imm): a pointer variable in the frame, the pointer member of a typed
 * object, or a global pointer. */
static int load_pointee(struct hm_ti *ti, struct hm_decoder *dec, const struct ti_insn *p,
			int depth, struct hm_ti_ptr *out)
{
	const struct hm_type *holder, *leaf, *pt;
	struct hm_ti_ptr bp;
	uint64_t off, within;
	char path[256];

	if (depth >= TI_MAX_CHAIN)
		return -1;
	if ((p->src == HM_REG_SP || p->src == HM_REG_BP) && p->idx == HM_REG_NONE &&
	    (leaf = frame_slot(ti, p->addr, p->src, p->imm, &bp.var))) {
		out->pointee = pointee(leaf);
		out->delta = 0;
		out->approx = 0;
		out->global = 0;
		out->var = bp.var;
		return 0;
	}
	if (p->src == HM_REG_RIP && p->idx == HM_REG_NONE) {
		uint64_t at = p->addr + p->len + (uint64_t)p->imm;
		const struct hm_ti_static *s = hm_ti_static_at(ti, at, 0);

		if (!s || !s->type)
			return -1;
		holder = s->type;
		off = at - s->addr;
		bp.var = s->name;
	} else if (p->src >= 0 && p->src != HM_REG_RIP) {
		int64_t o;
		uint64_t size;

		if (track(ti, dec, p->addr, p->src, depth + 1, &bp) != 0)
			return -1;
		holder = bp.pointee;
		size = hm_type_strip(holder)->size;
		o = bp.delta + p->imm;
		if (bp.approx || p->idx != HM_REG_NONE || o < 0 || (uint64_t)o >= size)
			o = wrap(o, size);
		off = (uint64_t)o;
	} else {
		return -1;
	}
	leaf = hm_layout_field_at(holder, off, path, sizeof(path), &within);
	if (!leaf || within || !(pt = pointee(leaf)))
		return -1;
	out->pointee = pt;
	out->delta = 0;
	out->approx = 0;
	out->global = p->src == HM_REG_RIP && !path[0];
	out->var = path[0] ? hm_arena_printf(&ti->arena, "%s->%s", bp.var ? bp.var : "?", path)
			   : bp.var;	/* the pointer itself: a global `int *slots` */
	return 0;
}

/* Undoes p, which writes w->reg: 0 to go on walking, 1 when p loads the pointer (the
 * caller types the load), -1 when p computes something this cannot follow. */
static int undo(const struct ti_insn *p, struct walk *w)
{
	if (p->dst != w->reg)
		return -1;
	switch (p->kind) {
	case K_MOV:
		w->reg = p->src;
		break;
	case K_STEP:
		w->delta += p->imm;
		break;
	case K_LEA:
		w->approx |= p->idx != HM_REG_NONE;
		w->delta += p->imm;
		w->reg = p->src;
		break;
	case K_LOAD:
		return 1;
	case K_ADDREG:
		w->approx = 1;	/* the register was the pointer; the index is unknown */
		break;
	default:
		return -1;
	}
	return w->reg < 0 || w->reg == HM_REG_SP || w->reg == HM_REG_RIP ? -1 : 0;
}

static int same_type(const struct hm_type *a, const struct hm_type *b)
{
	a = hm_type_strip(a);
	b = hm_type_strip(b);
	return a == b || (a && b && a->kind == b->kind && a->size == b->size && a->name &&
			  b->name && !strcmp(a->name, b->name));
}

/* Each loop left pending: the register at its jump back holds the type found (at
 * another delta: a pointer stepped around the loop, so the result is approximate). */
static int check_pending(struct hm_ti *ti, struct hm_decoder *dec, int depth,
			 struct hm_ti_ptr *out, const struct walk *w)
{
	for (uint32_t k = 0; k < w->nr_pending; k++) {
		const struct pending *p = &w->pending[k];
		struct hm_ti_ptr alt;
		int rc = track_assuming(ti, dec, p->merge, p->reg, p->jump, depth, &alt);

		if (rc == 1)
			continue;	/* around the loop and back: nothing against it */
		if (rc != 0 || !same_type(alt.pointee, out->pointee))
			return -1;
		/* the walk's delta at pc = the merge point's + what it added since */
		if (alt.approx || alt.delta != out->delta + w->delta - p->delta)
			out->approx = 1;
	}
	return 0;
}

static int found(struct hm_ti *ti, struct hm_decoder *dec, int depth, struct hm_ti_ptr *out,
		 const struct walk *w)
{
	if (check_pending(ti, dec, depth, out, w) != 0)
		return -1;
	out->delta += w->delta;
	out->approx |= (uint8_t)w->approx;
	return 0;
}

/* ins[i] is reached only by jumps (the instruction before it is a jmp or ret): reg there
 * is what every jump to it brings, walked from each. 0 when they agree on a type (the
 * first's delta; another delta makes it approximate), 1 when no jump adds anything (each
 * comes around a loop being walked already), -1 otherwise. */
static int via_jumps(struct hm_ti *ti, struct hm_decoder *dec, const struct ti_code *c,
		     size_t i, int depth, struct hm_ti_ptr *out, const struct walk *w)
{
	struct hm_ti_ptr alt;
	int have = 0, rc = 0;

	if (assumed(ti, c->ins[i].addr, w->reg))
		return 1;
	for (size_t j = 0; j < c->n && rc == 0; j++) {
		if (!c->ins[j].jump || c->ins[j].target != c->ins[i].addr)
			continue;
		if ((rc = track_assuming(ti, dec, c->ins[i].addr, w->reg, c->ins[j].addr, depth,
					 &alt)) == 1) {
			rc = 0;
			continue;
		}
		if (rc != 0 || (have && !same_type(alt.pointee, out->pointee)))
			rc = -1;
		else if (!have)
			*out = alt, have = 1;
		else if (alt.approx || alt.delta != out->delta)
			out->approx = 1;
	}
	if (rc != 0)
		return -1;
	if (!have)
		return 1;
	return found(ti, dec, depth, out, w);	/* exact when every jump brings one delta */
}

/* The walk fell into merge points and then only came around a loop (via_jumps said 1):
 * the way in is one of the forward jumps to those merge points, the latest first. 0 with
 * *out (approximate: a merge), 1 when none adds anything. */
static int try_alts(struct hm_ti *ti, struct hm_decoder *dec, int depth, struct hm_ti_ptr *out,
		    const struct walk *w)
{
	for (uint32_t k = w->nr_alts; k-- > 0;) {
		const struct alt *a = &w->alts[k];
		struct walk back = *w;

		if (assumed(ti, a->merge, a->reg) ||
		    track_assuming(ti, dec, a->merge, a->reg, a->jump, depth, out) != 0)
			continue;
		back.delta = a->delta;
		back.nr_pending = a->nr_pending;
		back.approx = 1;
		return found(ti, dec, depth, out, &back);
	}
	return 1;
}

static int track(struct hm_ti *ti, struct hm_decoder *dec, uint64_t pc, int reg, int depth,
		 struct hm_ti_ptr *out)
{
	const struct hm_ti_frame *f = hm_ti_frame_at(ti, pc);
	struct walk w = {.reg = reg};
	struct ti_code *c;
	size_t i;
	int m;

	if (reg < 0 || reg >= TI_NR_REGS || reg == HM_REG_SP || reg == HM_REG_IP ||
	    reg == HM_REG_FLAGS)
		return -1;
	if (var_in_reg(ti, pc, reg, out))
		return 0;
	if (!f->func || !(c = ti_func_code(ti, dec, f)) || (i = ti_insn_index(c, pc)) == (size_t)-1)
		return -1;
	for (int steps = 0; i > 0 && steps < TI_MAX_STEPS; steps++) {
		const struct ti_insn *p = &c->ins[i - 1];

		if (ti->walk_budget == 0)
			return -1;
		ti->walk_budget--;
		if (p->uncond) {	/* ins[i] is reached only by jumps */
			m = via_jumps(ti, dec, c, i, depth, out, &w);
			return m == 1 ? try_alts(ti, dec, depth, out, &w) : m;
		}
		if ((m = merge_ok(ti, c, i, w.reg, &w)) < 0)
			return -1;
		w.approx |= m;
		if (p->call && ti_caller_saved(w.reg))
			return -1;
		/* reg = index + pointer: the pointer may be the added register. */
		if (p->kind == K_ADDREG && p->dst == w.reg && depth < TI_MAX_CHAIN &&
		    track(ti, dec, p->addr, p->src, depth + 1, out) == 0) {
			w.approx = 1;
			return found(ti, dec, depth, out, &w);
		}
		if ((p->written & (1u << w.reg)) && (m = undo(p, &w)) != 0) {
			if (m < 0 || load_pointee(ti, dec, p, depth, out) != 0)
				return -1;
			return found(ti, dec, depth, out, &w);
		}
		i--;
		if (var_in_reg(ti, c->ins[i].addr, w.reg, out))
			return found(ti, dec, depth, out, &w);
	}
	if (i == 0 && (m = merge_ok(ti, c, 0, w.reg, &w)) >= 0 && entry_param(ti, f, w.reg, out)) {
		w.approx |= m;
		return found(ti, dec, depth, out, &w);
	}
	return -1;
}

int hm_ti_reg_pointee(struct hm_ti *ti, struct hm_decoder *dec, uint64_t pc, int reg,
		      struct hm_ti_ptr *out)
{
	const struct hm_ti_frame *f;
	struct ti_regres *r;

	if (reg < 0 || reg >= TI_NR_REGS)
		return -1;
	f = hm_ti_frame_at(ti, pc);
	if (!f->priv)	/* a cache fill on the frame */
		((struct hm_ti_frame *)f)->priv =
			hm_arena_alloc(&ti->arena, TI_NR_REGS * sizeof(struct ti_regres));
	r = &((struct ti_regres *)f->priv)[reg];
	if (!r->state) {
		ti->walk_budget = TI_WALK_BUDGET;
		ti->nr_assume = 0;
		r->state = track(ti, dec, pc, reg, 0, &r->p) == 0 ? 1 : -1;
	}
	if (r->state < 0)
		return -1;
	*out = r->p;
	return 0;
}
