#include "arena.h"
#include "core/oom.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HM_ARENA_BLOCK (256 * 1024)

struct hm_arena_block {
	struct hm_arena_block *next;
	max_align_t data[];
};

void hm_arena_init(struct hm_arena *a)
{
	memset(a, 0, sizeof(*a));
}

void hm_arena_free(struct hm_arena *a)
{
	struct hm_arena_block *b = a->head, *next;

	for (; b; b = next) {
		next = b->next;
		free(b);
	}
	hm_arena_init(a);
}

void *hm_arena_alloc(struct hm_arena *a, size_t size)
{
	size_t need = (size + 15) & ~(size_t)15;
	char *p;

	if (!a->head || a->used + need > a->cap) {
		size_t cap = need > HM_ARENA_BLOCK ? need : HM_ARENA_BLOCK;
		struct hm_arena_block *b = malloc(sizeof(*b) + cap);

		if (!b) {
			hm_oom();
		}
		b->next = a->head;
		a->head = b;
		a->used = 0;
		a->cap = cap;
	}
	p = (char *)a->head->data + a->used;
	a->used += need;
	a->total += need;
	memset(p, 0, size);
	return p;
}

void hm_arena_adopt(struct hm_arena *a, struct hm_arena *src)
{
	struct hm_arena_block *tail = src->head;

	if (!tail)
		return;
	if (!a->head) {
		*a = *src;
		hm_arena_init(src);
		return;
	}
	while (tail->next)
		tail = tail->next;
	tail->next = a->head->next;
	a->head->next = src->head;
	a->total += src->total;
	hm_arena_init(src);
}

char *hm_arena_strdup(struct hm_arena *a, const char *s)
{
	size_t n = strlen(s) + 1;

	return memcpy(hm_arena_alloc(a, n), s, n);
}

char *hm_arena_printf(struct hm_arena *a, const char *fmt, ...)
{
	va_list ap;
	int n;
	char *p;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	p = hm_arena_alloc(a, (size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}
