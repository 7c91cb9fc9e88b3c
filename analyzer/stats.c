#include "analyzer/stats.h"

#include <math.h>

double hm_stats_mean(const double *x, size_t n)
{
	double s = 0;

	if (!n)
		return NAN;
	for (size_t i = 0; i < n; i++)
		s += x[i];
	return s / (double)n;
}

/* Two passes: the mean first, then squared deviations from it. One-pass sums of squares
 * lose every digit when runs agree to many places (counts of ~1e9 differing by units). */
double hm_stats_stddev(const double *x, size_t n)
{
	double m, s = 0;

	if (n < 2)
		return NAN;
	m = hm_stats_mean(x, n);
	for (size_t i = 0; i < n; i++)
		s += (x[i] - m) * (x[i] - m);
	return sqrt(s / (double)(n - 1));
}

double hm_stats_stddev_pct(double sd, double mean)
{
	if (isnan(sd))
		return NAN;
	if (sd == 0)
		return 0;
	return mean == 0 ? NAN : sd / fabs(mean) * 100;
}

double hm_stats_change_pct(double a, double b)
{
	if (a == 0)
		return b == 0 ? 0 : NAN;
	return (b - a) / fabs(a) * 100;
}

void hm_stats_summary(const double *x, size_t n, struct hm_summary *out)
{
	out->n = n;
	out->mean = hm_stats_mean(x, n);
	out->sd = hm_stats_stddev(x, n);
	out->sd_pct = hm_stats_stddev_pct(out->sd, out->mean);
}

/* The continued fraction of I_x(a, b) (Numerical Recipes' betacf, 6.4), evaluated with
 * the modified Lentz method. It converges fast for x < (a + 1) / (a + b + 2); callers
 * use the symmetry I_x(a, b) = 1 - I_(1-x)(b, a) beyond that. */
static double betacf(double a, double b, double x)
{
	const double tiny = 1e-300, eps = 1e-16;
	double qab = a + b, qap = a + 1, qam = a - 1;
	double c = 1, d = 1 - qab * x / qap, h;

	if (fabs(d) < tiny)
		d = tiny;
	d = 1 / d;
	h = d;
	for (int m = 1; m <= 1000; m++) {
		double m2 = 2.0 * m, aa, del;

		aa = m * (b - m) * x / ((qam + m2) * (a + m2));
		d = 1 + aa * d;
		c = 1 + aa / c;
		d = 1 / (fabs(d) < tiny ? tiny : d);
		c = fabs(c) < tiny ? tiny : c;
		h *= d * c;
		aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
		d = 1 + aa * d;
		c = 1 + aa / c;
		d = 1 / (fabs(d) < tiny ? tiny : d);
		c = fabs(c) < tiny ? tiny : c;
		del = d * c;
		h *= del;
		if (fabs(del - 1) < eps)
			break;
	}
	return h;
}

/* y = 1 - x, passed separately so that x close to 1 keeps its digits (t close to 0). */
static double betai2(double a, double b, double x, double y)
{
	double lbt;

	if (x <= 0)
		return 0;
	if (y <= 0)
		return 1;
	lbt = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log(y);
	if (x < (a + 1) / (a + b + 2))
		return exp(lbt) * betacf(a, b, x) / a;
	return 1 - exp(lbt) * betacf(b, a, y) / b;
}

double hm_stats_betai(double a, double b, double x)
{
	if (!(a > 0) || !(b > 0) || !(x >= 0) || !(x <= 1))
		return NAN;
	return betai2(a, b, x, 1 - x);
}

/* P(|T| >= t) = I_(df / (df + t^2))(df / 2, 1 / 2) (Abramowitz and Stegun 26.7.1 with
 * 26.5.27). */
double hm_stats_t_p2(double t, double df)
{
	double t2 = t * t, p;

	if (isnan(t) || !(df > 0))
		return NAN;
	if (isinf(t))
		return 0;
	p = betai2(df / 2, 0.5, df / (df + t2), t2 / (df + t2));
	return p > 1 ? 1 : p < 0 ? 0 : p;
}

void hm_stats_welch(const struct hm_summary *a, const struct hm_summary *b,
		    struct hm_ttest *out)
{
	double va, vb, se2;

	out->ok = a->n >= 2 && b->n >= 2;
	out->t = out->df = out->p = NAN;
	if (!out->ok)
		return;
	va = a->sd * a->sd / (double)a->n;
	vb = b->sd * b->sd / (double)b->n;
	se2 = va + vb;
	if (se2 == 0) {
		out->p = a->mean == b->mean ? 1 : 0;
		out->t = a->mean == b->mean ? 0 : copysign(INFINITY, b->mean - a->mean);
		out->df = (double)(a->n + b->n - 2);
		return;
	}
	out->t = (b->mean - a->mean) / sqrt(se2);
	out->df = se2 * se2 / (va * va / (double)(a->n - 1) + vb * vb / (double)(b->n - 1));
	out->p = hm_stats_t_p2(out->t, out->df);
}

int hm_stats_significant(const struct hm_change *c)
{
	double diff = fabs(c->b.mean - c->a.mean);

	if (!c->t.ok || !(c->t.p < HM_STATS_ALPHA))
		return 0;
	if (!(diff > c->a.sd) || !(diff > c->b.sd))
		return 0;
	/* NaN: the base mean is 0 and the new one is not, an unbounded change. */
	return isnan(c->change_pct) || fabs(c->change_pct) >= HM_STATS_MIN_CHANGE_PCT;
}

void hm_stats_compare(const double *a, size_t na, const double *b, size_t nb,
		      struct hm_change *out)
{
	hm_stats_summary(a, na, &out->a);
	hm_stats_summary(b, nb, &out->b);
	out->change_pct = na && nb ? hm_stats_change_pct(out->a.mean, out->b.mean) : NAN;
	hm_stats_welch(&out->a, &out->b, &out->t);
	out->significant = hm_stats_significant(out);
}
