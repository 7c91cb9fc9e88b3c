/* Cache-line co-residence of global variables between two builds. */
#ifndef HM_GLOBALSDIFF_H
#define HM_GLOBALSDIFF_H

#include "symbolize/globals.h"

enum hm_gkind { HM_G_GAINED, HM_G_LOST, HM_G_STRADDLE, HM_G_UNSTRADDLE };

struct hm_gfinding {
	enum hm_gkind kind;
	const char *var, *section;
	uint64_t old_addr, new_addr;
	const char *names;	/* gained/lost: the neighbours, comma-separated */
	const char *detail;
};

struct hm_gdiff {
	struct hm_gfinding *f;
	size_t nr;
	size_t compared;	/* variables present in both builds */
};

void hm_globals_diff(struct hm_arena *a, const struct hm_global *old, size_t nr_old,
		     const struct hm_global *new, size_t nr_new, uint32_t line_size,
		     struct hm_gdiff *out);
const char *hm_gkind_name(enum hm_gkind k);

#endif
