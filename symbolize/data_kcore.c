/* The running kernel without a vmlinux: its code bytes come from /proc/kcore and its
 * function extents from kallsyms (both through struct hm_code), its types from raw BTF
 * (/sys/kernel/btf/vmlinux). An hm_ti over such code has no DWARF and no symbol table:
 * the backward walk of typeinfer.c reaches a function's entry and data_btf.c types the
 * argument registers there, as for an ELF file without DWARF. Bytes are read once per
 * function and kept. */
#include "symbolize/data_int.h"

#include <bpf/btf.h>
#include <stdlib.h>
#include <string.h>
#include "core/sort.h"
#include "symbolize/code.h"

#define CODE_MAX_FUNC (1u << 16)	/* bytes of one function read: typeinfer.c decodes
					 * no more */
#define CODE_PEEK 64			/* outside known functions: one instruction's worth */

int hm_ti_open_code(const struct hm_ti_code *code, struct hm_layout *lay, struct hm_ti **out,
		    struct hm_err *err)
{
	struct hm_ti *ti = calloc(1, sizeof(*ti));

	*out = NULL;
	if (!ti)
		return hm_err_set(err, HM_EXIT_ENV, "out of memory opening kernel code");
	hm_arena_init(&ti->arena);
	hm_map64_init(&ti->types);
	hm_map64_init(&ti->frames);
	hm_map64_init(&ti->funcs);
	hm_map64_init(&ti->chunks);
	ti->lay = lay;
	ti->code = *code;
	ti->has_code = 1;
	*out = ti;
	return 0;
}

const uint8_t *data_code_bytes(struct hm_ti *ti, uint64_t vaddr, size_t *avail)
{
	uint64_t lo = vaddr, flo, fhi;
	size_t want = CODE_PEEK, nr;
	const char *const *names;
	struct ti_sec *s;

	*avail = 0;
	if (vaddr > UINT64_MAX - CODE_PEEK)
		return NULL;
	if (ti->code.func(ti->code.ctx, vaddr, &flo, &fhi, &names, &nr) == 0 && flo <= vaddr &&
	    vaddr < fhi && vaddr - flo < CODE_MAX_FUNC) {
		lo = flo;
		want = fhi - flo < CODE_MAX_FUNC ? (size_t)(fhi - flo) : CODE_MAX_FUNC;
	}
	if (!(s = hm_map64_get(&ti->chunks, lo + 1))) {
		s = hm_arena_alloc(&ti->arena, sizeof(*s));
		s->addr = lo;
		s->bytes = hm_arena_alloc(&ti->arena, want);
		s->size = ti->code.read(ti->code.ctx, lo, (uint8_t *)s->bytes, want);
		hm_map64_put(&ti->chunks, lo + 1, s);
	}
	if (vaddr - s->addr >= s->size)
		return NULL;
	*avail = (size_t)(s->size - (vaddr - s->addr));
	return s->bytes + (vaddr - s->addr);
}

/* Of the names of one code, the one BTF describes (as data_btf.c picks among aliases). */
void data_code_frame(struct hm_ti *ti, struct hm_ti_frame *f, uint64_t pc)
{
	const char *const *names;
	uint64_t lo, hi;
	size_t nr;

	if (ti->code.func(ti->code.ctx, pc, &lo, &hi, &names, &nr) != 0 || !nr)
		return;
	f->func = names[0];
	f->lo = lo;
	f->hi = hi;
	for (size_t i = 0; i < nr && ti->lay; i++)
		if (hm_layout_func_type(ti->lay, names[i])) {
			f->func = names[i];
			break;
		}
}

static size_t kcore_read(void *ctx, uint64_t addr, uint8_t *buf, size_t len)
{
	return hm_code_read(ctx, 0, addr, 1, buf, len);
}

/* Functions of the kernel image only: a module's are not in vmlinux's BTF, and one of
 * the same name there would be another function. */
static int kcore_func(void *ctx, uint64_t addr, uint64_t *lo, uint64_t *hi,
		      const char *const **names, size_t *nr)
{
	struct hm_code_loc loc;

	if (hm_code_lookup(ctx, 0, addr, 1, &loc) != 0 || !loc.func || !loc.func_size ||
	    !loc.module || strcmp(loc.module, "[kernel.kallsyms]") ||
	    !(*nr = hm_code_kernel_names(ctx, loc.func_start, names)))
		return -1;
	*lo = loc.func_start;
	*hi = loc.func_start + loc.func_size;
	return 0;
}

static int cmp_sym(const void *x, const void *y)
{
	const struct data_sym *a = x, *b = y;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

/* Per-CPU variables from BTF: pahole writes the .data..percpu section's VARs in a
 * DATASEC with each one's offset, which is its %gs: offset (x86-64 links per-CPU data at
 * 0). They become m's symbols, so that data_percpu names __preempt_count at 0x1fb40. */
static void percpu_syms(struct hm_data *d, struct data_mod *m, const char *btf_path)
{
	struct btf *btf = btf__parse(btf_path, NULL);
	int id = btf ? btf__find_by_name_kind(btf, ".data..percpu", BTF_KIND_DATASEC) : -1;
	const struct btf_type *sec = id > 0 ? btf__type_by_id(btf, (uint32_t)id) : NULL;
	const struct btf_var_secinfo *vi = sec ? btf_var_secinfos(sec) : NULL;
	uint16_t n = sec ? btf_vlen(sec) : 0;

	if (n && (m->syms = calloc(n, sizeof(*m->syms)))) {
		for (uint16_t i = 0; i < n; i++) {
			const struct btf_type *v = btf__type_by_id(btf, vi[i].type);
			const char *name = v ? btf__name_by_offset(btf, v->name_off) : NULL;

			if (name && *name)
				m->syms[m->nr_syms++] = (struct data_sym){
					vi[i].offset, vi[i].size, hm_arena_strdup(&d->arena, name)};
		}
		hm_sort(m->syms, m->nr_syms, sizeof(*m->syms), cmp_sym);
		m->percpu_zero = 1;
	}
	btf__free(btf);
}

int data_kernel_kcore(struct hm_data *d, const struct hm_data_kernel *k)
{
	struct hm_ti_code code = {k->code, kcore_read, kcore_func};
	struct data_mod *m = data_mod_get(d, k->kcore);
	struct hm_err err = {0};

	m->kernel = 1;
	/* No segments: kallsyms gives no sizes, so globals are not named from it (per-CPU
	 * variables are, from BTF: percpu_syms). */
	m->phdrs_done = m->usable = m->opened = 1;
	if (!k->btf || hm_layout_open_btf(k->btf, &m->lay, &err) != 0) {
		m->lay = NULL;
		d->kernel_hint = hm_arena_printf(
			&d->arena, "kernel code from %s, but no kernel types (%s): kernel data are "
			"not typed; install the recorded kernel's linux-image-RELEASE-dbg and pass "
			"--vmlinux, or run a kernel with CONFIG_DEBUG_INFO_BTF", k->kcore,
			k->btf ? err.msg : "no BTF of the recorded kernel");
		return -1;
	}
	percpu_syms(d, m, k->btf);
	data_slab_kcore(d, m, k->code);
	if (strlen(k->btf) > 8 && !strcmp(k->btf + strlen(k->btf) - 8, "/vmlinux"))
		d->kbtf_base = m->lay;	/* /sys/kernel/btf: its modules' BTF beside it */
	if (!d->slab && k->kslab)
		data_slab_table(d, m->lay, k->kslab, k->kslab_len, k->input);
	if (hm_ti_open_code(&code, m->lay, &m->ti, &err) != 0) {
		d->kernel_hint = hm_arena_strdup(&d->arena, err.msg);
		return -1;
	}
	d->kimg = (struct data_image){0, UINT64_MAX, 0, m};
	return 0;
}
