/* One resolved memory access: a sample plus what symbolization made of it. This is the
 * analyzers' only input (DESIGN.md: analyzer never parses perf.data or walks DWARF). */
#ifndef HM_ACCESS_H
#define HM_ACCESS_H

#include <stdint.h>

#include "core/sample.h"
#include "symbolize/layout.h"

/* How the data address was named (the --stats breakdown). */
enum hm_method {
	HM_M_UNKNOWN = 0,	/* an address, but no object found */
	HM_M_GLOBAL,		/* global or static variable: DWARF variable or ELF symbol */
	HM_M_TLS,		/* thread-local variable */
	HM_M_STACK,		/* local variable in a frame */
	HM_M_HEAP,		/* heap object typed through the instruction's base register */
	HM_M_NOADDR,		/* no data address could be had (not a memory instruction...) */
	HM_M__COUNT
};

struct hm_access {
	struct hm_sample s;		/* addr, size, op, tid, cpu, time, ip, weight, data_src */
	enum hm_method method;
	const char *object;		/* "stats", "struct xfs_inode", NULL if unknown */
	const struct hm_type *type;	/* the object's type when known (heatmap, whatif) */
	uint64_t obj_base;		/* runtime address of the object's first byte */
	const char *field;		/* member path: "worker_stats.ops", "holder.m.im_boffset",
					 * a global's name; NULL if unknown */
	uint64_t field_off;		/* byte offset of the access inside the object */
	const char *func;		/* code site: function, file:line; NULL if unknown */
	const char *file;
	int line;
	uint8_t locked;			/* atomic (lock prefix, xchg, or PMU locked) */
	uint8_t mapped;			/* the data address lies in a recorded mapping (perf
					 * c2c's "No Page Map" counts the others) */
	uint8_t percpu;			/* kernel %gs: access: s.addr is the offset in every
					 * CPU's per-CPU area, and s.cpu's copy was touched */
	/* The live allocation holding s.addr (analyzer/alloc.c), when recorded: */
	const char *alloc_site;		/* "calloc at alloc_array.c:51"; NULL: none */
	uint64_t alloc_base, alloc_size;
	uint64_t alloc_elem;		/* element of obj_base in it (type known), else 0 */
};

#endif
