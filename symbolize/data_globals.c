/* Globals, statics and thread-locals of a mapped file: its program headers (where each
 * segment loads, the PT_TLS block), its symbol table (the fallback when DWARF is
 * missing), and the two methods that name an address from them. */
#include "symbolize/data_int.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/sort.h"
#include "core/oom.h"
#include "core/file.h"

int data_mod_phdrs(struct data_mod *m)
{
	Elf *elf = NULL;
	GElf_Ehdr eh;
	size_t nph = 0, n = 0;
	int fd;

	m->phdrs_done = 1;
	data_mod_locate(m);
	if (!m->file)
		return -1;	/* replaced since the code side read it: m->hint says so */
	fd = hm_file_open(m->file);	/* a recorded path: regular files only, never blocking */
	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || !gelf_getehdr(elf, &eh) || elf_getphdrnum(elf, &nph) != 0 || !nph ||
	    !(m->loads = calloc(nph, sizeof(*m->loads))))
		goto out;
	m->is_exec = eh.e_type == ET_EXEC;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph))
			continue;
		if (ph.p_type == PT_LOAD && ph.p_memsz) {
			m->loads[n++] = (struct data_load){ph.p_vaddr, ph.p_offset, ph.p_filesz,
							   ph.p_memsz};
			m->percpu_zero |= eh.e_type == ET_EXEC && !ph.p_vaddr;
		}
		else if (ph.p_type == PT_INTERP)
			m->is_exec = 1;
		else if (ph.p_type == PT_TLS && ph.p_memsz) {
			m->has_tls = 1;
			m->tls_vaddr = ph.p_vaddr;
			m->tls_memsz = ph.p_memsz;
			m->tls_align = ph.p_align ? ph.p_align : 1;
		}
	}
	m->nr_loads = n;
	m->usable = n > 0;
out:
	elf_end(elf);
	close(fd);
	return m->usable ? 0 : -1;
}

Elf_Scn *data_symtab_of(Elf *elf, Elf32_Word type)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while (elf && (scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == type && sh.sh_entsize)
			return scn;
	return NULL;
}

static int cmp_sym(const void *x, const void *y)
{
	const struct data_sym *a = x, *b = y;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return a->size > b->size ? -1 : a->size < b->size;
}

static void push_sym(struct data_sym **v, size_t *n, size_t *cap, struct data_sym s)
{
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 256;
		if (!(*v = realloc(*v, *cap * sizeof(**v))))
			hm_oom();
	}
	(*v)[(*n)++] = s;
}

/* STT_OBJECT and STT_TLS symbols: .symtab of the file, else of its debug file (a
 * stripped file with a debuglink), else .dynsym (exported ones only). */
void data_mod_syms(struct data_mod *m)
{
	Elf *elf = hm_ti_elf(m->ti), *dbg = hm_ti_debug_elf(m->ti);
	Elf_Scn *scn = data_symtab_of(elf, SHT_SYMTAB);
	size_t cap = 0, tcap = 0;
	Elf_Data *data;
	GElf_Shdr sh;
	GElf_Ehdr eh;
	int rel;

	if (!scn && (scn = data_symtab_of(dbg, SHT_SYMTAB)))
		elf = dbg;
	if (!scn)
		scn = data_symtab_of(elf, SHT_DYNSYM);
	if (!scn || !gelf_getshdr(scn, &sh) || !(data = elf_getdata(scn, NULL)))
		return;
	/* A relocatable file (a kernel module): values are offsets in their section, which
	 * libdwfl placed at an address of its own layout (that of its DWARF). */
	rel = gelf_getehdr(elf, &eh) && eh.e_type == ET_REL;
	for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
		GElf_Sym sym;
		const char *name;
		int type;

		if (!gelf_getsym(data, (int)i, &sym))
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		if ((type != STT_OBJECT && type != STT_TLS) || !sym.st_size ||
		    sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE ||
		    !(name = elf_strptr(elf, sh.sh_link, sym.st_name)) || !*name)
			continue;
		if (rel) {
			GElf_Shdr ssh;
			Elf_Scn *sscn = elf_getscn(elf, sym.st_shndx);

			if (!sscn || !gelf_getshdr(sscn, &ssh) || !(ssh.sh_flags & SHF_ALLOC))
				continue;
			sym.st_value += ssh.sh_addr;
		}
		if (type == STT_TLS)
			push_sym(&m->tls_syms, &m->nr_tls_syms, &tcap,
				 (struct data_sym){sym.st_value, sym.st_size, name});
		else
			push_sym(&m->syms, &m->nr_syms, &cap,
				 (struct data_sym){sym.st_value, sym.st_size, name});
	}
	if (m->nr_syms)
		hm_sort(m->syms, m->nr_syms, sizeof(*m->syms), cmp_sym);
	if (m->nr_tls_syms)
		hm_sort(m->tls_syms, m->nr_tls_syms, sizeof(*m->tls_syms), cmp_sym);
}

static const struct data_sym *sym_at(const struct data_sym *v, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i > 0 && lo - i < 8; i--)
		if (addr - v[i - 1].addr < v[i - 1].size)
			return &v[i - 1];
	return NULL;
}

/* A variable found by address: DWARF first (its type names the field), then the
 * symbol table (name only, unless the layout knows a variable of that name and size). */
static int name_var(struct data_mod *m, uint64_t va, int tls, uint64_t *start,
		    const char **name, const struct hm_type **type)
{
	const struct hm_ti_static *s = m->ti ? hm_ti_static_at(m->ti, va, tls) : NULL;
	const struct data_sym *sym;

	if (s) {
		*start = s->addr;
		*name = s->name;
		*type = s->type;
		return 0;
	}
	sym = tls ? sym_at(m->tls_syms, m->nr_tls_syms, va) : sym_at(m->syms, m->nr_syms, va);
	if (!sym)
		return -1;
	*start = sym->addr;
	*name = sym->name;
	*type = m->lay ? hm_layout_var_type(m->lay, sym->name) : NULL;
	if (*type && (*type)->size != sym->size)
		*type = NULL;	/* another variable of that name */
	return 0;
}

static void fill(struct hm_data *d, struct data_mod *m, enum hm_method method, const char *name,
		 const struct hm_type *type, uint64_t off, struct hm_data_obj *out)
{
	out->method = method;
	out->object = data_intern(d, name);
	out->type = type;
	out->field = data_field(d, name, type, off);
	out->prefix = out->object;
	out->offset = off;
	out->module = m->path;
	out->hint = type ? NULL : m->hint;
	m->symbol_only += !type && !m->lay;
}

/* The variable at va in an opened module is the same on every sample that touches it,
 * and samples touch the same few over and over: the answer is kept by (module, va) in a
 * direct-mapped table, so a repeat costs a probe instead of a symbol search, a type walk
 * and the field's name. Misses are kept too. */
#define GMEMO_SLOTS 4096	/* 400 KB */

struct global_memo {
	const struct data_mod *m;	/* NULL: empty */
	uint64_t va;
	int rc;
	struct hm_data_obj out;
};

static struct global_memo *gmemo_slot(struct hm_data *d, const struct data_mod *m, uint64_t va)
{
	uint64_t h = (va ^ (uint64_t)(uintptr_t)m * 0x9e3779b97f4a7c15ull) * 0xff51afd7ed558ccdull;

	if (!d->gmemo && !(d->gmemo = calloc(GMEMO_SLOTS, sizeof(*d->gmemo))))
		hm_oom();
	return &d->gmemo[(h >> 40) & (GMEMO_SLOTS - 1)];
}

/* The variable at file address va of m, named into out (base left to the caller). */
static int global_at(struct hm_data *d, struct data_mod *m, uint64_t va, struct hm_data_obj *out)
{
	struct global_memo *g = gmemo_slot(d, m, va);
	uint64_t start;
	const struct hm_type *type;
	const char *name;

	if (g->m == m && g->va == va) {
		if (g->rc == 0) {	/* what fill sets, as it set it */
			out->method = g->out.method;
			out->object = g->out.object;
			out->type = g->out.type;
			out->field = g->out.field;
			out->prefix = g->out.prefix;
			out->offset = g->out.offset;
			out->module = g->out.module;
			out->hint = g->out.hint;
			m->symbol_only += !out->type && !m->lay;	/* as fill counts */
		}
		return g->rc;
	}
	data_mod_open(d, m);
	g->m = m;
	g->va = va;
	g->rc = -1;
	if (name_var(m, va, 0, &start, &name, &type) != 0)
		return -1;
	fill(d, m, HM_M_GLOBAL, name, type, va - start, out);
	g->rc = 0;
	g->out = *out;
	return 0;
}

int data_global(struct hm_data *d, const struct data_image *img, uint64_t addr,
		struct hm_data_obj *out)
{
	uint64_t va = addr - img->bias;

	if (global_at(d, img->mod, va, out))
		return -1;
	out->base = va - out->offset + img->bias;
	return 0;
}

/* Older x86-64 kernels link per-cpu data at address 0 (a PT_LOAD of its own), so %gs:off
 * is the variable's link address; newer ones link it among the kernel's data and the
 * offset is its KASLR-moved address. */
int data_percpu(struct hm_data *d, const struct data_image *kimg, uint64_t off, uint64_t addr,
		struct hm_data_obj *out)
{
	uint64_t va = kimg->mod->percpu_zero ? off : off - kimg->bias;

	if (global_at(d, kimg->mod, va, out))
		return -1;
	out->base = addr ? addr - out->offset : 0;
	return 0;
}

/* x86-64 TLS variant II: the executable's block ends at the thread pointer, rounded
 * so that its first byte keeps PT_TLS's alignment (glibc _dl_determine_tlsoffset). */
static uint64_t tls_block_offset(const struct data_mod *m)
{
	uint64_t align = m->tls_align, first = (0 - m->tls_vaddr) & (align - 1);
	uint64_t size = m->tls_memsz > first ? m->tls_memsz - first : 0;

	return (size + align - 1) / align * align + first;
}

int data_tls(struct hm_data *d, struct data_mod *exe, int64_t tp_off, uint64_t addr,
	     struct hm_data_obj *out)
{
	int64_t o;
	uint64_t start;
	const struct hm_type *type;
	const char *name;

	if (!exe->has_tls || (exe->tls_align & (exe->tls_align - 1)))
		return -1;
	o = tp_off + (int64_t)tls_block_offset(exe);
	if (o < 0 || (uint64_t)o >= exe->tls_memsz)
		return -1;	/* another module's static TLS: offsets known only at run time */
	data_mod_open(d, exe);
	if (name_var(exe, (uint64_t)o, 1, &start, &name, &type) != 0)
		return -1;
	fill(d, exe, HM_M_TLS, name, type, (uint64_t)o - start, out);
	out->base = addr ? addr - out->offset : 0;
	return 0;
}
