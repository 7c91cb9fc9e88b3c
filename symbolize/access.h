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
	uint8_t prim;			/* made by a string or copy primitive: a rep string
					 * instruction, or in memset, memcpy, copy_user...
					 * (resolve/primitive.c); unnamed, it is counted apart */
	uint8_t spin;			/* a load in a spin-wait loop (a pause in a short
					 * backward loop around it): its thread waits for
					 * another CPU to store to the word */
	/* A wide access over several members (gcc's 16-byte movdqu over ops and bytes, a
	 * rep stos over a struct) is one access per member, each with its own s.addr,
	 * s.size, field and field_off: every member is credited with its own bytes. These
	 * say which piece of which sample this is. What counts samples counts part 0 only;
	 * what asks whether the instruction crossed a line asks of the whole access:
	 * [s.addr - part_off, + wide_size). 0 0 0 0 for an access that was not split. */
	uint32_t wide_size;		/* bytes of the whole access */
	uint32_t part_off;		/* this piece's offset within it */
	uint16_t part, nr_parts;	/* which piece (0 first), of how many */
	/* The live allocation holding s.addr (resolve/alloc.c), when recorded: */
	const char *alloc_site;		/* "calloc at alloc_array.c:51"; NULL: none */
	uint64_t alloc_base, alloc_size;
	uint64_t alloc_elem;		/* element of obj_base in it (type known), else 0 */
};

/* The access a sample made, whole: its address and size before any split. */
static inline uint64_t hm_access_whole_addr(const struct hm_access *a)
{
	return a->s.addr - a->part_off;
}

static inline uint32_t hm_access_whole_size(const struct hm_access *a)
{
	return a->wide_size ? a->wide_size : a->s.size;
}

#endif
