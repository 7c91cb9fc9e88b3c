/* Which instruction a sample is charged to and which address it touched: the decode
 * cache, the timer's skid model (resolve/skid.c), watchpoint traps, kernel per-CPU
 * offsets and boot-patched paravirt sites. resolve.c names what this finds. */
#include "resolve/resolve_int.h"

#include <stdlib.h>
#include <string.h>

#include "resolve/skid.h"
#include "core/oom.h"

/* The operand an access is about: the first explicit data operand. */
const struct hm_memop *data_operand(const struct hm_insn *in)
{
	return hm_decode_data_operand(in);
}

void apply_operand(struct hm_access *a, const struct hm_insn *in, const struct hm_memop *op)
{
	a->s.size = op->size;
	a->s.op = op->access == HM_ACC_LOAD ? HM_OP_LOAD : HM_OP_STORE;	/* RMW writes */
	a->locked = in->lock;
}

static uint64_t dhash(uint64_t ip, uint32_t space)
{
	uint64_t h = (ip ^ (uint64_t)space << 32) * 0x9e3779b97f4a7c15ull;

	return h ^ (h >> 29);
}

static void dcache_grow(struct hm_resolver *r)
{
	struct dent **old = r->dslots;
	size_t ocap = r->dcap;

	r->dcap = ocap ? 2 * ocap : 1024;
	if (!(r->dslots = calloc(r->dcap, sizeof(*r->dslots))))
		hm_oom();	/* as the arena does */
	for (size_t i = 0; i < ocap; i++) {
		size_t j;

		if (!old[i])
			continue;
		for (j = dhash(old[i]->ip, old[i]->space) & (r->dcap - 1); r->dslots[j];
		     j = (j + 1) & (r->dcap - 1))
			;
		r->dslots[j] = old[i];
	}
	free(old);
}

static struct dent *dcache(struct hm_resolver *r, const struct hm_sample *s)
{
	uint32_t space = s->kernel ? UINT32_MAX : s->pid;
	struct dent *e;
	size_t j;

	if (2 * (r->dlen + 1) > r->dcap)
		dcache_grow(r);
	for (j = dhash(s->ip, space) & (r->dcap - 1); (e = r->dslots[j]);
	     j = (j + 1) & (r->dcap - 1))
		if (e->ip == s->ip && e->space == space)
			return e;
	e = hm_arena_alloc(&r->names, sizeof(*e));
	e->ip = s->ip;
	e->space = space;
	r->dslots[j] = e;
	r->dlen++;
	return e;
}

int decode_at(struct hm_resolver *r, const struct hm_sample *s, struct hm_insn *in)
{
	struct dent *e = dcache(r, s);
	uint8_t buf[16];
	size_t n;

	if (!e->at) {
		if (!(n = hm_code_read(r->code, s->pid, s->ip, s->kernel, buf, sizeof(buf)))) {
			r->st.no_code++;
			r->st.kernel_no_code += s->kernel;
			return -1;
		}
		e->at = hm_decode_insn(r->dec, buf, n, s->ip, &e->in_at) == 0 ? 1 : -1;
	}
	if (e->at < 0)
		return -1;
	*in = e->in_at;
	return 0;
}

/* Decodes the instruction that ends at a->s.ip into in; 0 on success. */
static int insn_before(struct hm_resolver *r, const struct hm_access *a, struct hm_insn *in)
{
	struct dent *e = dcache(r, &a->s);
	struct hm_code_loc loc;
	size_t len, n;

	if (!e->before) {
		if (hm_code_lookup(r->code, a->s.pid, a->s.ip, a->s.kernel, &loc) ||
		    !loc.func_start || a->s.ip <= loc.func_start ||
		    a->s.ip - loc.func_start > MAX_FUNC_BYTES - 16)
			return -1;
		len = (size_t)(a->s.ip - loc.func_start);
		n = hm_code_read(r->code, a->s.pid, loc.func_start, a->s.kernel, r->fbuf, len);
		if (n < len)
			return -1;
		e->before = hm_decode_prev(r->dec, r->fbuf, n, loc.func_start, a->s.ip,
					   &e->in_before) ? -1 : 1;
	}
	if (e->before < 0)
		return -1;
	*in = e->in_before;
	return 0;
}

/* Whether a direct jump of the function lands on the sampled ip (decoded once per ip). */
static int ip_jump_target(struct hm_resolver *r, const struct hm_sample *s)
{
	struct dent *e = dcache(r, s);
	struct hm_code_loc loc;
	size_t n;

	if (!e->target) {
		if (hm_code_lookup(r->code, s->pid, s->ip, s->kernel, &loc) || !loc.func_start ||
		    !loc.func_size || loc.func_size > MAX_FUNC_BYTES)
			return 0;	/* unknown extent: taken as no jump target */
		n = hm_code_read(r->code, s->pid, loc.func_start, s->kernel, r->fbuf,
				 (size_t)loc.func_size);
		e->target = n && hm_decode_jumps_to(r->dec, r->fbuf, n, loc.func_start, s->ip)
			? 1 : -1;
	}
	return e->target > 0;
}

static void count_skid(struct hm_resolve_stats *st, const struct hm_skid_pick *p)
{
	st->skid_jump_target += p->jump_target;
	if (p->rule == HM_SKID_AT_IP) {
		st->at_ip++;
		return;
	}
	st->skid++;
	st->skid_over += p->over;
	st->skid_lost += p->rule == HM_SKID_LOST;
	if (p->op->access == HM_ACC_STORE)
		st->skid_store++;
	else
		st->skid_load++;
}

/* Timer: the charged instruction (resolve/skid.h) in *in and its operand; *before set
 * when that is the instruction before ip, whose registers are those after it ran. The
 * choice depends on ip alone once the instruction there decoded (a failed read of the
 * code is counted on every sample, so then it is made each time): kept in its decode
 * cache entry, a repeat costs one lookup. */
static const struct hm_memop *timer_pick(struct hm_resolver *r, struct hm_access *a,
					 struct hm_insn *in, int *before)
{
	struct dent *e = dcache(r, &a->s);
	struct hm_insn at, prev;
	struct hm_skid_pick p;
	int have_at, have_prev;

	if (e->pick) {
		p = (struct hm_skid_pick){ .rule = (enum hm_skid_rule)(e->pick - 1),
					   .over = e->pick_over, .jump_target = e->pick_jump };
		p.in = p.rule == HM_SKID_AT_IP ? &e->in_at : &e->in_before;
	} else {
		have_at = decode_at(r, &a->s, &at) == 0;
		have_prev = insn_before(r, a, &prev) == 0;
		if (!have_at && !have_prev)
			return NULL;
		p = hm_skid_choose(have_at ? &at : NULL, have_prev ? &prev : NULL,
				   have_prev && data_operand(&prev) &&
				   ip_jump_target(r, &a->s));
		if (have_at) {	/* e->in_at and e->in_before hold what at and prev do */
			e->pick = (int8_t)(p.rule + 1);
			e->pick_over = p.over;
			e->pick_jump = p.jump_target;
		}
	}
	if (p.rule == HM_SKID_NONE) {
		r->st.skid_jump_target += p.jump_target;
		r->st.not_memory++;
		return NULL;
	}
	*in = *p.in;
	p.op = data_operand(in);	/* the charged instruction's, as hm_skid_choose found it */
	count_skid(&r->st, &p);
	*before = p.rule != HM_SKID_AT_IP;
	if (*before)
		a->s.ip = in->addr;
	return p.op;
}

/* A kernel %gs: operand addresses the running CPU's per-CPU area: ea is an offset into
 * it. Where per-CPU data is linked at 0 (x86-64 6.1 does so) the boot relocates
 * rip-relative per-CPU references by minus the KASLR shift (they name offsets, not
 * addresses), which the vmlinux's bytes lack: take that shift off. Such an ea is below
 * the kernel half; kernels that link per-CPU data among the image's data give the
 * variable's KASLR-moved address, kernel half, which needs nothing. */
static void percpu_offset(const struct hm_resolver *r, struct hm_access *a,
			  const struct hm_memop *op, uint64_t *ea)
{
	a->percpu = 1;
	if (op->base == HM_REG_RIP && (int64_t)*ea >= 0)
		*ea -= r->kdisk_bias;
}

#define SPIN_SPAN 160	/* a spin-wait loop's body: load, checks, pause, jump back */

static int is_pause(const uint8_t *b, const struct hm_insn *in)
{
	return in->len == 2 && b[0] == 0xf3 && b[1] == 0x90;	/* pause: cpu_relax() */
}

/* Whether [from, to) decodes, from its first byte, into instructions among which is a
 * pause. */
static int pause_between(struct hm_resolver *r, const struct hm_sample *s, uint64_t from,
			 uint64_t to)
{
	uint8_t buf[SPIN_SPAN];
	size_t n = hm_code_read(r->code, s->pid, from, s->kernel, buf, (size_t)(to - from));

	for (size_t off = 0; off < n;) {
		struct hm_insn in;

		if (hm_decode_insn(r->dec, buf + off, n - off, from + off, &in) || !in.len)
			return 0;
		if (is_pause(buf + off, &in))
			return 1;
		off += in.len;
	}
	return 0;
}

/* A load at `at` is a spin-wait's when, within SPIN_SPAN bytes and 32 instructions on
 * (no return between; calls may be, such as rwsem_spin_on_owner's paravirt
 * vcpu_is_preempted), a jump goes back to at or before it, and the loop so closed holds
 * a pause: mutex_spin_on_owner, a queued spinlock's wait, csd_lock_wait, a user
 * spinlock. Such a reader waits for another CPU to store to the word. */
static int spin_loop(struct hm_resolver *r, const struct hm_sample *s, uint64_t at)
{
	uint8_t buf[SPIN_SPAN + 16];
	size_t n = hm_code_read(r->code, s->pid, at, s->kernel, buf, sizeof(buf));
	int pause = 0;

	for (size_t off = 0, k = 0; off < n && k < 32; k++) {
		struct hm_insn in;

		if (hm_decode_insn(r->dec, buf + off, n - off, at + off, &in) || !in.len ||
		    in.is_ret)
			return 0;
		pause |= is_pause(buf + off, &in);
		/* the first jump back may be a retry, the pause after it (test; je retry;
		 * pause; jmp load): each jump back closes a loop to look in */
		if (in.is_jump && in.target && in.target <= at && at - in.target <= SPIN_SPAN &&
		    (pause || pause_between(r, s, in.target, at)))
			return 1;
		off += in.len;
	}
	return 0;
}

static void spin_mark(struct hm_resolver *r, struct hm_access *a, const struct hm_insn *in)
{
	struct dent *e;

	if (a->s.op != HM_OP_LOAD)
		return;
	e = dcache(r, &a->s);
	if (!e->spin)
		e->spin = in->addr == a->s.ip && spin_loop(r, &a->s, in->addr) ? 1 : -1;
	a->spin = e->spin > 0;
	r->st.spin += a->spin;
}

#define REP_MAX_BYTES 4096u	/* a rep string access is credited at most a page ahead */
#define FLAGS_DF (1u << 10)

/* A rep movs/stos interrupted by the timer stays at ip with rcx the elements left: the
 * access goes on over [ea, ea + rcx * size) (forward, DF clear), which is what it is
 * credited with (resolve_wide.c splits it per member). Not when the rep instruction is
 * the one before ip: then it has finished. */
static void rep_size(struct hm_resolver *r, const struct hm_perf_regs *regs,
		     const struct hm_insn *in, const struct hm_memop *op, struct hm_access *a)
{
	uint64_t cx, fl;

	if (!in->rep || !op->size || hm_decode_reg(regs->mask, regs->regs, HM_REG_CX, &cx) ||
	    cx < 2 || (hm_decode_reg(regs->mask, regs->regs, HM_REG_FLAGS, &fl) == 0 &&
			(fl & FLAGS_DF)))
		return;
	a->s.size = cx > REP_MAX_BYTES / op->size ? REP_MAX_BYTES / op->size * op->size
						    : (uint32_t)cx * op->size;
	r->st.rep_sized++;
}

/* Timer: the registers are those before the instruction at ip ran, after the one before
 * it; either way an operand whose address registers were not overwritten gets its exact
 * address from them. */
const struct hm_memop *timer_addr(struct hm_resolver *r, const struct hm_perf_event *ev,
					 struct hm_access *a, struct hm_insn *in, int *before)
{
	const struct hm_perf_regs *regs = a->s.kernel ? &ev->sample.regs_intr
						       : &ev->sample.regs_user;
	const struct hm_memop *op;
	uint64_t ea;
	int needs_seg = 0, patch;

	if (!(op = timer_pick(r, a, in, before)))
		return NULL;
	if (a->s.kernel && ((patch = hm_code_kernel_patched(r->code, in->addr)) ||
			    (patch = hm_code_kernel_relocated(r->code, in->addr, in->len)))) {
		if (patch == HM_PATCH_ALTERNATIVE)
			r->st.kernel_alternative++;
		else if (patch == HM_PATCH_RELOC)
			r->st.kernel_reloc++;
		else
			r->st.kernel_patched++;
		return NULL;
	}
	apply_operand(a, in, op);
	spin_mark(r, a, in);
	if (*before && !hm_decode_keeps_address(in, op))
		return op;	/* HM_SKID_LOST: counted there, named without an address */
	if (!regs->abi || hm_decode_ea(in, op, regs->mask, regs->regs, 0, 0, &ea, &needs_seg)) {
		if (!needs_seg)
			r->st.no_regs++;
		return op;	/* the data symbolizer may still name it (TLS by offset) */
	}
	if (needs_seg && a->s.kernel && op->segment == HM_SEG_GS)
		percpu_offset(r, a, op, &ea);
	a->s.addr = ea;
	if (!*before)
		rep_size(r, regs, in, op, a);
	return op;
}

/* A watch sample's address is the breakpoint's (bp_addr), the start of the watched
 * range. The access may be further in (--watch ADDR/8 over a 4-byte field at +4): its
 * exact address comes from the trap's registers when the access kept its base and index,
 * and is taken when it overlaps the range. */
static void watch_addr(const struct hm_perf_event *ev, struct hm_access *a,
		       const struct hm_insn *in, const struct hm_memop *op)
{
	const struct hm_perf_regs *regs = a->s.kernel ? &ev->sample.regs_intr
						       : &ev->sample.regs_user;
	uint64_t ea, bp = a->s.addr, len = ev->attr ? ev->attr->attr.bp_len : 0;
	int needs_seg = 0;

	if (!regs->abi || !len || (op->base >= 0 && (in->regs_written >> op->base & 1)) ||
	    (op->index >= 0 && (in->regs_written >> op->index & 1)) ||
	    hm_decode_ea(in, op, regs->mask, regs->regs, 0, 0, &ea, &needs_seg) || needs_seg)
		return;
	if (ea < bp + len && bp < ea + (op->size ? op->size : 1))
		a->s.addr = ea;
}

/* Watch: the trap ip follows the access; decode the function up to it. */
const struct hm_memop *watch_site(struct hm_resolver *r, const struct hm_perf_event *ev,
					 struct hm_access *a, struct hm_insn *in)
{
	const struct hm_memop *op;

	if (insn_before(r, a, in)) {
		r->st.watch_no_insn++;
		return NULL;
	}
	a->s.ip = in->addr;	/* name the accessing instruction, not the next one */
	if (!(op = data_operand(in))) {
		r->st.not_memory++;	/* the trap follows no access: bad ip or bad data */
		return NULL;
	}
	apply_operand(a, in, op);
	watch_addr(ev, a, in, op);
	return op;
}
