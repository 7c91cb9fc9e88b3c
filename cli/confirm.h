/* record --confirm FIRST.data: which bytes to watch, from a first recording's shared
 * lines (cli/confirm.c), and how they share the debug registers over time. */
#ifndef HM_CLI_CONFIRM_H
#define HM_CLI_CONFIRM_H

#include "resolve/resolve.h"
#include "cli/watchspec.h"
#include "core/err.h"

#define CONFIRM_REGS 4			/* x86 debug registers: ranges armed at once */
#define CONFIRM_GROUPS 4		/* slices in turn: each group watched 1/4 of the time */
#define CONFIRM_MAX (CONFIRM_REGS * CONFIRM_GROUPS)
#define CONFIRM_SPEC_LEN 300
#define CONFIRM_SLICE_MS 50		/* default --watch-slice */

struct confirm_plan {
	char spec[CONFIRM_MAX][CONFIRM_SPEC_LEN];	/* --watch SYMBOL+OFF/LEN */
	char field[CONFIRM_MAX][256];			/* what the first run named it */
	int group[CONFIRM_MAX];				/* the slice group it is armed in */
	int nr;
	int nr_groups;
	int lines;		/* lines with at least one pair armed */
	int skipped;		/* shared lines not armed */
	char why[320];		/* why the last of them was not */
};

/* Fills p from the shared lines of first; -1 (err) when nothing can be watched. */
int confirm_plan(const char *first, const struct hm_resolve_opts *ro, struct confirm_plan *p,
		 struct hm_err *err);

#endif
