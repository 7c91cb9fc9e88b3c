/* Where a module's data lie: the section load addresses `hitmap record -k` stores in the
 * module's MMAP record (core/ksections.h), and kallsyms' module data symbols (types d,
 * b, r with [module]) when the report reads a kallsyms file.
 *
 * With the section addresses, the module's .text is relocated here as its loader did at
 * insmod (R_X86_64_PC32/PLT32/32S/32/64 against the module's own sections), so that a
 * rip-relative operand decoded from the file's bytes has the address that ran, e.g.
 * `mov xfsstats(%rip),%rax` reads xfs's .bss. Places against the kernel's symbols
 * (SHN_UNDEF: calls, jiffies) stay unrelocated and are still not decoded. */
#include "symbolize/code_int.h"

#include <stdlib.h>
#include <string.h>
#include "core/oom.h"
#include "core/sort.h"

#define KDATA_MAX_EXTENT 4096	/* the last symbol of a module: a page, for want of better */

int hm_code_add_kmod_sections(struct hm_code *c, uint64_t start, const uint8_t *extra,
			      size_t len)
{
	struct code_kernel *k = &c->k;
	struct hm_ksect *v;
	size_t n;

	if (!extra || !len)
		return -1;
	for (size_t i = k->nr_mods; i > 0; i--) {
		struct code_kmod *m = &k->mods[i - 1];

		if (m->start != start)
			continue;
		v = hm_arena_alloc(&c->arena, len / 16 * sizeof(*v) + sizeof(*v));
		if (!(n = hm_ksect_decode(extra, len, v, len / 16 + 1)))
			return -1;
		m->secs = v;
		m->nr_secs = n;
		return 0;
	}
	return -1;
}

static const struct hm_ksect *sect_named(const struct code_kmod *m, const char *name)
{
	for (size_t i = 0; name && i < m->nr_secs; i++)
		if (!strcmp(m->secs[i].name, name))
			return &m->secs[i];
	return NULL;
}

/* The load address of symbol index sym of symtab (section index symndx), or 0. */
static uint64_t sym_load(const struct code_kmod *m, Elf *elf, size_t shstrndx,
			 Elf_Data *syms, size_t sym)
{
	GElf_Sym s;
	GElf_Shdr sh;
	Elf_Scn *scn;
	const struct hm_ksect *sec;

	if (!gelf_getsym(syms, (int)sym, &s) || s.st_shndx == SHN_UNDEF ||
	    s.st_shndx >= SHN_LORESERVE || !(scn = elf_getscn(elf, s.st_shndx)) ||
	    !gelf_getshdr(scn, &sh) ||
	    !(sec = sect_named(m, elf_strptr(elf, shstrndx, sh.sh_name))) || !sec->addr)
		return 0;
	return sec->addr + s.st_value;
}

/* Writes one relocation's value at off in bytes; 0 when its type is one we apply. */
static int apply_one(uint8_t *bytes, uint64_t size, uint64_t off, uint32_t type, uint64_t s,
		     int64_t a, uint64_t p)
{
	uint64_t v = s + (uint64_t)a;
	size_t w = type == R_X86_64_64 || type == R_X86_64_PC64 ? 8 : 4;

	if (off > size || size - off < w)
		return -1;
	switch (type) {
	case R_X86_64_PC32:
	case R_X86_64_PLT32:
	case R_X86_64_PC64:
		v -= p;
		break;
	case R_X86_64_32:
	case R_X86_64_32S:
	case R_X86_64_64:
		break;
	default:
		return -1;
	}
	for (size_t i = 0; i < w; i++)
		bytes[off + i] = (uint8_t)(v >> (8 * i));
	return 0;
}

/* Marks the place off (in sorted m->relocs) as filled in. */
static void drop_reloc(const struct code_kmod *m, uint8_t *gone, uint64_t off)
{
	size_t lo = 0, hi = m->nr_relocs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->relocs[mid] < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < m->nr_relocs && m->relocs[lo] == off)
		gone[lo] = 1;
}

void code_kmod_apply(struct code_kmod *m, Elf *elf, size_t text)
{
	const struct hm_ksect *t = sect_named(m, ".text");
	uint64_t taddr = t && t->addr ? t->addr : m->start;
	size_t shstrndx, kept = 0, applied = 0;
	Elf_Scn *scn = NULL;
	uint8_t *gone;

	if (!m->nr_secs || !m->bytes || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return;
	if (!(m->patched = malloc(m->text_size)) || !(gone = calloc(m->nr_relocs + 1, 1)))
		hm_oom();
	memcpy(m->patched, m->bytes, m->text_size);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh, ssh;
		Elf_Data *data, *syms;
		Elf_Scn *symscn;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || sh.sh_info != text ||
		    !sh.sh_entsize || !(data = elf_getdata(scn, NULL)) ||
		    !(symscn = elf_getscn(elf, sh.sh_link)) || !gelf_getshdr(symscn, &ssh) ||
		    !(syms = elf_getdata(symscn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Rela r;
			uint64_t s;

			if (!gelf_getrela(data, (int)i, &r) ||
			    !(s = sym_load(m, elf, shstrndx, syms, GELF_R_SYM(r.r_info))) ||
			    apply_one(m->patched, m->text_size, r.r_offset,
				      (uint32_t)GELF_R_TYPE(r.r_info), s, r.r_addend,
				      taddr + r.r_offset) != 0)
				continue;
			drop_reloc(m, gone, r.r_offset);	/* its bytes are now what ran */
			applied++;
		}
	}
	for (size_t j = 0; j < m->nr_relocs; j++)
		if (!gone[j])
			m->relocs[kept++] = m->relocs[j];
	m->nr_relocs = kept;
	m->nr_applied = applied;
	free(gone);
}

/* ---- Data addresses to module sections and kallsyms data symbols ---- */

int hm_code_kernel_datasec(struct hm_code *c, uint64_t addr, const char **path,
			   const char **sec, uint64_t *off)
{
	struct code_kernel *k = &c->k;

	if (k->kcore_path)
		return -1;	/* live code: kallsyms names module data (datasym) */
	for (size_t i = 0; i < k->nr_mods; i++) {
		struct code_kmod *m = &k->mods[i];

		if (!m->nr_secs || addr < m->start || addr >= m->end)
			continue;
		if (!m->loaded)
			code_kmod_load(c, m);
		if (!m->dso || !m->dso->path || !m->dso->elf)
			return -1;
		/* Sections may be empty or overlap their neighbours' ends: the one whose
		 * extent (its size in the file) holds addr. */
		for (size_t j = 0; j < m->nr_secs; j++) {
			const struct hm_ksect *s = &m->secs[j];

			if (!s->addr || s->addr > addr ||
			    code_sect_size(m->dso->elf, s->name) <= addr - s->addr)
				continue;
			*path = m->dso->path;
			*sec = s->name;
			*off = addr - s->addr;
			return 0;
		}
		return -1;
	}
	return -1;
}

int hm_code_kernel_percpusec(struct hm_code *c, uint64_t off, const char **path,
			     uint64_t *in)
{
	struct code_kernel *k = &c->k;

	if (k->kcore_path)
		return -1;
	for (size_t i = 0; i < k->nr_mods; i++) {
		struct code_kmod *m = &k->mods[i];
		const struct hm_ksect *s = sect_named(m, ".data..percpu");

		if (!s || !s->addr || off < s->addr)
			continue;
		if (!m->loaded)
			code_kmod_load(c, m);
		if (!m->dso || !m->dso->path || !m->dso->elf ||
		    code_sect_size(m->dso->elf, s->name) <= off - s->addr)
			continue;
		*path = m->dso->path;
		*in = off - s->addr;
		return 0;
	}
	return -1;
}

void code_kdata_add(struct hm_code *c, uint64_t addr, char type, const char *name,
		    const char *module)
{
	struct code_kernel *k = &c->k;

	if (k->nr_kdata == k->cap_kdata) {
		size_t cap = k->cap_kdata ? 2 * k->cap_kdata : 1024;
		struct code_ksym *p = realloc(k->kdata, cap * sizeof(*p));

		if (!p)
			hm_oom();
		k->kdata = p;
		k->cap_kdata = cap;
	}
	k->kdata[k->nr_kdata++] = (struct code_ksym){
		addr, 0, hm_arena_strdup(&c->arena, name), module, type};
}

static int kdata_cmp(const void *pa, const void *pb)
{
	const struct code_ksym *a = pa, *b = pb;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

void code_kdata_finish(struct code_kernel *k)
{
	hm_sort(k->kdata, k->nr_kdata, sizeof(*k->kdata), kdata_cmp);
	/* Each symbol ends at the next one of its module (kallsyms has no sizes). */
	for (size_t i = 0; i < k->nr_kdata; i++) {
		struct code_ksym *s = &k->kdata[i];
		uint64_t end = s->addr + KDATA_MAX_EXTENT;

		if (i + 1 < k->nr_kdata && k->kdata[i + 1].addr < end)
			end = k->kdata[i + 1].addr;
		s->end = end;
	}
}

int hm_code_kernel_datasym(struct hm_code *c, uint64_t addr, const char **name,
			   uint64_t *start, const char **module)
{
	struct code_kernel *k = &c->k;
	size_t lo = 0, hi;

	if (!k->ksyms_loaded)
		code_ksyms_load(c);
	hi = k->nr_kdata;
	while (lo < hi) {	/* the first symbol above addr */
		size_t mid = lo + (hi - lo) / 2;

		if (k->kdata[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= k->kdata[lo - 1].end)
		return -1;
	*name = k->kdata[lo - 1].name;
	*start = k->kdata[lo - 1].addr;
	*module = k->kdata[lo - 1].module;
	return 0;
}
