#include "collectors/synth.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include "core/ksections.h"

static int synth_comm(struct hm_perfdata_writer *w, pid_t pid, pid_t tid, struct hm_err *err)
{
	char path[64], comm[64] = "";
	struct hm_perf_event ev;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	if (!(f = fopen(path, "r")))
		return 0;	/* the thread exited meanwhile */
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = '\0';
	fclose(f);
	comm[strcspn(comm, "\n")] = '\0';
	memset(&ev, 0, sizeof(ev));
	ev.type = PERF_RECORD_COMM;
	ev.comm.pid = (uint32_t)pid;
	ev.comm.tid = (uint32_t)tid;
	ev.comm.comm = comm;
	return hm_perfdata_write(w, &ev, err);
}

static int keep_mapping(const char *file)
{
	return file[0] == '/' || !strcmp(file, "[heap]") || !strcmp(file, "[stack]") ||
	       !strcmp(file, "[vdso]");
}

static int synth_maps(struct hm_perfdata_writer *w, pid_t pid, hm_synth_note_fn note, void *ctx,
		      struct hm_err *err)
{
	char path[64], line[4608];
	FILE *f;
	int rc = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if (!(f = fopen(path, "r")))
		return 0;
	while (!rc && fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off, ino;
		unsigned maj, min;
		char perms[8], file[4096] = "";
		struct hm_perf_event ev;

		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %4095[^\n]", &lo, &hi, perms, &off,
			   &maj, &min, &ino, file) < 7)
			continue;
		{
			char *p = file;

			while (*p == ' ')
				p++;
			memmove(file, p, strlen(p) + 1);
		}
		if (!keep_mapping(file))
			continue;
		memset(&ev, 0, sizeof(ev));
		ev.type = PERF_RECORD_MMAP2;
		ev.misc = PERF_RECORD_MISC_USER | (perms[2] == 'x' ? 0 : PERF_RECORD_MISC_MMAP_DATA);
		ev.mmap.pid = ev.mmap.tid = (uint32_t)pid;
		ev.mmap.start = lo;
		ev.mmap.len = hi - lo;
		ev.mmap.pgoff = off;
		ev.mmap.maj = maj;
		ev.mmap.min = min;
		ev.mmap.ino = ino;
		ev.mmap.prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
			       (perms[2] == 'x' ? PROT_EXEC : 0);
		ev.mmap.flags = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
		ev.mmap.filename = file;
		rc = hm_perfdata_write(w, &ev, err);
		if (note && file[0] == '/')
			note(ctx, file);
	}
	fclose(f);
	return rc;
}

int hm_synth_process(struct hm_perfdata_writer *w, pid_t pid, hm_synth_note_fn note, void *ctx,
		     struct hm_err *err)
{
	char path[64];
	DIR *d;
	struct dirent *de;
	int rc = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (!(d = opendir(path)))
		return 0;
	while (!rc && (de = readdir(d))) {
		long tid = strtol(de->d_name, NULL, 10);

		if (tid > 0)
			rc = synth_comm(w, pid, (pid_t)tid, err);
	}
	closedir(d);
	return rc ? rc : synth_maps(w, pid, note, ctx, err);
}

int hm_synth_all(struct hm_perfdata_writer *w, hm_synth_note_fn note, void *ctx,
		 struct hm_err *err)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int rc = 0;

	if (!d)
		return 0;
	while (!rc && (de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end == '\0' && pid > 0)
			rc = hm_synth_process(w, (pid_t)pid, note, ctx, err);
	}
	closedir(d);
	return rc;
}

/* The kernel's module names use '_' where the file may have '-' (snd-hda-intel.ko). */
static int module_file_is(const char *base, const char *mod)
{
	for (; *base && *mod; base++, mod++)
		if (*base != *mod && !(*base == '-' && *mod == '_'))
			return 0;
	return !*mod && (!strcmp(base, ".ko") || !strncmp(base, ".ko.", 4));
}

struct kmod {
	char name[64];
	unsigned long long addr, size;
	char *path;		/* malloc'd, or NULL while not found */
};

/* Walks dir (depth-bounded) and gives each module its file. */
static void module_paths(const char *dir, int depth, struct kmod *m, size_t n)
{
	DIR *d = depth < 8 ? opendir(dir) : NULL;
	struct dirent *de;

	while (d && (de = readdir(d))) {
		char path[4096];

		if (de->d_name[0] == '.' ||
		    snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= (int)sizeof(path))
			continue;
		if (de->d_type == DT_DIR) {
			module_paths(path, depth + 1, m, n);
			continue;
		}
		for (size_t i = 0; i < n; i++)
			if (!m[i].path && module_file_is(de->d_name, m[i].name))
				m[i].path = strdup(path);
	}
	if (d)
		closedir(d);
}

static size_t modules_read(struct kmod **out)
{
	FILE *f = fopen("/proc/modules", "r");
	char line[4096];
	struct kmod *m = NULL;
	size_t n = 0, cap = 0;

	while (f && fgets(line, sizeof(line), f)) {
		struct kmod k = {0};

		/* "xfs 1970176 0 - Live 0xffffffffc0366000": address 0 when kptr_restrict */
		if (sscanf(line, "%63s %llu %*s %*s %*s %llx", k.name, &k.size, &k.addr) != 3 ||
		    !k.addr)
			continue;
		if (n == cap) {
			struct kmod *g = realloc(m, (cap = cap ? 2 * cap : 64) * sizeof(*m));

			if (!g)
				break;
			m = g;
		}
		m[n++] = k;
	}
	if (f)
		fclose(f);
	*out = m;
	return n;
}

#define KSECT_MAX 256
#define SECT_BYTES 16384	/* a record is at most 64 KiB (u16 size) */

/* The module's section addresses from /sys/module/NAME/sections (root only; all zero
 * under kptr_restrict), encoded for its MMAP record; 0 bytes when unreadable. */
static size_t module_sections(const char *name, uint8_t *buf, size_t cap)
{
	struct hm_ksect *v = calloc(KSECT_MAX, sizeof(*v));
	char dir[160], path[512];
	DIR *d;
	struct dirent *de;
	size_t n = 0;
	int nonzero = 0;

	snprintf(dir, sizeof(dir), "/sys/module/%s/sections", name);
	if (!v || !(d = opendir(dir))) {
		free(v);
		return 0;
	}
	while (n < KSECT_MAX && (de = readdir(d))) {
		unsigned long long addr;
		FILE *f;
		int ok;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    strlen(de->d_name) >= HM_KSECT_NAME_MAX ||
		    snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= (int)sizeof(path) ||
		    !(f = fopen(path, "r")))
			continue;
		ok = fscanf(f, "%llx", &addr) == 1;
		fclose(f);
		if (!ok)
			continue;
		memcpy(v[n].name, de->d_name, strlen(de->d_name) + 1);	/* < 64: checked */
		v[n++].addr = addr;
		nonzero |= addr != 0;
	}
	closedir(d);
	n = nonzero ? hm_ksect_encode(v, n, buf, cap) : 0;
	free(v);
	return n;
}

static int synth_modules(struct hm_perfdata_writer *w, hm_synth_note_fn note, void *ctx,
			 struct hm_err *err)
{
	struct kmod *m;
	size_t n = modules_read(&m);
	struct utsname u;
	char dir[512], bracket[80];
	uint8_t *sect = malloc(SECT_BYTES);
	int rc = 0;

	if (n && uname(&u) == 0) {
		snprintf(dir, sizeof(dir), "/lib/modules/%s", u.release);
		module_paths(dir, 0, m, n);
	}
	for (size_t i = 0; i < n && !rc; i++) {
		struct hm_perf_event ev;

		/* perf's module maps: pid -1, the core image's start and size, pgoff 0 */
		memset(&ev, 0, sizeof(ev));
		ev.type = PERF_RECORD_MMAP;
		ev.misc = PERF_RECORD_MISC_KERNEL;
		ev.mmap.pid = ev.mmap.tid = (uint32_t)-1;
		ev.mmap.start = m[i].addr;
		ev.mmap.len = m[i].size;
		snprintf(bracket, sizeof(bracket), "[%s]", m[i].name);
		ev.mmap.filename = m[i].path ? m[i].path : bracket;
		ev.mmap.extra = sect;
		ev.mmap.extra_len = sect ? module_sections(m[i].name, sect, SECT_BYTES) : 0;
		rc = hm_perfdata_write(w, &ev, err);
		if (note && m[i].path)
			note(ctx, m[i].path);
	}
	for (size_t i = 0; i < n; i++)
		free(m[i].path);
	free(m);
	free(sect);
	return rc;
}

int hm_synth_kernel(struct hm_perfdata_writer *w, hm_synth_note_fn note, void *ctx,
		    struct hm_err *err)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], name[256], type;
	unsigned long long addr, text = 0, etext = 0;
	struct hm_perf_event ev;

	if (!f)
		return 0;
	while ((!text || !etext) && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3)
			continue;
		if (!strcmp(name, "_text"))
			text = addr;
		else if (!strcmp(name, "_etext"))
			etext = addr;
	}
	fclose(f);
	if (!text)
		return 0;	/* kptr_restrict hides addresses: the report falls back */
	memset(&ev, 0, sizeof(ev));
	ev.type = PERF_RECORD_MMAP;
	ev.misc = PERF_RECORD_MISC_KERNEL;
	ev.mmap.pid = ev.mmap.tid = (uint32_t)-1;
	ev.mmap.start = text;
	/* As perf writes it: the kernel's text, which a report checks a kallsyms file
	 * against (another build has another size); modules have maps of their own. */
	ev.mmap.len = etext > text ? etext - text : ~0ULL - text;
	ev.mmap.pgoff = text;
	ev.mmap.filename = "[kernel.kallsyms]_text";
	return hm_perfdata_write(w, &ev, err) ? -1 : synth_modules(w, note, ctx, err);
}
