/* Statistics for comparing two sets of runs the way the kernel test robot (LKP) does:
 * mean, sample standard deviation, %stddev, %change, Welch's t-test with its two-sided
 * p-value from the Student t distribution (regularized incomplete beta, libm only), and
 * the rule that calls a change significant only when it is beyond the noise.
 * docs/compare.md states the rules; tests/unit/test_stats.c holds the reference values. */
#ifndef HM_STATS_H
#define HM_STATS_H

#include <stddef.h>

#define HM_STATS_ALPHA 0.05		/* p below this, and ... */
#define HM_STATS_MIN_CHANGE_PCT 2.0	/* ... |%change| at least this, and above each
					 * side's standard deviation */

/* One side: n values. sd is the sample standard deviation (n - 1), NaN when n < 2;
 * sd_pct is sd / |mean| * 100: 0 when sd is 0, NaN when the mean is 0 and sd is not. */
struct hm_summary {
	size_t n;
	double mean, sd, sd_pct;
};

/* Welch's unequal-variances t-test of b against a. ok is 0 when a side has fewer than
 * two values (no test possible: t, df and p are NaN). */
struct hm_ttest {
	int ok;
	double t;			/* (mean_b - mean_a) / sqrt(var_a/n_a + var_b/n_b) */
	double df;			/* Welch-Satterthwaite */
	double p;			/* two-sided */
};

/* A metric of base runs a against new runs b. */
struct hm_change {
	struct hm_summary a, b;
	double change_pct;		/* (b - a) / |a| * 100; 0 when both means are 0; NaN
					 * (infinite change) when only a's mean is 0 */
	struct hm_ttest t;
	int significant;		/* hm_stats_significant() */
};

double hm_stats_mean(const double *x, size_t n);		/* NaN when n is 0 */
double hm_stats_stddev(const double *x, size_t n);	/* sample (n - 1); NaN when n < 2 */
void hm_stats_summary(const double *x, size_t n, struct hm_summary *out);
double hm_stats_stddev_pct(double sd, double mean);
double hm_stats_change_pct(double a_mean, double b_mean);

/* I_x(a, b), the regularized incomplete beta function, for a, b > 0 and 0 <= x <= 1
 * (continued fraction, modified Lentz); NaN outside. */
double hm_stats_betai(double a, double b, double x);
/* P(|T| >= |t|) for Student's t with df > 0 degrees of freedom (df may be fractional). */
double hm_stats_t_p2(double t, double df);

/* When both variances are 0 the t statistic is undefined: p is 1 when the means are
 * equal (identical runs) and 0 when they differ (a difference with no noise at all). */
void hm_stats_welch(const struct hm_summary *a, const struct hm_summary *b,
		    struct hm_ttest *out);
/* p < HM_STATS_ALPHA and the change is beyond the noise: |mean_b - mean_a| larger than
 * both sides' sd, and |%change| >= HM_STATS_MIN_CHANGE_PCT (a base mean of 0 changes
 * without bound). Always 0 without a test. */
int hm_stats_significant(const struct hm_change *c);
/* Summaries, %change, test and verdict in one call. */
void hm_stats_compare(const double *a, size_t na, const double *b, size_t nb,
		      struct hm_change *out);

#endif
