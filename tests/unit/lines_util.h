/* Shared by the analyzer/lines.c unit tests: a set of crafted accesses (struct spec, add),
 * building lines and splits from it, and the two-thread false-sharing set. */
#ifndef HM_TEST_LINES_UTIL_H
#define HM_TEST_LINES_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <linux/perf_event.h>

#include "analyzer/lines.h"

#ifndef UNUSED
#define UNUSED __attribute__((unused))
#endif

#define BASE 0x7f0000001000ull	/* line-aligned */
#define L 64

/* One access: where, how, who, when, and what symbolization named. */
struct spec {
	uint64_t addr;
	uint32_t size;
	int op;
	uint32_t tid, cpu;
	uint64_t time;
	const char *object;
	uint64_t obj_base;
	const char *field;
	int src;
};

struct set {
	struct hm_access acc[4096];
	size_t n;
	struct hm_arena a;
	struct hm_lines lines;
	struct hm_splits splits;
};

static UNUSED struct set *set_new(void)
{
	struct set *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	hm_arena_init(&s->a);
	return s;
}

static UNUSED void set_free(struct set *s)
{
	hm_arena_free(&s->a);
	free(s);
}

static UNUSED void add(struct set *s, struct spec p)
{
	struct hm_access *x = &s->acc[s->n++];

	assert_true(s->n <= sizeof(s->acc) / sizeof(s->acc[0]));
	memset(x, 0, sizeof(*x));
	x->s.addr = p.addr;
	x->s.size = p.size;
	x->s.op = (uint8_t)p.op;
	x->s.pid = 4242;
	x->s.tid = p.tid;
	x->s.cpu = p.cpu;
	x->s.time = p.time;
	x->s.ip = 0x401000 + (p.field ? strlen(p.field) : 0);
	x->s.source = (uint8_t)p.src;
	x->object = p.object;
	x->obj_base = p.obj_base;
	x->field = p.field;
	x->field_off = p.obj_base ? p.addr - p.obj_base : 0;
	x->method = p.addr ? (p.object ? HM_M_GLOBAL : HM_M_UNKNOWN) : HM_M_NOADDR;
	x->func = "worker";
	x->file = "demo.c";
	x->line = p.field && strstr(p.field, "errors") ? 14 : 12;
}

static UNUSED void build(struct set *s, uint64_t window_ns)
{
	struct hm_err err;

	assert_int_equal(hm_lines_build(&s->a, s->acc, s->n, L, window_ns, &s->lines, &err), 0);
	assert_int_equal(hm_splits_build(&s->a, s->acc, s->n, L, &s->splits, &err), 0);
}

/* worker_stats { long ops; long errors; } at BASE: thread 101 on CPU 0 bumps ops, thread
 * 102 on CPU 1 bumps errors, interleaved. */
static UNUSED void false_sharing_set(struct set *s, int src)
{
	for (int i = 0; i < 100; i++) {
		add(s, (struct spec){ BASE + 0, 8, HM_OP_STORE, 101, 0, 1000 * (uint64_t)i,
				      "worker_stats", BASE, "worker_stats.ops", src });
		add(s, (struct spec){ BASE + 8, 8, HM_OP_STORE, 102, 1, 1000 * (uint64_t)i + 500,
				      "worker_stats", BASE, "worker_stats.errors", src });
	}
}

#endif
