/* struct hm_code: options, per-process address spaces built from mmap records, and the
 * lookup cache in front of the DWARF work of code_dso.c and code_kernel.c. */
#include "symbolize/code_int.h"
#include "core/oom.h"
#include "symbolize/debugfile.h"
#include "core/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#define HM_KERNEL_PID ((uint32_t)-1)	/* perf's pid for the host kernel's records */

static const struct hm_code_loc unmapped_loc = {
	.flags = HM_CODE_UNMAPPED,
	.hint = "no mmap record covers this address: start the recording before the process "
		"(or record existing processes' mappings too), and keep its MMAP events",
};

static int check_file(const char *what, const char *path, int elf, struct hm_err *err)
{
	char magic[4];
	int fd = hm_file_open(path), bad;

	if (fd < 0)
		return hm_err_set(err, HM_EXIT_INPUT, "%s %s: %s: give an existing, readable file",
				  what, path, hm_file_strerror(errno));
	bad = elf && (read(fd, magic, sizeof(magic)) != 4 || memcmp(magic, "\177ELF", 4) != 0);
	close(fd);
	if (bad)
		return hm_err_set(err, HM_EXIT_INPUT,
				  "%s %s: not an ELF file: give the uncompressed vmlinux (e.g. "
				  "/usr/lib/debug/boot/vmlinux-RELEASE from the -dbg package), not "
				  "vmlinuz", what, path);
	return 0;
}

static const char *opt_dup(struct hm_arena *a, const char *s)
{
	return s ? hm_arena_strdup(a, s) : NULL;
}

int hm_code_open(const struct hm_code_opts *o, struct hm_code **out, struct hm_err *err)
{
	static const struct hm_code_opts none;
	struct hm_code *c;
	struct utsname u;

	*out = NULL;
	if (!o)
		o = &none;
	if (o->vmlinux && o->vmlinux[0] && check_file("--vmlinux", o->vmlinux, 1, err))
		return -1;
	if (o->kallsyms && check_file("kallsyms file", o->kallsyms, 0, err))
		return -1;
	c = calloc(1, sizeof(*c));
	if (!c)
		return hm_err_set(err, HM_EXIT_ENV, "out of memory opening the symbolizer");
	hm_arena_init(&c->arena);
	hm_hash_init(&c->dso_keys);
	hm_hash_init(&c->build_ids);
	hm_map64_init(&c->procs);
	hm_map64_init(&c->k.cache);
	hm_map64_init(&c->k.aliases);
	c->vmlinux = opt_dup(&c->arena, o->vmlinux);
	c->force = o->force;
	c->kallsyms = hm_arena_strdup(&c->arena, o->kallsyms ? o->kallsyms : "/proc/kallsyms");
	c->kallsyms_default = !o->kallsyms;
	c->release = opt_dup(&c->arena, o->kernel_release);
	if (!c->release)
		c->release = hm_arena_strdup(&c->arena, uname(&u) == 0 ? u.release : "unknown");
	c->release_live = !o->kernel_release;
	c->release_running = uname(&u) == 0 && !strcmp(c->release, u.release);
	c->kcore = opt_dup(&c->arena, o->kcore);
	/* A named core file is checked now: a bad one is the user's to fix at once. */
	if (c->kcore && c->kcore[0] && (code_kcore_open(&c->k.kcore, c->kcore, err) != 0 ||
					code_kcore_release(c, err) != 0)) {
		hm_code_close(c);
		return -1;
	}
	c->sysroot = o->sysroot && o->sysroot[0] ? hm_arena_strdup(&c->arena, o->sysroot) : NULL;
	c->buildid_dir = opt_dup(&c->arena, o->buildid_dir);
	/* dwfl's default is ":.debug:/usr/lib/debug": beside the file, in .debug/ beside it,
	 * and the global debug directory (build-id and debuglink); a sysroot has its own. */
	c->debuginfo_path = c->sysroot
		? hm_arena_printf(&c->arena, ":.debug:%s/usr/lib/debug:/usr/lib/debug", c->sysroot)
		: hm_arena_strdup(&c->arena, ":.debug:/usr/lib/debug");
	c->cb.find_elf = dwfl_build_id_find_elf;
	c->cb.find_debuginfo = hm_find_debuginfo;	/* inflated once: debugfile.h */
	c->cb.section_address = dwfl_offline_section_address;
	c->cb.debuginfo_path = &c->debuginfo_path;
	elf_version(EV_CURRENT);
	*out = c;
	return 0;
}

void hm_code_close(struct hm_code *c)
{
	struct code_dso *d, *dn;
	struct code_proc *p, *pn;

	if (!c)
		return;
	for (p = c->proc_list; p; p = pn) {
		pn = p->next;
		free(p->maps);
	}
	for (d = c->dsos; d; d = dn) {
		dn = d->next;
		code_dso_free(d);
	}
	code_kernel_free(c);
	code_fetch_free(c);
	hm_map64_free(&c->procs);
	hm_hash_free(&c->dso_keys);
	hm_hash_free(&c->build_ids);
	hm_arena_free(&c->arena);
	free(c);
}

static struct code_proc *proc_get(struct hm_code *c, uint32_t pid, int create)
{
	struct code_proc *p;

	if (c->last_proc && c->last_proc->pid == pid)	/* samples come in runs of one pid */
		return c->last_proc;
	if ((p = hm_map64_get(&c->procs, (uint64_t)pid + 1)))
		c->last_proc = p;
	if (p || !create)
		return p;
	p = hm_arena_alloc(&c->arena, sizeof(*p));
	p->pid = pid;
	p->next = c->proc_list;
	c->proc_list = p;
	hm_map64_put(&c->procs, (uint64_t)pid + 1, p);
	return p;
}

/* Index of the first map that ends after addr. */
static size_t map_lower(const struct code_proc *p, uint64_t addr)
{
	size_t lo = 0, hi = p->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->maps[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Puts m in place of whatever it overlaps; a partly covered map keeps its outside parts. */
static void proc_insert(struct code_proc *p, const struct code_map *m)
{
	struct code_map repl[3];
	size_t i = map_lower(p, m->start), j = i, k = 0;

	while (j < p->nr && p->maps[j].start < m->end)
		j++;
	if (i < j && p->maps[i].start < m->start) {
		repl[k] = p->maps[i];
		repl[k++].end = m->start;
	}
	repl[k++] = *m;
	if (i < j && p->maps[j - 1].end > m->end) {
		repl[k] = p->maps[j - 1];
		repl[k].pgoff += m->end - repl[k].start;
		repl[k++].start = m->end;
	}
	if (p->nr - (j - i) + k > p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 16;
		struct code_map *maps = realloc(p->maps, cap * sizeof(*maps));

		if (!maps)
			hm_oom();
		p->maps = maps;
		p->cap = cap;
	}
	memmove(p->maps + i + k, p->maps + j, (p->nr - j) * sizeof(*p->maps));
	memcpy(p->maps + i, repl, k * sizeof(*repl));
	p->nr = p->nr - (j - i) + k;
}

int hm_code_add_map(struct hm_code *c, uint32_t pid, uint64_t start, uint64_t len,
		    uint64_t pgoff, const char *filename, const uint8_t *build_id,
		    size_t build_id_size)
{
	struct code_map m = {.start = start, .end = start + len, .pgoff = pgoff};

	if (!filename || len == 0 || start + len < start)
		return -EINVAL;
	if (build_id_size > HM_BUILD_ID_MAX)
		build_id_size = HM_BUILD_ID_MAX;
	if (pid == HM_KERNEL_PID || strncmp(filename, "[kernel.kallsyms]", 17) == 0) {
		code_kernel_add_map(c, start, len, pgoff, filename, build_id, build_id_size);
		return 0;
	}
	if (build_id_size == 0) {
		const struct code_bid *b = hm_hash_get(&c->build_ids, filename);

		if (b) {
			build_id = b->id;
			build_id_size = b->size;
		}
	}
	m.dso = code_dso_get(c, filename, build_id, build_id_size);
	proc_insert(proc_get(c, pid, 1), &m);
	return 0;
}

int hm_code_add_build_id(struct hm_code *c, const char *filename, const uint8_t *build_id,
			 size_t build_id_size)
{
	struct code_bid *b;
	struct code_dso *d;

	if (!filename || build_id_size == 0)
		return -EINVAL;
	if (build_id_size > HM_BUILD_ID_MAX)
		build_id_size = HM_BUILD_ID_MAX;
	if (strcmp(filename, "[kernel.kallsyms]") == 0) {
		memcpy(c->k.build_id, build_id, build_id_size);
		c->k.build_id_size = build_id_size;
		return 0;
	}
	b = hm_arena_alloc(&c->arena, sizeof(*b));
	memcpy(b->id, build_id, build_id_size);
	b->size = build_id_size;
	hm_hash_put(&c->build_ids, hm_arena_strdup(&c->arena, filename), b);
	d = hm_hash_get(&c->dso_keys, filename);	/* mapped before its id was known */
	if (d && !d->loaded && d->build_id_size == 0) {
		memcpy(d->build_id, build_id, build_id_size);
		d->build_id_size = build_id_size;
	}
	return 0;
}

/* Whether d's file still has the build-id it was matched by: the data side opens it by
 * path again, and a file replaced in between (a rebuild, a test remaking /tmp/hmrec)
 * would otherwise be read as the recorded one, silently. */
static int still_same_file(const struct code_dso *d)
{
	uint8_t id[HM_BUILD_ID_MAX];
	size_t n;
	int fd;

	if (!d->build_id_size || (d->flags & HM_CODE_BUILDID_MISMATCH))
		return 1;	/* nothing was matched: nothing to hold it to */
	if ((fd = hm_file_open(d->path)) < 0)
		return 0;
	n = code_fd_build_id(fd, id);
	close(fd);
	return n == d->build_id_size && memcmp(id, d->build_id, n) == 0;
}

const char *hm_code_file(struct hm_code *c, const char *filename)
{
	for (struct code_dso *d = c ? c->dsos : NULL; d; d = d->next) {
		if (d->kernel || strcmp(d->name, filename) != 0)
			continue;
		if (!d->loaded)
			code_dso_load(c, d);
		if (d->path && !still_same_file(d))
			d->changed = 1;
		return d->changed ? NULL : d->path;
	}
	return NULL;
}

int hm_code_file_changed(struct hm_code *c, const char *filename)
{
	for (struct code_dso *d = c ? c->dsos : NULL; d; d = d->next)
		if (!d->kernel && strcmp(d->name, filename) == 0)
			return d->changed;
	return 0;
}

static struct code_map *map_find(struct hm_code *c, uint32_t pid, uint64_t ip)
{
	struct code_proc *p = proc_get(c, pid, 0);
	size_t i;

	if (!p)
		return NULL;
	i = map_lower(p, ip);
	return i < p->nr && p->maps[i].start <= ip ? &p->maps[i] : NULL;
}

/* Loads the file on first use and learns how the mapping places its segment. */
static void map_prepare(struct hm_code *c, struct code_map *m)
{
	const struct code_load *l;

	if (!m->dso->loaded)
		code_dso_load(c, m->dso);
	if (m->has_delta)
		return;
	l = code_dso_load_at(m->dso, m->pgoff);
	/* No segment holds the offset (no file, or not the file recorded): assume the
	 * addresses inside the file equal its offsets, true of the usual first segment. */
	m->delta = l ? (int64_t)(m->start - m->pgoff + l->offset - l->vaddr)
		     : (int64_t)(m->start - m->pgoff);
	m->has_delta = 1;
}

int hm_code_lookup(struct hm_code *c, uint32_t pid, uint64_t ip, int kernel,
		   struct hm_code_loc *out)
{
	struct code_map *m;

	if (kernel)
		return code_kernel_lookup(c, ip, out);
	m = map_find(c, pid, ip);
	if (!m) {
		*out = unmapped_loc;
		return 0;
	}
	map_prepare(c, m);
	*out = *code_dso_resolve(c, m->dso, ip - (uint64_t)m->delta);
	if (out->func_start)
		out->func_start += (uint64_t)m->delta;
	return 0;
}

size_t hm_code_read(struct hm_code *c, uint32_t pid, uint64_t ip, int kernel, uint8_t *buf,
		    size_t len)
{
	struct code_map *m;
	size_t size, n;
	uint64_t off;
	char *raw;

	if (kernel)
		return code_kernel_read(c, ip, buf, len);
	m = map_find(c, pid, ip);
	if (!m)
		return 0;
	map_prepare(c, m);
	if (!m->dso->elf || !(raw = elf_rawfile(m->dso->elf, &size)))
		return 0;
	off = ip - m->start + m->pgoff;
	if (off >= size)
		return 0;
	n = len;
	if (n > size - off)
		n = size - off;
	if (n > m->end - ip)
		n = m->end - ip;
	memcpy(buf, raw + off, n);
	return n;
}
