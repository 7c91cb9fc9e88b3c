/* The per-sample pipeline: code site, instruction, data address, object. Each source
 * knows a different part: the PMU gives the address, a timer sample gives the registers
 * from which the instruction's operand yields it, a watchpoint gives the address but
 * traps after the instruction, which must be found by decoding. */
#include "resolve/resolve_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>

#include "core/oom.h"
#include "core/zero.h"

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
	hm_map64_init(&r->noaddr_ptr);
	hm_map64_init(&r->prim_ptr);
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
	r->input = hm_arena_strdup(&r->names, o->input ? o->input : "the recording");
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
	free(r->kslab);
	free(r->dslots);
	free(r->smemo);
	free(r->cmemo);
	free(r->mmemo);
	hm_hash_free(&r->by_name);
	hm_map64_free(&r->tfields);
	hm_hash_free(&r->noaddr);
	hm_map64_free(&r->noaddr_ptr);
	hm_map64_free(&r->prim_ptr);
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
	/* the files the samples hit: their indexes are built while the maps pass reads */
	hm_data_warm(r->data, NULL, f->build_ids, f->nr_build_ids);
	r->smemo_gen++;
	/* a copy: the reader's bytes go with it, the kernel is set up at the first sample */
	free(r->kslab);
	r->kslab = NULL;
	if (f->kslab && f->kslab_len && (r->kslab = malloc(f->kslab_len))) {
		memcpy(r->kslab, f->kslab, f->kslab_len);
		r->kslab_len = f->kslab_len;
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
	r->smemo_gen++;	/* a site's code or data may have moved */
	/* MMAP records carry no prot: perf marks data maps with MISC_MMAP_DATA. */
	if (ev->type == PERF_RECORD_MMAP2 ? (m->prot & PROT_EXEC) != 0
					   : !(ev->misc & PERF_RECORD_MISC_MMAP_DATA))
		hm_code_add_map(r->code, m->pid, m->start, m->len, m->pgoff, m->filename,
				m->build_id, m->build_id_size);
	if (m->pid == (uint32_t)-1 && m->extra_len)	/* a module's section addresses */
		hm_code_add_kmod_sections(r->code, m->start, m->extra, m->extra_len);
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

/* A user-space ip's code site, as hm_code_lookup gave it, kept by (pid, ip) until an
 * MMAP record arrives (smemo_gen): heap and stack samples, whose data answers are not
 * kept whole (smemo), still repeat their code's. What is counted from it is counted from
 * the kept site again. */
#define CMEMO_BITS 12		/* 4096 entries, 256 KB */

struct cmemo {
	uint64_t ip, gen;		/* gen: smemo_gen + 1 when filled */
	uint32_t pid;
	int line, flags;
	const char *func, *file, *module, *hint;
};

static int code_lookup(struct hm_resolver *r, const struct hm_access *a, struct hm_code_loc *loc)
{
	struct cmemo *m;
	int rc;

	if (a->s.kernel)
		return hm_code_lookup(r->code, a->s.pid, a->s.ip, a->s.kernel, loc);
	if (!r->cmemo && !(r->cmemo = calloc(1u << CMEMO_BITS, sizeof(*r->cmemo))))
		hm_oom();
	m = &r->cmemo[hm_slot64(a->s.ip * 0x9e3779b97f4a7c15ull ^ a->s.pid, CMEMO_BITS)];
	if (m->gen == r->smemo_gen + 1 && m->ip == a->s.ip && m->pid == a->s.pid) {
		memset(loc, 0, sizeof(*loc));
		loc->func = m->func;
		loc->file = m->file;
		loc->line = m->line;
		loc->flags = m->flags;
		loc->module = m->module;
		loc->hint = m->hint;
		return 0;
	}
	if ((rc = hm_code_lookup(r->code, a->s.pid, a->s.ip, 0, loc)) == 0)
		*m = (struct cmemo){a->s.ip, r->smemo_gen + 1, a->s.pid, loc->line, loc->flags,
				    loc->func, loc->file, loc->module, loc->hint};
	return rc;
}

/* 1 when the site's answer was plain: nothing counted but the sample (no unreadable
 * file, no stale build-id, a user-space ip), so that it may be kept (smemo). */
static int code_site(struct hm_resolver *r, struct hm_access *a)
{
	struct hm_code_loc loc;
	int rc = code_lookup(r, a, &loc);

	if (rc == 0 && (loc.flags & HM_CODE_UNREADABLE) && loc.module)
		count_unreadable(r, &loc);
	if (rc == 0 && (loc.flags & HM_CODE_BUILDID_MISMATCH) && !a->s.kernel) {
		r->st.stale++;	/* the kernel's vmlinux is refused up front (verify) */
		if (!r->st.stale_hint)
			r->st.stale_hint = loc.hint;
	}
	if (rc == 0 && a->s.kernel && !loc.func && (loc.flags & HM_CODE_NO_KSYMS)) {
		r->st.kernel_no_ksyms++;
		if (!r->st.kernel_no_ksyms_hint)
			r->st.kernel_no_ksyms_hint = loc.hint;
	}
	if (rc == 0 && loc.func) {
		a->func = loc.func;
		a->file = loc.file;
		a->line = loc.line;
	}
	return rc == 0 && !a->s.kernel &&
	       !(loc.flags & (HM_CODE_UNREADABLE | HM_CODE_BUILDID_MISMATCH));
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

const char *type_field(struct hm_resolver *r, const struct hm_access *a)
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
	k.kslab = r->kslab;
	k.kslab_len = r->kslab_len;
	k.input = r->input;
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

	/* A trap's, a PEBS record's or a skidded timer sample's registers are those after
	 * the access: the ones it wrote no longer hold what typed its address
	 * (mov rax, [rax + 8]). hm_data_resolve drops them where it reads registers. */
	if (after && op && q.regs_mask)
		q.written = in->regs_written;

	if (hm_data_resolve(r->data, &q, &obj))
		return;
	r->obj = obj;	/* for hm_resolver_sample_parts */
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

/* hm_primitive_func tries ~45 name stems, and every sample asks it: the symbolizer's
 * function names live as long as the resolver, so each name's answer is kept by its
 * pointer (2 yes, 1 no). */
static int primitive_func(struct hm_resolver *r, const char *func)
{
	uintptr_t v;

	if (!func)
		return 0;
	v = (uintptr_t)hm_map64_get(&r->prim_ptr, (uint64_t)(uintptr_t)func);
	if (!v) {
		v = hm_primitive_func(func) ? 2 : 1;
		hm_map64_put(&r->prim_ptr, (uint64_t)(uintptr_t)func, (void *)v);
	}
	return v == 2;
}

/* A user-space sample that touched a global repeats its site's whole answer: the same
 * (pid, ip, address) names the same code, object and field, mapped or not, primitive or
 * not, by maps that only an MMAP record changes. So the answer is kept, keyed by the site
 * as hm_data_resolve keeps a global's, and a repeat costs a lookup instead of the code
 * search, the mapping checks, the field's type name and the member test (a third of a
 * timer sample's time). Only answers that counted nothing but the sample are kept, and a
 * repeat counts what the first counted. */
#define SMEMO_BITS 13		/* 8192 entries, 1.3 MB */

struct smemo {
	uint64_t ip, addr;
	uint64_t gen;			/* smemo_gen + 1 when filled */
	uint32_t pid;
	uint8_t key;			/* 1: an operand was given; 2: a rep instruction;
					 * the sample's source above */
	uint8_t mapped, prim, member;
	uint32_t single;		/* an access of this size is not split (resolve_wide.c:
					 * hm_resolver_sample_parts); 0: not known */
	const char *func, *file, *field;
	int line;
	struct hm_data_obj obj;
};

static uint8_t smemo_key(const struct hm_memop *op, const struct hm_insn *in,
			 enum hm_source src)
{
	return (uint8_t)((op != NULL) | (op && in->rep) << 1 | src << 2);
}

static struct smemo *smemo_slot(struct hm_resolver *r, const struct hm_access *a)
{
	uint64_t h = (a->s.ip * 0x9e3779b97f4a7c15ull) ^ (a->s.addr * 0xff51afd7ed558ccdull) ^
		     a->s.pid;

	if (!r->smemo && !(r->smemo = calloc(1u << SMEMO_BITS, sizeof(*r->smemo))))
		hm_oom();
	return &r->smemo[hm_slot64(h, SMEMO_BITS)];
}

/* The kept answer of a's site, applied to a; NULL when there is none. */
static const struct smemo *smemo_apply(struct hm_resolver *r, struct hm_access *a, uint8_t key)
{
	struct smemo *m;

	if (!a->s.addr || a->s.kernel)
		return NULL;
	m = smemo_slot(r, a);
	if (m->gen != r->smemo_gen + 1 || m->ip != a->s.ip || m->addr != a->s.addr ||
	    m->pid != a->s.pid || m->key != key)
		return NULL;
	a->func = m->func;
	a->file = m->file;
	a->line = m->line;
	a->method = m->obj.method;
	a->mapped = m->mapped;
	a->object = m->obj.object;
	a->type = m->obj.type;
	a->obj_base = m->obj.base;
	a->field = m->field;
	a->field_off = m->obj.offset;
	a->prim = m->prim;
	r->obj = m->obj;
	r->smemo_single = &m->single;
	hm_data_recount(r->data, &m->obj);
	return m;
}

static void smemo_keep(struct hm_resolver *r, const struct hm_access *a, uint8_t key,
		       int member)
{
	struct smemo *m;

	if (!a->s.addr || a->s.kernel || !r->obj.memo)
		return;
	m = smemo_slot(r, a);
	*m = (struct smemo){a->s.ip, a->s.addr, r->smemo_gen + 1, a->s.pid, key, a->mapped,
			    a->prim, (uint8_t)member, 0, a->func, a->file, a->field, a->line,
			    r->obj};
	r->smemo_single = &m->single;
}

/* A member of an aggregate, not <padding> or a <hole>: asked by every sample, answered
 * by its field and type alone (field names are interned), so kept by the pair. */
#define MMEMO_BITS 10		/* 1024 entries */

struct mmemo {
	const char *field;
	const struct hm_type *type;
	int member;
};

static int is_member(struct hm_resolver *r, const struct hm_access *a)
{
	uint64_t h = (uint64_t)(uintptr_t)a->field * 0x9e3779b97f4a7c15ull ^
		     (uint64_t)(uintptr_t)a->type;
	struct mmemo *m;

	if (!a->field || !a->type || a->method == HM_M_UNKNOWN)
		return 0;
	if (!r->mmemo && !(r->mmemo = calloc(1u << MMEMO_BITS, sizeof(*r->mmemo))))
		hm_oom();
	m = &r->mmemo[hm_slot64(h, MMEMO_BITS)];
	if (m->field != a->field || m->type != a->type)
		*m = (struct mmemo){a->field, a->type,
				    hm_type_agg(a->type, NULL) && !strchr(a->field, '<')};
	return m->member;
}

void hm_resolver_sample(struct hm_resolver *r, const struct hm_perf_event *ev,
			struct hm_access *out)
{
	enum hm_source src = source_of(ev->attr);
	const struct hm_memop *op = NULL;
	const struct smemo *m;
	struct hm_insn in;
	int before = 0, member;
	uint8_t key;

	hm_zero(out, sizeof(*out));	/* not a rep stos each: core/zero.h */
	hm_zero(&r->obj, sizeof(r->obj));
	r->smemo_single = NULL;
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
	key = smemo_key(op, &in, src);
	if ((m = smemo_apply(r, out, key))) {
		member = m->member;
	} else {
		int plain = code_site(r, out);

		out->method = HM_M_NOADDR;
		if (out->s.addr || op)
			name_data(r, ev, out, &in, op, src != HM_SRC_TIMER || before);
		out->prim = (uint8_t)((op && in.rep) || primitive_func(r, out->func));
		member = is_member(r, out);
		if (plain)
			smemo_keep(r, out, key, member);
	}
	if (out->prim && out->s.addr) {
		r->st.prim++;
		r->st.prim_named += out->method >= HM_M_GLOBAL && out->method <= HM_M_HEAP;
	}
	if (!out->s.addr)
		count_noaddr(r, out);
	r->st.member += member;
}

/* Most timer samples touch no memory, so this runs for most samples: the symbolizer's
 * function names live as long as the resolver, so a name's pointer (and kernel or not)
 * finds its count without formatting and hashing the name each time. */
static void count_noaddr(struct hm_resolver *r, const struct hm_access *a)
{
	uint64_t pk = ((uint64_t)(uintptr_t)a->func << 1 | a->s.kernel) + 2;
	struct hm_func_count *fc = hm_map64_get(&r->noaddr_ptr, pk);
	char key[512];

	if (!fc) {
		snprintf(key, sizeof(key), "%s%s", a->s.kernel ? "[k] " : "",
			 a->func ? a->func : "[unknown]");
		if (!(fc = hm_hash_get(&r->noaddr, key))) {
			fc = hm_arena_alloc(&r->names, sizeof(*fc));
			fc->func = hm_arena_strdup(&r->names, key);
			fc->count = 0;
			hm_hash_put(&r->noaddr, fc->func, fc);
		}
		hm_map64_put(&r->noaddr_ptr, pk, fc);
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

struct hm_code *hm_resolver_code(struct hm_resolver *r)
{
	return r->code;
}

struct hm_data *hm_resolver_data(struct hm_resolver *r)
{
	return r->data;
}
