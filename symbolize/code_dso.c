/* One mapped ELF file through libdwfl: finding it (sysroot, build-id cache, debuginfod),
 * checking its build-id against the recording, and resolving addresses inside it to a
 * function (symbol table) and, through code_dwarf.c, a source line and inline chain. */
#include "symbolize/code_int.h"

#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/sort.h"
#include "core/file.h"

char *code_hex(struct hm_arena *a, const uint8_t *id, size_t size)
{
	char *s = hm_arena_alloc(a, 2 * size + 1);

	for (size_t i = 0; i < size; i++)
		snprintf(s + 2 * i, 3, "%02x", id[i]);
	return s;
}

size_t code_fd_build_id(int fd, uint8_t out[HM_BUILD_ID_MAX])
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const void *p;
	ssize_t n = elf ? dwelf_elf_gnu_build_id(elf, &p) : -1;
	size_t r = 0;

	/* perf keeps at most 20 bytes (SHA-1); compare that much of longer ids. */
	if (n > 0) {
		r = n > HM_BUILD_ID_MAX ? HM_BUILD_ID_MAX : (size_t)n;
		memcpy(out, p, r);
	}
	elf_end(elf);
	return r;
}

struct code_dso *code_dso_get(struct hm_code *c, const char *filename, const uint8_t *id,
			      size_t size)
{
	const char *key = filename;
	struct code_dso *d;

	if (size)
		key = hm_arena_printf(&c->arena, "%s\n%s", filename, code_hex(&c->arena, id, size));
	if ((d = hm_hash_get(&c->dso_keys, key)))
		return d;
	d = hm_arena_alloc(&c->arena, sizeof(*d));
	d->name = hm_arena_strdup(&c->arena, filename);
	if (!size)
		key = d->name;
	if (size)
		memcpy(d->build_id, id, size);
	d->build_id_size = size;
	hm_map64_init(&d->cache);
	hm_map64_init(&d->cus);
	d->next = c->dsos;
	c->dsos = d;
	hm_hash_put(&c->dso_keys, key, d);
	return d;
}

void code_dso_free(struct code_dso *d)
{
	hm_map64_free(&d->cache);
	hm_map64_free(&d->cus);
	free(d->syms);
	free(d->loads);
	if (d->dwfl)
		dwfl_end(d->dwfl);
}

const char *code_debug_fix(struct hm_arena *a, const char *path)
{
	static const char *const libc[] = {"libc.so", "libc-", "ld-linux", "libm.so", "libm-",
					   "libpthread", "libdl.so", "librt.so", "libresolv",
					   "libmvec", "libanl", "libutil.so", "libBrokenLocale"};
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	for (size_t i = 0; i < sizeof(libc) / sizeof(libc[0]); i++)
		if (strncmp(base, libc[i], strlen(libc[i])) == 0)
			return "install libc6-dbg";
	if (strncmp(path, "/usr/", 5) == 0 || strncmp(path, "/lib", 4) == 0 ||
	    strncmp(path, "/bin/", 5) == 0 || strncmp(path, "/sbin/", 6) == 0 ||
	    strncmp(path, "/opt/", 5) == 0)
		return hm_arena_printf(a, "install the -dbgsym (or -dbg) package of the package "
				       "that owns it (`dpkg -S %s`)", path);
	return "rebuild it with -g and do not strip it";
}

static const char *nodebug_hint(struct hm_code *c, struct code_dso *d)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	int n = dwfl_module_build_id(d->mod, &bits, &vaddr);
	const char *fix = code_debug_fix(&c->arena, d->path), *hex;

	if (n <= 0)
		return hm_arena_printf(&c->arena, "%s: no debug info (and no build-id to find it "
				       "by): %s", d->path, fix);
	hex = code_hex(&c->arena, bits, (size_t)n);
	if (code_debuginfod_enabled())
		return hm_arena_printf(&c->arena, "%s: no debug info, and DEBUGINFOD_URLS servers "
				       "have none for build-id %s: %s, or put the debug file at "
				       "/usr/lib/debug/.build-id/%.2s/%s.debug", d->path, hex, fix,
				       hex, hex + 2);
	return hm_arena_printf(&c->arena, "%s: no debug info: %s, put the debug file at "
			       "/usr/lib/debug/.build-id/%.2s/%s.debug, or set DEBUGINFOD_URLS to "
			       "fetch build-id %s", d->path, fix, hex, hex + 2, hex);
}

static int exec_section(Elf *elf, GElf_Word shndx)
{
	Elf_Scn *scn = elf ? elf_getscn(elf, shndx) : NULL;
	GElf_Shdr sh;

	return scn && gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR);
}

static int leading_underscores(const char *s)
{
	int n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

static int sym_cmp(const void *pa, const void *pb)
{
	const struct code_sym *a = pa, *b = pb;
	int ua, ub;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	ua = leading_underscores(a->name);
	ub = leading_underscores(b->name);
	if (ua != ub)
		return ua - ub;
	return strcmp(a->name, b->name);
}

/* Functions of the symbol table (dwfl merges .symtab, the debug file's and .dynsym),
 * sorted once: dwfl_module_addrinfo scans every symbol on each call. */
static void build_syms(struct code_dso *d)
{
	int n = dwfl_module_getsymtab(d->mod);
	size_t k = 0, out = 0;

	if (n <= 0 || !(d->syms = malloc((size_t)n * sizeof(*d->syms))))
		return;
	for (int i = 0; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		Elf *elf;
		Dwarf_Addr bias;
		const char *name = dwfl_module_getsym_info(d->mod, i, &sym, &addr, &shndx, &elf,
							   &bias);
		int type = GELF_ST_TYPE(sym.st_info), bind = GELF_ST_BIND(sym.st_info);

		if (!name || !name[0] || shndx == SHN_UNDEF || shndx == SHN_ABS)
			continue;
		/* Assembly entry points are NOTYPE labels in text sections. */
		if (type != STT_FUNC && type != STT_GNU_IFUNC &&
		    !(type == STT_NOTYPE && exec_section(elf, shndx)))
			continue;
		d->syms[k].start = addr;
		d->syms[k].size = sym.st_size;
		d->syms[k].name = name;
		d->syms[k].rank = (type == STT_NOTYPE) * 8 + (sym.st_size == 0) * 4 +
				  (bind == STB_LOCAL ? 2 : bind == STB_WEAK);
		k++;
	}
	hm_sort(d->syms, k, sizeof(*d->syms), sym_cmp);
	for (size_t i = 0; i < k; i++)
		if (out == 0 || d->syms[i].start != d->syms[out - 1].start)
			d->syms[out++] = d->syms[i];
	for (size_t i = 0; i + 1 < out; i++)
		if (d->syms[i].size == 0)
			d->syms[i].size = d->syms[i + 1].start - d->syms[i].start;
	d->nr_syms = out;
}

static const struct code_sym *sym_find(const struct code_dso *d, uint64_t vaddr)
{
	size_t lo = 0, hi = d->nr_syms;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->syms[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* lo - 1 is the last symbol at or before vaddr; a larger one before it may still
	 * contain vaddr (a local label inside a function). */
	for (size_t i = lo, tries = 0; i > 0 && tries < 8; i--, tries++) {
		const struct code_sym *s = &d->syms[i - 1];

		if (s->size == 0 || vaddr - s->start < s->size)
			return s;
	}
	return NULL;
}

static void read_loads(struct code_dso *d)
{
	size_t n;

	if (!d->elf || elf_getphdrnum(d->elf, &n) != 0 || n == 0 ||
	    !(d->loads = calloc(n, sizeof(*d->loads))))
		return;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(d->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		d->loads[d->nr_loads++] = (struct code_load){ph.p_offset, ph.p_vaddr, ph.p_filesz,
							     ph.p_flags};
	}
}

const struct code_load *code_dso_load_at(const struct code_dso *d, uint64_t off)
{
	const struct code_load *any = NULL;

	/* A mapping starts at the page holding the segment's first byte, so off may lie
	 * up to a page (64 KiB on some machines) before p_offset. Executable segments win:
	 * a read-only segment can share the executable one's first page. */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < d->nr_loads; i++) {
			const struct code_load *l = &d->loads[i];
			int in = (off >= l->offset && off - l->offset < l->filesz) ||
				 (off < l->offset && l->offset - off < 0x10000 && pass == 1);

			if (!in)
				continue;
			if (l->flags & PF_X)
				return l;
			if (!any)
				any = l;
		}
	return any;
}

size_t code_dso_read_vaddr(const struct code_dso *d, uint64_t vaddr, uint8_t *buf, size_t len)
{
	size_t size;
	char *raw = d->elf ? elf_rawfile(d->elf, &size) : NULL;

	for (size_t i = 0; raw && i < d->nr_loads; i++) {
		const struct code_load *l = &d->loads[i];
		uint64_t in = vaddr - l->vaddr, off = l->offset + in;

		if (vaddr < l->vaddr || in >= l->filesz || off >= size)
			continue;
		if (len > l->filesz - in)
			len = l->filesz - in;
		if (len > size - off)
			len = size - off;
		memcpy(buf, raw + off, len);
		return len;
	}
	return 0;
}

int code_dso_attach(struct hm_code *c, struct code_dso *d, const char *path, int fd)
{
	Dwarf_Addr bias;

	d->path = hm_arena_strdup(&c->arena, path);
	if (!hm_file_is_elf(fd)) {
		d->flags |= HM_CODE_NO_FILE | HM_CODE_NO_DEBUGINFO;
		d->hint = hm_arena_printf(&c->arena, "%s: not an ELF file, so its code cannot be "
					  "read: restore the original file or pass --sysroot", path);
		close(fd);
		return -1;
	}
	d->dwfl = dwfl_begin(&c->cb);
	if (d->dwfl) {
		dwfl_report_begin(d->dwfl);
		/* Bias 0: addresses inside the module are the file's own p_vaddr values. */
		d->mod = dwfl_report_elf(d->dwfl, d->name, path, fd, 0, true);
		dwfl_report_end(d->dwfl, NULL, NULL);
	}
	if (!d->mod) {
		d->flags |= HM_CODE_NO_FILE | HM_CODE_NO_DEBUGINFO;
		d->hint = hm_arena_printf(&c->arena, "%s: not a usable ELF file (%s): restore the "
					  "original file or pass --sysroot", path, dwfl_errmsg(-1));
		close(fd);	/* dwfl_report_elf keeps fd only on success */
		if (d->dwfl)
			dwfl_end(d->dwfl);
		d->dwfl = NULL;
		return -1;
	}
	d->elf = dwfl_module_getelf(d->mod, &bias);
	read_loads(d);
	build_syms(d);
	if (!dwfl_module_getdwarf(d->mod, &bias)) {
		d->flags |= HM_CODE_NO_DEBUGINFO;
		d->hint = nodebug_hint(c, d);
	}
	return 0;
}

static const char *special_hint(const char *name)
{
	if (strcmp(name, "[vdso]") == 0 || strcmp(name, "[vsyscall]") == 0)
		return "code in the vDSO: hitmap does not read the vDSO image yet, so these "
		       "samples keep their raw address";
	if (name[0] != '/' || strncmp(name, "//anon", 6) == 0 || strncmp(name, "/memfd:", 7) == 0 ||
	    strstr(name, "anon_inode:"))
		return "anonymous executable memory (JIT or generated code): there is no file to "
		       "read symbols from, and hitmap does not read /tmp/perf-PID.map yet";
	return NULL;
}

static const char *file_path(struct hm_code *c, const char *name)
{
	size_t n = strlen(name);
	static const char deleted[] = " (deleted)";

	if (n > sizeof(deleted) - 1 && strcmp(name + n - (sizeof(deleted) - 1), deleted) == 0)
		n -= sizeof(deleted) - 1;
	return hm_arena_printf(&c->arena, "%s%.*s", c->sysroot ? c->sysroot : "", (int)n, name);
}

/* The recorded file by its build-id: perf's build-id cache, then debuginfod. */
static int attach_by_build_id(struct hm_code *c, struct code_dso *d)
{
	const char *hex = code_hex(&c->arena, d->build_id, d->build_id_size);
	uint8_t id[HM_BUILD_ID_MAX];
	char *path = NULL;
	int fd;

	if (c->buildid_dir) {
		const char *p = hm_arena_printf(&c->arena, "%s/.build-id/%.2s/%s/elf",
						c->buildid_dir, hex, hex + 2);

		fd = hm_file_open(p);
		if (fd >= 0 && code_fd_build_id(fd, id) == d->build_id_size &&
		    memcmp(id, d->build_id, d->build_id_size) == 0)
			return code_dso_attach(c, d, p, fd) == 0;
		if (fd >= 0)
			close(fd);
	}
	fd = code_fetch(c, d->build_id, d->build_id_size, 0, &path);
	if (fd < 0)
		return 0;
	fd = code_dso_attach(c, d, path, fd);
	free(path);
	return fd == 0;
}

void code_dso_load(struct hm_code *c, struct code_dso *d)
{
	const char *path, *hint, *hex;
	uint8_t disk[HM_BUILD_ID_MAX];
	size_t disk_size = 0;
	int fd, err;

	d->loaded = 1;
	if ((hint = special_hint(d->name))) {
		d->flags = HM_CODE_NO_FILE | HM_CODE_NO_DEBUGINFO;
		d->hint = hint;
		return;
	}
	path = file_path(c, d->name);
	fd = hm_file_open(path);
	err = errno;
	if (fd >= 0) {
		disk_size = code_fd_build_id(fd, disk);
		if (d->build_id_size == 0 || (disk_size == d->build_id_size &&
					      memcmp(disk, d->build_id, disk_size) == 0)) {
			code_dso_attach(c, d, path, fd);
			return;
		}
	}
	if (d->build_id_size && attach_by_build_id(c, d)) {
		if (fd >= 0)
			close(fd);
		return;
	}
	hex = d->build_id_size ? code_hex(&c->arena, d->build_id, d->build_id_size) : NULL;
	if (fd >= 0) {
		const char *why;

		if (code_dso_attach(c, d, path, fd) != 0)
			return;
		why = d->hint;	/* set when the file has no debug info either */
		d->flags |= HM_CODE_BUILDID_MISMATCH;
		d->hint = hm_arena_printf(
			&c->arena, "%s: build-id %s on disk but %s in the recording: the file "
			"changed after recording (rebuilt or upgraded), so names and lines may be "
			"wrong: record again, or give the recorded file (--buildid-dir with perf's "
			"build-id cache, --sysroot, or DEBUGINFOD_URLS)%s%s", path,
			disk_size ? code_hex(&c->arena, disk, disk_size) : "(none)", hex,
			why ? "; also " : "", why ? why : "");
		return;
	}
	d->flags = HM_CODE_NO_FILE | HM_CODE_NO_DEBUGINFO | HM_CODE_UNREADABLE;
	d->hint = hm_arena_printf(&c->arena, "%s: cannot open (%s): %spass --sysroot DIR with a "
				  "copy of the recording machine's files or --buildid-dir DIR "
				  "(perf's ~/.debug)%s%s", path, hm_file_strerror(err),
				  err == EACCES ? "run as root or fix its permissions, or " : "",
				  hex ? ", or set DEBUGINFOD_URLS to fetch build-id " : "",
				  hex ? hex : "");
}

const struct hm_code_loc *code_dso_resolve(struct hm_code *c, struct code_dso *d,
					   uint64_t vaddr)
{
	struct hm_code_loc *loc = hm_map64_get(&d->cache, vaddr + 1);
	const struct code_sym *s;

	if (loc)
		return loc;
	loc = hm_arena_alloc(&c->arena, sizeof(*loc));
	loc->module = d->name;
	loc->flags = d->flags;
	loc->hint = d->hint;
	if ((s = sym_find(d, vaddr))) {
		loc->func = code_demangle(&c->arena, s->name);
		loc->func_start = s->start;
		loc->func_size = s->size;
		loc->offset = vaddr - s->start;
	}
	if (d->mod && !(d->flags & HM_CODE_NO_DEBUGINFO))
		code_dwarf_resolve(c, d, vaddr, loc);
	hm_map64_put(&d->cache, vaddr + 1, loc);
	return loc;
}
