/* Global and static variables of an ELF file (symbol table), for cache-line
 * co-residence: which variables share a line of .data, .bss, read-mostly or per-cpu. */
#ifndef HM_GLOBALS_H
#define HM_GLOBALS_H

#include <stddef.h>
#include <stdint.h>

#include "core/arena.h"
#include "core/err.h"

struct hm_global {
	const char *name;	/* unique: a repeated static gets "name#2" */
	const char *section;
	uint64_t addr, size;
};

/* Loads STT_OBJECT symbols in writable data sections, sorted by address. */
int hm_globals_load(struct hm_arena *a, const char *path, struct hm_global **out, size_t *nr,
		    struct hm_err *err);

#endif
