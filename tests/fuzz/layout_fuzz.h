/* Body shared by the DWARF and BTF layout targets: open the input, then render every type
 * as `hitmap layout` and `hitmap layout --json` would, and walk its members by offset and
 * by path, so that the lazy member loading, the nesting bounds and the printers all run. */
#ifndef HM_LAYOUT_FUZZ_H
#define HM_LAYOUT_FUZZ_H

#include <stdio.h>

#include "render/layout_print.h"
#include "core/json.h"
#include "symbolize/layout.h"
#include "tests/fuzz/fuzz_util.h"

struct fuzz_ctx {
	FILE *null;
	struct hm_arena arena;
	struct hm_json json;
	int count;
};

static int fuzz_field(const struct hm_field *f, void *ctx)
{
	(void)ctx;
	return f->depth > 1000;	/* the walk must bound itself long before this */
}

static int fuzz_type(const struct hm_type *t, void *vctx)
{
	static const struct hm_print_opts plain = {.line_size = 64};
	static const struct hm_print_opts expand = {.line_size = 128, .expand = 1};
	struct fuzz_ctx *c = vctx;
	char path[256];
	uint64_t within, off, size;
	uint32_t nr;

	hm_layout_print_text(c->null, &c->arena, t, &plain);
	hm_layout_print_text(c->null, &c->arena, t, &expand);
	hm_layout_print_json(&c->json, &c->arena, t, &plain);
	hm_layout_walk(t, 0, fuzz_field, NULL);
	for (uint64_t o = 0; o < t->size && o < 256; o += 7)
		hm_layout_field_at(t, o, path, sizeof(path), &within);
	hm_layout_field_at(t, t->size ? t->size - 1 : 0, path, sizeof(path), &within);
	if (hm_type_members(t, &nr) && nr)
		hm_layout_member_offset(t, path, &off, &size);
	/* A file with a million types is valid; the printers are exercised after a few. */
	return ++c->count >= 200;
}

/* BTF FUNC prototypes as the BTF data typing reads them: each parameter's pointee and
 * its size. */
static void fuzz_funcs(struct hm_layout *lay)
{
	static const char *const names[] = { "main", "fill_orders", "count_ops", "count_errors" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const struct hm_type *f = hm_type_strip(hm_layout_func_type(lay, names[i]));

		for (uint32_t k = 0; f && f->kind == HM_T_FUNC && k < f->nr_params; k++) {
			const struct hm_type *p = hm_type_strip(f->params[k]);

			if (p && p->kind == HM_T_PTR && p->ref)
				(void)hm_type_strip(p->ref);
		}
	}
}

static void fuzz_layout(struct hm_layout *lay)
{
	struct fuzz_ctx c = {0};
	const char *near[5];

	c.null = fopen("/dev/null", "w");
	if (!c.null)
		return;
	hm_arena_init(&c.arena);
	hm_json_init(&c.json, c.null);
	hm_json_obj_begin(&c.json, NULL);
	hm_json_arr_begin(&c.json, "types");
	hm_layout_foreach(lay, fuzz_type, &c);
	hm_json_arr_end(&c.json);
	hm_json_obj_end(&c.json);
	hm_json_finish(&c.json);
	if (!hm_layout_find(lay, "worker_stats"))
		hm_layout_suggest(lay, "worker_stats", near, 5);
	hm_layout_var_type(lay, "stats");
	fuzz_funcs(lay);
	hm_arena_free(&c.arena);
	fclose(c.null);
}

#endif
