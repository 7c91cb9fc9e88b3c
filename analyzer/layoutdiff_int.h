/* layoutdiff.c's leaves: every member of a type as a path with its bits and lines
 * (layoutdiff_units.c), matched across builds by path. */
#ifndef HM_LAYOUTDIFF_INT_H
#define HM_LAYOUTDIFF_INT_H

#include <stdint.h>

#include "core/arena.h"
#include "core/hash.h"
#include "symbolize/layout.h"

/* Units per type, far above any real struct (task_struct: ~1,000 leaves); a corrupt file
 * that nests a struct in itself stops here. */
#define MAX_UNITS 4096

struct leaf {
	const char *path, *type;
	uint64_t bit_off, bits;
	uint64_t first_line, last_line;
};

struct leaves {
	struct hm_arena *a;
	uint32_t line;
	struct leaf *v;
	size_t n, cap;
	struct hm_hash by_path;
	unsigned long visits;		/* walk_units calls: bounded like the leaves */
};

/* Leaves of t as hm_layout_walk paths; units: leaves, a union counting as one. Paths are
 * unique: anonymous members go by their first member ({a...}), repeats get #2, #3. */
void hm_ld_collect(struct leaves *L, struct hm_arena *a, const struct hm_type *t, uint32_t line);
void hm_ld_collect_units(struct leaves *L, struct hm_arena *a, const struct hm_type *t,
			 uint32_t line);
void hm_ld_leaves_free(struct leaves *L);
/* The path of anonymous member idx of prefix's type s: prefix.{first...}, else prefix.#idx. */
const char *hm_ld_anon_path(struct hm_arena *a, const char *prefix, const struct hm_type *s,
			    uint32_t idx);

#endif
