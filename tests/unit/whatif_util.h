/* Shared by the whatif unit tests (test_whatif.c, test_suggest.c): crafted accesses to
 * the examples' real types, plans and the rows of a plan. */
#ifndef HM_TEST_WHATIF_UTIL_H
#define HM_TEST_WHATIF_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <linux/perf_event.h>

#include "analyzer/whatif.h"

#ifndef UNUSED
#define UNUSED __attribute__((unused))
#endif

#define FS "examples/bin/false_sharing"
#define FS_PADDED "examples/bin/false_sharing_padded"
#define ORDER "examples/bin/whatif_order.o"
#define XFS_A "examples/bin/xfs_like"
#define XFS_B "examples/bin/xfs_like_variant"
#define TRICKY "examples/bin/tricky.o"
#define BASE 0x555500001000ull	/* line-aligned */
#define MAX_ACC 4096

struct fx {
	struct hm_arena a;
	struct hm_layout *lay[4];
	size_t nlay;
	struct hm_access acc[MAX_ACC];
	size_t n;
	struct hm_wi_plan plan;
	struct hm_err err;
};

static UNUSED int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	hm_arena_init(&f->a);
	*state = f;
	return 0;
}

static UNUSED int teardown(void **state)
{
	struct fx *f = *state;

	hm_whatif_plan_free(&f->plan);
	for (size_t i = 0; i < f->nlay; i++)
		hm_layout_close(f->lay[i]);
	hm_arena_free(&f->a);
	free(f);
	return 0;
}

static struct hm_layout *open_lay(struct fx *f, const char *path)
{
	struct hm_err err = {0};
	struct hm_layout *lay = NULL;

	if (hm_layout_open(path, &lay, &err))
		fail_msg("%s: %s (run make examples)", path, err.msg);
	f->lay[f->nlay++] = lay;
	return lay;
}

static const struct hm_type *type_in(struct fx *f, const char *path, const char *name)
{
	const struct hm_type *t = hm_layout_find(open_lay(f, path), name);

	assert_non_null(t);
	return t;
}

/* One timer access to byte off of the object of type t at base. */
static struct hm_access *add(struct fx *f, const struct hm_type *t, uint64_t base, uint64_t off,
			     uint32_t size, int op, uint32_t tid, uint64_t time)
{
	struct hm_access *x = &f->acc[f->n++];
	char path[256];
	uint64_t within;

	assert_true(f->n <= MAX_ACC);
	memset(x, 0, sizeof(*x));
	x->s.addr = base + off;
	x->s.size = size;
	x->s.op = (uint8_t)op;
	x->s.pid = 100;
	x->s.tid = tid;
	x->s.cpu = tid;
	x->s.time = time;
	x->s.source = HM_SRC_TIMER;
	x->method = HM_M_GLOBAL;
	x->object = "stats";
	x->type = t;
	x->obj_base = base;
	x->field_off = off;
	hm_layout_field_at(t, off, path, sizeof(path), &within);
	x->field = hm_arena_printf(&f->a, "%s.%s", hm_wi_elem(t, NULL)->name, path);
	return x;
}

static UNUSED void plan_edit(struct fx *f, enum hm_wi_kind kind, const char *type, const char *field,
		      uint64_t value)
{
	static struct hm_wi_edit e;
	static struct hm_wi_spec spec;

	e = (struct hm_wi_edit){.kind = kind, .type = type, .field = field, .value = value};
	spec = (struct hm_wi_spec){.kind = kind, .edits = &e, .nr_edits = 1, .line_size = 64};
	if (hm_whatif_plan(&f->a, f->acc, f->n, &spec, &f->plan, &f->err))
		fail_msg("plan: %s", f->err.msg);
}

static UNUSED uint64_t moved(struct fx *f, const struct hm_type *t, uint64_t off)
{
	uint64_t n = UINT64_MAX;

	assert_int_equal(hm_whatif_map(&f->plan, t, off, &n), 0);
	return n;
}

static const struct hm_wi_member *row(const struct hm_wi_plan *p, const char *type,
				      const char *member)
{
	for (uint32_t i = 0; i < p->nr_types; i++)
		for (uint32_t k = 0; strcmp(p->types[i].name, type) == 0 && k < p->types[i].nr; k++)
			if (p->types[i].m[k].name && !strcmp(p->types[i].m[k].name, member))
				return &p->types[i].m[k];
	fail_msg("no row %s.%s", type, member);
	return NULL;
}

static const struct hm_wi_type *trow(const struct hm_wi_plan *p, const char *type)
{
	for (uint32_t i = 0; i < p->nr_types; i++)
		if (!strcmp(p->types[i].name, type))
			return &p->types[i];
	fail_msg("no type %s in the plan", type);
	return NULL;
}

/* Two threads, one writing ops, the other errors and bytes, 10 us apart. */
static UNUSED void false_sharing(struct fx *f, const struct hm_type *ws, uint64_t base, int n)
{
	for (int i = 0; i < n; i++) {
		add(f, ws, base, 0, 8, i % 3 ? HM_OP_STORE : HM_OP_LOAD, 1, 10000ull * i);
		add(f, ws, base, i % 2 ? 8 : 16, 8, HM_OP_STORE, 2, 10000ull * i + 5000);
	}
}

#endif
