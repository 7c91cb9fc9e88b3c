/* The order in which an address is named: a thread-local when the operand is
 * fs-relative; a global or static when a module's segment holds the address; a variable
 * of the sampled frame when it is on the stack; otherwise the type the dereferenced
 * register points to (heap objects, and stack objects of callers). The kernel likewise,
 * with per-cpu variables for thread-locals. Plus --stats. */
#include "symbolize/data_int.h"

#include <stdlib.h>
#include <string.h>
#include "core/sort.h"
#include "core/oom.h"
#include "symbolize/code.h"

#define STACK_RED_ZONE 128		/* x86-64 psABI: leaf functions use [rsp - 128, rsp) */
#define STACK_GUESS (8ull << 20)	/* stack size assumed when no mapping holds rsp */

const char *hm_data_method_name(enum hm_method m)
{
	static const char *const names[] = {
		[HM_M_UNKNOWN] = "unknown", [HM_M_GLOBAL] = "global", [HM_M_TLS] = "tls",
		[HM_M_STACK] = "stack", [HM_M_HEAP] = "heap", [HM_M_NOADDR] = "noaddr",
	};

	return (unsigned)m < HM_M__COUNT ? names[m] : "?";
}

static int reg_val(const struct data_regs *r, int reg, uint64_t *v)
{
	return r->regs ? hm_decode_reg(r->mask, r->regs, reg, v) : -1;
}

/* [rsp - red zone, end of the mapping holding rsp); without registers, the [stack]. */
static int on_stack(struct data_proc *p, const struct data_regs *r, uint64_t addr)
{
	const struct data_map *m;
	uint64_t sp, top;

	if (!addr)
		return 0;
	if (reg_val(r, HM_REG_SP, &sp) != 0) {
		m = data_map_at(p, addr);
		return m && !strcmp(m->name, "[stack]");
	}
	if (addr + STACK_RED_ZONE < sp)
		return 0;
	m = data_map_at(p, sp);
	top = m ? m->end : sp + STACK_GUESS;
	return addr < top;
}

static int64_t wrap(int64_t off, uint64_t size)
{
	int64_t m = off % (int64_t)size;

	return m < 0 ? m + (int64_t)size : m;
}

/* The object the base register points to, typed by the variable living in it. */
static int heap(struct hm_data *d, const struct data_image *img, uint64_t ip,
		const struct hm_memop *op, const struct data_regs *r, uint64_t addr,
		int stack, int *exact, struct hm_data_obj *out)
{
	struct data_mod *m = img->mod;
	struct hm_ti_ptr p;
	const struct hm_type *s;
	uint64_t bv, iv;
	int64_t rel, o;
	int have_base, approx;

	if (op->base < 0 || op->base == HM_REG_RIP || op->base == HM_REG_SP ||
	    op->segment != HM_SEG_NONE)
		return -1;
	data_mod_open(d, m);
	if (!m->ti || (!hm_ti_has_dwarf(m->ti) && !hm_ti_btf(m->ti)) ||
	    hm_ti_reg_pointee(m->ti, d->dec, ip - img->bias, op->base, &p) != 0)
		return -1;
	d->st.btf += (uint64_t)hm_ti_btf(m->ti);
	s = hm_type_strip(p.pointee);
	approx = p.approx;
	have_base = reg_val(r, op->base, &bv) == 0;
	if (addr && have_base) {
		rel = (int64_t)(addr - bv);
	} else {
		rel = op->disp;
		if (op->index != HM_REG_NONE && reg_val(r, op->index, &iv) == 0)
			rel += (int64_t)(iv * (uint64_t)op->scale);
		else if (op->index != HM_REG_NONE)
			approx = 1;	/* some element of an array */
	}
	o = p.delta + rel;
	/* the base is known when the register's value and its place in the object are */
	*exact = addr && have_base && !approx && o >= 0 && (uint64_t)o < s->size;
	if (approx || o < 0 || (uint64_t)o >= s->size)
		o = wrap(o, s->size);
	out->method = stack ? HM_M_STACK : HM_M_HEAP;
	out->object = data_type_label(d, p.pointee);
	out->type = s;
	out->offset = (uint64_t)o;
	if (addr)
		out->base = addr - (uint64_t)o;
	else if (have_base && !approx)
		out->base = bv + (uint64_t)rel - (uint64_t)o;
	out->prefix = data_bare_name(d, p.pointee);
	out->field = data_field(d, out->prefix, s, (uint64_t)o);
	/* a scalar through a global pointer (`int *slots`): the pointer names it better than
	 * its type does; the allocation adds the element (resolve/alloc.c: slots[1]). Not a
	 * local or a member (`int *green = arg->green`): those may point inside a block. */
	if (!hm_type_is_aggregate(s) && p.global && p.var && !strpbrk(p.var, " ?()"))
		out->field = p.var;
	out->module = m->path;
	return 0;
}

/* A heap result: named from the known object enclosing it, if one does (an int * into
 * a struct's array); else, typed exactly as an aggregate, it becomes one. */
/* glibc's malloc and free write their chunk headers and tcache links over the blocks they
 * manage (malloc_chunk, tcache_entry in libc's debug info): noted as enclosing objects,
 * a freed block's malloc_chunk would name the next block's accesses. The allocator is
 * not the program's data. */
static int allocator_module(const char *path)
{
	const char *b = path ? strrchr(path, '/') : NULL;

	b = b ? b + 1 : path;
	return b && (!strncmp(b, "libc.so", 7) || !strncmp(b, "libc-", 5));
}

static void named_heap(struct hm_data *d, struct data_proc *p, uint64_t addr, int exact,
		       struct hm_data_obj *out)
{
	if (out->method != HM_M_HEAP || data_enclose(d, p, addr, out))
		return;
	if (exact && out->type && hm_type_is_aggregate(hm_type_strip(out->type)) &&
	    !allocator_module(out->module))
		data_known_note(p, out->base, out->type, out->object, out->prefix);
}

/* The instruction at ip, decoded from the mapped file (once per ip) if the caller had
 * none: a PMU sample carries no code bytes. */
static const struct hm_insn *insn_at(struct hm_data *d, const struct data_image *code,
				     uint64_t ip)
{
	struct data_mod *m = code->mod;
	struct hm_insn *in = hm_map64_get(&m->insns, ip - code->bias + 1), buf;
	const uint8_t *bytes;
	size_t avail;

	if (in)
		return in->len ? in : NULL;
	data_mod_open(d, m);
	bytes = m->ti ? hm_ti_bytes(m->ti, ip - code->bias, &avail) : NULL;
	if (!bytes || hm_decode_insn(d->dec, bytes, avail < 16 ? avail : 16, ip, &buf) != 0)
		memset(&buf, 0, sizeof(buf));	/* remembered as undecodable */
	in = hm_arena_alloc(&d->arena, sizeof(*in));
	*in = buf;
	hm_map64_put(&m->insns, ip - code->bias + 1, in);
	return in->len ? in : NULL;
}

/* The data operand: the caller's, else the first explicit load or store. */
static const struct hm_memop *operand(struct hm_data *d, const struct hm_data_query *q,
				      const struct data_image *code, const struct hm_insn **insn)
{
	const struct hm_memop *any = NULL;

	*insn = q->insn;
	if (!*insn && code && q->ip)
		*insn = insn_at(d, code, q->ip);
	if (q->op || !*insn)
		return q->op;
	for (uint32_t i = 0; i < (*insn)->nr_mem; i++) {
		const struct hm_memop *m = &(*insn)->mem[i];

		if (hm_access_is_data(m->access) && !m->implicit)
			return m;
		if (!any)
			any = m;
	}
	return any;
}

static void count(struct hm_data *d, const struct hm_data_query *q,
		  const struct data_image *code, const struct hm_data_obj *out)
{
	struct hm_data_unresolved *u;
	size_t i;

	d->st.total++;
	d->st.by_method[out->method]++;
	d->st.kernel_heap += q->kernel && out->method == HM_M_HEAP;
	if (out->method != HM_M_UNKNOWN && out->method != HM_M_NOADDR)
		return;
	i = (size_t)(uintptr_t)hm_map64_get(&d->unres_idx, q->ip + 1);
	if (!i) {
		if (d->nr_unres == d->cap_unres) {
			d->cap_unres = d->cap_unres ? d->cap_unres * 2 : 64;
			if (!(d->unres = realloc(d->unres, d->cap_unres * sizeof(*d->unres))))
				hm_oom();
		}
		d->unres[d->nr_unres++] = (struct hm_data_unresolved){
			q->ip, q->pid, out->method,
			code ? code->mod->path : q->kernel ? "[kernel.kallsyms]" : NULL, 0};
		i = d->nr_unres;
		hm_map64_put(&d->unres_idx, q->ip + 1, (void *)(uintptr_t)i);
	}
	u = &d->unres[i - 1];
	u->count++;
}

static void unknown(struct data_proc *p, const struct data_image *img,
		    const struct data_image *code, uint64_t addr, int have_addr, int stack,
		    struct hm_data_obj *out)
{
	const struct data_map *m = addr ? data_map_at(p, addr) : NULL;

	out->method = have_addr ? HM_M_UNKNOWN : HM_M_NOADDR;
	out->module = img ? img->mod->path : m ? m->name : stack ? "[stack]" : NULL;
	if (img && img->mod->hint)
		out->hint = img->mod->hint;
	else if (code && code->mod->hint)
		out->hint = code->mod->hint;
}

/* Kernel stacks are THREAD_SIZE (16 KiB, 32 KiB with KASAN) aligned to their size. */
#define KERNEL_STACK (16u << 10)

static int on_kernel_stack(const struct data_regs *r, uint64_t addr)
{
	uint64_t sp;

	return addr && reg_val(r, HM_REG_SP, &sp) == 0 && addr + STACK_RED_ZONE >= sp &&
	       addr < (sp | (KERNEL_STACK - 1)) + 1;
}

/* The kernel: per-cpu variables (%gs:), the image's globals, the sampled frame, then
 * the dereferenced register's type, as in user space but with one image, and the heap
 * objects known so far kept for the kernel as a whole (data_enclose.c). */
static void kernel_resolve(struct hm_data *d, const struct hm_data_query *q,
			   const struct data_image *code, struct hm_data_obj *out)
{
	const struct hm_insn *insn;
	const struct hm_memop *op = operand(d, q, code, &insn);
	struct data_regs r = {q->regs ? q->regs_mask : 0, q->regs};
	struct data_proc *kp;
	uint64_t addr = q->addr, ea;
	int needs = 0, stack, exact = 0;

	/* Zero-based per-CPU data: rip-relative references are relocated at boot by minus
	 * the KASLR shift, which the vmlinux's bytes (bias: that shift) lack; kcore's code
	 * has it (bias 0). Such an ea is below the kernel half (resolve/resolve.c). */
	if (op && insn && op->segment == HM_SEG_GS &&
	    hm_decode_ea(insn, op, r.mask, r.regs, 0, 0, &ea, &needs) == 0 && needs &&
	    ((code && data_percpu(d, code, op->base == HM_REG_RIP && (int64_t)ea >= 0 ?
				  ea - code->bias : ea, addr, out) == 0) ||
	     (op->base != HM_REG_RIP && data_kmod_percpu(d, ea, addr, out) == 0)))
		return;
	if (needs)
		addr = 0;	/* the offset, not an address */
	if (!addr && op && insn && op->segment == HM_SEG_NONE &&
	    hm_decode_ea(insn, op, r.mask, r.regs, 0, 0, &ea, NULL) == 0)
		addr = ea;
	if (code && addr && data_image_holds(code, addr) && data_global(d, code, addr, out) == 0)
		return;
	if (addr && data_kmod_global(d, addr, out) == 0)
		return;
	stack = on_kernel_stack(&r, addr);
	if (code && stack && (data_stack(d, code, q->ip, addr, &r, out) == 0 ||
			      data_kstack(d, code, q->ip, addr, &r, out) == 0))
		return;
	kp = data_known_space(d, q->pid, 1, addr, 0);
	/* the slab object's own type and base beat the pointer's type (an inode * into an
	 * xfs_inode) */
	if (!stack && data_slab_name(d, code, q->ip, addr, out) == 0)
		return;
	if (code && op && heap(d, code, q->ip, op, &r, addr, stack, &exact, out) == 0) {
		uint64_t sbase;
		uint32_t ssize;

		/* typed at the very start of a slab object it fits (kmalloc-2k holding an
		 * ext4_sb_info): that is the object, whatever the registers said */
		if (!stack && !exact && out->type && out->base &&
		    data_slab_object(d, addr, &sbase, &ssize) == 0 && sbase == out->base &&
		    hm_type_strip(out->type)->size <= ssize)
			exact = 1;
		named_heap(d, kp, addr, exact, out);
		if (!stack)
			data_kmod_relabel(d, addr, out);
		return;
	}
	if (addr && !stack && data_kmod_symbol(d, addr, out) == 0)
		return;
	memset(out, 0, sizeof(*out));
	out->method = addr || needs ? HM_M_UNKNOWN : HM_M_NOADDR;
	out->module = code ? code->mod->path : "[kernel.kallsyms]";
	out->hint = d->kernel_hint;
	if (!stack && out->method == HM_M_UNKNOWN)
		data_enclose(d, kp, addr, out);	/* memcpy into a typed object */
}

/* A module's code (xfs.ko) is typed through that module's own file, when code found
 * it: the image has no PT_LOAD, so no globals are named from it (its data sections lie
 * where the loader put them, which the recording does not say). */
static const struct data_image *kernel_module(struct hm_data *d, uint64_t ip,
					      struct data_image *img)
{
	const char *path;
	uint64_t bias;

	if (!d->files || hm_code_kernel_module(d->files, ip, &path, &bias) != 0)
		return NULL;
	*img = (struct data_image){0, 0, bias, data_mod_get(d, path)};
	img->mod->kernel = 1;
	return img;
}

/* A user-space global is the same object on every sample of one instruction at one
 * address: the answer is kept by (pid, ip, address, whether the caller gave the operand)
 * in a direct-mapped table, and a repeat replays what the search counts (count(), and
 * fill()'s symbol-only count) instead of two image searches, the operand and the global
 * search. Only an answer that depends on nothing else is kept: the global found by the
 * address, through an operand without a segment (a %fs: one may be a thread-local, by
 * the registers). A new mapping empties the table (hm_data_add_map: umemo_gen). */
#define UMEMO_BITS 13		/* 8192 entries, 1 MB */

struct umemo {
	uint64_t ip, addr;
	uint64_t gen;			/* umemo_gen + 1 when filled */
	uint32_t pid;
	uint8_t given;
	struct hm_data_obj out;		/* out.memo: the global's data_mod */
};

static struct umemo *umemo_slot(struct hm_data *d, const struct hm_data_query *q)
{
	uint64_t h = (q->ip * 0x9e3779b97f4a7c15ull) ^ (q->addr * 0xff51afd7ed558ccdull) ^ q->pid;

	if (!d->umemo && !(d->umemo = calloc(1u << UMEMO_BITS, sizeof(*d->umemo))))
		hm_oom();
	return &d->umemo[hm_slot64(h, UMEMO_BITS)];
}

static int umemo_hit(const struct hm_data *d, const struct umemo *u,
		     const struct hm_data_query *q)
{
	return u->gen == d->umemo_gen + 1 && u->ip == q->ip && u->addr == q->addr &&
	       u->pid == q->pid && u->given == (q->op != NULL);
}

void hm_data_recount(struct hm_data *d, const struct hm_data_obj *obj)
{
	struct data_mod *mod = (struct data_mod *)obj->memo;

	d->st.total++;	/* as count() and fill() count a global */
	d->st.by_method[HM_M_GLOBAL]++;
	mod->symbol_only += !obj->type && !mod->lay;
}

/* q without the registers the access wrote (q->written), repacked as perf packs them
 * (one value per mask bit, lowest first) into buf: asked only where registers are read,
 * after the table above. */
static const struct hm_data_query *regs_before(struct hm_data *d, const struct hm_data_query *q,
					       struct hm_data_query *copy, uint64_t *buf)
{
	if (!q->regs || !(q->written & (uint32_t)q->regs_mask))
		return q;	/* it wrote none of them (a store, add [mem], 1) */
	/* which positions stay depends on the mask and the registers written alone: the
	 * last plan is asked again by the samples of one instruction */
	if (!d->rb_valid || q->regs_mask != d->rb_mask || q->written != d->rb_written) {
		uint64_t mask = 0, left = q->regs_mask;
		uint8_t k = 0, n = 0;

		for (; left; left &= left - 1, k++) {	/* the set bits, lowest first */
			int b = __builtin_ctzll(left);

			if (!(b < 32 && q->written >> b & 1)) {
				d->rb_pos[n++] = k;
				mask |= 1ull << b;
			}
		}
		d->rb_mask = q->regs_mask;
		d->rb_written = q->written;
		d->rb_kept_mask = mask;
		d->rb_n = n;
		d->rb_valid = 1;
	}
	for (uint8_t i = 0; i < d->rb_n; i++)
		buf[i] = q->regs[d->rb_pos[i]];
	*copy = *q;
	copy->regs_mask = d->rb_kept_mask;
	copy->regs = buf;
	copy->written = 0;
	return copy;
}

int hm_data_resolve(struct hm_data *d, const struct hm_data_query *qin, struct hm_data_obj *out)
{
	struct hm_data_query qb;
	const struct hm_data_query *q = qin;
	uint64_t before[64];
	struct umemo *u = NULL;
	struct data_proc *p;
	const struct data_image *code, *img = NULL, *exe;
	const struct hm_insn *insn;
	const struct hm_memop *op;
	struct data_regs r;
	uint64_t addr, ea;
	int needs = 0, stack, exact = 0;

	if (!d || !q || !out)
		return -1;
	memset(out, 0, sizeof(*out));
	if (q->kernel) {
		struct data_image kmod;

		q = regs_before(d, qin, &qb, before);
		code = d->kimg.mod ? &d->kimg : NULL;
		if (code && (exe = kernel_module(d, q->ip, &kmod)))
			code = exe;
		kernel_resolve(d, q, code, out);
		count(d, q, code, out);
		return 0;
	}
	if (q->addr && (!q->op || q->op->segment == HM_SEG_NONE)) {
		u = umemo_slot(d, q);
		if (umemo_hit(d, u, q)) {
			*out = u->out;
			hm_data_recount(d, out);
			return 0;
		}
	}
	q = regs_before(d, qin, &qb, before);
	p = data_proc_get(d, q->pid, 0);
	code = data_image_at(p, q->ip);
	op = operand(d, q, code, &insn);
	r = (struct data_regs){q->regs ? q->regs_mask : 0, q->regs};
	addr = q->addr;
	if (op && insn && op->segment == HM_SEG_FS &&
	    hm_decode_ea(insn, op, r.mask, r.regs, 0, 0, &ea, &needs) == 0 && needs &&
	    (exe = data_exec_image(p, code)) &&
	    data_tls(d, exe->mod, (int64_t)ea, addr, out) == 0)
		goto done;
	if (!addr && op && insn && op->segment == HM_SEG_NONE &&
	    hm_decode_ea(insn, op, r.mask, r.regs, 0, 0, &ea, NULL) == 0)
		addr = ea;
	if (addr && (img = data_image_at(p, addr)) && data_global(d, img, addr, out) == 0) {
		if (u && (!op || op->segment == HM_SEG_NONE)) {
			out->memo = img->mod;
			*u = (struct umemo){q->ip, q->addr, d->umemo_gen + 1, q->pid, q->op != NULL,
					    *out};
		}
		goto done;
	}
	stack = on_stack(p, &r, addr);
	if (stack && code && data_stack(d, code, q->ip, addr, &r, out) == 0)
		goto done;
	if (op && code && heap(d, code, q->ip, op, &r, addr, stack, &exact, out) == 0) {
		named_heap(d, p, addr, exact, out);
		goto done;
	}
	memset(out, 0, sizeof(*out));
	unknown(p, img, code, addr, addr || needs, stack, out);
	if (!stack)
		data_enclose(d, p, addr, out);	/* an untyped pointer into a typed object */
done:
	count(d, q, code, out);
	return 0;
}

static int cmp_unres(const void *x, const void *y)
{
	const struct hm_data_unresolved *a = x, *b = y;

	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return a->ip < b->ip ? -1 : a->ip > b->ip;
}

void hm_data_stats(struct hm_data *d, size_t max_top, struct hm_data_stats *out)
{
	size_t n = d->nr_unres < max_top ? d->nr_unres : max_top;

	*out = d->st;
	out->kernel_hint = d->kernel_hint;
	out->slab_source = d->slab ? d->slab_source : NULL;
	out->slab_hint = d->slab_hint;
	free(d->top);
	d->top = NULL;
	out->nr_top = 0;
	out->top = NULL;
	if (!n)
		return;
	if (!(d->top = malloc(d->nr_unres * sizeof(*d->top))))
		hm_oom();
	memcpy(d->top, d->unres, d->nr_unres * sizeof(*d->top));
	hm_sort(d->top, d->nr_unres, sizeof(*d->top), cmp_unres);
	out->nr_top = n;
	out->top = d->top;
}
