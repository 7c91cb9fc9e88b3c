/* The plan of a what-if: which types change and how (whatif_edit.c for edits,
 * whatif_build.c for another build, suggest.c for --suggest), with the names the user
 * gave checked against what the recording holds. */
#include "analyzer/whatif.h"

#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "core/oom.h"

#define MAX_NEST 32
#define NEAREST 3

static unsigned edit_distance(const char *a, const char *b)
{
	size_t lb = strlen(b);
	unsigned row[64], prev;

	if (lb >= 64)
		return 64;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; a[i - 1]; i++) {
		prev = row[0];
		row[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned cur = row[j];
			unsigned sub = prev + (a[i - 1] != b[j - 1]);

			row[j] = sub;
			if (row[j - 1] + 1 < row[j])
				row[j] = row[j - 1] + 1;
			if (cur + 1 < row[j])
				row[j] = cur + 1;
			prev = cur;
		}
	}
	return row[lb];
}

size_t hm_wi_nearest(const char *name, const char *const *names, size_t n, const char **out,
		     size_t max)
{
	size_t k = 0;
	unsigned *d = malloc((max + 1) * sizeof(*d));

	if (!d)
		hm_oom();	/* as the arena does */
	for (size_t i = 0; i < n; i++) {
		unsigned di = edit_distance(name, names[i]);
		size_t j;

		/* A prefix or a substring is as near as a typo. */
		if (strstr(names[i], name) || strstr(name, names[i]))
			di = di < 2 ? di : 2;
		if (k == max && di >= d[k - 1])
			continue;
		j = k < max ? k++ : k - 1;
		while (j > 0 && d[j - 1] > di) {
			d[j] = d[j - 1];
			out[j] = out[j - 1];
			j--;
		}
		d[j] = di;
		out[j] = names[i];
	}
	free(d);
	return k;
}

const struct hm_type *hm_wi_elem(const struct hm_type *t, uint64_t *nelems)
{
	return hm_type_agg(t, nelems);
}

static const char *bare(const char *name)
{
	if (!strncmp(name, "struct ", 7))
		return name + 7;
	if (!strncmp(name, "union ", 6) || !strncmp(name, "class ", 6))
		return name + 6;
	return name;
}

/* Every named aggregate reachable by value from t, into names (name -> type). */
static void gather(const struct hm_type *t, struct hm_hash *names, struct hm_map64 *seen,
		   int depth)
{
	uint32_t nr;
	const struct hm_member *m;

	t = hm_wi_elem(t, NULL);
	if (!t || depth > MAX_NEST || hm_map64_get(seen, (uintptr_t)t))
		return;
	hm_map64_put(seen, (uintptr_t)t, (void *)t);
	if (hm_type_name(t))
		hm_hash_put(names, hm_type_name(t), (void *)t);
	m = hm_type_members(t, &nr);
	for (uint32_t i = 0; i < nr; i++)
		if (!m[i].bit_size)
			gather(m[i].type, names, seen, depth + 1);
}

const struct hm_type *hm_wi_find_type(struct hm_arena *a, const struct hm_wi_sum *sum,
				      const char *name, struct hm_err *err)
{
	struct hm_hash names;
	struct hm_map64 seen;
	const struct hm_type *t;
	const char **all, *near[NEAREST];
	size_t k = 0, nn;
	const char *want = bare(name);

	hm_hash_init(&names);
	hm_map64_init(&seen);
	for (size_t i = 0; i < sum->n; i++)
		if (sum->acc[i].type && sum->acc[i].obj_base)
			gather(sum->acc[i].type, &names, &seen, 0);
	hm_map64_free(&seen);
	if ((t = hm_hash_get(&names, want))) {
		hm_hash_free(&names);
		return t;
	}
	all = hm_arena_alloc(a, (names.len + 1) * sizeof(*all));
	for (size_t i = 0; i < names.cap; i++)
		if (names.slots[i].key)
			all[k++] = names.slots[i].key;
	nn = hm_wi_nearest(want, all, k, near, NEAREST);
	hm_hash_free(&names);
	if (!k)
		hm_err_set(err, HM_EXIT_INPUT,
			   "no recorded access has a known struct type, so '%s' cannot be "
			   "replayed: record a program built with -g (see report --stats)", name);
	else
		hm_err_set(err, HM_EXIT_INPUT,
			   "unknown type '%s': no recorded access to a struct of that name%s%s%s%s%s%s",
			   name, nn ? "; nearest: " : "", nn ? near[0] : "", nn > 1 ? ", " : "",
			   nn > 1 ? near[1] : "", nn > 2 ? ", " : "", nn > 2 ? near[2] : "");
	return NULL;
}

int hm_wi_find_member(struct hm_arena *a, const struct hm_type *t, const char *name,
		      struct hm_err *err)
{
	uint32_t nr;
	const struct hm_member *m = hm_type_members(t, &nr);
	const char **all = hm_arena_alloc(a, (nr + 1) * sizeof(*all)), *near[NEAREST];
	size_t k = 0, nn;
	char *end;

	if (name && name[0] == '#') {
		unsigned long i = strtoul(name + 1, &end, 10);

		if (!*end && end != name + 1 && i < nr)
			return (int)i;
	}
	for (uint32_t i = 0; name && i < nr; i++) {
		if (m[i].name && !strcmp(m[i].name, name))
			return (int)i;
		if (m[i].name)
			all[k++] = m[i].name;
	}
	nn = name ? hm_wi_nearest(name, all, k, near, NEAREST) : 0;
	hm_err_set(err, HM_EXIT_INPUT,
		   "%s has no member '%s'%s%s%s%s%s%s (members are named at the top level; "
		   "#N names the N-th, for anonymous ones)",
		   hm_type_name(t) ? hm_type_name(t) : "(anonymous)", name ? name : "", nn ? "; nearest: " : "",
		   nn ? near[0] : "", nn > 1 ? ", " : "", nn > 1 ? near[1] : "",
		   nn > 2 ? ", " : "", nn > 2 ? near[2] : "");
	return -1;
}

/* Loads and stores per member row, from accesses to objects of each row's type. */
static void count_members(const struct hm_wi_sum *sum, struct hm_wi_plan *p)
{
	const struct hm_access *acc = sum->acc;
	size_t n = sum->n;
	struct hm_hash rows;

	hm_hash_init(&rows);
	for (uint32_t k = 0; k < p->nr_types; k++)
		hm_hash_put(&rows, p->types[k].name, &p->types[k]);
	for (size_t i = 0; i < n && p->nr_types; i++) {
		const struct hm_type *t = hm_wi_elem(acc[i].type, NULL);
		struct hm_wi_type *wt;
		uint64_t in;

		if (!t || !hm_type_name(t) || !t->size || !acc[i].obj_base ||
		    !(wt = hm_hash_get(&rows, hm_type_name(t))))
			continue;
		in = acc[i].field_off % t->size;
		for (uint32_t j = 0; j < wt->nr; j++) {
			struct hm_wi_member *m = &wt->m[j];

			if (m->old_off == HM_WI_NONE || in < m->old_off ||
			    in >= m->old_off + (m->old_size ? m->old_size : 1))
				continue;
			m->loads += acc[i].s.op == HM_OP_LOAD ? sum->w[i] : 0;
			m->stores += hm_lines_writes(&acc[i]) ? sum->w[i] : 0;
			break;
		}
	}
	hm_hash_free(&rows);
}

int hm_whatif_plan(struct hm_arena *a, const struct hm_access *acc, size_t n,
		   const struct hm_wi_spec *spec, struct hm_wi_plan *out, struct hm_err *err)
{
	struct hm_wi_sum sum;
	int rc;

	hm_wi_sum_init(&sum, spec->line_size);
	hm_wi_sum_add(&sum, acc, n);
	rc = hm_whatif_plan_sum(a, &sum, spec, out, err);
	hm_wi_sum_free(&sum);
	return rc;
}

int hm_whatif_plan_sum(struct hm_arena *a, const struct hm_wi_sum *sum,
		       const struct hm_wi_spec *spec, struct hm_wi_plan *out, struct hm_err *err)
{
	int rc;

	memset(out, 0, sizeof(*out));
	out->kind = spec->kind;
	out->line_size = spec->line_size ? spec->line_size : 64;
	out->aligned_alloc = spec->aligned_alloc;
	out->max_lines = spec->max_lines;
	out->jobs = spec->jobs;
	if (spec->kind == HM_WI_LAYOUT) {
		if (!spec->build)
			return hm_err_set(err, HM_EXIT_USAGE, "--layout needs the new build's path");
		rc = hm_wi_build_plan(a, sum, spec, out, err);
	} else {
		if (!spec->nr_edits)
			return hm_err_set(err, HM_EXIT_USAGE,
					  "give an edit: --pad, --align or --order");
		rc = hm_wi_edit_plan(a, sum, spec, out, err);
	}
	if (!rc)
		count_members(sum, out);
	return rc;
}

void hm_whatif_plan_free(struct hm_wi_plan *p)
{
	if (p->map && p->map->free)
		p->map->free(p->map);
	p->map = NULL;
}

int hm_whatif_map(const struct hm_wi_plan *p, const struct hm_type *t, uint64_t off,
		  uint64_t *new_off)
{
	const char *absent = NULL;
	int rc = p->map->map(p->map, t, off, new_off, &absent);

	return rc == 2 ? 1 : rc;
}

int hm_whatif_object(const struct hm_wi_plan *p, const struct hm_type *t, uint64_t *size,
		     uint32_t *align)
{
	return p->map->object(p->map, t, size, align);
}
