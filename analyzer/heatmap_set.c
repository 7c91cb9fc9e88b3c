/* hm_heat_set: heatmap.h. */
#include "analyzer/heatmap.h"

#include <stdlib.h>
#include <string.h>

#include "core/oom.h"

_Static_assert(HM_HEAT_SET_MAX <= INT8_MAX, "a map's index is an int8_t");

void hm_heat_set_init(struct hm_heat_set *s, struct hm_arena *a, const struct hm_heat_opts *o)
{
	memset(s, 0, sizeof(*s));
	s->a = a;
	hm_arena_init(&s->own);
	if (o)
		s->o = *o;
}

size_t hm_heat_set_prepare(struct hm_heat_set *s, const struct hm_access *acc, size_t n,
			   int8_t *pick)
{
	for (size_t i = 0; i < n; i++) {
		const struct hm_type *t = hm_type_agg(acc[i].type, NULL);
		struct hm_heat_cand *c = NULL;
		size_t k;

		pick[i] = -1;
		if (!t || !t->size)
			continue;
		for (k = 0; k < s->nr && !hm_heat_type_matches(s->cand[k].t, t); k++)
			;
		if (k < s->nr) {
			c = &s->cand[k];
		} else if (s->nr < HM_HEAT_SET_MAX) {
			c = &s->cand[s->nr];
			if (hm_heat_begin(&s->own, t, &s->o, &c->heat, &c->acc, NULL))
				continue;
			c->t = t;
			s->nr++;
		}
		if (c) {
			c->count++;
			pick[i] = (int8_t)k;
		}
	}
	return s->nr;
}

void hm_heat_set_feed(struct hm_heat_set *s, const struct hm_access *acc, size_t n,
		      const int8_t *pick, size_t nr)
{
	for (size_t k = 0; k < nr; k++)
		hm_heat_add_picked(s->cand[k].acc, acc, n, pick, (int8_t)k);
}

void hm_heat_set_add(struct hm_heat_set *s, const struct hm_access *acc, size_t n)
{
	int8_t *pick = malloc(n ? n : 1);
	size_t nr;

	if (!pick)
		hm_oom();
	nr = hm_heat_set_prepare(s, acc, n, pick);
	hm_heat_set_feed(s, acc, n, pick, nr);
	free(pick);
}

void hm_heat_set_end(struct hm_heat_set *s)
{
	for (size_t k = 0; k < s->nr; k++) {
		hm_heat_end(s->cand[k].acc);
		s->cand[k].acc = NULL;
	}
	hm_arena_adopt(s->a, &s->own);	/* the rows live as long as the caller's arena */
}

size_t hm_heat_set_busiest(const struct hm_heat_set *s, const struct hm_heat **hp, size_t max)
{
	int taken[HM_HEAT_SET_MAX] = {0};
	size_t n = 0;

	while (n < max) {
		size_t best = s->nr;

		for (size_t k = 0; k < s->nr; k++)
			if (!taken[k] && s->cand[k].count &&
			    (best == s->nr || s->cand[k].count > s->cand[best].count))
				best = k;
		if (best == s->nr)
			break;
		taken[best] = 1;
		hp[n++] = &s->cand[best].heat;
	}
	return n;
}
