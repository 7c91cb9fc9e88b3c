/* The struct heat map: one type's pahole-style layout with per-field loads, stores,
 * threads and cross-thread conflicts, and per-cache-line totals; rendered as text, as a
 * self-contained HTML/SVG page and as the "heatmap" object of hitmap.report/1. */
#ifndef HM_HEATMAP_H
#define HM_HEATMAP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "symbolize/access.h"
#include "core/arena.h"
#include "core/err.h"
#include "core/json.h"
#include "symbolize/layout.h"

/* One row: a leaf member of the type, or a hole/padding between members. */
struct hm_heat_field {
	const char *path;		/* "ops", "pts[*].v" (folded), "(hole)" */
	const char *type_col;		/* pahole's type column, "" for holes */
	const char *name_col;		/* pahole's declarator: "name[13]", "x:5" */
	const struct hm_member *m;	/* NULL for holes */
	uint64_t offset, size;		/* bytes; bitfields: their storage unit */
	uint32_t bit_in_unit, bit_size;	/* bitfields only */
	uint64_t line;			/* cache line of the first byte */
	uint8_t hole;			/* a hole or trailing padding, not a member */
	uint8_t straddles;		/* crosses a cache-line boundary */
	uint64_t loads, stores, other;	/* other: accesses of unknown direction */
	uint64_t conflicts;
	uint32_t threads;		/* distinct tids */
};

/* One cache line of the type (the object assumed line-aligned). */
struct hm_heat_line {
	uint64_t line;
	uint64_t loads, stores, other, conflicts;
	uint32_t threads, readers, writers;	/* distinct tids: any, loading, storing */
	/* The most threads that store to one real line holding it: instances are judged
	 * apart (a padded array of per-thread structs has writers 2, line_writers 1). */
	uint32_t line_writers;
};

/* Elements 1.. of an array of structs whose accesses count in the "[*]" rows of
 * element 0 (when not all_elems). */
struct hm_heat_fold {
	const char *path;		/* "pts", "inner.slots" */
	uint64_t offset, size;		/* bytes of elements first..last */
	uint64_t first, last;
};

struct hm_heat {
	const struct hm_type *type;	/* stripped aggregate */
	const char *name;		/* "struct worker_stats" */
	uint64_t size;
	uint32_t line_size;
	int all_elems;			/* arrays of structs: a row per element */
	uint32_t nr_fields;		/* rows in offset order, holes in place */
	struct hm_heat_field *fields;
	uint32_t nr_folds;		/* in offset order */
	struct hm_heat_fold *folds;
	uint64_t nr_lines;
	struct hm_heat_line *lines;
	uint64_t accesses;		/* accesses matched to the type */
	uint64_t outside;		/* of those, at offsets beyond its size */
	uint64_t max_heat;		/* largest loads+stores+other of a row */
	uint64_t max_conflicts;		/* largest conflicts of a line */
};

struct hm_heat_opts {
	uint32_t line_size;		/* 0: 64 */
	int all_elems;			/* 0: fold arrays of structs onto element 0 */
};

/* Heat map of t from the accesses whose object type is t (same stripped type, or an
 * aggregate of the same kind, name and size from another module). A conflict is an
 * access by another thread than the previous access to the same cache line, where
 * either access is a store. Returns 0, or -EINVAL when t is not a sized aggregate or
 * line_size is not a power of two. Rows and strings live in a. */
int hm_heat_build(struct hm_arena *a, const struct hm_type *t, const struct hm_access *acc,
		  size_t n, uint32_t line_size, struct hm_heat *out);
int hm_heat_build_opts(struct hm_arena *a, const struct hm_type *t, const struct hm_access *acc,
		       size_t n, const struct hm_heat_opts *o, struct hm_heat *out,
		       struct hm_err *err);
/* The same from batches of accesses in time order (hitmap report streams a recording):
 * begin lays out the rows, add counts a batch (threads and each line's last access are
 * kept between batches, so the result equals one build over all of them), end sets the
 * maxima and frees the state. */
struct hm_heat_acc;
/* u (any type) counts in t's heat map: the same stripped type, or an aggregate of the
 * same kind, name and size from another module. */
int hm_heat_type_matches(const struct hm_type *t, const struct hm_type *u);
int hm_heat_begin(struct hm_arena *a, const struct hm_type *t, const struct hm_heat_opts *o,
		  struct hm_heat *out, struct hm_heat_acc **acc, struct hm_err *err);
void hm_heat_add(struct hm_heat_acc *acc, const struct hm_access *x, size_t n);
/* add with the matching done before: counts the accesses i with pick[i] == mine. It
 * reads no type but t's, whose members begin loaded, so it may run on another thread
 * than the one that loads types (hm_heat_set_prepare). */
void hm_heat_add_picked(struct hm_heat_acc *acc, const struct hm_access *x, size_t n,
			const int8_t *pick, int8_t mine);
void hm_heat_end(struct hm_heat_acc *acc);


/* heatmap_set.c: the heat maps a streamed report builds, one per aggregate type its
 * accesses hold (or an array of it), the first HM_HEAT_SET_MAX types seen, each fed every
 * batch; then the busiest are drawn. What report and its fuzz target share. */
#define HM_HEAT_SET_MAX 40

struct hm_heat_cand {
	const struct hm_type *t;
	uint64_t count;			/* accesses to objects of t */
	struct hm_heat heat;
	struct hm_heat_acc *acc;	/* NULL once ended */
};

struct hm_heat_set {
	struct hm_arena *a;		/* the maps' rows once ended */
	struct hm_arena own;		/* until then: a is the caller's, which may be in
					 * use on another thread (prepare and feed) */
	struct hm_heat_opts o;
	struct hm_heat_cand cand[HM_HEAT_SET_MAX];
	size_t nr;
};

void hm_heat_set_init(struct hm_heat_set *s, struct hm_arena *a, const struct hm_heat_opts *o);
void hm_heat_set_add(struct hm_heat_set *s, const struct hm_access *acc, size_t n);
/* hm_heat_set_add in two halves, for a report that counts on a second thread
 * (resolve/handoff.h). prepare runs where types load (the resolver's thread): it starts
 * the maps of types first seen, which loads their members through libdw, names each
 * access's map in pick (its index, or -1: pick holds n) and returns how many maps there
 * are now. feed, on the other thread, counts the accesses into the first nr maps; it
 * reads only what prepare loaded. prepare and feed take the same runs in the same order;
 * the result equals hm_heat_set_add's on those runs. */
size_t hm_heat_set_prepare(struct hm_heat_set *s, const struct hm_access *acc, size_t n,
			   int8_t *pick);
void hm_heat_set_feed(struct hm_heat_set *s, const struct hm_access *acc, size_t n,
		      const int8_t *pick, size_t nr);
/* Finishes every map (idempotent; also what frees their accumulators). */
void hm_heat_set_end(struct hm_heat_set *s);
/* The max busiest finished maps into hp, busiest first; how many (0: no typed access). */
size_t hm_heat_set_busiest(const struct hm_heat_set *s, const struct hm_heat **hp, size_t max);

#endif
