/* What lines.c and lines_fill.c share: the build context and a counting table. Not an
 * API: nothing outside analyzer/lines*.c includes this. */
#ifndef HM_LINES_INT_H
#define HM_LINES_INT_H

#include "analyzer/lines.h"

/* A counting-table entry: kind and row in k1, the id (tid, cpu, ip, row key) in k2. */
struct cent {
	uint64_t k1, k2;
	uint32_t used, aux;		/* aux: a row's or line's number */
	uint64_t records, loads, stores, locked, writes;
	const struct hm_access *x;	/* the first access (a named one, for rows) */
};

struct ctab {
	struct cent *e;
	uint32_t *slots;		/* slots in use, to clear and walk them */
	size_t cap, len;
};

enum { K_ROW, K_THREAD, K_CPU, K_SITE, K_LTHREAD, K_LCPU };

struct ctx {
	struct hm_arena *a;
	const struct hm_access *acc;
	uint32_t line_size;
	uint64_t window_ns;
	struct ctab t;
	struct hm_lrec *recs;		/* every placed access, bucketed by line */
	uint32_t *start, *fill;		/* line l: recs[start[l] .. start[l + 1]) */
	uint32_t *fidx;			/* row of each access of the current line */
	uint32_t *remap;		/* row number in first-seen order -> by offset */
	struct hm_rowpair *ev;		/* scratch for hm_sharing_interleave */
	int all_sites;			/* keep every site of a row, not the top few */
	const struct hm_lines_acc *from;	/* streamed: the merge, whose lines' state
						 * before this batch the interleavings go
						 * on from; NULL: not streamed */
	struct cent *ents;		/* scratch: table entries of one line */
	size_t cap_ents;
	struct hm_site *sites;		/* scratch: every site of one row */
	size_t cap_sites;
};

struct cent *hm_lines_ctab_get(struct ctab *t, uint64_t k1, uint64_t k2,
			       const struct hm_access *x);
void hm_lines_ctab_clear(struct ctab *t);
int hm_lines_locked(const struct hm_access *x);
/* The table's entries into c->ents, by kind and row, then busiest first; how many. */
size_t hm_lines_snapshot(struct ctx *c);
struct hm_count *hm_lines_to_counts(struct hm_arena *a, const struct cent *e, size_t n,
				    int by_cpu);
/* Rows, counts, threads, CPUs, sites and interleavings of the line whose m accesses are
 * r[] in time order. */
void hm_lines_fill(struct ctx *c, struct hm_line *ln, const struct hm_lrec *r, size_t m);
/* The objects on the line, most accessed first, at most three names. */
const char *hm_lines_object(struct hm_arena *a, const struct hm_line *ln);
/* hm_lines_build without the ranking and the verdicts: one batch for lines_merge.c,
 * which asks for every code site of a row (all_sites), not the top few. */
int hm_lines_build_batch(struct hm_arena *a, const struct hm_access *acc, size_t n,
			 uint32_t line_size, uint64_t window_ns, int all_sites,
			 const struct hm_lines_acc *from, struct hm_lines *out,
			 struct hm_err *err);
/* The source with the most accesses (ties: pmu, watch, timer). */
enum hm_source hm_lines_majority(const struct hm_lines *l);
/* A line's or row's contention under source src: HITM loads, transfers or conflicts. */
uint64_t hm_lines_measure(enum hm_source src, const struct hm_c2c_stats *c2c,
			  uint64_t conflicts, uint64_t transfers);

/* lines_merge.c and lines_prune.c: the merge state of hm_lines_acc_*. */
struct mslot {
	uint64_t addr;
	uint32_t pid, id1;		/* line index + 1; 0: empty */
};

struct hm_lines_acc {
	struct hm_arena *a;		/* the caller's: the result, the run's threads */
	struct hm_arena own;		/* the lines' tables: replaced when lines are
					 * dropped, adopted by a at the end */
	uint32_t line_size;
	uint64_t window_ns;
	struct hm_lines l;		/* lines: malloc'd while merging */
	size_t cap_lines;
	struct mslot *slots;		/* (pid, addr) -> line */
	size_t cap_slots;
	uint32_t *map;			/* batch row -> merged row, one line at a time */
	size_t cap_map;
	int have_cpu;
	size_t max_lines;		/* 0: no limit */
	uint64_t *gone;			/* fingerprints of dropped lines, open addressing */
	size_t cap_gone, nr_gone;
};

/* The merged line's interleaving state after the batches so far, or NULL (no such line,
 * or it was dropped). */
const struct hm_icarry *hm_lines_acc_carry(const struct hm_lines_acc *m, uint32_t pid,
					   uint64_t addr);
/* Room for n + add elements of p (an arena array that holds n in a power-of-two
 * capacity): p, or a copy in a larger one. */
void *hm_lines_grow(struct hm_arena *a, void *p, size_t n, size_t add, size_t size);
/* The smallest power of two >= n (1 for 0): the capacity of an array that grows. */
size_t hm_lines_pow2cap(size_t n);
uint64_t hm_lines_mix(uint64_t pid, uint64_t addr);
/* (pid, addr) -> line index again, after the lines array changed. */
void hm_lines_acc_reindex(struct hm_lines_acc *m);
/* lines_prune.c: whether a line was dropped; drops all but the top max_lines. */
int hm_lines_acc_gone(const struct hm_lines_acc *m, uint32_t pid, uint64_t addr);
void hm_lines_acc_prune(struct hm_lines_acc *m);

#endif
