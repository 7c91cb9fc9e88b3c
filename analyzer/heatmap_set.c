/* hm_heat_set: heatmap.h. */
#include "analyzer/heatmap.h"

#include <string.h>

void hm_heat_set_init(struct hm_heat_set *s, struct hm_arena *a, const struct hm_heat_opts *o)
{
	memset(s, 0, sizeof(*s));
	s->a = a;
	if (o)
		s->o = *o;
}

void hm_heat_set_add(struct hm_heat_set *s, const struct hm_access *acc, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct hm_type *t = hm_type_agg(acc[i].type, NULL);
		struct hm_heat_cand *c = NULL;

		if (!t || !t->size)
			continue;
		for (size_t k = 0; k < s->nr && !c; k++)
			if (hm_heat_type_matches(s->cand[k].t, t))
				c = &s->cand[k];
		if (!c && s->nr < HM_HEAT_SET_MAX) {
			c = &s->cand[s->nr];
			if (hm_heat_begin(s->a, t, &s->o, &c->heat, &c->acc, NULL))
				continue;
			c->t = t;
			s->nr++;
		}
		if (c)
			c->count++;
	}
	for (size_t k = 0; k < s->nr; k++)
		hm_heat_add(s->cand[k].acc, acc, n);
}

void hm_heat_set_end(struct hm_heat_set *s)
{
	for (size_t k = 0; k < s->nr; k++) {
		hm_heat_end(s->cand[k].acc);
		s->cand[k].acc = NULL;
	}
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
