/* --watch SYMBOL[.FIELD.PATH][:w|:rw], --watch SYMBOL+OFF/LEN[:w|:rw] (what --confirm
 * writes: bytes of a variable found again in a new process) and --watch ADDR/LEN[:w|:rw]:
 * parsing, and
 * resolution in the workload's address space through its symbols and DWARF. */
#ifndef HM_CLI_WATCHSPEC_H
#define HM_CLI_WATCHSPEC_H

#include <sys/types.h>

#include "collectors/record.h"

/* --watch takes HM_MAX_WATCH; --confirm rotates up to this many ranges through them. */
#define HM_WATCH_RANGES 16

struct watch_specs {
	const char *text[HM_WATCH_RANGES];
	int nr;
	/* parsed */
	char sym[HM_WATCH_RANGES][256];	/* "stats", empty for ADDR/LEN */
	const char *path[HM_WATCH_RANGES];	/* "ops" or "a.b[2]", NULL for the whole symbol */
	char pathbuf[HM_WATCH_RANGES][256];
	uint64_t addr[HM_WATCH_RANGES];
	uint64_t symoff[HM_WATCH_RANGES];	/* SYMBOL+OFF/LEN: OFF; len[] holds LEN */
	int has_off[HM_WATCH_RANGES];
	uint32_t len[HM_WATCH_RANGES], type[HM_WATCH_RANGES];
	char label[HM_WATCH_RANGES][320];
	struct hm_watch resolved[HM_WATCH_RANGES];
};

int hm_watchspecs_parse(struct watch_specs *ws, struct hm_err *err);
/* hm_record_opts.resolve: fills ws->resolved for the process pid. */
int hm_watchspecs_resolve(void *ctx, pid_t pid, struct hm_err *err);

#endif
