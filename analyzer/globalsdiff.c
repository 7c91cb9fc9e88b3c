/* A variable's neighbours are the variables of its section that touch any cache line it
 * touches. A neighbour gained between builds is how a hot global ends up next to one
 * that other CPUs write. */
#include "analyzer/globalsdiff.h"

#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "core/oom.h"

#define MAX_LISTED 8

static uint64_t first_line(const struct hm_global *g, uint32_t ls) { return g->addr / ls; }

static uint64_t last_line(const struct hm_global *g, uint32_t ls)
{
	return (g->addr + (g->size ? g->size - 1 : 0)) / ls;
}

static int meet(const struct hm_global *x, const struct hm_global *y, uint32_t ls)
{
	return !strcmp(x->section, y->section) && first_line(x, ls) <= last_line(y, ls) &&
	       first_line(y, ls) <= last_line(x, ls);
}

struct side {
	const struct hm_global *v;
	size_t n;
	uint64_t *reach;	/* reach[j]: the last line touched by any of v[0..j] */
};

static void side_init(struct side *s, const struct hm_global *v, size_t n, uint32_t ls)
{
	s->v = v;
	s->n = n;
	s->reach = calloc(n ? n : 1, sizeof(*s->reach));
	if (!s->reach)
		hm_oom();
	for (size_t j = 0; j < n; j++)
		s->reach[j] = j && s->reach[j - 1] > last_line(&v[j], ls) ? s->reach[j - 1]
									  : last_line(&v[j], ls);
}

/* Neighbours of v[i] (v sorted by address), into out; returns how many. */
static size_t neighbours(const struct side *s, size_t i, uint32_t ls, const char **out,
			 size_t cap)
{
	const struct hm_global *v = s->v;
	size_t k = 0, n = s->n;

	for (size_t j = i; j-- > 0 && s->reach[j] >= first_line(&v[i], ls);)
		if (meet(&v[i], &v[j], ls) && k < cap)
			out[k++] = v[j].name;
	for (size_t j = i + 1; j < n && first_line(&v[j], ls) <= last_line(&v[i], ls); j++)
		if (meet(&v[i], &v[j], ls) && k < cap)
			out[k++] = v[j].name;
	return k;
}

static int contains(const char **set, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(set[i], name))
			return 1;
	return 0;
}

static struct hm_gfinding *push(struct hm_gdiff *d, enum hm_gkind k, const struct hm_global *o,
				const struct hm_global *n)
{
	struct hm_gfinding *f;

	d->f = realloc(d->f, (d->nr + 1) * sizeof(*d->f));
	if (!d->f)
		hm_oom();
	f = &d->f[d->nr++];
	memset(f, 0, sizeof(*f));
	f->kind = k;
	f->var = n->name;
	f->section = n->section;
	f->old_addr = o->addr;
	f->new_addr = n->addr;
	return f;
}

static const char *join_missing(struct hm_arena *a, const char **from, size_t nf, const char **in,
				size_t ni, size_t *count)
{
	const char *s = "";

	*count = 0;
	for (size_t i = 0; i < nf; i++) {
		if (contains(in, ni, from[i]))
			continue;
		if (++*count <= MAX_LISTED)
			s = hm_arena_printf(a, "%s%s%s", s, *s ? ", " : "", from[i]);
	}
	if (*count > MAX_LISTED)
		s = hm_arena_printf(a, "%s and %zu more", s, *count - MAX_LISTED);
	return s;
}

static void compare_var(struct hm_arena *a, struct hm_gdiff *d, const struct side *os_,
			size_t oi, const struct side *ns_, size_t ni, uint32_t ls)
{
	const char *onb[256], *nnb[256];
	size_t ko = neighbours(os_, oi, ls, onb, 256), kn = neighbours(ns_, ni, ls, nnb, 256);
	const struct hm_global *o = &os_->v[oi], *n = &ns_->v[ni];
	int os = last_line(o, ls) != first_line(o, ls), ns = last_line(n, ls) != first_line(n, ls);
	size_t cnt;
	const char *names;

	names = join_missing(a, nnb, kn, onb, ko, &cnt);
	if (cnt) {
		struct hm_gfinding *f = push(d, HM_G_GAINED, o, n);

		f->names = names;
		f->detail = hm_arena_printf(a, "now shares a line with %s", names);
	}
	names = join_missing(a, onb, ko, nnb, kn, &cnt);
	if (cnt) {
		struct hm_gfinding *f = push(d, HM_G_LOST, o, n);

		f->names = names;
		f->detail = hm_arena_printf(a, "no longer shares a line with %s", names);
	}
	if (os != ns)
		push(d, ns ? HM_G_STRADDLE : HM_G_UNSTRADDLE, o, n)->detail =
			ns ? hm_arena_printf(a, "now crosses a line boundary (%llu bytes at 0x%llx)",
					     (unsigned long long)n->size, (unsigned long long)n->addr)
			   : "no longer crosses a line boundary";
}

void hm_globals_diff(struct hm_arena *a, const struct hm_global *old, size_t nr_old,
		     const struct hm_global *new, size_t nr_new, uint32_t line_size,
		     struct hm_gdiff *out)
{
	struct hm_hash by_name;
	struct side so, sn;

	memset(out, 0, sizeof(*out));
	side_init(&so, old, nr_old, line_size);
	side_init(&sn, new, nr_new, line_size);
	hm_hash_init(&by_name);
	for (size_t i = 0; i < nr_old; i++)
		hm_hash_put(&by_name, old[i].name, (void *)&old[i]);
	for (size_t i = 0; i < nr_new; i++) {
		const struct hm_global *o = hm_hash_get(&by_name, new[i].name);

		if (!o)
			continue;
		out->compared++;
		compare_var(a, out, &so, (size_t)(o - old), &sn, i, line_size);
	}
	hm_hash_free(&by_name);
	free(so.reach);
	free(sn.reach);
}

const char *hm_gkind_name(enum hm_gkind k)
{
	static const char *const names[] = {"gained", "lost", "straddle", "unstraddle"};

	return k <= HM_G_UNSTRADDLE ? names[k] : "?";
}
