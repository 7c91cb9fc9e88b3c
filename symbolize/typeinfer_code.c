/* typeinfer.c's functions decoded: each instruction classified once (a register copy, a
 * pointer load, step or lea, a static pointer stored) for the backward walk. */
#include "symbolize/typeinfer_int.h"
#include "core/oom.h"

#include <stdlib.h>
#include <string.h>

#define TI_MAX_FUNC (1u << 16)	/* bytes of a function decoded */

static int reg_named(const char *s, size_t len)
{
	for (int r = HM_REG_AX; r <= HM_REG_R15; r++) {
		const char *name = hm_decode_reg_name(r);

		if (strlen(name) == len && !strncmp(s, name, len) && r != HM_REG_FLAGS)
			return r;
	}
	return HM_REG_NONE;
}

/* "[rdi + rsi*8 - 0x10]" as capstone prints it. */
static int parse_mem(const char *s, int *base, int *idx, int64_t *disp)
{
	int sign = 1;

	*base = *idx = HM_REG_NONE;
	*disp = 0;
	if (!(s = strchr(s, '[')))
		return -1;
	for (s++; *s && *s != ']';) {
		char *end;
		size_t len;
		int r;

		if (*s == ' ' || *s == '+' || *s == '-') {
			sign = *s == '-' ? -1 : *s == '+' ? 1 : sign;
			s++;
			continue;
		}
		if (*s >= '0' && *s <= '9') {
			*disp += sign * (int64_t)strtoull(s, &end, 0);
			s = end;
			continue;
		}
		len = strcspn(s, " *]+-");
		if ((r = reg_named(s, len)) == HM_REG_NONE && strncmp(s, "rip", 3))
			return -1;
		s += len;
		if (r == HM_REG_NONE)
			r = HM_REG_RIP;
		if (*s == '*') {
			strtoul(s + 1, &end, 0);
			s = end;
			*idx = r;
		} else if (*base == HM_REG_NONE) {
			*base = r;
		} else {
			*idx = r;
		}
	}
	return 0;
}

static void classify_insn(struct ti_insn *t, const struct hm_insn *in)
{
	size_t ml = strcspn(in->text, " ");
	const char *ops = in->text[ml] ? in->text + ml + 1 : in->text + ml;
	const char *second = strstr(ops, ", ");
	const struct hm_memop *m = &in->mem[0];
	int64_t v;
	char *end;

	t->addr = in->addr;
	t->len = in->len;
	t->written = in->regs_written;
	t->jump = in->is_jump;
	t->call = in->is_call;
	t->target = in->target;
	t->uncond = in->is_ret || (ml == 3 && !strncmp(in->text, "jmp", 3));
	t->endbr = !strncmp(in->text, "endbr", 5);
	t->kind = K_OTHER;
	t->dst = t->src = t->idx = HM_REG_NONE;
	/* "mov qword ptr [rip + d], reg": a static pointer set from reg (lazy init) */
	if (ml == 3 && !strncmp(in->text, "mov", 3) && in->nr_mem == 1 &&
	    m->access == HM_ACC_STORE && m->size == 8 && m->base == HM_REG_RIP &&
	    m->index == HM_REG_NONE && second &&
	    (v = reg_named(second + 2, strlen(second + 2))) != HM_REG_NONE) {
		t->kind = K_STORE_STATIC;
		t->src = (int8_t)v;
		t->imm = m->disp;
		return;
	}
	if (__builtin_popcount(in->regs_written) != 1)
		return;
	t->dst = (int8_t)__builtin_ctz(in->regs_written);
	/* Only writes of the whole 64-bit register keep a pointer. */
	if (strncmp(ops, hm_decode_reg_name(t->dst), strcspn(ops, ",")) ||
	    strcspn(ops, ",") != strlen(hm_decode_reg_name(t->dst)))
		return;
	if (in->mov_src != HM_REG_NONE) {
		t->kind = K_MOV;
		t->src = (int8_t)in->mov_src;
	} else if (ml == 3 && !strncmp(in->text, "mov", 3) && in->nr_mem == 1 &&
		   m->access == HM_ACC_LOAD && m->size == 8 && m->segment == HM_SEG_NONE) {
		t->kind = K_LOAD;
		t->src = (int8_t)m->base;
		t->idx = (int8_t)m->index;
		t->imm = m->disp;
	} else if (ml == 3 && (!strncmp(in->text, "add", 3) || !strncmp(in->text, "sub", 3)) &&
		   !in->nr_mem && second && (v = (int64_t)strtoll(second + 2, &end, 0), !*end)) {
		t->kind = K_STEP;
		t->imm = in->text[0] == 's' ? -v : v;
	} else if (ml == 3 && !strncmp(in->text, "add", 3) && !in->nr_mem && second &&
		   (v = reg_named(second + 2, strlen(second + 2))) != HM_REG_NONE) {
		t->kind = K_ADDREG;	/* base + scaled index computed by hand */
		t->src = (int8_t)v;
	} else if (ml == 3 && (!strncmp(in->text, "inc", 3) || !strncmp(in->text, "dec", 3)) &&
		   !in->nr_mem) {
		t->kind = K_STEP;
		t->imm = in->text[0] == 'd' ? -1 : 1;
	} else if (ml == 3 && !strncmp(in->text, "lea", 3)) {
		int base, idx;

		if (parse_mem(ops, &base, &idx, &v) == 0 && base != HM_REG_NONE) {
			t->kind = K_LEA;
			t->src = (int8_t)base;
			t->idx = (int8_t)idx;
			t->imm = v;
		}
	}
}

struct ti_code *ti_func_code(struct hm_ti *ti, struct hm_decoder *dec,
				 const struct hm_ti_frame *f)
{
	struct ti_code *c = hm_map64_get(&ti->funcs, f->lo + 1);
	const uint8_t *bytes;
	size_t avail, len, off = 0, cap = 0;
	struct ti_insn *tmp = NULL;

	if (c)
		return c;
	c = hm_arena_alloc(&ti->arena, sizeof(*c));
	hm_map64_put(&ti->funcs, f->lo + 1, c);
	if (!(bytes = hm_ti_bytes(ti, f->lo, &avail)))
		return c;
	len = f->hi - f->lo < avail ? (size_t)(f->hi - f->lo) : avail;
	if (len > TI_MAX_FUNC)
		len = TI_MAX_FUNC;
	while (off < len) {
		struct hm_insn in;

		if (hm_decode_insn(dec, bytes + off, len - off, f->lo + off, &in) != 0)
			break;
		if (c->n == cap) {
			cap = cap ? cap * 2 : 64;
			if (!(tmp = realloc(tmp, cap * sizeof(*tmp))))
				hm_oom();
		}
		classify_insn(&tmp[c->n++], &in);
		off += in.len;
	}
	/* A call before anything else is the tracing hook (-pg -mfentry, the kernel's
	 * __fentry__): it keeps the argument registers, which the body reads after it. */
	for (size_t k = 0; k < c->n && k < 2 && (k == 0 || tmp[k - 1].endbr); k++)
		if (tmp[k].call)
			tmp[k].call = 0;
	if (c->n) {
		c->ins = hm_arena_alloc(&ti->arena, c->n * sizeof(*c->ins));
		memcpy(c->ins, tmp, c->n * sizeof(*c->ins));
	}
	free(tmp);
	return c;
}

size_t ti_insn_index(const struct ti_code *c, uint64_t pc)
{
	size_t lo = 0, hi = c->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->ins[mid].addr == pc)
			return mid;
		if (c->ins[mid].addr < pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (size_t)-1;
}

int ti_caller_saved(int reg)
{
	return reg == HM_REG_AX || reg == HM_REG_CX || reg == HM_REG_DX || reg == HM_REG_SI ||
	       reg == HM_REG_DI || (reg >= HM_REG_R8 && reg <= HM_REG_R11);
}

/* The lazy-init path of a static pointer: `if (!table) table = calloc(..);` then
 * table[i]: the path that jumps back from j (an unconditional jmp after the code it
 * skipped) stored reg to a static pointer just before, so reg holds that pointer on
 * both paths; the fallthrough path names its type. */
int ti_stored_static(const struct ti_code *c, size_t i, size_t j, int reg)
{
	if (j <= i || !c->ins[j].uncond)
		return 0;
	for (size_t k = j; k > i && j - k < 8; k--) {
		const struct ti_insn *t = &c->ins[k - 1];

		if (t->kind == K_STORE_STATIC && t->src == reg)
			return 1;
		if ((t->written & (1u << reg)) || t->jump || t->uncond || t->call)
			return 0;
	}
	return 0;
}
