/* The recording's mappings per process, where each file is loaded in it (its images),
 * and the files themselves; the strings results share are data_names.c's. */
#include "symbolize/data_int.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/sort.h"
#include "core/oom.h"
#include "symbolize/code.h"

int hm_data_open(struct hm_data **out, struct hm_err *err)
{
	struct hm_data *d = calloc(1, sizeof(*d));

	*out = NULL;
	if (!d)
		return hm_err_set(err, HM_EXIT_ENV, "data symbolization: out of memory");
	if (hm_decode_open(&d->dec, err) != 0) {
		free(d);
		return -1;
	}
	hm_arena_init(&d->arena);
	hm_hash_init(&d->mods);
	hm_hash_init(&d->strs);
	hm_map64_init(&d->procs);
	hm_map64_init(&d->labels);
	hm_map64_init(&d->fields);
	hm_map64_init(&d->splits);
	hm_map64_init(&d->slab_types);
	hm_map64_init(&d->kstack);
	hm_map64_init(&d->kptr);
	hm_map64_init(&d->unres_idx);
	*out = d;
	return 0;
}

void hm_data_close(struct hm_data *d)
{
	if (!d)
		return;
	data_warm_end(d);
	data_slab_free(d);	/* module BTF layouts borrow the kernel's: first */
	for (struct data_mod *m = d->mod_list; m; m = m->next) {
		hm_ti_close(m->ti);
		hm_layout_close(m->lay);
		free(m->loads);
		free(m->syms);
		free(m->tls_syms);
		hm_map64_free(&m->insns);
	}
	for (size_t i = 0; i < d->nr_procs; i++) {
		free(d->proc_list[i]->maps);
		free(d->proc_list[i]->images);
		free(d->proc_list[i]->known);
		free(d->proc_list[i]);
	}
	free(d->proc_list);
	free(d->kproc.known);
	free(d->unres);
	free(d->top);
	hm_map64_free(&d->unres_idx);
	hm_map64_free(&d->labels);
	hm_map64_free(&d->fields);
	hm_map64_free(&d->splits);
	hm_map64_free(&d->slab_types);
	hm_map64_free(&d->kstack);
	hm_map64_free(&d->kptr);
	free(d->gmemo);
	free(d->umemo);
	hm_map64_free(&d->procs);
	hm_hash_free(&d->strs);
	hm_hash_free(&d->mods);
	hm_decode_close(d->dec);
	hm_arena_free(&d->arena);
	free(d);
}

/* ---- Processes, mappings, modules ---- */

struct data_proc *data_proc_get(struct hm_data *d, uint32_t pid, int create)
{
	struct data_proc *p;

	if (d->last_proc && d->last_proc->pid == pid)	/* a sample asks three times */
		return d->last_proc;
	if ((p = hm_map64_get(&d->procs, (uint64_t)pid + 1)))
		d->last_proc = p;
	if (p || !create)
		return p;
	if (!(p = calloc(1, sizeof(*p))))
		hm_oom();
	p->pid = pid;
	hm_map64_put(&d->procs, (uint64_t)pid + 1, p);
	if (d->nr_procs == d->cap_procs) {
		d->cap_procs = d->cap_procs ? d->cap_procs * 2 : 16;
		if (!(d->proc_list = realloc(d->proc_list, d->cap_procs * sizeof(*d->proc_list))))
			hm_oom();
	}
	d->proc_list[d->nr_procs++] = p;
	return p;
}

/* Names that are not files: [heap], [stack], [vdso], //anon, /dev/zero, memfd... */
static int is_file(const char *name)
{
	return name[0] == '/' && strncmp(name, "//anon", 6) && strncmp(name, "/dev/", 5) &&
	       strncmp(name, "/memfd:", 7) && !strstr(name, " (deleted)");
}

struct data_mod *data_mod_get(struct hm_data *d, const char *path)
{
	struct data_mod *m = hm_hash_get(&d->mods, path);

	if (m)
		return m;
	m = hm_arena_alloc(&d->arena, sizeof(*m));
	m->path = m->file = hm_arena_strdup(&d->arena, path);
	m->owner = d;
	m->next = d->mod_list;
	d->mod_list = m;
	hm_hash_put(&d->mods, m->path, m);
	return m;
}

void hm_data_set_files(struct hm_data *d, struct hm_code *code)
{
	if (d)
		d->files = code;
}

void data_mod_locate(struct data_mod *m)
{
	struct hm_data *d = m->owner;
	const char *f;

	if (m->located)
		return;
	m->located = 1;
	if (!m->kernel && d->files && (f = hm_code_file(d->files, m->path)))
		m->file = hm_arena_strdup(&d->arena, f);
	else if (!m->kernel && d->files && hm_code_file_changed(d->files, m->path)) {
		m->file = NULL;
		m->hint = hm_arena_printf(&d->arena, "%s was replaced while the report read it "
					  "(its build-id is not the recorded one any more): its data "
					  "are left unnamed; rerun the report", m->path);
	}
}

/* The layout and the type inference each open the file with a Dwfl of their own, and
 * each inflates its compressed .debug sections (libc's debug file: ~230M instructions
 * apiece). Separate Dwfl handles share nothing, so the layout opens on a second thread
 * while this one opens the type inference; the answers are those of opening them in
 * turn, since neither looks at the other until both are open. */
struct lay_job {
	const char *file;
	struct hm_layout *lay;
	struct hm_err err;
	int rc;
};

static void *lay_open(void *arg)
{
	struct lay_job *j = arg;

	j->rc = hm_layout_open(j->file, &j->lay, &j->err);
	return NULL;
}

static void mod_open(struct hm_data *d, struct data_mod *m)
{
	struct lay_job j = {0};
	struct hm_err err = {0};
	pthread_t t;
	int threaded, ti_rc;

	m->opened = 1;
	data_mod_locate(m);
	if (!m->file)
		return;	/* the hint says why */
	j.file = m->file;
	threaded = pthread_create(&t, NULL, lay_open, &j) == 0;
	if (!threaded)
		lay_open(&j);	/* no thread to be had (a memory cap): in turn */
	ti_rc = hm_ti_open(m->file, NULL, &m->ti, &err);
	if (threaded)
		pthread_join(t, NULL);
	m->lay = j.lay;
	if (j.rc != 0) {
		m->lay = NULL;
		m->hint = hm_arena_strdup(&d->arena, j.err.msg);
		/* No DWARF: BTF (pahole -J, or the kernel's) still types heap objects. */
		if (hm_layout_open_btf(m->file, &m->lay, &j.err) != 0 &&
		    (!m->btf_alt || hm_layout_open_btf(m->btf_alt, &m->lay, &j.err) != 0))
			m->lay = NULL;
	}
	if (ti_rc != 0) {
		m->ti = NULL;
		m->hint = hm_arena_strdup(&d->arena, err.msg);
		return;
	}
	m->ti->lay = m->lay;
	m->ti->warm = &d->warm;
	data_mod_syms(m);
}

/* Asked per sample: opened or not is all most calls need, before zeroing two errors. */
void data_mod_open(struct hm_data *d, struct data_mod *m)
{
	if (!m->opened)
		mod_open(d, m);
}

int hm_data_set_kernel(struct hm_data *d, const struct hm_data_kernel *k)
{
	struct data_mod *m;

	if (!d || !k || d->kernel_set)
		return -1;
	d->kernel_set = 1;
	if (!k->vmlinux && k->kcore && k->code)
		return data_kernel_kcore(d, k);
	if (!k->vmlinux) {
		d->kernel_hint = data_intern(d, k->why ? k->why : "kernel code bytes unavailable: "
					     "pass the recorded kernel's vmlinux with --vmlinux");
		return -1;
	}
	m = data_mod_get(d, k->vmlinux);
	m->kernel = 1;
	m->btf_alt = k->btf ? hm_arena_strdup(&d->arena, k->btf) : NULL;
	if ((!m->phdrs_done && data_mod_phdrs(m) != 0) || !m->usable) {
		d->kernel_hint = hm_arena_printf(&d->arena, "%s: no readable ELF program headers: "
						 "pass the recorded kernel's uncompressed vmlinux "
						 "with --vmlinux", m->path);
		return -1;
	}
	data_mod_open(d, m);
	if (!m->ti) {
		d->kernel_hint = m->hint;
		return -1;
	}
	d->kimg = (struct data_image){0, UINT64_MAX, k->bias, m};
	if (m->lay && k->kslab)
		data_slab_table(d, m->lay, k->kslab, k->kslab_len, k->input);
	if (m->lay)
		return 0;
	d->kernel_hint = hm_arena_printf(
		&d->arena, "%s has neither DWARF nor .BTF%s%s: kernel data are named by symbol "
		"only, untyped; pass the kernel's -dbg vmlinux with --vmlinux, or report on the "
		"recording machine while it runs the recorded kernel (/sys/kernel/btf/vmlinux)",
		m->path, k->btf ? ", and BTF is unreadable in " : "", k->btf ? k->btf : "");
	return -1;
}

static int cmp_map(const void *x, const void *y)
{
	const struct data_map *a = x, *b = y;

	return a->start < b->start ? -1 : a->start > b->start;
}

int hm_data_add_map(struct hm_data *d, uint32_t pid, uint64_t start, uint64_t len,
		    uint64_t pgoff, const char *filename)
{
	struct data_proc *p;
	struct data_map nm = {start, start + len, pgoff, NULL, NULL};
	size_t n = 0;
	struct data_map *v;

	if (!d || !len || start + len < start || !filename)
		return -1;
	d->umemo_gen++;	/* what an address named may have moved (data_resolve.c) */
	p = data_proc_get(d, pid, 1);
	nm.name = data_intern(d, filename);
	if (is_file(filename))
		nm.mod = data_mod_get(d, filename);
	/* Worst case every old mapping splits around the new one. */
	if (!(v = malloc((2 * p->nr_maps + 1) * sizeof(*v))))
		hm_oom();
	for (size_t i = 0; i < p->nr_maps; i++) {
		struct data_map m = p->maps[i];

		if (m.end <= nm.start || m.start >= nm.end) {
			v[n++] = m;
			continue;
		}
		if (m.start < nm.start)
			v[n++] = (struct data_map){m.start, nm.start, m.pgoff, m.name, m.mod};
		if (m.end > nm.end)
			v[n++] = (struct data_map){nm.end, m.end, m.pgoff + (nm.end - m.start),
						   m.name, m.mod};
	}
	v[n++] = nm;
	hm_sort(v, n, sizeof(*v), cmp_map);
	free(p->maps);
	p->maps = v;
	p->nr_maps = n;
	p->cap_maps = 2 * n + 1;
	p->dirty = 1;
	return 0;
}

const struct data_map *data_map_at(const struct data_proc *p, uint64_t addr)
{
	size_t lo = 0, hi = p ? p->nr_maps : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < p->maps[mid].start)
			hi = mid;
		else if (addr >= p->maps[mid].end)
			lo = mid + 1;
		else
			return &p->maps[mid];
	}
	return NULL;
}

/* Biases (runtime = file address + bias) that mapping mp allows: one per PT_LOAD whose
 * pages hold its file offset. Two segments often share a file page (end of .rodata,
 * start of .data), so one mapping can allow two. */
static size_t map_biases(const struct data_map *mp, uint64_t *out, size_t max)
{
	const struct data_mod *m = mp->mod;
	size_t n = 0;

	for (size_t i = 0; i < m->nr_loads && n < max; i++) {
		const struct data_load *l = &m->loads[i];

		if (mp->pgoff >= (l->off & ~0xfffull) &&
		    mp->pgoff < l->off + (l->filesz ? l->filesz : 1))
			out[n++] = mp->start - mp->pgoff - l->vaddr + l->off;
	}
	return n;
}

/* The bias most of the module's mappings agree on. */
static int mod_bias(const struct data_proc *p, const struct data_mod *m, uint64_t *bias)
{
	uint64_t cand[8], other[8];
	size_t best = 0, first = p->nr_maps;

	for (size_t i = 0; i < p->nr_maps && first == p->nr_maps; i++)
		if (p->maps[i].mod == m)
			first = i;
	if (first == p->nr_maps)
		return -1;
	for (size_t c = 0, nc = map_biases(&p->maps[first], cand, 8); c < nc; c++) {
		size_t votes = 0;

		for (size_t i = first; i < p->nr_maps; i++) {
			size_t no = p->maps[i].mod == m ? map_biases(&p->maps[i], other, 8) : 0;

			for (size_t k = 0; k < no; k++)
				votes += other[k] == cand[c];
		}
		if (votes > best) {
			best = votes;
			*bias = cand[c];
		}
	}
	return best ? 0 : -1;
}

static int cmp_image(const void *x, const void *y)
{
	const struct data_image *a = x, *b = y;

	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

static void images_build(struct data_proc *p)
{
	size_t n = 0;

	p->dirty = 0;
	free(p->images);
	if (!(p->images = malloc((p->nr_maps + 1) * sizeof(*p->images))))
		hm_oom();
	for (size_t i = 0; i < p->nr_maps; i++) {
		const struct data_map *mp = &p->maps[i];
		struct data_mod *m = mp->mod;
		struct data_image img = {UINT64_MAX, 0, 0, m};
		int dup = 0;

		if (!m || (!m->phdrs_done && data_mod_phdrs(m) != 0) || !m->usable)
			continue;
		for (size_t j = 0; j < n && !dup; j++)
			dup = p->images[j].mod == m;
		if (dup || mod_bias(p, m, &img.bias) != 0)
			continue;
		for (size_t j = 0; j < m->nr_loads; j++) {
			const struct data_load *l = &m->loads[j];

			if (l->vaddr + img.bias < img.lo)
				img.lo = l->vaddr + img.bias;
			if (l->vaddr + l->memsz + img.bias > img.hi)
				img.hi = l->vaddr + l->memsz + img.bias;
		}
		p->images[n++] = img;
	}
	p->nr_images = n;
	if (n)
		hm_sort(p->images, n, sizeof(*p->images), cmp_image);
}

#define KERNEL_IMAGE_MAP 0xffffffff80000000ull	/* x86-64 __START_KERNEL_map */

int hm_data_mapped(struct hm_data *d, uint32_t pid, uint64_t addr)
{
	if (!addr)
		return 0;
	if ((int64_t)addr < 0)
		return addr >= KERNEL_IMAGE_MAP;
	return data_map_at(data_proc_get(d, pid, 0), addr) != NULL;
}

int hm_data_sample_mapped(struct hm_data *d, uint32_t pid, uint64_t ip, uint64_t addr)
{
	return hm_data_mapped(d, pid, addr) && hm_data_mapped(d, pid, ip);
}

int data_image_holds(const struct data_image *img, uint64_t addr)
{
	for (size_t j = 0; j < img->mod->nr_loads; j++) {
		const struct data_load *l = &img->mod->loads[j];

		/* The kernel's per-cpu segment at 0 holds offsets, not addresses. */
		if (img->mod->kernel && !l->vaddr)
			continue;
		if (addr - img->bias >= l->vaddr && addr - img->bias - l->vaddr < l->memsz)
			return 1;
	}
	return 0;
}

/* The module whose segments (file-backed or .bss in anonymous pages) hold addr. */
const struct data_image *data_image_at(struct data_proc *p, uint64_t addr)
{
	if (!p)
		return NULL;
	if (p->dirty)
		images_build(p);
	for (size_t i = p->nr_images; i > 0; i--) {
		const struct data_image *img = &p->images[i - 1];

		if (img->lo > addr)
			continue;
		if (addr >= img->hi)
			return NULL;
		return data_image_holds(img, addr) ? img : NULL;
	}
	return NULL;
}

/* The executable of the process (its TLS block sits at the thread pointer). */
const struct data_image *data_exec_image(struct data_proc *p, const struct data_image *code)
{
	if (code && code->mod->is_exec)
		return code;
	for (size_t i = 0; p && i < p->nr_images; i++)
		if (p->images[i].mod->is_exec)
			return &p->images[i];
	return NULL;
}

const char *hm_data_damage(const struct hm_data *d)
{
	for (size_t i = 0; d && i < d->mods.cap; i++) {
		const struct data_mod *m = d->mods.slots[i].val;

		if (d->mods.slots[i].key && m->lay && hm_layout_damage(m->lay))
			return hm_layout_damage(m->lay);
	}
	return NULL;
}

const char *hm_data_symbol_only(const struct hm_data *d, uint64_t *n, size_t *files)
{
	const struct data_mod *best = NULL;

	*n = 0;
	*files = 0;
	for (size_t i = 0; d && i < d->mods.cap; i++) {
		const struct data_mod *m = d->mods.slots[i].val;

		if (!d->mods.slots[i].key || !m->symbol_only ||
		    (!m->is_exec && m->symbol_only * 10 < d->st.total))
			continue;
		(*files)++;
		if (!best || m->symbol_only > best->symbol_only)
			best = m;
	}
	if (best)
		*n = best->symbol_only;
	return best ? best->path : NULL;
}
