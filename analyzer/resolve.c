/* The per-sample pipeline: code site, instruction, data address, object. Each source
 * knows a different part: the PMU gives the address, a timer sample gives the registers
 * from which the instruction's operand yields it, a watchpoint gives the address but
 * traps after the instruction, which must be found by decoding. */
#include "analyzer/resolve.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>

#include "analyzer/skid.h"
#include "core/hash.h"
#include "symbolize/code.h"
#include "symbolize/data.h"
#include "symbolize/decode.h"
#include "core/oom.h"

#define MAX_FUNC_BYTES 65536	/* watch: the function prefix decoded up to the trap */

struct hm_resolver {
	struct hm_code *code;
	struct hm_decoder *dec;
	struct hm_data *data;
	struct hm_resolve_stats st;
	uint8_t *fbuf;
	struct hm_arena names;		/* "type.member" field names, interned */
	struct hm_hash by_name;
	struct hm_map64 tfields;	/* type_field's results by (field, type) */
	struct hm_hash noaddr;		/* function -> struct hm_func_count */
	struct hm_hash unreadable;	/* modules that could not be opened */
	const char *osrelease;		/* the recording's kernel release, or NULL */
	const char *kernel_btf;		/* the option, or NULL */
	int kernel_set;			/* hm_data_set_kernel done */
	uint64_t kdisk_bias;		/* KASLR when kernel code is the vmlinux's bytes */
	struct dent **dslots;		/* decode cache, open addressing */
	size_t dcap, dlen;
};

/* Decoded instructions per (address space, ip): a sample's instruction and the one
 * before it depend on the code bytes alone, and a recording hits few distinct ips, so
 * each is decoded once (capstone was 89% of the time per sample). Only what the code
 * decides is kept: "no code here" can change as a pipe's MMAP records arrive. */
struct dent {
	uint64_t ip;
	uint32_t space;			/* pid; UINT32_MAX for the kernel */
	int8_t at, before;		/* 0 not tried, 1 decoded, -1 not an instruction */
	int8_t target;			/* a direct jump lands on ip: 0 not tried, 1 yes, -1 no */
	struct hm_insn in_at, in_before;
};

int hm_resolver_open(const struct hm_resolve_opts *o, struct hm_resolver **out,
		     struct hm_err *err)
{
	struct hm_resolver *r = calloc(1, sizeof(*r));
	struct hm_code_opts co = {0};

	*out = NULL;
	if (!r || !(r->fbuf = malloc(MAX_FUNC_BYTES))) {
		free(r);
		return hm_err_set(err, HM_EXIT_ENV, "out of memory");
	}
	hm_arena_init(&r->names);
	hm_hash_init(&r->by_name);
	hm_map64_init(&r->tfields);
	hm_hash_init(&r->noaddr);
	hm_hash_init(&r->unreadable);
	co.vmlinux = o->vmlinux;
	co.sysroot = o->sysroot;
	co.buildid_dir = o->buildid_dir;
	co.kernel_release = o->osrelease;
	co.kcore = o->kcore;
	co.kallsyms = o->kallsyms;
	co.force = o->force;
	r->osrelease = o->osrelease ? hm_arena_strdup(&r->names, o->osrelease) : NULL;
	r->kernel_btf = o->kernel_btf ? hm_arena_strdup(&r->names, o->kernel_btf) : NULL;
	if (hm_code_open(&co, &r->code, err) || hm_decode_open(&r->dec, err) ||
	    hm_data_open(&r->data, err)) {
		hm_resolver_close(r);
		return -1;
	}
	hm_data_set_files(r->data, r->code);	/* data read from the files code found */
	*out = r;
	return 0;
}

void hm_resolver_close(struct hm_resolver *r)
{
	if (!r)
		return;
	if (r->code)
		hm_code_close(r->code);
	if (r->dec)
		hm_decode_close(r->dec);
	if (r->data)
		hm_data_close(r->data);
	free(r->fbuf);
	free(r->dslots);
	hm_hash_free(&r->by_name);
	hm_map64_free(&r->tfields);
	hm_hash_free(&r->noaddr);
	hm_hash_free(&r->unreadable);
	hm_arena_free(&r->names);
	free(r);
}

void hm_resolver_features(struct hm_resolver *r, const struct hm_perf_features *f)
{
	for (uint32_t i = 0; i < f->nr_build_ids; i++) {
		const struct hm_perf_build_id *b = &f->build_ids[i];

		if (b->filename && b->size)
			hm_code_add_build_id(r->code, b->filename, b->id, b->size);
	}
}

int hm_resolver_verify(struct hm_resolver *r, const char **warning, struct hm_err *err)
{
	return hm_code_kernel_verify(r->code, warning, err);
}

void hm_resolver_track(struct hm_resolver *r, const struct hm_perf_event *ev)
{
	const struct hm_perf_mmap *m = &ev->mmap;

	if (ev->type != PERF_RECORD_MMAP && ev->type != PERF_RECORD_MMAP2)
		return;
	/* MMAP records carry no prot: perf marks data maps with MISC_MMAP_DATA. */
	if (ev->type == PERF_RECORD_MMAP2 ? (m->prot & PROT_EXEC) != 0
					   : !(ev->misc & PERF_RECORD_MISC_MMAP_DATA))
		hm_code_add_map(r->code, m->pid, m->start, m->len, m->pgoff, m->filename,
				m->build_id, m->build_id_size);
	if (m->pid != (uint32_t)-1)
		hm_data_add_map(r->data, m->pid, m->start, m->len, m->pgoff, m->filename);
}

static enum hm_source source_of(const struct hm_perf_attr *a)
{
	if (a && a->attr.type == PERF_TYPE_BREAKPOINT)
		return HM_SRC_WATCH;
	if (a && a->attr.type == PERF_TYPE_SOFTWARE)
		return HM_SRC_TIMER;
	return HM_SRC_PMU;
}

/* The operand an access is about: the first explicit data operand. */
static const struct hm_memop *data_operand(const struct hm_insn *in)
{
	return hm_decode_data_operand(in);
}

static void apply_operand(struct hm_access *a, const struct hm_insn *in, const struct hm_memop *op)
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

static int decode_at(struct hm_resolver *r, const struct hm_sample *s, struct hm_insn *in)
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

/* Timer: the charged instruction (analyzer/skid.h) in *in and its operand; *before set
 * when that is the instruction before ip, whose registers are those after it ran. */
static const struct hm_memop *timer_pick(struct hm_resolver *r, struct hm_access *a,
					 struct hm_insn *in, int *before)
{
	struct hm_insn at, prev;
	int have_at = decode_at(r, &a->s, &at) == 0;
	int have_prev = insn_before(r, a, &prev) == 0;
	struct hm_skid_pick p;

	if (!have_at && !have_prev)
		return NULL;
	p = hm_skid_choose(have_at ? &at : NULL, have_prev ? &prev : NULL,
			   have_prev && data_operand(&prev) && ip_jump_target(r, &a->s));
	if (p.rule == HM_SKID_NONE) {
		r->st.skid_jump_target += p.jump_target;
		r->st.not_memory++;
		return NULL;
	}
	count_skid(&r->st, &p);
	*in = *p.in;
	*before = p.rule != HM_SKID_AT_IP;
	if (*before)
		a->s.ip = in->addr;
	return data_operand(in);
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

/* Timer: the registers are those before the instruction at ip ran, after the one before
 * it; either way an operand whose address registers were not overwritten gets its exact
 * address from them. */
static const struct hm_memop *timer_addr(struct hm_resolver *r, const struct hm_perf_event *ev,
					 struct hm_access *a, struct hm_insn *in, int *before)
{
	const struct hm_perf_regs *regs = a->s.kernel ? &ev->sample.regs_intr
						       : &ev->sample.regs_user;
	const struct hm_memop *op;
	uint64_t ea;
	int needs_seg = 0;

	if (!(op = timer_pick(r, a, in, before)))
		return NULL;
	if (a->s.kernel && hm_code_kernel_patched(r->code, in->addr)) {
		r->st.kernel_patched++;
		return NULL;
	}
	apply_operand(a, in, op);
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
	return op;
}

/* Registers sampled after the instruction ran (a watchpoint trap, a PEBS record) minus
 * those it wrote, repacked as perf packs them (one value per mask bit, lowest first);
 * returns the new mask. */
static uint64_t regs_before(const struct hm_perf_regs *regs, uint32_t written, uint64_t *out)
{
	uint64_t mask = 0;
	size_t k = 0, n = 0;

	for (int b = 0; b < 64; b++) {
		if (!(regs->mask >> b & 1))
			continue;
		if (!(b < 32 && written >> b & 1)) {
			out[n++] = regs->regs[k];
			mask |= 1ull << b;
		}
		k++;
	}
	return mask;
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
static const struct hm_memop *watch_site(struct hm_resolver *r, const struct hm_perf_event *ev,
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

/* A sample in a file that could not be opened loses its names: counted, so the report
 * says so instead of "no sample has a data address". */
static void count_unreadable(struct hm_resolver *r, const struct hm_code_loc *loc)
{
	r->st.unreadable++;
	if (!hm_hash_get(&r->unreadable, loc->module)) {
		hm_hash_put(&r->unreadable, hm_arena_strdup(&r->names, loc->module), r);
		r->st.unreadable_files++;
		if (!r->st.unreadable_hint)
			r->st.unreadable_hint = loc->hint;
	}
}

static void code_site(struct hm_resolver *r, struct hm_access *a)
{
	struct hm_code_loc loc;
	int rc = hm_code_lookup(r->code, a->s.pid, a->s.ip, a->s.kernel, &loc);

	if (rc == 0 && (loc.flags & HM_CODE_UNREADABLE) && loc.module)
		count_unreadable(r, &loc);
	if (rc == 0 && loc.func) {
		a->func = loc.func;
		a->file = loc.file;
		a->line = loc.line;
	}
}

/* A variable's member path ("stats.ops", "results[1].sum") as the report names fields:
 * by the struct type ("worker_stats.ops", "per_thread.sum"), so that builds, runs and
 * variables of one type compare. Heap objects are named by type already. */
static const char *type_field_of(struct hm_resolver *r, const struct hm_access *a);

/* The same field of the same type is asked for on every sample of it: the symbolizer
 * interns a->field, so (field, type, object) pointers identify the answer. */
struct tf_memo {
	const char *field, *object;
	const struct hm_type *type;
	const char *name;
};

static const char *type_field(struct hm_resolver *r, const struct hm_access *a)
{
	uint64_t key = ((uint64_t)(uintptr_t)a->field * 0x9e3779b97f4a7c15ull) ^
		       ((uint64_t)(uintptr_t)a->type * 0xff51afd7ed558ccdull) ^
		       (uint64_t)(uintptr_t)a->object;
	struct tf_memo *m = hm_map64_get(&r->tfields, key | 1);

	if (m && m->field == a->field && m->type == a->type && m->object == a->object)
		return m->name;
	if (m)	/* a hash collision: answer without memo */
		return type_field_of(r, a);
	m = hm_arena_alloc(&r->names, sizeof(*m));
	*m = (struct tf_memo){a->field, a->object, a->type, type_field_of(r, a)};
	hm_map64_put(&r->tfields, key | 1, m);
	return m->name;
}

static const char *type_field_of(struct hm_resolver *r, const struct hm_access *a)
{
	const struct hm_type *t = hm_type_strip(a->type);
	const char *rest = a->field;
	size_t n = a->object ? strlen(a->object) : 0;
	char buf[1024];
	const char *name;

	/* A variable's path starts with its name (the object, or a local's name). */
	if (!rest)
		return NULL;
	if (n && !strncmp(rest, a->object, n))
		rest += n;
	else
		rest += strcspn(rest, ".[");
	while (t && t->kind == HM_T_ARRAY && *rest == '[') {
		rest = strchr(rest, ']');
		if (!rest)
			return a->field;
		rest++;
		t = hm_type_strip(t->ref);
	}
	if (!t || !hm_type_is_aggregate(t) || !t->name || *rest != '.')
		return a->field;
	snprintf(buf, sizeof(buf), "%s%s", t->name, rest);
	if ((name = hm_hash_get(&r->by_name, buf)))
		return name;
	name = hm_arena_strdup(&r->names, buf);
	hm_hash_put(&r->by_name, name, (void *)name);
	return name;
}

/* The kernel's code and types for data, found once: the vmlinux code is read from, or
 * else the running kernel's memory (kcore); /sys/kernel/btf/vmlinux only when this
 * machine runs the recorded release, which kcore implies. */
static void kernel_setup(struct hm_resolver *r)
{
	struct hm_data_kernel k = {0};
	struct hm_code_kernel img;
	struct utsname u;
	int running;

	r->kernel_set = 1;
	running = r->osrelease && uname(&u) == 0 && !strcmp(u.release, r->osrelease);
	if (hm_code_kernel_image(r->code, &img) == 0) {
		r->kdisk_bias = img.vmlinux ? (uint64_t)img.bias : 0;
		k.vmlinux = img.vmlinux;
		k.bias = (uint64_t)img.bias;
		k.kcore = img.kcore;
		k.code = img.kcore ? r->code : NULL;
		k.btf = r->kernel_btf ? r->kernel_btf
			: running || img.kcore ? "/sys/kernel/btf/vmlinux" : NULL;
	}
	k.why = img.why;
	hm_data_set_kernel(r->data, &k);
}

static void name_data(struct hm_resolver *r, const struct hm_perf_event *ev, struct hm_access *a,
		      const struct hm_insn *in, const struct hm_memop *op, int after)
{
	const struct hm_perf_regs *regs = a->s.kernel ? &ev->sample.regs_intr
						       : &ev->sample.regs_user;
	struct hm_data_query q = {
		.pid = a->s.pid, .tid = a->s.tid, .addr = a->s.addr, .ip = a->s.ip,
		.insn = op ? in : NULL, .op = op,
		.regs_mask = regs->abi ? regs->mask : 0, .regs = regs->abi ? regs->regs : NULL,
		.kernel = a->s.kernel,
	};
	struct hm_data_obj obj;
	uint64_t before[64];

	/* A trap's, a PEBS record's or a skidded timer sample's registers are those after
	 * the access: the ones it wrote no longer hold what typed its address
	 * (mov rax, [rax + 8]). */
	if (after && op && q.regs_mask) {
		q.regs_mask = regs_before(regs, in->regs_written, before);
		q.regs = before;
	}

	if (hm_data_resolve(r->data, &q, &obj))
		return;
	if (a->s.kernel && obj.method >= HM_M_GLOBAL && obj.method <= HM_M_HEAP)
		r->st.kernel_named++;
	a->method = obj.method;
	a->mapped = (uint8_t)hm_data_sample_mapped(r->data, a->s.pid, a->s.ip, a->s.addr);
	a->object = obj.object;
	a->type = obj.type;
	a->obj_base = obj.base;
	a->field = obj.field;
	a->field_off = obj.offset;
	if (obj.method == HM_M_GLOBAL || obj.method == HM_M_TLS || obj.method == HM_M_STACK)
		a->field = type_field(r, a);
	if (!a->s.addr && obj.base)
		a->s.addr = obj.base + obj.offset;
}

static void count_noaddr(struct hm_resolver *r, const struct hm_access *a);

void hm_resolver_sample(struct hm_resolver *r, const struct hm_perf_event *ev,
			struct hm_access *out)
{
	enum hm_source src = source_of(ev->attr);
	const struct hm_memop *op = NULL;
	struct hm_insn in;
	int before = 0;

	memset(out, 0, sizeof(*out));
	hm_perfdata_to_sample(ev, src, &out->s);
	r->st.samples++;
	r->st.by_source[src]++;
	if (out->s.kernel) {
		r->st.kernel++;
		if (!r->kernel_set)
			kernel_setup(r);
	}
	if (src == HM_SRC_TIMER) {
		op = timer_addr(r, ev, out, &in, &before);
	} else if (src == HM_SRC_WATCH) {
		op = watch_site(r, ev, out, &in);
	} else if (decode_at(r, &out->s, &in) == 0 && (op = data_operand(&in))) {
		uint8_t pmu_op = out->s.op;

		apply_operand(out, &in, op);
		if (pmu_op != HM_OP_UNKNOWN)
			out->s.op = pmu_op;	/* the PMU knows what it sampled */
	}
	code_site(r, out);
	out->method = HM_M_NOADDR;
	if (out->s.addr || op)
		name_data(r, ev, out, &in, op, src != HM_SRC_TIMER || before);
	if (!out->s.addr)
		count_noaddr(r, out);
}

static void count_noaddr(struct hm_resolver *r, const struct hm_access *a)
{
	char key[512];
	struct hm_func_count *fc;

	snprintf(key, sizeof(key), "%s%s", a->s.kernel ? "[k] " : "",
		 a->func ? a->func : "[unknown]");
	if (!(fc = hm_hash_get(&r->noaddr, key))) {
		fc = hm_arena_alloc(&r->names, sizeof(*fc));
		fc->func = hm_arena_strdup(&r->names, key);
		hm_hash_put(&r->noaddr, fc->func, fc);
	}
	fc->count++;
}

size_t hm_resolver_top_noaddr(const struct hm_resolver *r, struct hm_func_count *out, size_t n)
{
	size_t got = 0;

	for (size_t i = 0; i < r->noaddr.cap; i++) {
		const struct hm_func_count *fc = r->noaddr.slots[i].val;
		size_t pos;

		if (!r->noaddr.slots[i].key || (got == n && fc->count <= out[n - 1].count))
			continue;
		pos = got < n ? got++ : n - 1;
		while (pos > 0 && out[pos - 1].count < fc->count) {
			out[pos] = out[pos - 1];
			pos--;
		}
		out[pos] = *fc;
	}
	return got;
}

const struct hm_resolve_stats *hm_resolver_stats(const struct hm_resolver *r)
{
	return &r->st;
}

struct hm_data *hm_resolver_data(struct hm_resolver *r)
{
	return r->data;
}
