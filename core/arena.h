/* Bump allocator: one per file or report run, freed at once. */
#ifndef HM_ARENA_H
#define HM_ARENA_H

#include <stddef.h>

struct hm_arena_block;

struct hm_arena {
	struct hm_arena_block *head;
	size_t used, cap;
	size_t total;	/* bytes handed out, for memory reports */
};

void hm_arena_init(struct hm_arena *a);
void hm_arena_free(struct hm_arena *a);
/* Zeroed, 16-byte aligned; aborts on out-of-memory like xmalloc. */
void *hm_arena_alloc(struct hm_arena *a, size_t size);
/* Moves every block of src into a (src is left empty): what src handed out now lives as
 * long as a. a keeps allocating from its own current block. */
void hm_arena_adopt(struct hm_arena *a, struct hm_arena *src);
char *hm_arena_strdup(struct hm_arena *a, const char *s);
char *hm_arena_printf(struct hm_arena *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
