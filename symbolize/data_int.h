/* Private to symbolize/data*.c and symbolize/typeinfer.c. */
#ifndef HM_DATA_INT_H
#define HM_DATA_INT_H

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <stdatomic.h>

#include "core/arena.h"
#include "core/hash.h"
#include "symbolize/data.h"
#include "symbolize/slab.h"
#include "symbolize/typeinfer.h"

/* ---- One ELF file's DWARF (data_dwarf.c, typeinfer.c) ---- */

struct ti_sec {
	uint64_t addr, size;
	const uint8_t *bytes;
};

#define HM_TI_MAX_ASSUME 8

struct hm_ti {
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Elf *elf;			/* the file */
	Dwarf *dw;			/* NULL without DWARF */
	Dwarf_Addr ebias;		/* dwfl address = file address + ebias */
	Dwarf_Addr dwbias;		/* dwfl address = DWARF address + dwbias */
	Dwarf_CFI *eh_cfi, *dbg_cfi;
	Dwarf_Addr eh_cfi_bias, dbg_cfi_bias;
	int cfi_done;
	struct hm_layout *lay;
	struct hm_arena arena;
	struct hm_map64 types;		/* type DIE offset -> struct hm_type */
	struct hm_map64 frames;		/* pc + 1 -> struct hm_ti_frame */
	struct hm_map64 funcs;		/* function range start + 1 -> struct ti_code */
	struct ti_fidx *fidx;		/* subprogram ranges, sorted (data_frame.c) */
	size_t nr_fidx;
	int fidx_done;
	struct ti_fsym *fsyms;		/* STT_FUNC symbols, sorted (data_btf.c) */
	size_t nr_fsyms;
	int fsyms_done;
	struct ti_sec *secs;
	size_t nr_secs;
	struct hm_ti_code code;		/* hm_ti_open_code: bytes and functions from code */
	int has_code;
	struct hm_map64 chunks;		/* its bytes read so far: start + 1 -> struct ti_sec */
	struct hm_ti_static *statics, *tls_statics;
	size_t nr_statics, nr_tls_statics;
	int statics_done;
	/* typeinfer.c: (merge point << 5 | reg) assumed while a loop's jump back is walked */
	uint64_t assume[HM_TI_MAX_ASSUME];
	uint32_t nr_assume;
	uint32_t walk_budget;		/* instructions one question may still walk */
	struct data_warm **warm;	/* its hm_data's indexes built ahead (data_warm.c) */
};

void data_frame_free(struct hm_ti *ti);

/* ---- A file's indexes, built ahead (data_warm.c) ---- */

/* One walk's array, its entries' strings and structs in the arena the walk was given. */
struct data_index {
	void *v;
	size_t n;
};
enum { DATA_WARM_FUNCS, DATA_WARM_STATICS, DATA_WARM_KINDS };
/* The walks of every unit of dw, on any thread (each with a Dwarf of its own): subprograms
 * by address, sorted (data_frame.c; struct ti_fidx), and variables with static or thread
 * storage in DWARF order (data_dwarf.c; struct hm_ti_static). 0, or -1 when *stop was set
 * between two units (nothing kept). */
int data_frame_scan(Dwarf *dw, struct hm_arena *arena, atomic_int *stop, struct data_index *out);
/* fn on the DIE of each unit of dw, in order (type units left out when skip_types); -1
 * when stop was set before the last one (checked before each unit), else 0. */
int data_each_unit(Dwarf *dw, int skip_types, atomic_int *stop,
		   void (*fn)(Dwarf_Die *cu, void *arg), void *arg);
int data_statics_scan(Dwarf *dw, struct hm_arena *arena, atomic_int *stop, struct data_index *out);
/* The kind's index of ti's debug file when the warm thread built it or is building it (then
 * it waits): *out set, its arena moved into ti's, 1. 0: not built ahead, and from now on
 * not to be (the caller walks the file itself). */
int data_warm_take(struct hm_ti *ti, int kind, struct data_index *out);
/* Stops the thread (a walk stops at its next unit), frees what no ti took. */
void data_warm_end(struct hm_data *d);
/* Waits until the thread has been through every file (tests: what it built is there). */
void data_warm_settle(struct hm_data *d);

/* data_btf.c: without DWARF, the frame at pc is the ELF function symbol holding it
 * (func, lo, hi; no variables); at the function's entry, the type of the parameter in
 * register reg from BTF (*idx its position), or NULL. */
void data_btf_frame(struct hm_ti *ti, struct hm_ti_frame *f, uint64_t pc);
const struct hm_type *data_btf_entry_param(struct hm_ti *ti, const struct hm_ti_frame *f,
					   int reg, uint32_t *idx);
void data_btf_free(struct hm_ti *ti);

/* data_kcore.c: an hm_ti over hm_ti_code - bytes at vaddr (hm_ti_bytes), the function
 * holding pc (data_btf_frame); and the kernel set from kcore and BTF, without vmlinux. */
const uint8_t *data_code_bytes(struct hm_ti *ti, uint64_t vaddr, size_t *avail);
void data_code_frame(struct hm_ti *ti, struct hm_ti_frame *f, uint64_t pc);
int data_kernel_kcore(struct hm_data *d, const struct hm_data_kernel *k);

/* ---- Files a recording mapped (data.c, data_globals.c) ---- */

struct data_load {
	uint64_t vaddr, off, filesz, memsz;
};

struct data_sym {
	uint64_t addr, size;		/* file address, or offset in PT_TLS for TLS */
	const char *name;
};

struct data_mod {
	const char *path;		/* as recorded: what results name */
	const char *file;		/* what is read (data_mod_locate); path until then */
	int located;
	struct hm_data *owner;
	int phdrs_done, usable;		/* program headers read; an ELF we can name from */
	int opened;			/* DWARF, layout and symbols tried */
	int is_exec;			/* PT_INTERP or ET_EXEC: owns the first TLS block */
	struct data_load *loads;
	size_t nr_loads;
	int has_tls;
	uint64_t tls_vaddr, tls_memsz, tls_align;
	struct hm_ti *ti;		/* NULL if the file could not be opened */
	struct hm_layout *lay;		/* DWARF, else the file's .BTF (or btf_alt); NULL */
	const char *btf_alt;		/* raw BTF to use when the file has no types */
	int kernel;			/* the vmlinux of hm_data_set_kernel */
	int percpu_zero;		/* a PT_LOAD at address 0: zero-based per-cpu data */
	const char *hint;		/* why names are missing, and the fix */
	struct data_sym *syms, *tls_syms;	/* STT_OBJECT / STT_TLS, by address */
	size_t nr_syms, nr_tls_syms;
	struct hm_map64 insns;		/* file address + 1 -> struct hm_insn decoded there */
	uint64_t symbol_only;		/* results named by symbol alone: no types here */
	struct data_mod *next;
};

struct data_map {
	uint64_t start, end, pgoff;
	const char *name;
	struct data_mod *mod;		/* NULL for [heap], [stack], //anon... */
};

/* Where a module is loaded in one process: runtime = file address + bias. */
struct data_image {
	uint64_t lo, hi;		/* runtime extent of its PT_LOADs */
	uint64_t bias;
	struct data_mod *mod;
};

struct data_proc {
	uint32_t pid;
	struct data_map *maps;		/* sorted, disjoint */
	size_t nr_maps, cap_maps;
	struct data_image *images;	/* sorted by lo; rebuilt when maps change */
	size_t nr_images;
	int dirty;
	struct data_known *known;	/* heap objects typed exactly (data_enclose.c) */
	size_t nr_known, cap_known;
};

/* A heap object a sample typed with its base known: [base, base + size). */
struct data_known {
	uint64_t base, size;
	const struct hm_type *type;
	const char *label, *prefix;	/* as hm_data_obj's object and prefix */
};

struct hm_data {
	struct hm_arena arena;
	struct hm_decoder *dec;
	struct hm_hash mods;		/* path -> struct data_mod */
	struct data_mod *mod_list;
	struct hm_map64 procs;		/* pid + 1 -> struct data_proc */
	struct data_proc *last_proc;	/* data_proc_get's last answer */
	struct data_proc **proc_list;
	size_t nr_procs, cap_procs;
	struct hm_hash strs;		/* interned result strings */
	struct hm_map64 labels;		/* struct hm_type * -> its label */
	struct hm_map64 fields;		/* data_field's results by (prefix, type, offset) */
	struct hm_map64 splits;		/* hm_data_split's results (data_split.c) */
	struct hm_data_stats st;
	struct data_image kimg;		/* the kernel; kimg.mod NULL when unknown */
	struct data_proc kproc;		/* the kernel's heap objects typed exactly, for every
					 * process alike (one kernel address space) */
	int kernel_set;
	const char *kernel_hint;
	struct data_warm *warm;		/* hm_data_warm's thread and indexes; NULL */
	struct hm_map64 unres_idx;	/* ip -> index + 1 in unres */
	struct hm_data_unresolved *unres, *top;
	size_t nr_unres, cap_unres;
	struct hm_code *files;		/* hm_data_set_files; NULL: read recorded paths */
	struct hm_slab *slab;		/* kernel heap by slab cache (data_slab.c); NULL */
	struct hm_layout *slab_lay;	/* the types its cache names are looked up in */
	const char *slab_source;	/* where its facts come from: "kcore" */
	const char *slab_hint;		/* why there is none, when the kernel has kcore */
	const char *slab_damage;	/* the recording's slab section refused: why */
	struct hm_map64 slab_types;	/* kmem_cache address + 1 -> its type (data_slab.c) */
	struct hm_layout *kbtf_base;	/* the running kernel's /sys/kernel/btf/vmlinux layout:
					 * its modules' BTF beside it types their caches; NULL */
	struct hm_layout **kbtf;	/* those modules' layouts over it, opened at first
					 * need, closed before it (data_slab_free) */
	size_t nr_kbtf;
	int kbtf_done;
	struct hm_map64 kstack;		/* function start + 1 -> its frame (data_kstack.c) */
	struct hm_map64 kptr;		/* pointee -> a pointer type to it (data_kstack.c) */
	struct global_memo *gmemo;	/* global_at's answers (data_globals.c); NULL until
					 * the first */
	struct umemo *umemo;		/* user-space globals by sample (data_resolve.c) */
	uint64_t umemo_gen;		/* its entries of another generation are empty */
	/* regs_before's last plan (data_resolve.c): for this register mask and these
	 * registers written, the positions kept and the mask they make */
	uint64_t rb_mask, rb_kept_mask;
	uint32_t rb_written;
	uint8_t rb_valid, rb_n, rb_pos[64];
};

/* data.c */
struct data_proc *data_proc_get(struct hm_data *d, uint32_t pid, int create);
const struct data_map *data_map_at(const struct data_proc *p, uint64_t addr);
/* The module whose segments (file-backed, or .bss in anonymous pages) hold addr. */
const struct data_image *data_image_at(struct data_proc *p, uint64_t addr);
/* The image's PT_LOADs hold runtime addr (in the kernel, not the per-cpu one at 0). */
int data_image_holds(const struct data_image *img, uint64_t addr);
/* The process's executable (its TLS block ends at the thread pointer); code first. */
const struct data_image *data_exec_image(struct data_proc *p, const struct data_image *code);
const char *data_intern(struct hm_data *d, const char *s);
/* The module of the file at path, made on first use (not opened). */
struct data_mod *data_mod_get(struct hm_data *d, const char *path);
/* Points m->file at the file to read, once (before the first read of m). */
void data_mod_locate(struct data_mod *m);
/* Opens the module's DWARF, layout and symbols on first use. */
void data_mod_open(struct hm_data *d, struct data_mod *m);
/* The label of a type for object names: "struct item", "mbstate_t" (a typedef of an
 * anonymous struct), "size_t", "char *". */
const char *data_type_label(struct hm_data *d, const struct hm_type *t);
/* The type's name without its tag: "item" for struct item, for field paths. */
const char *data_bare_name(struct hm_data *d, const struct hm_type *t);
/* "prefix" + the member path at offset in t ("prefix[3].count", "prefix.flags"). */
const char *data_field(struct hm_data *d, const char *prefix, const struct hm_type *t,
		       uint64_t offset);

/* data_globals.c */
/* The module's first symbol table of type (SHT_SYMTAB, SHT_DYNSYM), or NULL. */
Elf_Scn *data_symtab_of(Elf *elf, Elf32_Word type);
int data_mod_phdrs(struct data_mod *m);
void data_mod_syms(struct data_mod *m);
/* Runtime addr in image img: global or static variable. */
int data_global(struct hm_data *d, const struct data_image *img, uint64_t addr,
		struct hm_data_obj *out);
/* Offset tp_off from the thread pointer (fs base) in the executable exe. */
int data_tls(struct hm_data *d, struct data_mod *exe, int64_t tp_off, uint64_t addr,
	     struct hm_data_obj *out);

/* %gs:off in the kernel: a per-cpu variable (addr: the sampled address, or 0). */
int data_percpu(struct hm_data *d, const struct data_image *kimg, uint64_t off, uint64_t addr,
		struct hm_data_obj *out);

/* data_enclose.c: the known object holding addr, or NULL; note one (outermost kept);
 * name out from the known object holding addr when it encloses what out names (1). */
const struct data_known *data_known_at(const struct data_proc *p, uint64_t addr);
void data_known_note(struct data_proc *p, uint64_t base, const struct hm_type *t,
		     const char *label, const char *prefix);
int data_enclose(struct hm_data *d, const struct data_proc *p, uint64_t addr,
		 struct hm_data_obj *out);
/* The known objects that name addr: the kernel's for a kernel-half address of a kernel
 * sample (kernel memory is one space, whichever process ran), else pid's; NULL for
 * none (a kernel sample's user address: the kernel reads user memory by no type). */
struct data_proc *data_known_space(struct hm_data *d, uint32_t pid, int kernel,
				   uint64_t addr, int create);

/* data_slab.c: the slab lookup over kcore for the kernel of m (its BTF layout), or
 * d->slab_hint saying why not; addr named from the slab object holding it when its cache
 * names a type (0), else -1. */
void data_slab_kcore(struct hm_data *d, struct data_mod *m, struct hm_code *code);
/* The slab facts a recording saved (core/kslab.h; name: the recording, for messages),
 * types looked up in lay: 0, or -1 with d->slab_hint saying what is damaged. Where
 * kcore of the recorded boot is there (the guest) its memory is read instead. */
int data_slab_table(struct hm_data *d, struct hm_layout *lay, const uint8_t *bytes, size_t len,
		    const char *name);
int data_slab_name(struct hm_data *d, const struct data_image *code, uint64_t ip,
		   uint64_t addr, struct hm_data_obj *out);
/* The slab object holding addr, whatever its cache (kmalloc-192 too): 0 with its base. */
int data_slab_object(struct hm_data *d, uint64_t addr, uint64_t *base, uint32_t *object_size);
void data_slab_free(struct hm_data *d);
/* data_kmod.c: a module's global at runtime addr, through its recorded section load
 * addresses and its debug file (host), or kallsyms' module data symbols (symbol only);
 * and a heap result whose object starts at a module data symbol renamed after it. */
int data_kmod_global(struct hm_data *d, uint64_t addr, struct hm_data_obj *out);
/* %gs:off (addr: the sampled address, or 0) in a module's per-CPU section. */
int data_kmod_percpu(struct hm_data *d, uint64_t off, uint64_t addr, struct hm_data_obj *out);
int data_kmod_symbol(struct hm_data *d, uint64_t addr, struct hm_data_obj *out);
void data_kmod_relabel(struct hm_data *d, uint64_t addr, struct hm_data_obj *out);

/* data_stack.c */
struct data_regs {
	uint64_t mask;
	const uint64_t *regs;
};
/* addr in the frame of the function at file address pc of img (sampled registers r). */
int data_stack(struct hm_data *d, const struct data_image *img, uint64_t ip, uint64_t addr,
	       const struct data_regs *r, struct hm_data_obj *out);
/* data_kstack.c: addr in the sampled kernel frame without DWARF, as a local whose
 * address the function passes to a callee (typed by that parameter's BTF type). */
int data_kstack(struct hm_data *d, const struct data_image *img, uint64_t ip, uint64_t addr,
		const struct data_regs *r, struct hm_data_obj *out);

/* DWARF register number -> enum hm_reg. */
int data_dwarf_reg(uint64_t dwreg);

#endif
