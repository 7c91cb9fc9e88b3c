/* What-if: replay a recording's accesses through another layout of their types and
 * predict which cache lines stop or start being shared (docs/whatif.md).
 *
 * Each access keeps its field, its offset inside the field, its time, thread and CPU;
 * only its address changes: new base of its object + new offset of its field + offset
 * inside the field. The new offsets come from another build's DWARF (HM_WI_LAYOUT), from
 * edits computed the way a C compiler lays out a struct (pad, align, order), or from a
 * suggested layout (suggest.c). hm_lines_build() then runs on both sides. */
#ifndef HM_WHATIF_H
#define HM_WHATIF_H

#include <stdint.h>
#include <stdio.h>

#include "analyzer/lines.h"
#include "core/json.h"
#include "symbolize/layout.h"

#define HM_WI_NONE UINT64_MAX		/* offset of a member absent on one side */
#define HM_WI_MAX_EDITS 32

enum hm_wi_kind {
	HM_WI_LAYOUT,			/* the same types in another build */
	HM_WI_PAD,			/* insert value bytes before type.field */
	HM_WI_ALIGN,			/* align type.field to value (a power of two) */
	HM_WI_ORDER,			/* members of type in the given order */
	HM_WI_SUGGEST,			/* the layout hm_whatif_suggest() proposes */
	HM_WI_SPLIT,			/* every array of elements of type: one element per
					 * line_size slot (a copy per thread, each on its line) */
	HM_WI_UNPACK,			/* type without __attribute__((packed)): members at
					 * their natural alignment */
};

/* One edit of one type. Members are named by their top-level name, or "#N" (the N-th
 * member, counting from 0) for anonymous ones. */
struct hm_wi_edit {
	enum hm_wi_kind kind;		/* PAD, ALIGN or ORDER */
	const char *type;		/* "worker_stats" or "struct worker_stats" */
	const char *field;		/* PAD, ALIGN */
	uint64_t value;			/* PAD: bytes; ALIGN: alignment */
	const char **order;		/* ORDER: members; the ones not named follow in
					 * their old order */
	uint32_t nr_order;
};

struct hm_wi_spec {
	enum hm_wi_kind kind;		/* LAYOUT, SUGGEST, or an edit kind (edits[]) */
	struct hm_layout *build;	/* LAYOUT: the new build */
	const char *only;		/* LAYOUT: only this type moves; NULL: every type */
	const struct hm_wi_edit *edits;	/* edits, applied together */
	uint32_t nr_edits;
	uint32_t line_size;		/* 64, or 128 with adjacent-line prefetch */
	int aligned_alloc;		/* heap objects get the new alignment too (as if
					 * allocated with aligned_alloc/posix_memalign) */
	size_t max_lines;		/* distinct lines kept per side (0: no limit); a run
					 * over it is replayed in batches, each side pruned
					 * as report's --max-lines (hm_lines_acc_set_max) */
	int jobs;			/* 2: a batched replay builds the before side on a
					 * second thread (resolve/handoff.h); 0 or 1: one */
};

/* malloc's alignment on x86-64 glibc: a heap object keeps a base that is a multiple of
 * it, whatever alignment its type declares, unless allocated with aligned_alloc. */
#define HM_WI_MALLOC_ALIGN 16

/* A top-level member on both sides. Bitfields sharing a storage unit move together;
 * offsets and sizes are those of the unit. */
struct hm_wi_member {
	const char *name;		/* NULL: anonymous */
	const struct hm_member *old_m;	/* NULL: added in the new build */
	const struct hm_member *new_m;	/* LAYOUT: in the new type; NULL: removed */
	uint64_t old_off, new_off;	/* bytes; HM_WI_NONE when absent on that side */
	uint64_t old_size, new_size;
	uint32_t align;			/* in the new layout */
	uint32_t forced;		/* alignment the change adds, 0 if none */
	uint64_t pad_before;		/* bytes the change inserts before it */
	uint64_t loads, stores;		/* recorded, over every object of the type */
	int32_t group;			/* --suggest: its group; -1 otherwise */
};

struct hm_wi_type {
	const char *name;		/* "worker_stats" */
	const struct hm_type *old_t, *new_t;	/* new_t: LAYOUT only */
	uint64_t old_size, new_size;
	uint32_t old_align, new_align;
	struct hm_wi_member *m;		/* in the new order; removed members last */
	uint32_t nr;
	uint64_t accesses;		/* recorded accesses to objects that hold it */
	int edited;			/* named by an edit or --suggest (not only embedding one) */
	int changed;			/* some member moved or the size or alignment changed */
};

/* LAYOUT: what the new build lacks. field NULL: the whole type (its accesses stay). */
struct hm_wi_absent {
	const char *type, *field;	/* field: member path, "inner.x[2]" */
	const char *file;		/* where the recorded type comes from */
	int other;			/* from a file none of whose recorded types the new
					 * build has (a library): expected, not a finding */
	uint64_t accesses;
};

struct hm_wi_plan {
	enum hm_wi_kind kind;
	uint32_t line_size;
	const char *build;		/* LAYOUT: path of the new build */
	struct hm_wi_type *types;	/* changed types with recorded accesses, busiest first */
	uint32_t nr_types;
	struct hm_wi_absent *absent;	/* LAYOUT */
	uint32_t nr_absent;
	int aligned_alloc;		/* from the spec */
	size_t max_lines;		/* from the spec */
	int jobs;			/* from the spec */
	struct hm_wi_map *map;		/* arena-owned; hm_whatif_plan_free() */
};

/* A group of members --suggest keeps on its own line(s). */
enum hm_wi_gkind {
	HM_WG_WRITER,			/* written by one thread (and only used by it) */
	HM_WG_PER_OBJECT,		/* one thread per object writes (per-thread structs) */
	HM_WG_READ,			/* read by several threads, never written */
	HM_WG_SHARED,			/* written by one thread and used by another: true
					 * sharing, which no layout removes */
	HM_WG_COLD,			/* no recorded access */
};

struct hm_wi_group {
	enum hm_wi_gkind kind;
	uint32_t pid, tid;		/* WRITER: the thread; READ: one of them */
	uint32_t nr_threads;		/* distinct threads using the group */
	uint32_t *members;		/* old member indexes, in the new order */
	uint32_t nr;
	uint64_t records;
};

struct hm_wi_suggestion {
	const char *type;		/* as found: "worker_stats" */
	const struct hm_type *t;
	struct hm_wi_group *groups;	/* in the new order */
	uint32_t nr_groups;
	int needed;			/* 0: no two groups need separating */
	int per_instance;		/* different threads write different objects that
					 * can share a line: the type itself gets aligned */
	int32_t *group_of;		/* old member index -> group */
	uint32_t nr_members;
	struct hm_wi_edit *edits;	/* the order, then each group's alignment */
	uint32_t nr_edits;
	uint32_t line_size;
};

/* What the plan, --suggest and the placing of objects read of a run, built batch by
 * batch (whatif_sum.c): each distinct (type, obj_base, field_off, address space, thread,
 * op, locked, method, size, whether it has an address) once, with its count, in the
 * order first seen; plus the run's sample counts and distinct lines. It follows the
 * objects, members and threads a run touches, not its length. Accesses with neither a
 * type nor an object are only counted. Types and strings are the feeding recording's. */
struct hm_wi_sum {
	struct hm_access *acc;		/* the tuples; malloc'd */
	uint64_t *w;			/* accesses per tuple */
	size_t n, cap;
	size_t *slot, nslot;		/* hash: tuple index + 1 */
	uint64_t accesses;		/* every access added */
	uint64_t total, with_addr;	/* samples (part 0 of a wide access) */
	uint64_t *lines;		/* distinct (space, line) fingerprints */
	size_t nlines, lcap;
	uint32_t line_size;
};
void hm_wi_sum_init(struct hm_wi_sum *s, uint32_t line_size);
void hm_wi_sum_add(struct hm_wi_sum *s, const struct hm_access *acc, size_t n);
void hm_wi_sum_free(struct hm_wi_sum *s);

/* Resolves spec against the recorded accesses: finds the types (exit 2 naming the
 * nearest names when a type or field is unknown), computes their new layouts. */
int hm_whatif_plan(struct hm_arena *a, const struct hm_access *acc, size_t n,
		   const struct hm_wi_spec *spec, struct hm_wi_plan *out, struct hm_err *err);
/* The same from a run's summary. */
int hm_whatif_plan_sum(struct hm_arena *a, const struct hm_wi_sum *sum,
		       const struct hm_wi_spec *spec, struct hm_wi_plan *out, struct hm_err *err);
void hm_whatif_plan_free(struct hm_wi_plan *p);

/* New offset of byte `off` of an object of type t (as hm_access.type: a struct, an array
 * of them, or a struct embedding a changed one). 0: *new_off set; 1: t does not change;
 * -1 (LAYOUT): the byte's field is not in the new build. */
int hm_whatif_map(const struct hm_wi_plan *p, const struct hm_type *t, uint64_t off,
		  uint64_t *new_off);
/* New size and alignment of an object of type t; 0 when it changes, 1 when not. */
int hm_whatif_object(const struct hm_wi_plan *p, const struct hm_type *t, uint64_t *size,
		     uint32_t *align);

/* Replays acc[] into out[] (n entries; the caller's). Objects keep their address when
 * they can: a base is rounded up to its type's new alignment, and objects in one
 * address space that would now overlap are moved up, as a linker or allocator would
 * place them. Accesses whose field is absent get s.addr 0 and count as dropped. */
struct hm_wi_counts {
	uint64_t total, with_addr;
	uint64_t affected;		/* to objects whose type changes */
	uint64_t moved;			/* address changed */
	uint64_t dropped;		/* field absent in the new build */
	uint64_t objects, objects_moved;	/* distinct objects, base changed */
	uint64_t heap_held;		/* heap objects whose type now asks for more than
					 * malloc's alignment: they keep their base */
};
void hm_whatif_replay(const struct hm_wi_plan *p, const struct hm_access *acc, size_t n,
		      struct hm_access *out, struct hm_wi_counts *c);

enum hm_wi_change_kind { HM_WI_STOPS, HM_WI_STARTS, HM_WI_STAYS };

/* A shared line before and the lines its accesses land on after (STOPS, STAYS), or a
 * shared line after and the lines its accesses came from (STARTS). */
struct hm_wi_change {
	enum hm_wi_change_kind kind;
	const struct hm_line **before;	/* heaviest first */
	uint32_t nr_before;
	const struct hm_line **after;
	uint32_t nr_after;
};

struct hm_wi_totals {
	uint64_t lines, shared, false_sharing, true_sharing;
	uint64_t contention;		/* on shared lines */
	uint64_t dropped_lines;		/* past plan->max_lines: lines not kept, */
	uint64_t dropped_samples;	/* and the accesses on them */
};

struct hm_whatif {
	const struct hm_wi_plan *plan;
	struct hm_lines before, after;
	struct hm_wi_counts counts;
	struct hm_wi_change *changes;	/* lines holding changed objects: stops, starts,
					 * stays; heaviest first within each */
	size_t nr_changes;
	struct hm_wi_totals tb, ta;	/* every line */
	uint64_t false_after, true_after;	/* shared lines after that hold changed objects */
	uint64_t stops, starts, stays;
	const struct hm_access *replayed;	/* malloc'd; hm_whatif_free(); NULL when
						 * replayed in batches */
};

/* Accesses replayed at once when a run is replayed in batches into per-line tables
 * (hm_lines_acc_*): the replay then holds one batch, not a copy of the run, and is as
 * exact as report's batches (lines.h). A run of one batch, or of fewer than 5 accesses
 * per distinct line, is replayed in one build per side instead, which costs less per
 * line (docs/hardening.md, Bounded memory), unless it has more distinct lines than
 * plan->max_lines: then in batches of a quarter of max_lines, both sides pruned. */
#define HM_WI_BATCH (1u << 18)
/* Batches only pay off with several accesses per line: per line, both sides' merged
 * tables cost about 1.1 KB more than one build's; per access, the one build's replayed
 * copy and scratch about 220 bytes (docs/hardening.md, Bounded memory). */
#define HM_WI_BATCH_MIN_PER_LINE 5
/* Whether a run of this summary is replayed in batches (over HM_WI_BATCH accesses, at
 * least HM_WI_BATCH_MIN_PER_LINE per distinct line) rather than in one build per side. */
int hm_wi_sum_batched(const struct hm_wi_sum *s);

/* Replays, builds the lines of both sides (window_ns as hm_lines_build) and matches
 * them. PMU recordings: a HITM load keeps its HITM only when its new line is still
 * shared (docs/whatif.md). */
int hm_whatif_run(struct hm_arena *a, const struct hm_access *acc, size_t n,
		  const struct hm_wi_plan *plan, uint64_t window_ns, struct hm_whatif *out,
		  struct hm_err *err);
/* Where a feed hands its batches: sink->fn takes them in order. room, when set, lends the
 * array the next batch may be written into and how many accesses it holds (*max): a feed
 * that makes its accesses one by one (whatif's spill read back) writes them there, fills
 * it unless the run ends, and hands that array to fn, which spares the replay a copy of
 * each access. NULL from room: stop, as when fn fails. */
struct hm_wi_sink {
	int (*fn)(const struct hm_access *acc, size_t n, void *fa);
	struct hm_access *(*room)(void *fa, size_t *max);
	void *fa;
};
/* The same over a run that feed hands out again on each call, in consecutive batches of
 * at most HM_WI_BATCH accesses to sink->fn (the run's order: the one sum was built from),
 * so that no copy of the run is held: one pass for both sides, a second for the after
 * side of a PMU recording. feed returns 0, or -1 with err set (fn's -1 stops it). sum
 * places the objects; types in the batches must be sum's (the plan's). Always batched. */
typedef int (*hm_wi_feed)(void *arg, const struct hm_wi_sink *sink, struct hm_err *err);
struct hm_wi_before;
/* before: the recorded side, built as the run was first read (below), or NULL; without
 * it, or when it does not fit the replay, the replay builds that side too. */
int hm_whatif_run_feed(struct hm_arena *a, const struct hm_wi_sum *sum,
		       const struct hm_wi_plan *plan, uint64_t window_ns, hm_wi_feed feed,
		       void *feed_arg, struct hm_wi_before *before, struct hm_whatif *out,
		       struct hm_err *err);

/* whatif_before.c: the recorded side of a streamed run built during its first read, so
 * that the replay builds only the new side. Given the run's accesses in order (on one
 * thread at a time; it touches no type), in chunks of any size. _end gives its lines
 * (into a's memory) when the replay's batches, line size, window and line bound are the
 * ones it was built with and no line was pruned, and -1 otherwise: the replay must then
 * hand out the same accesses with the same types (whatif_run.c builds that side itself
 * when it gets -1). */
struct hm_wi_before *hm_wi_before_new(uint32_t line_size, uint64_t window_ns, size_t max_lines);
void hm_wi_before_add(struct hm_wi_before *b, const struct hm_access *acc, size_t n);
int hm_wi_before_end(struct hm_wi_before *b, struct hm_arena *a, const struct hm_wi_plan *p,
		     uint64_t window_ns, size_t batch, struct hm_lines *out);
void hm_wi_before_free(struct hm_wi_before *b);	/* NULL: nothing */
void hm_whatif_free(struct hm_whatif *w);

/* suggest.c: a layout of type that puts each writer thread's members on their own
 * line(s), members read by several threads together and away from written ones,
 * members without recorded accesses into the slack, aligning each group's first member
 * to line_size. Exit 2 for an unknown type, naming the nearest. */
int hm_whatif_suggest(struct hm_arena *a, const struct hm_access *acc, size_t n,
		      const char *type, uint32_t line_size, struct hm_wi_suggestion *out,
		      struct hm_err *err);
int hm_whatif_suggest_sum(struct hm_arena *a, const struct hm_wi_sum *sum, const char *type,
			  uint32_t line_size, struct hm_wi_suggestion *out, struct hm_err *err);
const char *hm_wi_gkind_name(enum hm_wi_gkind k);	/* "writer", "read_mostly", ... */

const char *hm_wi_change_name(enum hm_wi_change_kind k);	/* "stops", "starts", "stays" */

/* Internal, shared by whatif*.c and suggest.c; not an API. */
/* The offset mapper behind a plan: edits (whatif_edit.c) or a new build
 * (whatif_build.c). map returns 0 (moved or not), 1 (type unchanged), 2 (type absent in
 * the new build) or -1 (field absent: *absent names its path). */
struct hm_wi_map {
	int (*map)(struct hm_wi_map *m, const struct hm_type *t, uint64_t off,
		   uint64_t *new_off, const char **absent);
	int (*object)(struct hm_wi_map *m, const struct hm_type *t, uint64_t *size,
		      uint32_t *align);
	void (*free)(struct hm_wi_map *m);
};
int hm_wi_edit_plan(struct hm_arena *a, const struct hm_wi_sum *sum,
		    const struct hm_wi_spec *spec, struct hm_wi_plan *out, struct hm_err *err);
int hm_wi_build_plan(struct hm_arena *a, const struct hm_wi_sum *sum,
		     const struct hm_wi_spec *spec, struct hm_wi_plan *out, struct hm_err *err);
/* whatif_replay.c: every object of the run placed (by address space and base; *nr of
 * them, malloc'd), then any batch of its accesses moved accordingly (flags: 1 for an
 * access to a changed object; may be NULL). */
struct hm_wi_obj;
struct hm_wi_obj *hm_wi_objects(const struct hm_wi_plan *p, const struct hm_wi_sum *sum,
				struct hm_wi_counts *c, size_t *nr);
void hm_wi_replay_batch(const struct hm_wi_plan *p, const struct hm_wi_obj *ob, size_t nob,
			const struct hm_access *acc, size_t n, struct hm_access *out,
			uint8_t *flags, struct hm_wi_counts *c);
/* Nearest of n names to name by edit distance: up to max into out; returns how many. */
size_t hm_wi_nearest(const char *name, const char *const *names, size_t n, const char **out,
		     size_t max);
/* The aggregate named name ("struct " accepted) among the recorded object types and the
 * aggregates they embed; NULL with err set (exit 2, nearest names) when absent. */
const struct hm_type *hm_wi_find_type(struct hm_arena *a, const struct hm_wi_sum *sum,
				      const char *name, struct hm_err *err);
/* Index of member name ("#N" for the N-th) in t; -1 with err set (nearest names). */
int hm_wi_find_member(struct hm_arena *a, const struct hm_type *t, const char *name,
		      struct hm_err *err);
/* The element aggregate of an object type (through typedefs and arrays), or NULL. */
const struct hm_type *hm_wi_elem(const struct hm_type *t, uint64_t *nelems);

#endif
