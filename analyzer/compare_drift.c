/* Interleaved controls: runs given in time order as A, then B, then A again (each group
 * of several runs), the way careful kernel testers separate a change from the machine
 * drifting under them. Per metric: the drift is the largest |%change| between two
 * consecutive A groups; each B group is measured against the midpoint of the A groups
 * around it (the one before and, when there is one, the one after), and those
 * changes averaged. A change no larger than the drift is never significant, whatever
 * the t-test says: the controls moved as much without any change. docs/compare.md. */
#include <math.h>
#include <string.h>

#include "analyzer/compare.h"

/* Mean of the values of runs [from, from + n) that measured the metric; NaN if none. */
static double group_mean(const double *v, size_t from, size_t n)
{
	double sum = 0;
	size_t k = 0;

	for (size_t i = from; i < from + n; i++)
		if (!isnan(v[i])) {
			sum += v[i];
			k++;
		}
	return k ? sum / (double)k : NAN;
}

static void metric_drift(struct hm_cmp_metric *m, const struct hm_cmp_groups *g)
{
	double ma[HM_CMP_MAX_GROUPS], mid = 0, b = 0, drift = NAN;
	size_t off = 0, nb = 0;

	for (size_t i = 0; i < g->nr_a; i++) {
		ma[i] = group_mean(m->a, off, g->a[i]);
		off += g->a[i];
	}
	for (size_t i = 0; i + 1 < g->nr_a; i++) {
		double d = fabs(hm_stats_change_pct(ma[i], ma[i + 1]));

		if (isnan(ma[i]) || isnan(ma[i + 1]))
			continue;
		if (isnan(d))
			d = INFINITY;	/* from 0 to something: an unbounded drift */
		drift = isnan(drift) ? d : fmax(drift, d);
	}
	off = 0;
	for (size_t j = 0; j < g->nr_b; j++) {
		double before = j < g->nr_a ? ma[j] : NAN;
		double after = j + 1 < g->nr_a ? ma[j + 1] : NAN;
		double mb = group_mean(m->b, off, g->b[j]);
		double ctl = isnan(after) ? before : isnan(before) ? after : (before + after) / 2;

		off += g->b[j];
		if (isnan(ctl) || isnan(mb))
			continue;
		mid += ctl;
		b += mb;
		nb++;
	}
	m->drift_pct = drift;
	m->vs_controls_pct = nb ? hm_stats_change_pct(mid / (double)nb, b / (double)nb) : NAN;
	m->within_drift = 0;
	if (m->c.significant && !isnan(drift) &&
	    (isnan(m->vs_controls_pct) ? isinf(drift) : fabs(m->vs_controls_pct) <= drift)) {
		m->c.significant = 0;
		m->within_drift = 1;
	}
}

void hm_cmp_drift(struct hm_cmp *c, const struct hm_cmp_groups *g)
{
	c->groups = *g;
	for (size_t i = 0; i < c->nr; i++)
		metric_drift(&c->m[i], g);
	hm_cmp_sort(c);
}
