#include "symbolize/globals.h"

#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/hash.h"
#include "core/sort.h"
#include "core/oom.h"
#include "core/file.h"

/* Sections whose lines other CPUs may write: data, bss, read-mostly, per-cpu. */
static int data_section(const char *name)
{
	if (!strncmp(name, ".data.rel.ro", 12))
		return 0;	/* read-only after relocation */
	return !strncmp(name, ".data", 5) || !strncmp(name, ".bss", 4) ||
	       !strcmp(name, ".tdata") || !strcmp(name, ".tbss");
}

static int cmp_addr(const void *x, const void *y)
{
	const struct hm_global *a = x, *b = y;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return strcmp(a->name, b->name);
}

static Elf_Scn *find_symtab(Elf *elf, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL, *dyn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, sh))
			continue;
		if (sh->sh_type == SHT_SYMTAB)
			return scn;
		if (sh->sh_type == SHT_DYNSYM)
			dyn = scn;
	}
	return dyn && gelf_getshdr(dyn, sh) ? dyn : NULL;
}

static int read_symbols(struct hm_arena *a, Elf *elf, struct hm_global **out, size_t *nr)
{
	size_t shstrndx, cap = 0;
	GElf_Shdr sh;
	Elf_Scn *scn = find_symtab(elf, &sh);
	Elf_Data *data;
	struct hm_hash seen;

	if (!scn || elf_getshdrstrndx(elf, &shstrndx) != 0 || !(data = elf_getdata(scn, NULL)))
		return -1;
	hm_hash_init(&seen);
	for (size_t i = 0; sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
		GElf_Sym sym;
		GElf_Shdr ssh;
		const char *name, *sec;
		Elf_Scn *sscn;
		struct hm_global *g;

		if (!gelf_getsym(data, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_OBJECT ||
		    sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE)
			continue;
		name = elf_strptr(elf, sh.sh_link, sym.st_name);
		sscn = elf_getscn(elf, sym.st_shndx);
		if (!name || !*name || !sscn || !gelf_getshdr(sscn, &ssh) ||
		    !(sec = elf_strptr(elf, shstrndx, ssh.sh_name)) || !data_section(sec))
			continue;
		if (*nr == cap) {
			cap = cap ? cap * 2 : 256;
			*out = realloc(*out, cap * sizeof(**out));
			if (!*out)
				hm_oom();
		}
		g = &(*out)[(*nr)++];
		g->section = hm_arena_strdup(a, sec);
		g->addr = sym.st_value;
		g->size = sym.st_size;
		g->name = hm_arena_strdup(a, name);
		for (int n = 2; hm_hash_put(&seen, g->name, g) != g; n++)
			g->name = hm_arena_printf(a, "%s#%d", name, n);
	}
	hm_hash_free(&seen);
	return 0;
}

int hm_globals_load(struct hm_arena *a, const char *path, struct hm_global **out, size_t *nr,
		    struct hm_err *err)
{
	int fd = hm_file_open(path);
	Elf *elf;
	int rc;

	*out = NULL;
	*nr = 0;
	if (fd < 0)
		return hm_err_set(err, HM_EXIT_INPUT, "%s: cannot open for --globals", path);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	rc = elf ? read_symbols(a, elf, out, nr) : -1;
	elf_end(elf);
	close(fd);
	if (rc)
		return hm_err_set(err, HM_EXIT_INPUT,
				  "%s: no symbol table for --globals (stripped): use the unstripped "
				  "build or its debug file", path);
	if (*nr)
		hm_sort(*out, *nr, sizeof(**out), cmp_addr);
	return 0;
}
