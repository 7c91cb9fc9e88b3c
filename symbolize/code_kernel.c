/* The kernel: DWARF from a vmlinux (--vmlinux, the -dbg package's paths, or debuginfod
 * by the recorded build-id) moved by the KASLR offset; else function names only, from
 * kallsyms (code_kallsyms.c reads it; binary-searched here), which also names module
 * functions. */
#include "symbolize/code_int.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/oom.h"
#include "core/file.h"

#define HM_KERNEL_NAME "[kernel.kallsyms]"

/* perf's vmlinux_path, minus the current directory. */
static const char *const vmlinux_paths[] = {
	"/usr/lib/debug/boot/vmlinux-%s",
	"/usr/lib/debug/lib/modules/%s/vmlinux",
	"/lib/modules/%s/build/vmlinux",
	"/boot/vmlinux-%s",
	"/usr/lib/debug/boot/vmlinux-%s.debug",
};

static const char *module_name(struct hm_arena *a, const char *filename)
{
	const char *base = strrchr(filename, '/');
	char *name, *p;

	base = base ? base + 1 : filename;
	if (base[0] == '[')
		base++;
	name = hm_arena_strdup(a, base);
	if ((p = strstr(name, ".ko")) || (p = strchr(name, ']')))
		*p = '\0';
	for (p = name; *p; p++)
		if (*p == '-')
			*p = '_';	/* the kernel's module names use '_' */
	return name;
}

void code_kernel_add_map(struct hm_code *c, uint64_t start, uint64_t len, uint64_t pgoff,
			 const char *filename, const uint8_t *id, size_t size)
{
	struct code_kernel *k = &c->k;
	size_t n = strlen(HM_KERNEL_NAME);

	if (strncmp(filename, HM_KERNEL_NAME, n) == 0) {
		/* perf writes "[kernel.kallsyms]_text" with pgoff = the runtime _text. */
		if (len && len < (1ull << 30))
			k->ref_len = len;	/* perf: _etext - _text; old hitmap: to ~0 */
		if (pgoff) {
			k->has_ref = 1;
			k->ref_name = hm_arena_strdup(&c->arena,
						      filename[n] ? filename + n : "_text");
			k->ref_addr = pgoff;
		}
		if (size) {
			memcpy(k->build_id, id, size);
			k->build_id_size = size;
		}
		return;
	}
	if (k->nr_mods == k->cap_mods) {
		size_t cap = k->cap_mods ? 2 * k->cap_mods : 16;
		struct code_kmod *m = realloc(k->mods, cap * sizeof(*m));

		if (!m)
			hm_oom();
		k->mods = m;
		k->cap_mods = cap;
	}
	k->mods[k->nr_mods++] = (struct code_kmod){
		.start = start, .end = start + len, .name = module_name(&c->arena, filename),
		.file = filename[0] == '/' ? hm_arena_strdup(&c->arena, filename) : NULL};
}

void code_kernel_free(struct hm_code *c)
{
	code_kcore_close(&c->k.kcore);
	free(c->k.ksyms);
	for (size_t i = 0; i < c->k.nr_mods; i++) {
		free(c->k.mods[i].relocs);
		free(c->k.mods[i].patched);
	}
	free(c->k.kdata);
	free(c->k.mods);
	free(c->k.pv);
	hm_map64_free(&c->k.cache);
	hm_map64_free(&c->k.aliases);
}

/* The running kernel's build-id, from its ELF notes; 0 when unreadable. */
size_t code_live_build_id(uint8_t out[HM_BUILD_ID_MAX])
{
	uint8_t buf[4096];
	int fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;
	size_t off = 0;

	if (fd >= 0)
		close(fd);
	while (n > 0 && off + 12 <= (size_t)n) {
		uint32_t nh[3];
		size_t name, desc, next, size;

		memcpy(nh, buf + off, sizeof(nh));
		name = off + 12;
		desc = name + ((nh[0] + 3) & ~3u);
		next = desc + ((nh[1] + 3) & ~3u);
		if (next > (size_t)n)
			break;
		if (nh[2] == NT_GNU_BUILD_ID && nh[0] == 4 && memcmp(buf + name, "GNU", 4) == 0 &&
		    nh[1] > 0) {
			size = nh[1] > HM_BUILD_ID_MAX ? HM_BUILD_ID_MAX : nh[1];
			memcpy(out, buf + desc, size);
			return size;
		}
		off = next;
	}
	return 0;
}

static struct code_dso *kernel_dso(struct hm_code *c)
{
	struct code_dso *d = hm_arena_alloc(&c->arena, sizeof(*d));

	d->name = HM_KERNEL_NAME;
	d->loaded = d->kernel = 1;
	hm_map64_init(&d->cache);
	hm_map64_init(&d->cus);
	d->next = c->dsos;
	c->dsos = d;
	return d;
}

static int sym_addr(struct code_dso *d, const char *name, uint64_t *addr)
{
	int n = dwfl_module_getsymtab(d->mod);

	for (int i = 0; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr a;
		const char *s = dwfl_module_getsym_info(d->mod, i, &sym, &a, NULL, NULL, NULL);

		if (s && strcmp(s, name) == 0) {
			*addr = a;
			return 1;
		}
	}
	return 0;
}

/* Uses the vmlinux at path (fd consumed) when it is the recorded kernel's, or always
 * when the user named it. Returns 1 when attached. */
static int vmlinux_try(struct hm_code *c, const char *path, int fd, int named,
		       const char **skipped)
{
	struct code_kernel *k = &c->k;
	uint8_t id[HM_BUILD_ID_MAX];
	size_t n = code_fd_build_id(fd, id);
	int mismatch = k->build_id_size && (n != k->build_id_size ||
					    memcmp(id, k->build_id, n) != 0);
	struct code_dso *d;

	if (mismatch && !named) {
		*skipped = hm_arena_strdup(&c->arena, path);
		close(fd);
		return 0;
	}
	d = kernel_dso(c);
	if (code_dso_attach(c, d, path, fd) != 0)
		return 0;
	if (d->flags & HM_CODE_NO_DEBUGINFO)
		d->hint = hm_arena_printf(&c->arena, "%s has no debug info: install "
					  "linux-image-%s-dbg (Ubuntu: -dbgsym) and pass its "
					  "/usr/lib/debug/boot/vmlinux-%s", path, c->release, c->release);
	if (mismatch) {
		d->flags |= HM_CODE_BUILDID_MISMATCH;
		d->hint = hm_arena_printf(&c->arena, "%s: build-id %s, but the recorded kernel's "
					  "is %s: pass the vmlinux of the recorded kernel", path,
					  n ? code_hex(&c->arena, id, n) : "(none)",
					  code_hex(&c->arena, k->build_id, k->build_id_size));
	}
	k->vmlinux = d;
	return 1;
}

static void vmlinux_find(struct hm_code *c, const char **skipped)
{
	struct code_kernel *k = &c->k;
	char *path = NULL;
	int fd;

	if (c->vmlinux && c->vmlinux[0]) {
		if ((fd = hm_file_open(c->vmlinux)) >= 0)
			vmlinux_try(c, c->vmlinux, fd, 1, skipped);
		return;
	}
	if (c->vmlinux)
		return;		/* "": kallsyms only */
	for (size_t i = 0; i < sizeof(vmlinux_paths) / sizeof(vmlinux_paths[0]); i++) {
		const char *p = hm_arena_printf(&c->arena, "%s", c->sysroot ? c->sysroot : "");
		char magic[4];

		p = hm_arena_printf(&c->arena, "%s%s", p,
				    hm_arena_printf(&c->arena, vmlinux_paths[i], c->release));
		if ((fd = hm_file_open(p)) < 0)
			continue;
		if (read(fd, magic, 4) != 4 || memcmp(magic, "\177ELF", 4) != 0) {
			close(fd);	/* /boot/vmlinux-* is compressed on some distributions */
			continue;
		}
		if (vmlinux_try(c, p, fd, 0, skipped))
			return;
	}
	fd = code_fetch(c, k->build_id, k->build_id_size, 1, &path);
	if (fd >= 0)
		vmlinux_try(c, path, fd, 0, skipped);
	free(path);
}

static void kaslr_find(struct hm_code *c)
{
	struct code_kernel *k = &c->k;
	uint64_t link = 0;

	if (!sym_addr(k->vmlinux, k->ref_name, &link))
		return;
	if (k->has_ref) {
		k->kaslr = (int64_t)(k->ref_addr - link);
		return;
	}
	/* No record of the recorded boot: assume kallsyms is from it. */
	if (!k->ksyms_loaded)
		code_ksyms_load(c);
	if (k->ksyms_ref)
		k->kaslr = (int64_t)(k->ksyms_ref - link);
}

static void kernel_load(struct hm_code *c)
{
	struct code_kernel *k = &c->k;
	const char *skipped = NULL, *hex;

	k->loaded = 1;
	if (!k->ref_name)
		k->ref_name = "_text";
	if (!k->build_id_size && c->release_live && c->kallsyms_default)
		k->build_id_size = code_live_build_id(k->build_id);
	vmlinux_find(c, &skipped);
	k->skipped = skipped;
	if (!k->vmlinux)
		code_kcore_setup(c);
	if (k->vmlinux) {
		kaslr_find(c);
		k->hint = "function name only, from kallsyms: the module's debug file was not "
			  "found (install linux-image-RELEASE-dbg: /usr/lib/debug/lib/modules/"
			  "RELEASE/...; record with hitmap or perf for the module maps)";
		return;
	}
	hex = k->build_id_size ? code_hex(&c->arena, k->build_id, k->build_id_size) : NULL;
	k->hint = hm_arena_printf(
		&c->arena, "kernel function names only (from %s): for source lines install "
		"linux-image-%s-dbg (Ubuntu: -dbgsym) and pass --vmlinux "
		"/usr/lib/debug/boot/vmlinux-%s%s%s%s%s%s", c->kallsyms, c->release, c->release,
		skipped ? "; " : "", skipped ? skipped : "",
		skipped ? " is not the recorded kernel (build-id differs)" : "",
		!code_debuginfod_enabled() ? ", or set DEBUGINFOD_URLS" :
		hex ? "; debuginfod has no vmlinux for build-id " : "",
		code_debuginfod_enabled() && hex ? hex : "");
}

int code_vmlinux_exec(const struct code_dso *d, uint64_t vaddr)
{
	for (size_t i = 0; i < d->nr_loads; i++)
		if ((d->loads[i].flags & PF_X) && vaddr >= d->loads[i].vaddr &&
		    vaddr - d->loads[i].vaddr < d->loads[i].filesz)
			return 1;
	return 0;
}

static struct code_kmod *kmod_find(const struct code_kernel *k, uint64_t ip)
{
	for (size_t i = 0; i < k->nr_mods; i++)
		if (ip >= k->mods[i].start && ip < k->mods[i].end)
			return &k->mods[i];
	return NULL;
}

static const struct code_ksym *ksym_find(const struct code_kernel *k, uint64_t addr)
{
	size_t lo = 0, hi = k->nr_ksyms;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->ksyms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || addr >= k->ksyms[lo - 1].end || !k->ksyms[lo - 1].name)
		return NULL;
	return &k->ksyms[lo - 1];
}

static struct hm_code_loc *ksym_resolve(struct hm_code *c, uint64_t ip)
{
	struct code_kernel *k = &c->k;
	struct hm_code_loc *loc = hm_arena_alloc(&c->arena, sizeof(*loc));
	const struct code_ksym *s;
	const struct code_kmod *m;
	uint64_t addr;

	loc->module = HM_KERNEL_NAME;
	loc->flags = HM_CODE_KALLSYMS_ONLY;
	if (!k->ksyms_loaded)
		code_ksyms_load(c);
	if (k->ksyms_error)
		loc->flags |= HM_CODE_NO_KSYMS;
	addr = ip - (uint64_t)k->ksyms_shift;
	if ((s = ksym_find(k, addr))) {
		loc->func = s->name;
		loc->func_start = s->addr + (uint64_t)k->ksyms_shift;
		loc->func_size = s->end - s->addr;
		loc->offset = addr - s->addr;
		loc->module = s->module ? s->module : HM_KERNEL_NAME;
		loc->hint = k->hint;
		return loc;
	}
	if ((m = kmod_find(k, ip))) {
		loc->module = m->name;
		loc->hint = k->ksyms_error ? k->ksyms_error
			: "no kallsyms symbol for this module address: give the recording "
			  "machine's /proc/kallsyms, taken while the module was loaded";
		return loc;
	}
	loc->flags |= HM_CODE_UNMAPPED;
	loc->hint = k->ksyms_error ? k->ksyms_error
		: "no kernel symbol covers this address: give the recording machine's "
		  "/proc/kallsyms (same boot) or --vmlinux FILE";
	return loc;
}

int code_kernel_lookup(struct hm_code *c, uint64_t ip, struct hm_code_loc *out)
{
	struct code_kernel *k = &c->k;
	struct hm_code_loc *loc;
	struct code_kmod *m;
	uint64_t vaddr = ip - (uint64_t)k->kaslr;

	if (!k->loaded) {
		kernel_load(c);
		vaddr = ip - (uint64_t)k->kaslr;
	}
	if (k->vmlinux && code_vmlinux_exec(k->vmlinux, vaddr)) {
		*out = *code_dso_resolve(c, k->vmlinux, vaddr);
		if (out->func_start)
			out->func_start += (uint64_t)k->kaslr;
		return 0;
	}
	if ((m = kmod_find(k, ip)) && code_kmod_lookup(c, m, ip, out) == 0)
		return 0;
	if (ip == 0 || !(loc = hm_map64_get(&k->cache, ip))) {
		loc = ksym_resolve(c, ip);
		if (ip)
			hm_map64_put(&k->cache, ip, loc);
	}
	*out = *loc;
	return 0;
}

size_t code_kernel_read(struct hm_code *c, uint64_t ip, uint8_t *buf, size_t len)
{
	struct code_kernel *k = &c->k;
	uint64_t vaddr;

	if (!k->loaded)
		kernel_load(c);
	if (k->kcore_path) {
		/* kcore is of kallsyms' boot: move the recorded address there. */
		if (!k->ksyms_loaded)
			code_ksyms_load(c);
		return code_kcore_read(&k->kcore, ip - (uint64_t)k->ksyms_shift, buf, len);
	}
	vaddr = ip - (uint64_t)k->kaslr;
	if (!k->vmlinux || !code_vmlinux_exec(k->vmlinux, vaddr)) {
		struct code_kmod *m = kmod_find(k, ip);

		return m ? code_kmod_read(c, m, ip, buf, len) : 0;
	}
	return code_dso_read_vaddr(k->vmlinux, vaddr, buf, len);
}

size_t hm_code_kernel_names(struct hm_code *c, uint64_t func_start, const char *const **names)
{
	struct code_kernel *k = &c->k;
	uint64_t addr = func_start - (uint64_t)k->ksyms_shift;
	const struct code_ksym *s;
	const struct code_alias *al;

	if (!k->ksyms_loaded)
		code_ksyms_load(c);
	if (!(s = ksym_find(k, addr)) || s->addr != addr)
		return 0;
	if ((al = hm_map64_get(&k->aliases, addr + 1))) {
		*names = al->names;
		return al->n;
	}
	*names = &s->name;
	return 1;
}

int hm_code_kernel_image(struct hm_code *c, struct hm_code_kernel *out)
{
	struct code_kernel *k = &c->k;

	if (!k->loaded)
		kernel_load(c);
	memset(out, 0, sizeof(*out));
	if (k->vmlinux && (c->force || !(k->vmlinux->flags & HM_CODE_BUILDID_MISMATCH))) {
		out->vmlinux = k->vmlinux->path;
		out->bias = k->kaslr;
		return 0;
	}
	if (k->kcore_path) {
		out->kcore = k->kcore_path;
		return 0;
	}
	if (k->vmlinux)
		out->why = hm_arena_printf(&c->arena, "kernel data not named: %s",
					   k->vmlinux->hint);
	else
		out->why = hm_arena_printf(
			&c->arena, "kernel code bytes unavailable (no vmlinux of %s%s%s%s; %s), so "
			"kernel memory accesses are not decoded (BTF alone has the types, not the "
			"code): %sinstall linux-image-%s-dbg "
			"(Ubuntu: -dbgsym) and pass --vmlinux /usr/lib/debug/boot/vmlinux-%s",
			c->release, c->vmlinux && !c->vmlinux[0] ? ": --vmlinux '' asks for "
			"none" : " found", k->skipped ? "; not this build: " : "",
			k->skipped ? k->skipped : "", k->kcore_why,
			k->kcore_root ? "run as root (and without kernel lockdown) to read "
			"/proc/kcore, or " : "", c->release, c->release);
	return -1;
}
