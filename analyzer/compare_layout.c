/* The layout side of a comparison: hot fields whose line or neighbours changed between
 * the builds, ranked by how much contention moved with them. */
#include "analyzer/compare.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/perfdata.h"

#include "analyzer/layoutdiff.h"
#include "core/sort.h"

/* --- the layout side --- */

struct hot {
	struct hm_cmp_hot h;
	double samples;			/* max of the two sides' means */
};

static int prefix_of(const char *s, const char *p, char next)
{
	size_t n = strlen(p);

	return !strncmp(s, p, n) && s[n] == next;
}

/* A finding is about member path p when it names p, a member containing it ("m" for
 * "m.boffset", "arr" for "arr[2]"), a member inside it, or names p as the other side. */
static int about(const struct hm_finding *f, const char *p)
{
	if (!f->member)
		return 0;
	return !strcmp(f->member, p) || prefix_of(p, f->member, '.') ||
	       prefix_of(p, f->member, '[') || prefix_of(f->member, p, '.') ||
	       (f->other && !strcmp(f->other, p));
}

static struct hot *collect_hot(struct hm_arena *a, const struct hm_cmp *c, size_t *nr)
{
	struct hot *h = hm_arena_alloc(a, (c->nr + 1) * sizeof(*h));
	struct hm_hash idx;

	*nr = 0;
	hm_hash_init(&idx);
	for (size_t i = 0; i < c->nr; i++) {
		const struct hm_cmp_metric *m = &c->m[i];
		double top = fmax(m->c.a.mean, m->c.b.mean);
		size_t j;
		struct hot *x;

		if (m->kind != HM_CMP_FIELD || !m->type || !m->field)
			continue;
		if (!(j = (size_t)(uintptr_t)hm_hash_get(&idx, m->field))) {
			x = &h[*nr];
			x->h.field = m->field;
			x->h.type = m->type;
			x->h.member = m->field + strcspn(m->field, ".") + 1;
			hm_hash_put(&idx, m->field, (void *)(uintptr_t)++*nr);
		} else {
			x = &h[j - 1];
		}
		if (m->contention && !x->h.measure) {
			x->h.measure = m->name + strlen(m->field) + 1;
			x->h.a = m->c.a.n ? m->c.a.mean : 0;
			x->h.b = m->c.b.n ? m->c.b.mean : 0;
		} else if (!strcmp(m->name + strlen(m->field), " samples") && top > x->samples) {
			x->samples = top;
		}
	}
	hm_hash_free(&idx);
	return h;
}

static int is_hot(const struct hot *h, double min)
{
	return h->samples >= min || h->h.a > 0 || h->h.b > 0;
}

static void push_hot(struct hm_arena *a, struct hm_cmp_layout *out, const struct hot *h,
		     enum hm_cmp_hot_status st, const struct hm_type_diff *td)
{
	struct hm_cmp_hot *x = &out->hot[out->nr];

	*x = h->h;
	x->status = st;
	if (!x->measure)
		x->measure = "samples";
	for (uint32_t k = 0; td && k < td->nr; k++)
		if (about(&td->f[k], x->member)) {
			struct hm_finding *f = hm_arena_alloc(a, sizeof(*f));

			/* the layouts, which own the member names, close before printing */
			*f = td->f[k];
			f->member = hm_arena_strdup(a, f->member);
			f->other = f->other ? hm_arena_strdup(a, f->other) : NULL;
			f->detail = f->detail ? hm_arena_strdup(a, f->detail) : NULL;
			if (!x->f) {
				x->f = hm_arena_alloc(a, td->nr * sizeof(*x->f));
				x->why = hm_arena_alloc(a, td->nr * sizeof(*x->why));
			}
			/* "errors: no longer shares a line with ops" reads wrong under ops */
			x->why[x->nr_f] = strcmp(f->member, x->member)
						  ? hm_arena_printf(a, "%s: %s", f->member, f->detail)
						  : f->detail;
			x->f[x->nr_f++] = f;
		}
	if (st == HM_CMP_CHANGED && !x->nr_f)
		out->unchanged++;
	else
		out->nr++;
}

/* The hot fields of one type, in both builds. */
static int layout_type(struct hm_arena *a, struct hm_layout *la, struct hm_layout *lb,
		       const char *type, const struct hot *h, size_t nh,
		       struct hm_cmp_layout *out, struct hm_err *err)
{
	const struct hm_type *ot = hm_layout_find(la, type), *nt = hm_layout_find(lb, type);
	struct hm_diff d;
	const struct hm_type_diff *td;

	if (!ot && !nt) {
		out->elsewhere[out->nr_elsewhere++] = type;
		return 0;
	}
	if (!ot || !nt) {
		for (size_t i = 0; i < nh; i++)
			if (is_hot(&h[i], out->hot_min) && !strcmp(h[i].h.type, type))
				push_hot(a, out, &h[i], ot ? HM_CMP_TYPE_ONLY_A : HM_CMP_TYPE_ONLY_B,
					 NULL);
		return 0;
	}
	if (hm_diff_types(a, la, lb, &type, 1, out->line_size, &d, err))
		return -1;
	td = d.nr ? d.types[0] : NULL;
	for (size_t i = 0; i < nh; i++) {
		uint64_t off, size;
		int in_a, in_b;

		if (!is_hot(&h[i], out->hot_min) || strcmp(h[i].h.type, type))
			continue;
		in_a = !hm_layout_member_offset(ot, h[i].h.member, &off, &size);
		in_b = !hm_layout_member_offset(nt, h[i].h.member, &off, &size);
		if (in_a != in_b)
			push_hot(a, out, &h[i], in_a ? HM_CMP_ONLY_A : HM_CMP_ONLY_B, td);
		else if (in_a)
			push_hot(a, out, &h[i], HM_CMP_CHANGED, td);
	}
	hm_diff_free(&d);
	return 0;
}

static int cmp_hot(const void *x, const void *y)
{
	const struct hm_cmp_hot *a = x, *b = y;
	double da = fabs(a->b - a->a), db = fabs(b->b - b->a);

	if (da != db)
		return da > db ? -1 : 1;
	return strcmp(a->field, b->field);
}

int hm_cmp_layout(struct hm_arena *a, const struct hm_cmp *c, struct hm_layout *la,
		  struct hm_layout *lb, uint32_t line_size, double hot_min,
		  struct hm_cmp_layout *out, struct hm_err *err)
{
	size_t nh;
	struct hot *h = collect_hot(a, c, &nh);

	memset(out, 0, sizeof(*out));
	out->a_path = hm_arena_strdup(a, hm_layout_path(la));	/* outlives the layouts */
	out->b_path = hm_arena_strdup(a, hm_layout_path(lb));
	out->line_size = line_size;
	out->hot_min = hot_min > 0 ? hot_min : HM_CMP_HOT;
	out->hot = hm_arena_alloc(a, (nh + 1) * sizeof(*out->hot));
	out->elsewhere = hm_arena_alloc(a, (nh + 1) * sizeof(*out->elsewhere));
	for (size_t i = 0; i < nh; i++) {
		size_t j;

		if (!is_hot(&h[i], out->hot_min))
			continue;
		for (j = 0; j < i && (!is_hot(&h[j], out->hot_min) ||
				      strcmp(h[j].h.type, h[i].h.type)); j++)
			;
		if (j == i && layout_type(a, la, lb, h[i].h.type, h, nh, out, err))
			return -1;
	}
	if (out->nr)
		hm_sort(out->hot, out->nr, sizeof(*out->hot), cmp_hot);
	return 0;
}

const char *hm_cmp_hot_status_name(enum hm_cmp_hot_status s)
{
	static const char *const names[] = {"changed", "only_a", "only_b", "type_only_a",
					    "type_only_b"};

	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

