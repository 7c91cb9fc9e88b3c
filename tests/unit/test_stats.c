/* analyzer/stats.c against values computed independently. Reference p-values come from
 * mpmath 1.3 at 30 digits, two ways that agree to every printed digit: betainc(df/2, 1/2,
 * 0, df/(df+t^2), regularized=True), and quad() of the t density from |t| to infinity.
 * Closed forms check them too: df = 1 is Cauchy, p = 1 - 2 atan|t| / pi; df = 2 gives
 * p = 1 - |t| / sqrt(t^2 + 2). The Welch data sets are the three worked examples of the
 * Wikipedia article "Welch's t-test" (published t, df, p to 2-3 digits); the full
 * precision values are mpmath's. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "analyzer/stats.h"

#define N(x) (sizeof(x) / sizeof((x)[0]))

static void near(double got, double want, double tol)
{
	if (!(fabs(got - want) <= tol))
		fail_msg("got %.17g, want %.17g (tolerance %g)", got, want, tol);
}

static void test_mean_and_sample_stddev(void **state)
{
	const double x[] = {2, 4, 4, 4, 5, 5, 7, 9};	/* mean 5, sum of squares 32 */
	struct hm_summary s;

	(void)state;
	hm_stats_summary(x, N(x), &s);
	assert_int_equal(s.n, 8);
	near(s.mean, 5, 1e-15);
	near(s.sd, sqrt(32.0 / 7), 1e-15);
	near(s.sd_pct, sqrt(32.0 / 7) / 5 * 100, 1e-12);
}

/* Large equal offsets must not eat the variance (two-pass stddev). */
static void test_stddev_keeps_digits_of_large_values(void **state)
{
	const double x[] = {1e9 + 1, 1e9 + 2, 1e9 + 3};

	(void)state;
	near(hm_stats_stddev(x, 3), 1, 1e-9);
}

static void test_percent_change_and_stddev_edges(void **state)
{
	(void)state;
	near(hm_stats_change_pct(200, 150), -25, 1e-12);
	near(hm_stats_change_pct(-4, -2), 50, 1e-12);	/* toward zero from below: up */
	near(hm_stats_change_pct(0, 0), 0, 0);
	assert_true(isnan(hm_stats_change_pct(0, 3)));
	near(hm_stats_stddev_pct(0, 0), 0, 0);
	assert_true(isnan(hm_stats_stddev_pct(1, 0)));
	assert_true(isnan(hm_stats_stddev_pct(NAN, 5)));
}

static void test_one_value_has_no_stddev(void **state)
{
	const double x[] = {42};
	struct hm_summary s;

	(void)state;
	hm_stats_summary(x, 1, &s);
	near(s.mean, 42, 0);
	assert_true(isnan(s.sd));
	assert_true(isnan(s.sd_pct));
	assert_true(isnan(hm_stats_mean(x, 0)));
}

static void test_incomplete_beta_known_values(void **state)
{
	(void)state;
	near(hm_stats_betai(1, 1, 0.3), 0.3, 1e-14);		/* uniform */
	near(hm_stats_betai(2, 3, 0.4), 0.5248, 1e-13);	/* polynomial: 1-(1-x)^4-4x(1-x)^3 */
	near(hm_stats_betai(0.5, 0.5, 0.5), 0.5, 1e-13);	/* symmetric */
	near(hm_stats_betai(3, 1, 0.5), 0.125, 1e-14);	/* x^3 */
	near(hm_stats_betai(2, 2, 0), 0, 0);
	near(hm_stats_betai(2, 2, 1), 1, 0);
	assert_true(isnan(hm_stats_betai(-1, 2, 0.5)));
	assert_true(isnan(hm_stats_betai(1, 2, 1.5)));
}

/* The critical values every t table prints, and the two closed forms. */
static void test_t_distribution_table_values(void **state)
{
	static const struct { double t, df, p; } v[] = {
		{2.228, 10, 0.050011771817111365},	/* table: 0.05 */
		{3.169, 10, 0.010004633364384852},	/* table: 0.01 */
		{12.706, 1, 0.050000802358133188},
		{4.303, 2, 0.049992524985214502},
		{2.776, 4, 0.050022778319976412},
		{2.571, 5, 0.049974634683851392},
		{10, 3, 0.0021283990584141501},
		{0.5, 4, 0.64332996318186327},
		{1.5, 3.7, 0.21359816920201353},	/* fractional df, as Welch gives */
		{30, 2.5, 0.00029106470915739543},
		{0, 5, 1},
	};

	(void)state;
	for (size_t i = 0; i < N(v); i++) {
		near(hm_stats_t_p2(v[i].t, v[i].df), v[i].p, 1e-12);
		near(hm_stats_t_p2(-v[i].t, v[i].df), v[i].p, 1e-12);
	}
	for (double t = 0.1; t < 50; t *= 1.7) {
		near(hm_stats_t_p2(t, 1), 1 - 2 * atan(t) / M_PI, 1e-12);
		near(hm_stats_t_p2(t, 2), 1 - t / sqrt(t * t + 2), 1e-12);
	}
	near(hm_stats_t_p2(INFINITY, 3), 0, 0);
	assert_true(isnan(hm_stats_t_p2(1, 0)));
	assert_true(isnan(hm_stats_t_p2(NAN, 3)));
}

struct welch_case {
	const double *a, *b;
	size_t na, nb;
	double t, df, p;
};

static void check_welch(const struct welch_case *w)
{
	struct hm_change c;

	hm_stats_compare(w->a, w->na, w->b, w->nb, &c);
	assert_true(c.t.ok);
	near(c.t.t, w->t, 1e-10);
	near(c.t.df, w->df, 1e-9);
	near(c.t.p, w->p, 1e-10);
}

/* Wikipedia's three examples: published t = 2.46, df = 25.0, p = 0.021; t = 1.57,
 * df = 9.9, p = 0.149; t = 2.22, df = 24.5, p = 0.036 (b against a). */
static void test_welch_textbook_examples(void **state)
{
	static const double a1[] = {27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6,
				    23.1, 19.6, 19.0, 21.7, 21.4};
	static const double b1[] = {27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2,
				    21.9, 22.1, 22.9, 20.5, 24.4};
	static const double a2[] = {17.2, 20.9, 22.6, 18.1, 21.7, 21.4, 23.5, 24.2, 14.7, 21.8};
	static const double b2[] = {21.5, 22.8, 21.0, 23.0, 21.6, 23.6, 22.5, 20.7, 23.4, 21.8,
				    20.7, 21.7, 21.5, 22.5, 23.6, 21.5, 22.5, 23.5, 21.5, 21.8};
	static const double a3[] = {19.8, 20.4, 19.6, 17.8, 18.5, 18.9, 18.3, 18.9, 19.5, 22.0};
	static const double b3[] = {28.2, 26.6, 20.1, 23.3, 25.2, 22.1, 17.7, 27.6, 20.6, 13.7,
				    23.2, 17.5, 20.6, 18.0, 23.9, 21.6, 24.3, 20.4, 23.9, 13.3};
	const struct welch_case w[] = {
		{a1, b1, N(a1), N(b1), 2.4553563982860045, 24.988529290231414, 0.02137800146286706},
		{a2, b2, N(a2), N(b2), 1.5654335235985055, 9.9047412486508292, 0.14884169660532791},
		{a3, b3, N(a3), N(b3), 2.2255120399698535, 24.524634944257347, 0.035484530830010196},
	};

	(void)state;
	for (size_t i = 0; i < N(w); i++)
		check_welch(&w[i]);
}

/* Run counts of a typical comparison: 2, 3 and 5 per side. */
static void test_welch_small_samples(void **state)
{
	static const double a2[] = {10, 12}, b2[] = {20, 23};
	static const double a3[] = {1, 2, 3}, b3[] = {4, 5, 9};
	static const double a5[] = {10, 11, 12, 13, 14}, b5[] = {12, 13, 14, 15, 16};
	const struct welch_case w[] = {
		{a2, b2, 2, 2, 5.8243520603649058, 1.7422680412371134, 0.038420674099810364},
		{a3, b3, 3, 3, 2.4494897427831781, 2.56, 0.10636671602031069},
		/* equal variances: Welch's df is then the pooled test's 2n - 2 */
		{a5, b5, 5, 5, 2.0, 8.0, 0.080516237957262671},
	};

	(void)state;
	for (size_t i = 0; i < N(w); i++)
		check_welch(&w[i]);
}

/* One side without noise: the other side's variance carries the test (df = n_b - 1). */
static void test_welch_one_side_zero_variance(void **state)
{
	static const double a[] = {5, 5, 5, 5}, b[] = {6, 7, 8, 9};
	const struct welch_case w = {a, b, 4, 4, 3.8729833462074169, 3.0, 0.030466291662170991};

	(void)state;
	check_welch(&w);
}

static void test_identical_runs_p_is_one(void **state)
{
	static const double a[] = {7, 7, 7}, b[] = {7, 7, 7, 7};
	struct hm_change c;

	(void)state;
	hm_stats_compare(a, 3, b, 4, &c);
	assert_true(c.t.ok);
	near(c.t.p, 1, 0);
	near(c.change_pct, 0, 0);
	assert_false(c.significant);
}

static void test_noiseless_difference_p_is_zero(void **state)
{
	static const double a[] = {40, 40, 40}, b[] = {0, 0, 0};
	struct hm_change c;

	(void)state;
	hm_stats_compare(a, 3, b, 3, &c);
	near(c.t.p, 0, 0);
	near(c.change_pct, -100, 1e-12);
	assert_true(c.significant);
}

static void test_one_run_no_test_possible(void **state)
{
	static const double a[] = {10}, b[] = {20, 21, 22};
	struct hm_change c;

	(void)state;
	hm_stats_compare(a, 1, b, 3, &c);
	assert_false(c.t.ok);
	assert_true(isnan(c.t.p));
	near(c.a.mean, 10, 0);
	near(c.b.mean, 21, 0);
	near(c.change_pct, 110, 1e-12);	/* the means still compare */
	assert_false(c.significant);
}

/* p alone is not enough: the change must also exceed the noise and 2%. */
static void test_significance_needs_change_beyond_noise(void **state)
{
	static const double big_a[] = {1000, 1001, 1002, 1000, 1001, 1002, 1000, 1001, 1002, 1001};
	static const double big_b[] = {1010, 1011, 1012, 1010, 1011, 1012, 1010, 1011, 1012, 1011};
	static const double a[] = {100, 104, 96, 102, 98}, b[] = {80, 84, 76, 82, 78};
	static const double zero_a[] = {0, 0, 0}, new_b[] = {3, 4, 5};
	struct hm_change c;

	(void)state;
	hm_stats_compare(big_a, N(big_a), big_b, N(big_b), &c);
	assert_true(c.t.p < 1e-6);			/* certain, but only +1% */
	assert_false(c.significant);
	hm_stats_compare(a, N(a), b, N(b), &c);
	near(c.change_pct, -20, 1e-12);
	assert_true(c.t.p < HM_STATS_ALPHA);
	assert_true(c.significant);
	hm_stats_compare(zero_a, 3, new_b, 3, &c);	/* from nothing to something */
	assert_true(isnan(c.change_pct));
	assert_true(c.significant);
}

/* A mean shift smaller than one side's spread is noise even when p is small. */
static void test_significance_rejects_shift_within_spread(void **state)
{
	struct hm_change c = {
		.a = {.n = 5, .mean = 100, .sd = 1, .sd_pct = 1},
		.b = {.n = 5, .mean = 110, .sd = 12, .sd_pct = 11},
		.change_pct = 10,
		.t = {.ok = 1, .p = 0.01},
	};

	(void)state;
	assert_false(hm_stats_significant(&c));
	c.b.sd = 9;
	assert_true(hm_stats_significant(&c));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mean_and_sample_stddev),
		cmocka_unit_test(test_stddev_keeps_digits_of_large_values),
		cmocka_unit_test(test_percent_change_and_stddev_edges),
		cmocka_unit_test(test_one_value_has_no_stddev),
		cmocka_unit_test(test_incomplete_beta_known_values),
		cmocka_unit_test(test_t_distribution_table_values),
		cmocka_unit_test(test_welch_textbook_examples),
		cmocka_unit_test(test_welch_small_samples),
		cmocka_unit_test(test_welch_one_side_zero_variance),
		cmocka_unit_test(test_identical_runs_p_is_one),
		cmocka_unit_test(test_noiseless_difference_p_is_zero),
		cmocka_unit_test(test_one_run_no_test_possible),
		cmocka_unit_test(test_significance_needs_change_beyond_noise),
		cmocka_unit_test(test_significance_rejects_shift_within_spread),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
