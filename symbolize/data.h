/* Data addresses to objects: a sampled address (or the memory operand of the sampled
 * instruction) named as a global or static variable, a thread-local variable, a local
 * variable in the sampled frame, or a heap object typed through the register the
 * instruction dereferences; then the layout API names the field ("items[3].count").
 * One struct hm_data per report run; results for one (module, ip) are cached. Nothing
 * here prints. See docs/symbolize-data.md. */
#ifndef HM_DATA_H
#define HM_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "symbolize/access.h"
#include "core/err.h"
#include "symbolize/decode.h"
#include "symbolize/layout.h"

struct hm_perf_build_id;

struct hm_data;

int hm_data_open(struct hm_data **out, struct hm_err *err);
void hm_data_close(struct hm_data *d);
/* Starts building, on a thread of its own, the subprogram and variable indexes of the
 * user-space files of the n build-ids (a recording's HEADER_BUILD_ID table) whose debug
 * files are under dir/.build-id/ (NULL: /usr/lib/debug), so that the first sample that
 * needs one finds it built or in the building; the answers are those of building each
 * index at its first use. Ended by hm_data_close (or a second call). ids and dir are
 * copied. */
void hm_data_warm(struct hm_data *d, const char *dir, const struct hm_perf_build_id *ids,
		  uint32_t n);

/* A mapping of pid's address space (an MMAP/MMAP2 record): file-backed text and data
 * segments, "[heap]", "[stack]", "//anon". A new mapping replaces what it overlaps, as
 * mmap does. Files are opened on first use; a file that cannot be read only loses its
 * names (the result then says so in hint). */
int hm_data_add_map(struct hm_data *d, uint32_t pid, uint64_t start, uint64_t len,
		    uint64_t pgoff, const char *filename);

struct hm_code;

/* Where a recorded file lies here: data files are then read where the code side found
 * them (--sysroot, --buildid-dir), not only at their recorded path. Without it (or when
 * it gives NULL) the recorded path is read. */
void hm_data_set_files(struct hm_data *d, struct hm_code *code);

/* The recorded kernel, for queries with kernel set. Its code bytes and function symbols
 * come from vmlinux; types from its DWARF, else its .BTF section, else btf. Without a
 * vmlinux, from the running kernel: code bytes of kcore and function extents from
 * kallsyms, both through code (hm_code_read, hm_code_lookup), types from btf only. */
struct hm_data_kernel {
	const char *vmlinux;		/* the recorded kernel's ELF image; NULL when there is
					 * none (kernel data are then unknown, with why) */
	uint64_t bias;			/* runtime address - vmlinux address (KASLR) */
	const char *btf;		/* raw BTF of the same kernel (/sys/kernel/btf/vmlinux
					 * when the recording is of the running kernel), or NULL */
	const char *why;		/* without vmlinux or kcore: why, and what would fix it */
	const char *kcore;		/* without vmlinux: the core file code reads (named in
					 * results as their module), or NULL */
	struct hm_code *code;		/* with kcore: reads it at runtime addresses; must
					 * outlive d's queries */
	const uint8_t *kslab;		/* the slab facts record -k saved (core/kslab.h), or
					 * NULL; used where kcore is not read */
	size_t kslab_len;
	const char *input;		/* the recording, named in messages about them */
};

/* Sets the kernel (once, before its first query) and opens its types. Returns 0 when
 * kernel data can be typed; else -1, and hm_data_stats' kernel_hint says why. */
int hm_data_set_kernel(struct hm_data *d, const struct hm_data_kernel *k);

struct hm_data_query {
	uint32_t pid, tid;
	uint64_t addr;			/* the data address; 0 if unknown (then computed from
					 * insn, op and regs when they allow) */
	uint64_t ip;			/* the accessing instruction's address */
	const struct hm_insn *insn;	/* decoded instruction at ip, or NULL: then it is
					 * decoded from the mapped file */
	const struct hm_memop *op;	/* its memory operand, or NULL: the first data operand */
	uint64_t regs_mask;		/* sampled user registers, perf layout; regs may be NULL */
	const uint64_t *regs;
	uint32_t written;		/* registers (enum hm_reg bits) the access wrote, when
					 * regs were sampled after it (a trap, a PEBS record, a
					 * skidded timer sample): their values are not used */
	uint8_t kernel;			/* ip and addr are the kernel's (hm_data_set_kernel);
					 * regs are the interrupted kernel registers */
};

struct hm_data_obj {
	enum hm_method method;
	const char *object;		/* "items" (a variable), "struct item" (heap), "struct
					 * frame_buf (stack of stack_work)"; NULL if unknown */
	const struct hm_type *type;	/* the object's type; NULL if unknown */
	uint64_t base;			/* runtime address of the object's first byte; 0 when
					 * unknown (TLS without the thread pointer) */
	const char *field;		/* "items[3].count", "item.flags", "tls_counter"; NULL
					 * if unknown */
	uint64_t offset;		/* addr - base: byte offset inside the object */
	const char *module;		/* file defining the object or holding the address:
					 * "/usr/bin/foo", "[heap]"; NULL if unmapped */
	const char *hint;		/* what would resolve more (missing debug info); NULL */
	const char *prefix;		/* what field paths start with: the variable's name,
					 * the heap type's bare name; NULL when unnamed */
	uint8_t whole;			/* heap: the object is all of its allocation (a slab
					 * object), so no access continues into a next element */
	/* Not NULL when this answer depends on the query's pid, ip, addr and whether op
	 * was given, and on the mappings, alone (a user-space global found by its
	 * address): the caller may keep it, and count each repeat with hm_data_recount. */
	const void *memo;
};

/* Names q's data address. Returns 0 with *out filled (method HM_M_UNKNOWN or
 * HM_M_NOADDR when nothing was found); strings live as long as d and are shared
 * between results. -1 only for invalid arguments. */
int hm_data_resolve(struct hm_data *d, const struct hm_data_query *q, struct hm_data_obj *out);
/* Counts a repeat of a kept answer (obj->memo set) as hm_data_resolve counts it, for
 * hm_data_stats: the same query again, with no mapping added since. */
void hm_data_recount(struct hm_data *d, const struct hm_data_obj *obj);

/* One member's bytes of a wide access (hm_data_split). */
struct hm_data_part {
	uint64_t offset;		/* in the object, as hm_data_obj.offset */
	uint32_t at;			/* offset within the access */
	uint32_t size;
	const char *field;		/* named as hm_data_obj.field is */
};

#define HM_DATA_MAX_PARTS 16

/* The members that an access of size bytes at obj's offset covers, one part each, in
 * address order; returns how many (at most max). A part is one leaf member, or the run
 * of elements of one array of scalars that the access covers (a memset of char name[48]
 * is one part); holes and padding are no part. An access that stays inside one member
 * gives 1 part (the caller need not split it); one of an unknown object or size 0. A heap
 * object's type is that of one element of what the pointer points into: the access
 * continues into the next element (a memset over two worker_stats); a variable's ends
 * with it. The last part takes the bytes beyond max parts. */
size_t hm_data_split(struct hm_data *d, const struct hm_data_obj *obj, uint32_t size,
		     struct hm_data_part *out, size_t max);
/* The rule alone, on a type: parts of [offset, offset + size) in t as (offset, at, size),
 * field left NULL; wrap: continue into the next element of an array of t. */
size_t hm_data_split_type(const struct hm_type *t, uint64_t offset, uint32_t size, int wrap,
			  struct hm_data_part *out, size_t max);

/* Names addr of pid from the heap object enclosing it that samples typed so far (an
 * `int *` into a struct's array is then thread_arg_t.blue[5]), when obj (an earlier
 * result for addr: heap or unknown) names less; the counts of hm_data_stats follow.
 * Returns 1 when obj was renamed. For results named before the enclosing object was
 * typed by a later sample. kernel: addr is a kernel sample's, named from the kernel
 * objects any process's samples typed (pid unused); a user address never is. */
int hm_data_enclose(struct hm_data *d, uint32_t pid, int kernel, uint64_t addr,
		    struct hm_data_obj *obj);

/* Whether addr lies in memory the recording mapped, as perf decides its "No Page Map"
 * rejects: a user address inside one of pid's recorded mmaps; a kernel address inside
 * the kernel's image-and-modules mapping (x86-64: from 0xffffffff80000000), not the
 * direct map or vmalloc space, which perf has no map for. */
int hm_data_mapped(struct hm_data *d, uint32_t pid, uint64_t addr);
/* perf's whole rule: the data address mapped (as above) and the ip in a map too. */
int hm_data_sample_mapped(struct hm_data *d, uint32_t pid, uint64_t ip, uint64_t addr);

/* Counts of every hm_data_resolve call so far, for --stats. */
struct hm_data_unresolved {
	uint64_t ip;
	uint32_t pid;
	enum hm_method method;		/* HM_M_UNKNOWN or HM_M_NOADDR */
	const char *module;		/* module of ip, NULL if unmapped */
	uint64_t count;
};

struct hm_data_stats {
	uint64_t total;
	uint64_t by_method[HM_M__COUNT];
	uint64_t btf;			/* heap and stack results typed through BTF (no DWARF) */
	uint64_t enclosed;		/* named from an enclosing heap object that another
					 * sample typed (an int * into a struct's array) */
	uint64_t kernel_heap;		/* kernel samples' heap results */
	uint64_t kernel_enclosed;	/* of those, named from the kernel object enclosing
					 * them (ext4_sb_info.s_orphan_lock.owner); the rest
					 * by their own pointer's type only (atomic64_t) */
	size_t nr_top;
	const struct hm_data_unresolved *top;	/* most frequent first; valid until the
						 * next hm_data_stats or hm_data_close */
	const char *kernel_hint;	/* why kernel data go unnamed or untyped, and the fix;
					 * NULL when they are typed or no kernel was set */
	uint64_t kernel_slab;		/* kernel heap results named by the slab cache of
					 * their page (symbolize/slab.h) */
	const char *slab_source;	/* where the slab facts came from: "kcore"; NULL when
					 * kernel heap is not named by slab cache */
	const char *slab_hint;		/* why not, when kcore was there; else NULL */
	uint64_t kernel_stack_args;	/* kernel stack results without DWARF: a local typed
					 * by the callee parameter it is passed to, or a
					 * pointer spilled to the frame */
	uint64_t kmod_globals;		/* kernel modules' globals named (data_kmod.c) */
	uint64_t ksym_globals;		/* kernel globals named by kallsyms symbol only */
};

void hm_data_stats(struct hm_data *d, size_t max_top, struct hm_data_stats *out);
/* Why the recording's kernel slab section was refused (core/kslab.h), or NULL. */
const char *hm_data_slab_damage(const struct hm_data *d);
/* "global", "tls", "stack", "heap", "unknown", "noaddr". */
const char *hm_data_method_name(enum hm_method m);
/* The first opened file whose types are incomplete (hm_layout_damage: compilation units
 * or names that could not be read), as that line; NULL when none is. */
const char *hm_data_damage(const struct hm_data *d);
/* The file whose variables were named by symbol alone (it has neither DWARF nor BTF) for
 * the most results: the executable for any, another file (libc) only for a tenth of
 * all lookups or more; NULL when none. *n: those results; *files: such files. */
const char *hm_data_symbol_only(const struct hm_data *d, uint64_t *n, size_t *files);

#endif
