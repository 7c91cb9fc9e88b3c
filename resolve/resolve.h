/* Samples to accesses: the code site, the instruction (decoded from the mapped file),
 * the data address (given by the PMU or a watchpoint, or computed from the sampled
 * registers for timer samples) and the object and field it falls in. */
#ifndef HM_RESOLVE_H
#define HM_RESOLVE_H

#include "symbolize/access.h"
#include "core/perfdata.h"

struct hm_resolver;

struct hm_resolve_opts {
	const char *vmlinux;		/* NULL: search; "": kallsyms only */
	const char *sysroot;
	const char *buildid_dir;
	const char *osrelease;		/* the recording's, for finding its vmlinux */
	const char *kcore;		/* kernel code bytes without a vmlinux: NULL /proc/kcore
					 * when the recorded kernel runs here; "" none */
	const char *kallsyms;		/* NULL: /proc/kallsyms */
	const char *kernel_btf;		/* raw BTF of the recorded kernel; NULL:
					 * /sys/kernel/btf/vmlinux when it runs here */
	int force;			/* use a vmlinux of another build (hm_code_opts) */
	const char *input;		/* the recording, named in messages; NULL: "the
					 * recording" */
	int jobs;			/* 2: with flush_apart, a stream's accesses are
					 * handed to flush on a second thread
					 * (resolve/handoff.h); 3: the file is also read
					 * ahead on a third (core/perfdata_ahead.h); 0 or
					 * 1: one thread */
	int flush_apart;		/* hm_recording_stream's flush touches nothing the
					 * resolver changes (resolve/handoff.h) */
	/* hm_recording_stream: called with flush's arg on the resolving thread with each
	 * run of accesses, just before the run is handed to flush (resolve/load.h);
	 * what flush needs of the resolver's types is worked out here (report's heat
	 * maps, whose members load through libdw). NULL: none. */
	void (*prep)(const struct hm_access *acc, size_t n, void *arg);
};

/* Why a sample has no data address, for --stats. */
struct hm_resolve_stats {
	uint64_t samples, by_source[3];
	uint64_t no_code;		/* the instruction's bytes could not be read */
	uint64_t not_memory;		/* neither it nor the one before accesses memory */
	/* Timer samples by the instruction charged (resolve/skid.h, docs/decode.md Skid). */
	uint64_t at_ip;			/* the instruction at ip: the one before is no access */
	uint64_t skid;			/* the instruction before ip (skid) */
	uint64_t skid_load;		/* of those, a load or read-modify-write */
	uint64_t skid_store;		/* of those, a store */
	uint64_t skid_over;		/* of those, while the insn at ip accesses memory too */
	uint64_t skid_lost;		/* of those, it overwrote its address registers: no
					 * address */
	uint64_t skid_jump_target;	/* ip is a jump target: the access before it unused */
	uint64_t no_regs;		/* a register the address needs was not sampled */
	uint64_t watch_no_insn;		/* no instruction ends at a watchpoint's trap ip */
	uint64_t kernel;		/* samples in the kernel */
	uint64_t kernel_no_code;	/* of those, code bytes unreadable (no vmlinux, no kcore) */
	uint64_t kernel_named;		/* of those, data named (global to heap) */
	uint64_t stale;			/* user samples whose file on disk has another
					 * build-id than the recording names */
	const char *stale_hint;		/* the first such file's: both build-ids, the fix */
	uint64_t unreadable;		/* in a mapped file that could not be opened */
	uint64_t unreadable_files;	/* how many such files */
	const char *unreadable_hint;	/* the first one's: its path, why, and the fix */
	uint64_t spin;			/* loads in a spin-wait loop (pause, jump back) */
	uint64_t kernel_alternative;	/* of those, in an alternatives site: the boot may
					 * have replaced the vmlinux's bytes (CPU features) */
	uint64_t kernel_no_ksyms;	/* kernel samples unnamed: kallsyms unusable */
	const char *kernel_no_ksyms_hint;	/* why, and the fix */
	uint64_t kernel_reloc;		/* of those, in module code that its loader relocates
					 * (the module file's bytes there never ran) */
	uint64_t kernel_patched;	/* of those, in a paravirt site the boot rewrote (the
					 * vmlinux's bytes there never ran): no data access */
	uint64_t member;		/* data named to a member of a typed aggregate:
					 * "type.field", "type[i]" (--stats' headline) */
	uint64_t wide;			/* accesses split into one per member they cover */
	uint64_t wide_parts;		/* the parts they gave */
	uint64_t rep_sized;		/* rep string instructions sized by their count */
	uint64_t prim;			/* accesses with an address made by a string or
					 * copy primitive (hm_access.prim) */
	uint64_t prim_named;		/* of those, named (global to heap) */
	/* After allocation naming (names.c), accesses with an address, each counted once: */
	uint64_t addressed;
	uint64_t by_alloc;		/* in a live allocation, named by it */
	uint64_t alloc_elem;		/* of those, as an element: T[k].field, slots[k] */
	uint64_t person;		/* named as the program writes it: a variable or its
					 * field, type.field, or by allocation */
};

int hm_resolver_open(const struct hm_resolve_opts *o, struct hm_resolver **out,
		     struct hm_err *err);
void hm_resolver_close(struct hm_resolver *r);
/* The recording's build-id table, before the first sample. */
void hm_resolver_features(struct hm_resolver *r, const struct hm_perf_features *f);
/* After the build-ids and maps: a --vmlinux of another build is an error unless forced
 * (hm_code_kernel_verify). */
int hm_resolver_verify(struct hm_resolver *r, const char **warning, struct hm_err *err);
/* MMAP/MMAP2 records: the address spaces that code and data lookups use. */
void hm_resolver_track(struct hm_resolver *r, const struct hm_perf_event *ev);
/* Fills *out from a SAMPLE event; strings live as long as r. */
void hm_resolver_sample(struct hm_resolver *r, const struct hm_perf_event *ev,
			struct hm_access *out);
/* The same, as one access per member the access covers (access.h, wide_size): a 16-byte
 * store over ops and bytes gives two, each with its own address, size and field. Returns
 * how many of out[0..max) it filled: 1 unless the access covers several members of a
 * typed object; at most HM_RESOLVE_MAX_PARTS. */
#define HM_RESOLVE_MAX_PARTS 16
size_t hm_resolver_sample_parts(struct hm_resolver *r, const struct hm_perf_event *ev,
				struct hm_access *out, size_t max);
/* Names a again, from the heap objects typed since, when it was named only by a
 * scalar's type or not at all (resolve_enclose.c): before a batch goes on. 0: left as
 * it was; 1: renamed; n >= 2: renamed, and it covers n members: parts[0..n) are its
 * accesses (as hm_resolver_sample_parts gives them; at most max, 0 for none). */
size_t hm_resolver_enclose(struct hm_resolver *r, struct hm_access *a, struct hm_access *parts,
			   size_t max);
const struct hm_resolve_stats *hm_resolver_stats(const struct hm_resolver *r);

/* Where the samples without a data address were (kernel functions from kallsyms or
 * vmlinux, user functions from their files): up to n functions, most samples first. */
struct hm_func_count {
	const char *func;	/* "[k] do_sys_openat2", "main", "[unknown]" */
	uint64_t count;
};
/* Whether func (a function name as the code symbolizer gives it) is a string or copy
 * primitive: memset, memcpy, copy_user, strlen and their implementations (primitive.c). */
int hm_primitive_func(const char *func);
size_t hm_resolver_top_noaddr(const struct hm_resolver *r, struct hm_func_count *out, size_t n);
/* Counts the final names of n accesses (after allocation naming) into the stats:
 * addressed, by_alloc, alloc_elem, person (names.c). */
void hm_resolver_count_names(struct hm_resolver *r, const struct hm_access *a, size_t n);
/* The code symbolizer of the recording's address spaces (allocation sites). */
struct hm_code *hm_resolver_code(struct hm_resolver *r);
/* The data symbolizer's per-method counts and top unresolved ips. */
struct hm_data *hm_resolver_data(struct hm_resolver *r);

#endif
