/* record --confirm FIRST.data: which bytes to watch, from a first recording's shared
 * lines (cli/confirm.c). */
#ifndef HM_CLI_CONFIRM_H
#define HM_CLI_CONFIRM_H

#include "analyzer/resolve.h"
#include "core/err.h"

#define CONFIRM_MAX 4		/* x86 debug registers */
#define CONFIRM_SPEC_LEN 300

struct confirm_plan {
	char spec[CONFIRM_MAX][CONFIRM_SPEC_LEN];	/* --watch SYMBOL+OFF/LEN */
	char field[CONFIRM_MAX][256];			/* what the first run named it */
	int nr;
	int lines;		/* lines whose pair is armed */
	int skipped;		/* shared lines not armed */
	char why[320];		/* why the last of them was not */
};

/* Fills p from the shared lines of first; -1 (err) when nothing can be watched. */
int confirm_plan(const char *first, const struct hm_resolve_opts *ro, struct confirm_plan *p,
		 struct hm_err *err);

#endif
