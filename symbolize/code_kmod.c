/* Kernel modules through their own ELF files: the recording's module maps (one MMAP per
 * module, as perf and `hitmap record -k` write them, named by the module's path) lead to
 * the -dbg package's copy under /usr/lib/debug (Debian ships the whole unstripped .ko
 * there), else the .ko itself (symbols only). A module is relocatable: libdwfl lays its
 * sections out at addresses of its own, and the loader puts .text first in the module's
 * core image, at the map's start (perf assumes the same), so ip - start is an offset
 * into .text. Other text sections (.text.unlikely, .init.text) are placed elsewhere at
 * load time: those ips stay with kallsyms. */
#include "symbolize/code_int.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

/* .text's address in libdwfl's layout of the module, and its size; 0 when absent. */
static int text_section(struct code_dso *d, uint64_t *addr, uint64_t *size)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (!d->elf || elf_getshdrstrndx(d->elf, &shstrndx) != 0)
		return 0;
	while ((scn = elf_nextscn(d->elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(d->elf, shstrndx, sh.sh_name)))
			continue;
		if (!strcmp(name, ".text") && (sh.sh_flags & SHF_EXECINSTR)) {
			*addr = sh.sh_addr;
			*size = sh.sh_size;
			return sh.sh_size != 0;
		}
	}
	return 0;
}

/* Opens path when it is the recorded file (build-id, when one was recorded); 1 if so. */
static int kmod_try(struct hm_code *c, struct code_kmod *m, const char *path,
		    const struct code_bid *b)
{
	uint8_t id[HM_BUILD_ID_MAX];
	struct code_dso *d;
	size_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = code_fd_build_id(fd, id);
	if (b && (n != b->size || memcmp(id, b->id, n) != 0)) {
		m->skipped = hm_arena_strdup(&c->arena, path);
		close(fd);
		return 0;
	}
	d = code_dso_get(c, path, id, n);
	if (!d->loaded) {
		d->loaded = 1;
		d->kernel = 1;
		if (code_dso_attach(c, d, path, fd) != 0)
			return 0;
	} else {
		close(fd);
	}
	if (!text_section(d, &m->text, &m->text_size))
		return 0;
	m->dso = d;
	return 1;
}

static void kmod_load(struct hm_code *c, struct code_kmod *m)
{
	const char *root = c->sysroot ? c->sysroot : "";
	const struct code_bid *b = hm_hash_get(&c->build_ids, m->file);
	const char *paths[3];
	size_t n = 0;

	m->loaded = 1;
	paths[n++] = hm_arena_printf(&c->arena, "%s/usr/lib/debug%s", root, m->file);
	paths[n++] = hm_arena_printf(&c->arena, "%s%s", root, m->file);
	if (root[0])
		paths[n++] = hm_arena_printf(&c->arena, "/usr/lib/debug%s", m->file);
	for (size_t i = 0; i < n; i++)
		if (kmod_try(c, m, paths[i], b))
			return;
}

int code_kmod_lookup(struct hm_code *c, struct code_kmod *m, uint64_t ip,
		     struct hm_code_loc *out)
{
	const struct hm_code_loc *loc;
	uint64_t off = ip - m->start;

	if (!m->file)
		return -1;
	if (!m->loaded)
		kmod_load(c, m);
	if (!m->dso || off >= m->text_size)
		return -1;
	loc = code_dso_resolve(c, m->dso, m->text + off);
	*out = *loc;
	out->module = m->name;
	if (out->func)	/* func_start may be 0 here: .text can be laid out at 0 */
		out->func_start = out->func_start - m->text + m->start;
	return 0;
}
