/* Private to symbolize/code*.c: the files (DSOs), address spaces and kernel of a
 * struct hm_code. */
#ifndef HM_CODE_INT_H
#define HM_CODE_INT_H

#include <elfutils/libdwfl.h>
#include <gelf.h>

#include "core/arena.h"
#include "core/hash.h"
#include "symbolize/code.h"
#include "core/ksections.h"

#define HM_BUILD_ID_MAX 20

/* debuginfod_find_executable and debuginfod_find_debuginfo, found with dlsym. */
typedef int code_find_fn(debuginfod_client *client, const unsigned char *id, int size,
			 char **path);

struct code_sym {
	uint64_t start, size;	/* size 0: ends where the next symbol starts */
	const char *name;
	uint32_t rank;		/* among symbols at one address, the lowest is kept */
};

struct code_load {		/* a PT_LOAD: file offset -> address in the file */
	uint64_t offset, vaddr, filesz;
	uint32_t flags;
};

/* One ELF file, shared by every process that maps it. Addresses inside it ("vaddr") are
 * the file's own (p_vaddr based): dwfl gets the module at bias 0 and each mapping keeps
 * the delta to runtime addresses. */
struct code_dso {
	struct code_dso *next;
	const char *name;	/* as recorded: hm_code_loc.module */
	uint8_t build_id[HM_BUILD_ID_MAX];
	size_t build_id_size;	/* recorded; 0: unknown */
	int loaded, kernel;
	const char *path;	/* the file read, NULL when none was found */
	int changed;		/* path no longer has the build-id it was matched by */
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Elf *elf;		/* main file, for code bytes */
	struct code_load *loads;
	size_t nr_loads;
	struct code_sym *syms;	/* functions, by address */
	size_t nr_syms;
	int flags;		/* applies to every result of this file */
	const char *hint;
	struct hm_map64 cache;	/* vaddr + 1 -> struct hm_code_loc (func_start as vaddr) */
	struct hm_map64 cus;	/* CU DIE offset + 1 -> struct code_cu (code_dwarf.c) */
};

struct code_map {
	uint64_t start, end, pgoff;
	struct code_dso *dso;
	int64_t delta;		/* runtime - vaddr, once has_delta */
	int has_delta;
};

struct code_proc {
	struct code_proc *next;
	uint32_t pid;
	struct code_map *maps;	/* sorted, disjoint */
	size_t nr, cap;
};

struct code_ksym {
	uint64_t addr, end;
	const char *name, *module;	/* module NULL for the kernel image */
	char type;
};

struct code_alias {		/* every name of one kernel address, the chosen first */
	size_t n;
	const char *names[];
};

struct code_pvsite {		/* a site the boot patches (code_kpatch.c) */
	uint64_t addr;		/* vmlinux address */
	uint8_t len;
	uint8_t kind;		/* HM_PATCH_PARAVIRT or HM_PATCH_ALTERNATIVE */
};

struct code_kmod {		/* a module mapping from the recording */
	uint64_t start, end;
	const char *name;
	const char *file;	/* the recorded path ("/lib/modules/.../xfs.ko"), or NULL */
	int loaded;		/* its ELF file searched (code_kmod.c) */
	struct code_dso *dso;	/* that file, when found */
	uint64_t text, text_size; /* .text in the dso's layout: start maps to text */
	const char *skipped;	/* a file found but of another build */
	const uint8_t *bytes;	/* .text's bytes in the file (the loader relocates them) */
	uint64_t *relocs;	/* .text offsets the loader patches (.rela.text), sorted */
	size_t nr_relocs;
	struct hm_ksect *secs;	/* its sections' load addresses, when recorded
				 * (core/ksections.h); relocs then holds only the places
				 * code_kmod_apply could not fill in */
	size_t nr_secs;
	uint8_t *patched;	/* bytes: .text relocated against secs (malloc'd) */
	size_t nr_applied;	/* relocations code_kmod_apply filled in */
};

struct code_kseg {		/* a PT_LOAD of a kernel core file */
	uint64_t vaddr, offset, filesz;
};

struct code_kcore {		/* open when nr > 0 */
	int fd;
	struct code_kseg *segs;
	size_t nr;
	char release[65];	/* its VMCOREINFO note's OSRELEASE; "" if none */
	uint8_t build_id[HM_BUILD_ID_MAX];	/* and BUILD-ID */
	size_t build_id_size;
};

struct code_kernel {
	int loaded;		/* vmlinux search done */
	struct code_dso *vmlinux;
	struct code_kcore kcore;	/* without a vmlinux: the running kernel's memory */
	const char *kcore_path;	/* set when kcore serves code bytes */
	const char *kcore_why;	/* why it does not */
	int kcore_root;		/* /proc/kcore refused: root would read it */
	int64_t kaslr;		/* runtime - vmlinux address */
	int ksyms_loaded;
	struct code_ksym *ksyms;
	size_t nr_ksyms;
	int restricted;		/* kallsyms showed zero addresses */
	const char *ksyms_error;
	uint64_t ksyms_ref;	/* ref_name's address in kallsyms; 0 if absent */
	int64_t ksyms_shift;	/* recorded boot - kallsyms boot */
	int has_ref;		/* the recording's [kernel.kallsyms] map was seen */
	const char *ref_name;	/* "_text" or "_stext" */
	uint64_t ref_addr;
	uint64_t ref_len;	/* the recorded kernel map's length (_etext - _text); 0 if not */
	uint64_t ksyms_etext;	/* _etext in kallsyms; 0 if absent */
	uint8_t build_id[HM_BUILD_ID_MAX];
	size_t build_id_size;
	struct code_kmod *mods;
	size_t nr_mods, cap_mods;
	struct hm_map64 cache;	/* ip -> struct hm_code_loc, kallsyms results */
	struct hm_map64 aliases; /* kallsyms address + 1 -> struct code_alias, if several */
	const char *hint;	/* for kallsyms-only results */
	const char *skipped;	/* a vmlinux found but not of the recorded kernel */
	struct code_pvsite *pv;	/* .parainstructions of the vmlinux, by address */
	size_t nr_pv;
	int pv_loaded;
	int alt_skipped;	/* .altinstructions of an unknown layout: not used */
	struct code_ksym *kdata;	/* kallsyms data symbols of modules (d b r), sorted */
	size_t nr_kdata, cap_kdata;
};

struct hm_code {
	struct hm_arena arena;
	Dwfl_Callbacks cb;
	char *debuginfo_path;
	const char *vmlinux, *kallsyms, *release, *sysroot, *buildid_dir, *kcore;
	int kallsyms_default;		/* reading this machine's /proc/kallsyms */
	int force;			/* --force: use a vmlinux of another build */
	int release_live;		/* release is this machine's (uname) */
	int release_running;		/* release equals uname -r (given or not) */
	struct hm_hash dso_keys;	/* "file" or "file\nbuild-id" -> struct code_dso */
	struct code_dso *dsos;
	struct hm_hash build_ids;	/* file -> struct code_bid */
	struct hm_map64 procs;		/* pid + 1 -> struct code_proc */
	struct code_proc *last_proc;	/* proc_get's last answer */
	struct code_proc *proc_list;
	struct code_kernel k;
	Dwfl *fetch_dwfl;		/* owns the debuginfod client */
	void *fetch_so;
	int fetch_tried;
	code_find_fn *fp_find[2];	/* debuginfod_find_executable, _debuginfo */
};

struct code_bid {
	uint8_t id[HM_BUILD_ID_MAX];
	size_t size;
};

/* code_kernel.c: reads kallsyms once (sets ksyms_error when it cannot). */
void code_ksyms_load(struct hm_code *c);
/* code_kmoddata.c: a module's data symbol of kallsyms kept (at load); sorted, extents
 * set (after load). */
void code_kdata_add(struct hm_code *c, uint64_t addr, char type, const char *name,
		    const char *module);
void code_kdata_finish(struct code_kernel *k);
/* code_kmoddata.c: fills m->patched from m->bytes: each .text relocation against a
 * section whose load address was recorded is applied as the loader did, and dropped
 * from m->relocs (those left: against the kernel's symbols). text: .text's index. */
void code_kmod_apply(struct code_kmod *m, Elf *elf, size_t text);
/* code_kmod.c: finds and opens the module's file (once); the size of its section
 * named name, 0 if none. */
void code_kmod_load(struct hm_code *c, struct code_kmod *m);
uint64_t code_sect_size(Elf *elf, const char *name);
/* 1 when vaddr (link address) lies in an executable segment of the vmlinux. */
int code_vmlinux_exec(const struct code_dso *d, uint64_t vaddr);
/* code_kallsyms.c: why a given kallsyms file is not of the recorded kernel and boot
 * (text size, module addresses), or NULL when nothing disagrees. */
const char *code_kallsyms_mismatch(struct hm_code *c);

/* code_dso.c */
struct code_dso *code_dso_get(struct hm_code *c, const char *filename, const uint8_t *id,
			      size_t size);
void code_dso_load(struct hm_code *c, struct code_dso *d);
/* Opens an ELF (fd consumed) as a dwfl module at bias 0 and reads what every lookup
 * needs; 0 or -1 with d->hint set. */
int code_dso_attach(struct hm_code *c, struct code_dso *d, const char *path, int fd);
const struct hm_code_loc *code_dso_resolve(struct hm_code *c, struct code_dso *d,
					   uint64_t vaddr);
/* The PT_LOAD holding file offset off (page-aligned mapping offsets allowed). */
const struct code_load *code_dso_load_at(const struct code_dso *d, uint64_t off);
size_t code_dso_read_vaddr(const struct code_dso *d, uint64_t vaddr, uint8_t *buf, size_t len);
void code_dso_free(struct code_dso *d);
/* "ab12..": for hints and build-id paths. */
char *code_hex(struct hm_arena *a, const uint8_t *id, size_t size);
/* The GNU build-id note of an open ELF file (fd stays open); 0 when it has none. */
size_t code_fd_build_id(int fd, uint8_t out[HM_BUILD_ID_MAX]);
/* Where the file's debug info could come from, for hints: "install libc6-dbg". */
const char *code_debug_fix(struct hm_arena *a, const char *path);
/* A C++ symbol demangled (srv::bump(srv::Stats*, int)); other names as they are. */
const char *code_demangle(struct hm_arena *a, const char *name);

/* code_dwarf.c: file:line, inline chain, and the function when the symbol table had none. */
void code_dwarf_resolve(struct hm_code *c, struct code_dso *d, uint64_t vaddr,
			struct hm_code_loc *loc);

/* code_fetch.c: debuginfod by build-id (DEBUGINFOD_URLS); returns an fd or -1. */
int code_fetch(struct hm_code *c, const uint8_t *id, size_t size, int debuginfo,
	       char **path);
int code_debuginfod_enabled(void);
void code_fetch_free(struct hm_code *c);

/* code_kcore.c: an ELF core file of kernel memory (/proc/kcore). Open: 0, or a negative
 * errno (-ENODEV: not a regular file; -EINVAL: not a sound core file) with err naming
 * the file, the cause and the fix. Reads stop at the end of the segment holding addr; 0 outside every segment. */
int code_kcore_open(struct code_kcore *k, const char *path, struct hm_err *err);
size_t code_kcore_read(const struct code_kcore *k, uint64_t addr, uint8_t *buf, size_t len);
void code_kcore_close(struct code_kcore *k);
/* After the vmlinux search found none: sets k.kcore_path, or k.kcore_why. */
void code_kcore_setup(struct hm_code *c);
/* The named core file's VMCOREINFO release against the recording's: 0, or -1 with err. */
int code_kcore_release(struct hm_code *c, struct hm_err *err);

/* code_kmod.c: ip in module m through the module's own ELF file (-dbg copy, or the
 * .ko); 0 with out filled, -1 when that file or the address is not covered. */
int code_kmod_lookup(struct hm_code *c, struct code_kmod *m, uint64_t ip,
		     struct hm_code_loc *out);
/* Module code bytes at ip from the module's file (.text only); 0 when none. */
size_t code_kmod_read(struct hm_code *c, struct code_kmod *m, uint64_t ip, uint8_t *buf,
		      size_t len);

/* code_kernel.c */
size_t code_live_build_id(uint8_t out[HM_BUILD_ID_MAX]);
void code_kernel_add_map(struct hm_code *c, uint64_t start, uint64_t len, uint64_t pgoff,
			 const char *filename, const uint8_t *id, size_t size);
int code_kernel_lookup(struct hm_code *c, uint64_t ip, struct hm_code_loc *out);
size_t code_kernel_read(struct hm_code *c, uint64_t ip, uint8_t *buf, size_t len);
void code_kernel_free(struct hm_code *c);

#endif
