/* hitmap layout --reorganize: pahole -R's member moves (fill a hole with a later member
 * that fits, then with the last member when there is tail padding, then with members
 * taken from the tail), each new layout computed the way a C compiler lays out a struct,
 * and every move checked against the cache lines: a move is refused when it makes a
 * member touch more lines than it did, or puts two members written by different threads
 * (from a recording) on one line that they did not share before (docs/layout.md). */
#ifndef HM_REORGANIZE_H
#define HM_REORGANIZE_H

#include <stddef.h>
#include <stdint.h>

#include "symbolize/access.h"
#include "symbolize/layout.h"

/* Who wrote each top-level member of a type in a recording. */
struct hm_reorg_writers {
	uint32_t nr;			/* the type's top-level members */
	uint64_t *thread;		/* per member: pid << 32 | tid of the first writer, 0 none */
	uint8_t *multi;			/* per member: more than one thread wrote it */
	uint64_t stores;		/* stores counted, every member */
};

struct hm_reorg_opts {
	uint32_t line_size;
	int allow_splits;		/* --allow-splits: pahole's moves without the line rule */
	const struct hm_reorg_writers *writers;	/* NULL: no recording */
};

enum hm_reorg_why { HM_RW_SPLIT, HM_RW_SHARING };

/* A move made, or the first refused for a member: `what` to right after `after`. */
struct hm_reorg_move {
	const char *what, *after;	/* member names; "#N" for anonymous ones */
	uint64_t old_off, new_off;
	int refused;			/* the line rule kept it where it was */
	enum hm_reorg_why why;		/* refused: which rule */
	const char *other;		/* SPLIT: the member that would touch more lines; SHARING:
					 * the one (or "x' and 'y") that would share one */
};

struct hm_reorg {
	const struct hm_type *old_t;
	const struct hm_type *new_t;	/* the reorganized type (arena), old_t when unchanged */
	uint64_t old_size, new_size;
	uint64_t old_lines, new_lines;
	uint32_t align;			/* the struct's alignment, inferred where not recorded
					 * (BTF: a size of 64 * n with a member pushed to 64) */
	const char *skipped;		/* why nothing was tried (union, packed...), or NULL */
	struct hm_reorg_move *moves;	/* in the order they were made or refused */
	uint32_t nr_moves;
};

/* Reorganizes aggregate t; everything lives in a. */
void hm_reorganize(struct hm_arena *a, const struct hm_type *t, const struct hm_reorg_opts *o,
		   struct hm_reorg *out);

/* Collects, from the accesses to objects of type t (or arrays of it), who stored to each
 * top-level member. */
void hm_reorg_writers_collect(struct hm_arena *a, const struct hm_type *t,
			      const struct hm_access *acc, size_t n, struct hm_reorg_writers *out);

#endif
