/* Who wrote which member of a type, from a recording's accesses: the input of
 * --reorganize's sharing rule. Objects of the type itself and arrays of it count;
 * accesses through an enclosing type do not (their offsets are the enclosing type's). */
#include "analyzer/reorganize.h"

#include <string.h>

#include "symbolize/shape.h"

static int same_type(const struct hm_type *x, const struct hm_type *y)
{
	const char *xn = hm_type_name(x), *yn = hm_type_name(y);

	/* the recording's DWARF and the layout's file are read apart: match by name */
	return x == y || (xn && yn && !strcmp(xn, yn) && x->size == y->size && x->kind == y->kind);
}

static int32_t member_at(const struct hm_shape *sh, uint64_t off)
{
	for (uint32_t i = 0; i < sh->nr; i++)
		if (off >= sh->ms[i].offset && off < sh->ms[i].offset + sh->ms[i].size)
			return (int32_t)i;
	return -1;
}

void hm_reorg_writers_collect(struct hm_arena *a, const struct hm_type *t,
			      const struct hm_access *acc, size_t n, struct hm_reorg_writers *out)
{
	struct hm_shape sh;

	t = hm_type_strip(t);
	hm_shape_compute(a, t, 64, &sh);
	memset(out, 0, sizeof(*out));
	out->nr = sh.nr;
	out->thread = hm_arena_alloc(a, sizeof(*out->thread) * (sh.nr + 1));
	out->multi = hm_arena_alloc(a, sh.nr + 1);
	memset(out->thread, 0, sizeof(*out->thread) * (sh.nr + 1));
	memset(out->multi, 0, sh.nr + 1);
	for (size_t i = 0; i < n; i++) {
		const struct hm_access *x = &acc[i];
		uint64_t nelems, who;
		const struct hm_type *agg;
		int32_t k;

		if (x->s.op != HM_OP_STORE || !x->type || !t->size)
			continue;
		agg = hm_type_agg(x->type, &nelems);
		if (!agg || !same_type(agg, t) || (k = member_at(&sh, x->field_off % t->size)) < 0)
			continue;
		who = 1ull << 63 | (uint64_t)x->s.pid << 32 | x->s.tid;
		if (out->thread[k] && out->thread[k] != who)
			out->multi[k] = 1;
		if (!out->thread[k])
			out->thread[k] = who;
		out->stores++;
	}
}
