/* Kernel modules through their own ELF files: the recording's module maps (one MMAP per
 * module, as perf and `hitmap record -k` write them, named by the module's path) lead to
 * the -dbg package's copy under /usr/lib/debug (Debian ships the whole unstripped .ko
 * there), the .ko itself, or - for a module built elsewhere - perf's build-id cache
 * (--buildid-dir DIR: DIR/.build-id/xx/yyyy/elf, as `perf buildid-cache -a x.ko` fills
 * it), each only when its build-id is the recorded one. A module is relocatable: libdwfl
 * lays its sections out at addresses of its own, and the loader puts .text first in the
 * module's core image, at the map's start (perf assumes the same), so ip - start is an
 * offset into .text. Other text sections (.text.unlikely, .init.text) are placed
 * elsewhere at load time: those ips stay with kallsyms.
 * Code bytes come from the file's .text; the loader patches the places .rela.text lists
 * (rip-relative operands, calls, immediates), so an instruction holding one of them is
 * not decoded (hm_code_kernel_relocated): only register-based accesses (ip->i_lock) keep
 * their address. */
#include "symbolize/code_int.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/oom.h"
#include "core/sort.h"

static int u64_cmp(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return a < b ? -1 : a > b;
}

/* The offsets in section text (its index) that a SHT_RELA/SHT_REL section patches. */
static void text_relocs(struct code_kmod *m, Elf *elf, size_t text)
{
	Elf_Scn *scn = NULL;
	size_t cap = 0;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_RELA && sh.sh_type != SHT_REL) ||
		    sh.sh_info != text || !sh.sh_entsize || !(data = elf_getdata(scn, NULL)))
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Rela ra;
			GElf_Rel rl;
			uint64_t off;

			if (sh.sh_type == SHT_RELA ? !gelf_getrela(data, (int)i, &ra)
						   : !gelf_getrel(data, (int)i, &rl))
				continue;
			off = sh.sh_type == SHT_RELA ? ra.r_offset : rl.r_offset;
			if (m->nr_relocs == cap) {
				uint64_t *p;

				cap = cap ? 2 * cap : 1024;
				if (!(p = realloc(m->relocs, cap * sizeof(*p))))
					hm_oom();
				m->relocs = p;
			}
			m->relocs[m->nr_relocs++] = off;
		}
	}
	hm_sort(m->relocs, m->nr_relocs, sizeof(*m->relocs), u64_cmp);
}

/* .text's address in libdwfl's layout of the module, its size, its bytes and the places
 * relocated in it; 0 when absent. */
static int text_section(struct code_kmod *m, struct code_dso *d, uint64_t *addr,
			uint64_t *size)
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
			Elf_Data *data = elf_rawdata(scn, NULL);

			*addr = sh.sh_addr;
			*size = sh.sh_size;
			if (data && data->d_buf && data->d_size == sh.sh_size && !m->bytes) {
				m->bytes = data->d_buf;
				text_relocs(m, d->elf, elf_ndxscn(scn));
				code_kmod_apply(m, d->elf, elf_ndxscn(scn));
			}
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
	if (!text_section(m, d, &m->text, &m->text_size))
		return 0;
	m->dso = d;
	return 1;
}

uint64_t code_sect_size(Elf *elf, const char *name)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_ALLOC) &&
		    (n = elf_strptr(elf, shstrndx, sh.sh_name)) && !strcmp(n, name))
			return sh.sh_size;
	}
	return 0;
}

void code_kmod_load(struct hm_code *c, struct code_kmod *m)
{
	const char *root = c->sysroot ? c->sysroot : "";
	const struct code_bid *b = hm_hash_get(&c->build_ids, m->file);
	const char *paths[4];
	size_t n = 0;

	m->loaded = 1;
	if (b && c->buildid_dir) {
		const char *hex = code_hex(&c->arena, b->id, b->size);

		paths[n++] = hm_arena_printf(&c->arena, "%s/.build-id/%.2s/%s/elf",
					     c->buildid_dir, hex, hex + 2);
	}
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
		code_kmod_load(c, m);
	if (!m->dso || off >= m->text_size)
		return -1;
	loc = code_dso_resolve(c, m->dso, m->text + off);
	*out = *loc;
	out->module = m->name;
	if (out->func)	/* func_start may be 0 here: .text can be laid out at 0 */
		out->func_start = out->func_start - m->text + m->start;
	return 0;
}

size_t code_kmod_read(struct hm_code *c, struct code_kmod *m, uint64_t ip, uint8_t *buf,
		      size_t len)
{
	uint64_t off = ip - m->start;

	if (!m->file)
		return 0;
	if (!m->loaded)
		code_kmod_load(c, m);
	if (!m->dso || !m->bytes || off >= m->text_size)
		return 0;
	if (len > m->text_size - off)
		len = (size_t)(m->text_size - off);
	memcpy(buf, (m->patched ? m->patched : m->bytes) + off, len);
	return len;
}

/* Whether a relocated place lies in [off, off + len) of m's .text. */
static int relocated(const struct code_kmod *m, uint64_t off, size_t len)
{
	size_t lo = 0, hi = m->nr_relocs;

	while (lo < hi) {	/* the first relocation at or after off */
		size_t mid = lo + (hi - lo) / 2;

		if (m->relocs[mid] < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->nr_relocs && m->relocs[lo] < off + len;
}

int hm_code_kernel_relocated(struct hm_code *c, uint64_t ip, size_t len)
{
	struct code_kernel *k = &c->k;

	if (k->kcore_path)
		return 0;	/* live code: relocated by the loader already */
	for (size_t i = 0; i < k->nr_mods; i++) {
		struct code_kmod *m = &k->mods[i];

		if (ip >= m->start && ip < m->end)
			return m->bytes && ip - m->start < m->text_size &&
			       relocated(m, ip - m->start, len) ? HM_PATCH_RELOC : 0;
	}
	return 0;
}

int hm_code_kernel_module(struct hm_code *c, uint64_t ip, const char **path, uint64_t *bias)
{
	struct code_kernel *k = &c->k;

	if (k->kcore_path)
		return -1;
	for (size_t i = 0; i < k->nr_mods; i++) {
		struct code_kmod *m = &k->mods[i];

		if (ip < m->start || ip >= m->end)
			continue;
		if (m->file && !m->loaded)
			code_kmod_load(c, m);
		if (!m->dso || !m->dso->path || ip - m->start >= m->text_size)
			return -1;
		*path = m->dso->path;
		*bias = m->start - m->text;
		return 0;
	}
	return -1;
}
