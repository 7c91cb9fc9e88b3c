/* Inside the what-if run: whatif_run.c builds both sides' lines and links, batch by
 * batch, each access's line before to its line after; whatif_match.c keeps those pairs
 * and matches the two sides through them. */
#ifndef HM_WHATIF_INT_H
#define HM_WHATIF_INT_H

#include "analyzer/whatif.h"

/* A line by address space and address (hm_lines_space). */
struct hm_wi_lref;
/* l's lines sorted by space and address (malloc'd), for finding an access's line. */
struct hm_wi_lref *hm_wi_index_lines(const struct hm_lines *l);
/* A PMU load that hit a modified line in another cache keeps that HITM only when its new
 * line (in after, indexed by ia) is still shared. 1 when some HITM was dropped. */
int hm_wi_drop_hitm(struct hm_access *rep, size_t n, const struct hm_lines *after,
		    const struct hm_wi_lref *ia);

/* A line before and a line after that one access links; flag: to a changed object. */
struct hm_wi_lpair {
	uint64_t b, a;			/* line addresses */
	uint32_t space_b, space_a;	/* their address spaces (hm_lines_space) */
	uint8_t used, flag;
};

/* The distinct pairs, a hash set; {0} is empty. */
struct hm_wi_lpairs {
	struct hm_wi_lpair *v;
	size_t cap, nr;
};

/* An access's line before the replay moved it (ok: it had an address). */
struct hm_wi_bline {
	uint64_t line;
	uint32_t space, ok;
};

/* The lines before of acc[0, n), taken before the replay moves them (in place, maybe). */
void hm_wi_lines_of(struct hm_wi_bline *b, const struct hm_access *acc, size_t n, uint32_t L);
/* Adds the pairs of b[i] and the replayed rep[i] that both have an address. */
void hm_wi_link_batch(struct hm_wi_lpairs *t, const struct hm_wi_bline *b,
		      const struct hm_access *rep, const uint8_t *flags, size_t n, uint32_t L);
/* w's changes (stops, starts, stays) and counts of the lines after, from the pairs. */
void hm_wi_match(struct hm_arena *a, struct hm_whatif *w, const struct hm_wi_lpairs *t);
/* The shared lines of one side, counted. */
void hm_wi_count_totals(const struct hm_lines *l, struct hm_wi_totals *t);

#endif
