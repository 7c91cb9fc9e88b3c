/* The malloc family's uprobes: which file to probe, where each function starts in it,
 * and the perf_event_attr of each probe on the uprobe PMU. */
#include "collectors/alloc.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <pthread.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define UPROBE_SYSFS "/sys/bus/event_source/devices/uprobe"

/* perf_regs x86-64 bits: AX 0, DX 3, SI 4, DI 5, SP 7. Entry probes take the first three
 * integer arguments (di, si, dx); return probes the result (ax) and the caller's stack
 * pointer (posix_memalign's result is stored through its first argument). */
#define ENTRY_REGS ((1ULL << 3) | (1ULL << 4) | (1ULL << 5))
#define RET_REGS ((1ULL << 0) | (1ULL << 7))
/* posix_memalign(&p, ...): p is usually a local of the caller, just above its stack
 * pointer when the function returns; that much of the stack comes with the sample. */
#define RET_STACK 512

struct probe_fn {
	const char *sym;
	const char *entry, *ret;	/* event names; ret NULL: no return probe */
	int cxx;			/* in libstdc++, not libc */
};

static const struct probe_fn fns[] = {
	{"malloc", "hitmap:malloc", "hitmap:malloc_ret", 0},
	/* the busiest first: probes are removed in this order when the budget is spent */
	{"free", "hitmap:free", NULL, 0},
	{"calloc", "hitmap:calloc", "hitmap:calloc_ret", 0},
	{"realloc", "hitmap:realloc", "hitmap:realloc_ret", 0},
	{"aligned_alloc", "hitmap:aligned_alloc", "hitmap:aligned_alloc_ret", 0},
	{"memalign", "hitmap:memalign", "hitmap:memalign_ret", 0},
	{"posix_memalign", "hitmap:posix_memalign", "hitmap:posix_memalign_ret", 0},
	/* operator new(size_t) and new[](size_t): they call malloc, whose probes fire
	 * inside them; the report keeps the outer call's site. delete calls free. */
	{"_Znwm", "hitmap:new", "hitmap:new_ret", 1},
	{"_Znam", "hitmap:new_array", "hitmap:new_array_ret", 1},
	/* the aligned forms (C++17: any alignas over 16, as a padding fix makes a type) and
	 * the nothrow forms; the size is the first argument of each. The event names end in
	 * _al and _nt, which resolve/alloc.c reads as new and new[]. */
	{"_ZnwmSt11align_val_t", "hitmap:new_al", "hitmap:new_al_ret", 1},
	{"_ZnamSt11align_val_t", "hitmap:new_array_al", "hitmap:new_array_al_ret", 1},
	{"_ZnwmRKSt9nothrow_t", "hitmap:new_nt", "hitmap:new_nt_ret", 1},
	{"_ZnamRKSt9nothrow_t", "hitmap:new_array_nt", "hitmap:new_array_nt_ret", 1},
};

int hm_alloc_is_name(const char *name)
{
	return name && !strncmp(name, "hitmap:", 7);
}

static uint64_t segment_offset(Elf *e, uint64_t vaddr)
{
	size_t n;

	if (elf_getphdrnum(e, &n))
		return 0;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr &&
		    vaddr < ph.p_vaddr + ph.p_filesz)
			return vaddr - ph.p_vaddr + ph.p_offset;
	}
	return 0;
}

/* The defined function name in section scn's symbol table; its address, or 0. */
static uint64_t find_in(Elf *e, Elf_Scn *scn, const char *name)
{
	GElf_Shdr sh;
	Elf_Data *d;

	if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
		return 0;
	for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
		GElf_Sym sym;
		const char *s;

		if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_value ||
		    GELF_ST_TYPE(sym.st_info) != STT_FUNC)
			continue;
		if ((s = elf_strptr(e, sh.sh_link, sym.st_name)) && !strcmp(s, name))
			return sym.st_value;
	}
	return 0;
}

uint64_t hm_alloc_sym_offset(const char *path, const char *name)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	uint64_t vaddr = 0, off = 0;
	Elf *e;

	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	if ((e = elf_begin(fd, ELF_C_READ, NULL))) {
		for (int pass = 0; pass < 2 && !vaddr; pass++) {
			Elf_Scn *scn = NULL;

			while ((scn = elf_nextscn(e, scn)) && !vaddr) {
				GElf_Shdr sh;

				if (gelf_getshdr(scn, &sh) &&
				    sh.sh_type == (pass ? SHT_SYMTAB : SHT_DYNSYM))
					vaddr = find_in(e, scn, name);
			}
		}
		if (vaddr)
			off = segment_offset(e, vaddr);
		elf_end(e);
	}
	close(fd);
	return off;
}

/* The first mapped file of /proc/PID/maps named libc.so* or libc-*.so (cxx:
 * libstdc++.so*); 0 when found. */
static int mapped_lib(const char *maps, int cxx, char *out, size_t len)
{
	FILE *f = fopen(maps, "r");
	char line[4352];
	int rc = -1;

	if (!f)
		return -1;
	while (rc && fgets(line, sizeof(line), f)) {
		char *path = strchr(line, '/');
		const char *base;

		if (!path)
			continue;
		path[strcspn(path, "\n")] = '\0';
		base = strrchr(path, '/') + 1;
		if (cxx ? !strncmp(base, "libstdc++.so", 12)
			: !strncmp(base, "libc.so", 7) || (!strncmp(base, "libc-", 5) && strstr(base, ".so")))
			rc = snprintf(out, len, "%s", path) >= (int)len;
	}
	fclose(f);
	return rc;
}

/* The file holding the workload's malloc: its libc when mapped; a spawned workload has
 * none yet, so the static executable itself when it defines malloc, else the libc this
 * process maps (the same loader and search path; record checks at the end that the
 * workload mapped that very file). */
static int target_file(pid_t pid, int spawned, char *out, size_t len)
{
	char maps[64], exe[64];
	ssize_t n;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	if (!mapped_lib(maps, 0, out, len))
		return 0;
	if (!spawned)
		return -1;
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	if ((n = readlink(exe, out, len - 1)) > 0) {
		out[n] = '\0';
		if (hm_alloc_sym_offset(out, "malloc") && hm_alloc_sym_offset(out, "free"))
			return 0;
	}
	return mapped_lib("/proc/self/maps", 0, out, len);
}

/* 1 when the ELF file path names lib (a prefix: "libstdc++.so") in DT_NEEDED. */
static int needs(const char *path, const char *lib)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), found = 0;
	Elf_Scn *scn = NULL;
	Elf *e;

	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	if ((e = elf_begin(fd, ELF_C_READ, NULL))) {
		while (!found && (scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;
			Elf_Data *d;
			GElf_Dyn dyn;
			const char *name;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize ||
			    !(d = elf_getdata(scn, NULL)))
				continue;
			for (size_t i = 0; !found && i < sh.sh_size / sh.sh_entsize; i++)
				found = gelf_getdyn(d, (int)i, &dyn) && dyn.d_tag == DT_NEEDED &&
					(name = elf_strptr(e, sh.sh_link, dyn.d_un.d_val)) &&
					!strncmp(name, lib, strlen(lib));
		}
		elf_end(e);
	}
	close(fd);
	return found;
}

/* The workload's libstdc++ as target_file finds its libc (the executable must need it
 * when it is not mapped yet); "" when it has none. */
static void cxx_file(pid_t pid, int spawned, char *out, size_t len)
{
	char maps[64], exe[64], path[4096];
	ssize_t n;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	if (!mapped_lib(maps, 1, out, len))
		return;
	out[0] = '\0';
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	if (!spawned || (n = readlink(exe, path, sizeof(path) - 1)) <= 0)
		return;
	path[n] = '\0';
	if (!needs(path, "libstdc++.so") || mapped_lib("/proc/self/maps", 1, out, len))
		out[0] = '\0';
}

/* The uprobe PMU's type and the bit of its retprobe format ("config:0"); -1 if absent. */
static int uprobe_pmu(uint32_t *type, int *ret_bit)
{
	FILE *f = getenv("HITMAP_ALLOC_FAIL") ? NULL : fopen(UPROBE_SYSFS "/type", "r");
	unsigned t, bit = 0;
	int ok;

	if (!f)
		return -1;
	ok = fscanf(f, "%u", &t) == 1;
	fclose(f);
	if ((f = fopen(UPROBE_SYSFS "/format/retprobe", "r"))) {
		if (fscanf(f, "config:%u", &bit) != 1 || bit > 63)
			bit = 0;
		fclose(f);
	}
	*type = t;
	*ret_bit = (int)bit;
	return ok ? 0 : -1;
}

static void probe_attr(struct perf_event_attr *a, uint32_t type, const char *path,
		       uint64_t off, uint64_t ret_config)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = type;
	a->config = ret_config;
	a->config1 = (uint64_t)(uintptr_t)path;	/* read by the kernel at open only */
	a->config2 = off;
	a->sample_period = 1;	/* every call: allocation records are exact */
	a->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
			 PERF_SAMPLE_REGS_USER;
	a->sample_regs_user = ret_config ? RET_REGS : ENTRY_REGS;
	a->read_format = PERF_FORMAT_ID;
	a->disabled = 1;
	a->inherit = 0;		/* see alloc.h: what inheriting them cost */
	a->sample_id_all = 1;
	a->exclude_hv = 1;
	/* Wake the recorder every 64 of them, so that the budget is checked that often
	 * (the other events wake it per 16 KiB of ring). */
	a->wakeup_events = 64;
}

int hm_alloc_probes_build(struct hm_alloc_probes *p, pid_t pid, int spawned)
{
	uint32_t type;
	int ret_bit;

	p->n = 0;
	p->why[0] = '\0';
	if (uprobe_pmu(&type, &ret_bit)) {
		snprintf(p->why, sizeof(p->why), "no uprobe PMU (%s/type): the kernel lacks "
			 "CONFIG_UPROBE_EVENTS; heap objects will be named by type only",
			 UPROBE_SYSFS);
		return -1;
	}
	if (target_file(pid, spawned, p->path, sizeof(p->path))) {
		snprintf(p->why, sizeof(p->why), "no libc mapped by pid %d: heap objects will be "
			 "named by type only", (int)pid);
		return -1;
	}
	cxx_file(pid, spawned, p->path_cxx, sizeof(p->path_cxx));
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		/* the kernel reads the path at perf_event_open only */
		const char *path = fns[i].cxx ? p->path_cxx : p->path;
		uint64_t off = *path ? hm_alloc_sym_offset(path, fns[i].sym) : 0;

		if (!off || p->n + 2 > HM_ALLOC_MAX_PROBES)
			continue;
		probe_attr(&p->attrs[p->n], type, path, off, 0);
		p->names[p->n++] = fns[i].entry;
		if (!fns[i].ret)
			continue;
		probe_attr(&p->attrs[p->n], type, path, off, 1ULL << ret_bit);
		if (!strcmp(fns[i].sym, "posix_memalign")) {
			p->attrs[p->n].sample_type |= PERF_SAMPLE_STACK_USER;
			p->attrs[p->n].sample_stack_user = RET_STACK;
		}
		p->names[p->n++] = fns[i].ret;
	}
	if (!p->n)
		snprintf(p->why, sizeof(p->why), "%.400s defines no malloc or free symbol: heap "
			 "objects will be named by type only", p->path);
	return p->n ? 0 : -1;
}


struct closer {
	const int *fds;
	int n, step;
};

static void *close_some(void *arg)
{
	const struct closer *c = arg;

	for (int i = 0; i < c->n; i += c->step)
		close(c->fds[i]);
	return NULL;
}

/* Closing a uprobe event waits for a grace period (about 100 ms each here, measured
 * with strace -T): 13 probes x 2 CPUs took 2.5 s one after the other, and closed from 16
 * threads still 2.3 s. The file is complete by now, so a detached grandchild closes
 * them and the recording returns at once; it holds nothing else (stdio on /dev/null,
 * so a reader of hitmap's output sees its end). Without fork: threads. */
void hm_alloc_close_fds(const int *fds, int n, struct hm_alloc_probes *p)
{
	enum { NT = 16 };
	pthread_t t[NT];
	struct closer c[NT];
	int nt = n < NT ? n : NT, started = 0, status, gate[2];
	pid_t child;

	if (n == 0) {
		hm_alloc_tracefs_remove(p);
		return;
	}
	/* the tracefs events can be removed only once no fd holds them: the grandchild
	 * waits for this process to close its copies (the pipe's end) */
	if (pipe2(gate, O_CLOEXEC))
		gate[0] = gate[1] = -1;
	if ((child = fork()) == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		char b;

		if (fork() != 0)
			_exit(0);
		for (int fd = 0; fd < 3 && null >= 0; fd++)
			dup2(null, fd);
		setsid();
		if (gate[1] >= 0) {
			close(gate[1]);
			while (read(gate[0], &b, 1) < 0 && errno == EINTR)
				;
		}
		for (int i = 0; i < n; i++)
			close(fds[i]);
		if (gate[1] >= 0)
			hm_alloc_tracefs_remove(p);
		_exit(0);
	}
	if (child > 0) {
		waitpid(child, &status, 0);
		for (int i = 0; i < n; i++)
			close(fds[i]);	/* not the last reference: returns at once */
		if (gate[1] >= 0) {
			close(gate[0]);
			close(gate[1]);
			p->tp_group[0] = '\0';	/* the grandchild removes them */
		}
		return;
	}
	if (gate[1] >= 0)
		close(gate[0]), close(gate[1]);
	for (int i = 0; i < nt; i++) {
		c[i] = (struct closer){fds + i, n - i, nt};
		if (pthread_create(&t[i], NULL, close_some, &c[i]) != 0)
			close_some(&c[i]);	/* this thread, then */
		else
			started |= 1 << i;
	}
	for (int i = 0; i < nt; i++)
		if (started >> i & 1)
			pthread_join(t[i], NULL);
	hm_alloc_tracefs_remove(p);
}
