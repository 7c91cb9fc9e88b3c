/* Code addresses to function, source line and inline chain (libdwfl), for the user-space
 * files a recording mapped and for the kernel (vmlinux, debuginfod or /proc/kallsyms).
 * One struct hm_code per report run; results are cached, one DWARF lookup per distinct ip. */
#ifndef HM_CODE_H
#define HM_CODE_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

struct hm_code;

struct hm_code_opts {
	const char *vmlinux;	/* NULL: search /usr/lib/debug/boot/vmlinux-RELEASE and
				 * perf's other places; "": none (kallsyms only) */
	const char *kallsyms;	/* NULL: /proc/kallsyms */
	const char *kernel_release; /* NULL: uname -r; give the recording's osrelease */
	const char *sysroot;	/* prefix for recorded file names and /usr/lib/debug */
	const char *buildid_dir; /* perf's build-id cache (~/.debug): DIR/.build-id/xx/yy../elf */
	const char *kcore;	/* kernel code bytes when no vmlinux is found: an ELF core file
				 * of the running kernel's memory, read at its runtime addresses.
				 * NULL: /proc/kcore when the recorded kernel is the running one
				 * (release, build-id); "": never */
	int force;		/* use a vmlinux whose build-id is not the recorded kernel's */
};

enum hm_code_flags {
	HM_CODE_NO_DEBUGINFO = 1 << 0,	 /* no DWARF: no file:line, no inline chain */
	HM_CODE_BUILDID_MISMATCH = 1 << 1, /* the file on disk is not the one recorded */
	HM_CODE_KALLSYMS_ONLY = 1 << 2,	 /* kernel function name only, from kallsyms */
	HM_CODE_UNMAPPED = 1 << 3,	 /* no mapping covers ip: nothing is known */
	HM_CODE_NO_FILE = 1 << 4,	 /* mapped, but no file to read ([vdso], JIT, gone) */
	HM_CODE_UNREADABLE = 1 << 5,	 /* with NO_FILE: the file could not be opened (hint) */
	HM_CODE_NO_KSYMS = 1 << 6,	 /* kernel: kallsyms unusable (hint: why, the fix) */
};

/* One inlined call, innermost first: func was inlined at file:line of its caller (the
 * next entry, or hm_code_loc.func for the last). */
struct hm_code_inline {
	const char *func;
	const char *file;
	int line, column;
};

struct hm_code_loc {
	const char *func;	/* the containing (non-inlined) function, or NULL */
	uint64_t func_start;	/* runtime address of func's first byte; 0 if unknown */
	uint64_t func_size;	/* 0 if unknown */
	uint64_t offset;	/* ip - func_start; 0 when func is NULL */
	const char *file;	/* source of the instruction at ip (innermost inline); NULL */
	int line, column;	/* 0 when unknown */
	const char *module;	/* "/usr/bin/foo", "[kernel.kallsyms]", "xfs" */
	uint32_t nr_inlines;
	const struct hm_code_inline *inlines;
	int flags;		/* enum hm_code_flags */
	const char *hint;	/* when something is missing or suspect: what would fix it */
};

int hm_code_open(const struct hm_code_opts *o, struct hm_code **out, struct hm_err *err);
void hm_code_close(struct hm_code *c);

/* A file mapped at [start, start+len) from file offset pgoff in pid (an MMAP/MMAP2
 * record; build_id_size 0 when not recorded). Only executable mappings are needed. A new
 * mapping replaces what it overlaps, as mmap does. The kernel's own records (pid -1,
 * "[kernel.kallsyms]_text" with pgoff the runtime address of _text, and modules) give
 * the KASLR offset of the recorded boot. */
int hm_code_add_map(struct hm_code *c, uint32_t pid, uint64_t start, uint64_t len,
		    uint64_t pgoff, const char *filename, const uint8_t *build_id,
		    size_t build_id_size);
/* A build-id from the recording's build-id table (perf.data HEADER_BUILD_ID); used for
 * maps of filename that carry none. "[kernel.kallsyms]" names the kernel. Call before
 * the first lookup that needs it. */
int hm_code_add_build_id(struct hm_code *c, const char *filename, const uint8_t *build_id,
			 size_t build_id_size);

/* The file read for the recorded filename (found as hm_code_lookup finds it: the file
 * itself, --sysroot, --buildid-dir, debuginfod), loading it on first call; NULL when
 * filename was never mapped as code or no file was found. */
const char *hm_code_file(struct hm_code *c, const char *filename);
/* Whether hm_code_file found filename's file replaced since its code was read (another
 * build-id at the same path now), and so returned NULL. */
int hm_code_file_changed(struct hm_code *c, const char *filename);
/* Resolves ip in pid's address space, or in the kernel when kernel != 0. Returns 0 with
 * *out filled (out->func NULL when unresolved: flags and hint say why); strings live as
 * long as c; the same ip yields the same pointers. */
int hm_code_lookup(struct hm_code *c, uint32_t pid, uint64_t ip, int kernel,
		   struct hm_code_loc *out);
/* Copies up to len bytes of code at runtime address ip from the mapped file (for the
 * kernel: the vmlinux, else the kcore); returns the number of bytes copied, 0 when the
 * bytes are not available. */
size_t hm_code_read(struct hm_code *c, uint32_t pid, uint64_t ip, int kernel, uint8_t *buf,
		    size_t len);
/* Every kallsyms name of the kernel function starting at func_start (a runtime address
 * from hm_code_lookup): one code under several names (identical code folding, weak and
 * strong), hm_code_loc.func's first. Returns how many; 0 when no symbol starts there. */
size_t hm_code_kernel_names(struct hm_code *c, uint64_t func_start, const char *const **names);
/* Where the kernel's code bytes come from (found as hm_code_lookup finds its vmlinux). */
struct hm_code_kernel {
	const char *vmlinux;	/* the recorded kernel's vmlinux (symbols, types), or NULL */
	int64_t bias;		/* runtime address - vmlinux address (KASLR) */
	const char *kcore;	/* without vmlinux: the core file hm_code_read reads at runtime
				 * addresses; function extents from kallsyms (hm_code_lookup) */
	const char *why;	/* neither: what is missing (no vmlinux of the recorded kernel,
				 * one of another build, kcore unreadable) and the fix */
};
/* A named vmlinux (opts.vmlinux) of another build than the recorded kernel (build-ids
 * differ, or the file has none) is an error: -1 with err (HM_EXIT_INPUT); so is a named
 * kallsyms (opts.kallsyms) whose text size or module addresses disagree with the
 * recorded kernel and module maps (code_kallsyms.c). With opts.force
 * it is used anyway: 0 and *warning says what was forced (else NULL). Call once the
 * recording's build-ids are in (hm_code_add_build_id, hm_code_add_map). */
int hm_code_kernel_verify(struct hm_code *c, const char **warning, struct hm_err *err);
enum hm_code_patch {
	HM_PATCH_PARAVIRT = 1,		/* .parainstructions: rewritten at every boot */
	HM_PATCH_ALTERNATIVE = 2,	/* .altinstructions: rewritten or not, by CPU feature */
	HM_PATCH_RELOC = 3,		/* a module's bytes that its loader relocates */
};
/* Nonzero (enum hm_code_patch) when ip (runtime) is in a site that the boot rewrote (or
 * may have) while the kernel's code is read from the vmlinux's bytes: what decodes there
 * (`call *pv_ops+N`) may never have run, so it is no data access. 0 otherwise, and
 * always with kcore's live code. */
int hm_code_kernel_patched(struct hm_code *c, uint64_t ip);
/* HM_PATCH_RELOC when the len bytes at ip (runtime) are module code read from the
 * module's file and a relocation patches one of them (a rip-relative operand or an
 * immediate the loader fills in: what decodes from the file is not what ran); else 0. */
int hm_code_kernel_relocated(struct hm_code *c, uint64_t ip, size_t len);
/* The module file whose .text holds ip (runtime), as code_kmod.c found it for the
 * recorded module map (build-id checked), and bias = runtime - that file's address (in
 * libdwfl's layout of the relocatable file); 0 if so. -1 outside modules, for a module
 * without its file, and with kcore's live code. */
int hm_code_kernel_module(struct hm_code *c, uint64_t ip, const char **path, uint64_t *bias);
/* A module MMAP record's extra bytes (hm_perf_mmap.extra): its section load addresses
 * (core/ksections.h), for the module mapped at start; 0 when they were read. */
int hm_code_add_kmod_sections(struct hm_code *c, uint64_t start, const uint8_t *extra,
			      size_t len);
/* The module section holding runtime data address addr (recorded load addresses, sizes
 * from the module's file): that file (as hm_code_kernel_module finds it), the section's
 * name and addr's offset in it; 0 if so, -1 otherwise and with kcore's live code. */
int hm_code_kernel_datasec(struct hm_code *c, uint64_t addr, const char **path,
			   const char **sec, uint64_t *off);
/* The module whose recorded per-CPU section (.data..percpu: its load address is a
 * per-CPU offset, as %gs:off uses it) holds per-CPU offset off: that module's file and
 * off's offset in the section; 0 if so. */
int hm_code_kernel_percpusec(struct hm_code *c, uint64_t off, const char **path,
			     uint64_t *in);
/* The module data symbol of kallsyms holding addr (it ends at the next one): its name,
 * address and module; 0 if so. */
int hm_code_kernel_datasym(struct hm_code *c, uint64_t addr, const char **name,
			   uint64_t *start, const char **module);
/* Returns 0 when out->vmlinux or out->kcore is set, else -1 with out->why. */
int hm_code_kernel_image(struct hm_code *c, struct hm_code_kernel *out);
/* The kallsyms addresses of n kernel symbols of any kind (variables too), for reading
 * them from kcore with hm_code_read (code_kdata.c): 0 when kcore serves the kernel's
 * bytes and kallsyms is of its boot and lists all n, else -1. */
int hm_code_kernel_data(struct hm_code *c, const char *const *names, uint64_t *addrs,
			size_t n);

#endif
