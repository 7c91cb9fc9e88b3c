/* The sampled kernel frame's locals without DWARF (the guest's report: kcore and BTF):
 * a local struct whose address the function passes to a callee (`lea rdi, [rsp + 0x28];
 * call tomoyo_init_request_info`) has the type BTF gives that callee's parameter. The
 * function is decoded once, forward, keeping the stack pointer's depth at each
 * instruction (push, pop, sub/add rsp): an access at rsp + X in the sample is then
 * matched to the slots at their depth. An instruction that sets rsp otherwise (and rsp,
 * -16 realigning the frame; lea rsp, [rbp - 0x20] leaving it) starts a new epoch: depths
 * count from there, and a slot matches only samples of its own epoch (the epoch is the
 * depth's upper 32 bits, so that another epoch's slot lies 4 GiB off).
 * A pointer the function spills to its frame (`mov [rsp + 0x10], rbx`, rbx an inode *
 * by the register walk, symbolize/typeinfer.c) makes that slot a local of the pointer's
 * type, as DWARF would name it: `struct inode * (stack of __ext4_new_inode)`, from that
 * store to the next one into the slot. */
#include "symbolize/data_int.h"
#include "core/oom.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KS_MAX_INSNS 4096		/* instructions of one function decoded */

struct ks_slot {
	int64_t at;			/* entry rsp - this much is the object's first byte
					 * (with the epoch, as ks_func.depth) */
	const struct hm_type *type;
	uint32_t from, to;		/* the instructions [from, to) it is valid at: the
					 * whole function, or a spill's until the next store */
};

struct ks_func {
	const char *name;
	size_t n, nr_slots;
	uint64_t *addr;			/* each instruction's address */
	int64_t *depth;			/* bytes below the entry rsp (of its epoch) before
					 * it runs, plus epoch << 32 */
	struct ks_slot *slots;
};

static const int ARG_REGS[] = {HM_REG_DI, HM_REG_SI, HM_REG_DX, HM_REG_CX, HM_REG_R8,
			       HM_REG_R9};

static int op_is(const struct hm_insn *in, const char *mn)
{
	size_t n = strlen(mn);

	return !strncmp(in->text, mn, n) && (in->text[n] == ' ' || !in->text[n]);
}

/* The change of depth in, or 0 with *lost when in sets rsp in a way not followed. */
static int32_t sp_step(const struct hm_insn *in, int *lost)
{
	const char *rsp = strstr(in->text, "rsp, ");
	long long v;
	char *end;

	if (op_is(in, "push"))
		return 8;
	if (op_is(in, "pop"))
		return -8;
	if (!(in->regs_written & (1u << HM_REG_SP)) || in->is_call || in->is_ret)
		return 0;
	if (rsp && rsp == in->text + 4 && (op_is(in, "sub") || op_is(in, "add"))) {
		v = strtoll(rsp + 5, &end, 0);
		if (!*end)
			return (int32_t)(op_is(in, "sub") ? v : -v);
	}
	*lost = 1;
	return 0;
}

/* The general register named s ("rbx"), or HM_REG_NONE. */
static int reg_by_name(const char *s)
{
	for (int r = HM_REG_AX; r <= HM_REG_R15; r++)
		if (!strcmp(s, hm_decode_reg_name(r)))
			return r;
	return HM_REG_NONE;
}

/* "lea REG, [rsp + Y]" or "mov REG, rsp": REG, and Y; else HM_REG_NONE. */
static int sp_addr(const struct hm_insn *in, int64_t *y)
{
	char reg[8], sign = '+';
	long long v = 0;
	int n = 0, len = (int)strlen(in->text);

	*y = 0;
	if (op_is(in, "mov") && in->mov_src == HM_REG_SP && __builtin_popcount(in->regs_written) == 1)
		return __builtin_ctz(in->regs_written);
	if (!op_is(in, "lea"))
		return HM_REG_NONE;
	/* the whole text matched (%n): not [rsp + rax*8] */
	if (sscanf(in->text, "lea %7[a-z0-9], [rsp %c %lli]%n", reg, &sign, &v, &n) != 3 ||
	    n != len || (sign != '+' && sign != '-')) {
		n = 0;
		sign = '+';
		v = 0;
		if (sscanf(in->text, "lea %7[a-z0-9], [rsp]%n", reg, &n) != 1 || n != len)
			return HM_REG_NONE;
	}
	*y = sign == '-' ? -v : v;
	return reg_by_name(reg);
}

/* The pointee of parameter idx of the function at target (BTF): an aggregate, a pointer
 * (`void **p`: the caller's `void *object` is passed by address) or a scalar wider than
 * a byte (`unsigned long *`: a count the callee writes back); NULL for void and char,
 * which name nothing. */
static const struct hm_type *param_pointee(struct hm_ti *ti, uint64_t target, int idx)
{
	struct hm_ti_frame f = {0};
	const struct hm_type *ft, *p, *r;

	data_code_frame(ti, &f, target);
	if (!f.func || f.lo != target || !(ft = hm_layout_func_type(ti->lay, f.func)) ||
	    (uint32_t)idx >= ft->nr_params || !(p = hm_type_strip(ft->params[idx])) ||
	    p->kind != HM_T_PTR || !p->ref || !(r = hm_type_strip(p->ref)) ||
	    (!hm_type_is_aggregate(r) && r->kind != HM_T_PTR &&
	     !((r->kind == HM_T_BASE || r->kind == HM_T_ENUM) && r->size > 1)))
		return NULL;
	return p->ref;
}

/* The pointer type to pointee, one per pointee. */
static const struct hm_type *ptr_to(struct hm_data *d, const struct hm_type *pointee)
{
	struct hm_type *t = hm_map64_get(&d->kptr, (uint64_t)(uintptr_t)pointee);

	if (!t) {
		t = hm_arena_alloc(&d->arena, sizeof(*t));
		memset(t, 0, sizeof(*t));
		t->kind = HM_T_PTR;
		t->size = 8;
		t->ref = pointee;
		t->loaded = 1;
		hm_map64_put(&d->kptr, (uint64_t)(uintptr_t)pointee, t);
	}
	return t;
}

/* A store to the frame other than a push: its first byte as a slot (entry rsp - at) and
 * its size; 0 if in is none. */
static uint32_t frame_store(const struct ks_func *k, size_t i, const struct hm_insn *in,
			    int64_t *at)
{
	const struct hm_memop *m = in->nr_mem ? &in->mem[0] : NULL;

	if (!m || m->implicit || m->base != HM_REG_SP || m->index != HM_REG_NONE ||
	    m->segment != HM_SEG_NONE ||
	    (m->access != HM_ACC_STORE && m->access != HM_ACC_RMW))
		return 0;
	*at = k->depth[i] - m->disp;
	return m->size ? m->size : 1;
}

/* "mov qword ptr [rsp + Y], REG" at ins[i]: REG (a 64-bit register), and the slot as
 * frame_store gives it; else HM_REG_NONE. */
static int sp_spill(const struct ks_func *k, size_t i, const struct hm_insn *in, int64_t *at)
{
	const char *src = strrchr(in->text, ' ');

	if (!op_is(in, "mov") || frame_store(k, i, in, at) != 8 ||
	    in->mem[0].access != HM_ACC_STORE || !src)
		return HM_REG_NONE;
	return reg_by_name(src + 1);
}

static void add_slot(struct ks_slot **v, size_t *n, int64_t at, const struct hm_type *t,
		     size_t from, size_t to)
{
	if (!(*v = realloc(*v, (*n + 1) * sizeof(**v))))
		hm_oom();
	(*v)[(*n)++] = (struct ks_slot){at, t, (uint32_t)from, (uint32_t)to};
}

/* The pointers spilled to the frame, each slot typed by the register stored (above)
 * from the spill to the next store into it, in code order: the compiler reuses a slot
 * for other values in other parts of the function (ext4_mark_iloc_dirty keeps an inode *
 * at [rsp + 8], later an int). */
static void spills(struct hm_data *d, struct hm_ti *ti, struct ks_func *k,
		   const struct hm_insn *ins, struct ks_slot **tmp)
{
	for (size_t i = 0; i < k->n; i++) {
		struct hm_ti_ptr p;
		int64_t at, at2;
		int r = sp_spill(k, i, &ins[i], &at);
		size_t j;

		if (r == HM_REG_NONE || hm_ti_reg_pointee(ti, d->dec, ins[i].addr, r, &p) != 0 ||
		    p.delta || p.approx || !p.pointee)
			continue;
		for (j = i + 1; j < k->n; j++) {	/* bytes [entry - at2, + size) */
			uint32_t size = frame_store(k, j, &ins[j], &at2);

			if (size && at2 > at - 8 && at2 - (int64_t)size < at)
				break;
		}
		add_slot(tmp, &k->nr_slots, at, ptr_to(d, p.pointee), i, j);
	}
}

/* Registers holding a stack address (entry rsp - at), followed forward: set by lea or
 * mov from rsp, copied by mov, kept across calls in callee-saved registers; at each
 * direct call, an argument register holding one types that slot. */
static void slots(struct hm_data *d, struct hm_ti *ti, struct ks_func *k,
		  const struct hm_insn *ins)
{
	const uint32_t clobbered = 1u << HM_REG_AX | 1u << HM_REG_CX | 1u << HM_REG_DX |
				   1u << HM_REG_SI | 1u << HM_REG_DI | 1u << HM_REG_R8 |
				   1u << HM_REG_R9 | 1u << HM_REG_R10 | 1u << HM_REG_R11;
	struct ks_slot *tmp = NULL;
	int64_t at[HM_REG_R15 + 1];
	uint32_t live = 0;

	for (size_t i = 0; i < k->n; i++) {
		const struct hm_insn *in = &ins[i];
		int64_t y;
		int r = sp_addr(in, &y);

		if (in->is_call) {
			for (int a = 0; a < 6 && in->target; a++) {
				const struct hm_type *t;

				if (!(live & 1u << ARG_REGS[a]) ||
				    !(t = param_pointee(ti, in->target, a)))
					continue;
				add_slot(&tmp, &k->nr_slots, at[ARG_REGS[a]], t, 0, k->n);
			}
			live &= ~clobbered;
		} else if (r != HM_REG_NONE && r <= HM_REG_R15) {
			at[r] = k->depth[i] - y;
			live |= 1u << r;
		} else if (in->mov_src >= 0 && in->mov_src <= HM_REG_R15 &&
			   live & 1u << in->mov_src && __builtin_popcount(in->regs_written) == 1) {
			r = __builtin_ctz(in->regs_written);
			at[r] = at[in->mov_src];
			live |= 1u << r;
		} else {
			live &= ~in->regs_written;
		}
		if (in->is_ret || (in->is_jump && op_is(in, "jmp")))
			live = 0;
	}
	spills(d, ti, k, ins, &tmp);
	if (k->nr_slots) {
		k->slots = hm_arena_alloc(&d->arena, k->nr_slots * sizeof(*tmp));
		memcpy(k->slots, tmp, k->nr_slots * sizeof(*tmp));
	}
	free(tmp);
}

static struct ks_func *decode(struct hm_data *d, struct hm_ti *ti, uint64_t lo, uint64_t hi,
			      const char *name)
{
	struct ks_func *k = hm_arena_alloc(&d->arena, sizeof(*k));
	struct hm_insn *ins = calloc(KS_MAX_INSNS, sizeof(*ins));
	struct hm_map64 depth_at;	/* jump target + 1 -> depth + 1 (its first known) */
	size_t avail;
	const uint8_t *code = data_code_bytes(ti, lo, &avail);
	int64_t dep = 0, body = 0, epoch = 0;
	int after_jump = 0;

	memset(k, 0, sizeof(*k));
	k->name = name;
	if (!ins || !code)
		goto out;
	hm_map64_init(&depth_at);
	k->addr = hm_arena_alloc(&d->arena, KS_MAX_INSNS * sizeof(*k->addr));
	k->depth = hm_arena_alloc(&d->arena, KS_MAX_INSNS * sizeof(*k->depth));
	for (uint64_t at = lo; at < hi && at - lo < avail && k->n < KS_MAX_INSNS;) {
		struct hm_insn *in = &ins[k->n];
		void *known = hm_map64_get(&depth_at, at + 1);
		int lost = 0;

		if (hm_decode_insn(d->dec, code + (at - lo), avail - (size_t)(at - lo), at, in))
			break;
		if (known)
			dep = (int64_t)(intptr_t)known - 1;
		else if (after_jump)
			dep = body;	/* after a ret or jmp: the depth of the calls, likely */
		k->addr[k->n] = at;
		k->depth[k->n++] = dep;
		if (in->is_jump && in->target > at && in->target < hi &&
		    !hm_map64_get(&depth_at, in->target + 1))
			hm_map64_put(&depth_at, in->target + 1, (void *)(intptr_t)(dep + 1));
		after_jump = in->is_ret || (in->is_jump && op_is(in, "jmp"));
		if (in->is_call)
			body = dep;
		dep += sp_step(in, &lost);
		if (lost)
			dep = ++epoch << 32;
		at += in->len;
	}
	hm_map64_free(&depth_at);
	slots(d, ti, k, ins);
out:
	free(ins);
	return k;
}

static const struct ks_func *func_at(struct hm_data *d, struct hm_ti *ti, uint64_t ip)
{
	struct hm_ti_frame f = {0};
	struct ks_func *k;

	data_code_frame(ti, &f, ip);
	if (!f.func || f.hi <= f.lo)
		return NULL;
	if (!(k = hm_map64_get(&d->kstack, f.lo + 1))) {
		k = decode(d, ti, f.lo, f.hi, f.func);
		hm_map64_put(&d->kstack, f.lo + 1, k);
	}
	return k;
}

int data_kstack(struct hm_data *d, const struct data_image *img, uint64_t ip, uint64_t addr,
		const struct data_regs *r, struct hm_data_obj *out)
{
	struct hm_ti *ti = img->mod->ti;
	const struct ks_func *k;
	uint64_t sp, obj;
	size_t lo = 0, hi;
	char label[512];

	if (!ti || !ti->has_code || !ti->lay || !r->regs ||
	    hm_decode_reg(r->mask, r->regs, HM_REG_SP, &sp) != 0 || !(k = func_at(d, ti, ip)) ||
	    !k->nr_slots)
		return -1;
	for (hi = k->n; lo < hi;) {	/* the instruction at ip */
		size_t mid = lo + (hi - lo) / 2;

		if (k->addr[mid] < ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == k->n || k->addr[lo] != ip)
		return -1;
	for (size_t i = 0; i < k->nr_slots; i++) {
		const struct hm_type *t = hm_type_strip(k->slots[i].type);

		if (lo < k->slots[i].from || lo >= k->slots[i].to)
			continue;
		/* entry rsp = sp + depth(ip); the slot at entry rsp - at */
		obj = sp + (uint64_t)k->depth[lo] - (uint64_t)k->slots[i].at;
		if (addr < obj || addr - obj >= t->size)
			continue;
		snprintf(label, sizeof(label), "%s (stack of %s)",
			 data_type_label(d, k->slots[i].type), k->name);
		out->method = HM_M_STACK;
		out->object = data_intern(d, label);
		out->type = t;
		out->base = obj;
		out->offset = addr - obj;
		out->prefix = data_bare_name(d, k->slots[i].type);
		out->field = data_field(d, out->prefix, t, addr - obj);
		out->module = img->mod->path;
		d->st.kernel_stack_args++;
		return 0;
	}
	return -1;
}
