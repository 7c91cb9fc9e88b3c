/* analyzer/sharing.c on crafted accesses: verdicts decided by threads and bytes, CPUs as
 * evidence (latent), the sample minimum below which no verdict is given, confidence, the
 * evidence sentence, and the ranking of shared lines above private ones. */
#include "lines_util.h"
#include "resolve/watched.h"

/* Threads time-sliced on one CPU never move the line between caches, but the bytes they
 * touch are shared all the same: the verdict stands and the line is marked latent. When
 * every sample reads CPU 0 (no PERF_SAMPLE_CPU), the CPU says nothing. */
static void test_threads_on_one_cpu_are_latent_sharing(void **state)
{
	struct set *s = set_new();
	const struct hm_line *ln;

	(void)state;
	false_sharing_set(s, HM_SRC_TIMER);
	for (size_t i = 0; i < s->n; i++)
		s->acc[i].s.cpu = 3;
	add(s, (struct spec){ BASE + 0x200, 8, HM_OP_LOAD, 101, 1, 5, NULL, 0, NULL,
			      HM_SRC_TIMER });
	build(s, 0);
	assert_true(s->lines.cpus_known);
	ln = &s->lines.lines[0];
	assert_int_equal(ln->verdict, HM_V_FALSE_SHARING);
	assert_true(ln->latent);
	assert_int_equal(ln->latent_cpu, 3);
	assert_non_null(ln->advice);
	assert_non_null(strstr(ln->advice, "latent: every access to this line ran on CPU 3"));
	assert_non_null(ln->fix);
	set_free(s);

	s = set_new();
	false_sharing_set(s, HM_SRC_TIMER);
	for (size_t i = 0; i < s->n; i++)
		s->acc[i].s.cpu = 0;
	build(s, 0);
	assert_false(s->lines.cpus_known);
	assert_int_equal(s->lines.lines[0].verdict, HM_V_FALSE_SHARING);
	assert_false(s->lines.lines[0].latent);
	assert_null(s->lines.lines[0].advice);
	set_free(s);
}

/* n stores by each of two threads on adjacent fields, interleaved. */
static void two_writers(struct set *s, int n, int src)
{
	for (int i = 0; i < n; i++) {
		add(s, (struct spec){ BASE + 0, 8, HM_OP_STORE, 101, 0, 1000 * (uint64_t)i,
				      "worker_stats", BASE, "worker_stats.ops", src });
		add(s, (struct spec){ BASE + 8, 8, HM_OP_STORE, 102, 1, 1000 * (uint64_t)i + 500,
				      "worker_stats", BASE, "worker_stats.errors", src });
	}
}

static void test_few_timer_samples_give_no_verdict(void **state)
{
	struct set *s = set_new();
	const struct hm_line *ln;

	(void)state;
	two_writers(s, HM_MIN_RECORDS - 1, HM_SRC_TIMER);
	build(s, 1000);
	ln = &s->lines.lines[0];
	assert_int_equal(ln->verdict, HM_V_FEW_SAMPLES);
	assert_string_equal(hm_verdict_name(ln->verdict), "too_few_samples");
	assert_int_equal(ln->confidence, HM_CONF_LOW);
	assert_null(ln->fix);
	assert_non_null(ln->advice);
	assert_non_null(strstr(ln->advice, "too few samples"));
	assert_non_null(strstr(ln->advice, "-F 20000"));
	assert_false(hm_verdict_shared(ln->verdict));
	set_free(s);

	s = set_new();
	two_writers(s, HM_MIN_RECORDS, HM_SRC_TIMER);
	build(s, 1000);
	assert_int_equal(s->lines.lines[0].verdict, HM_V_FALSE_SHARING);
	assert_int_equal(s->lines.lines[0].confidence, HM_CONF_MEDIUM);
	set_free(s);
}

/* A reader beside a writer: the writer side needs HM_MIN_STORES stores. */
static void test_writer_needs_minimum_stores(void **state)
{
	struct set *s = set_new();

	(void)state;
	for (int i = 0; i < 40; i++) {
		add(s, (struct spec){ BASE + 0, 8, i < HM_MIN_STORES - 1 ? HM_OP_STORE : HM_OP_LOAD,
				      101, 0, 1000 * (uint64_t)i, "st", BASE, "st.w", HM_SRC_TIMER });
		add(s, (struct spec){ BASE + 8, 8, HM_OP_LOAD, 102, 1, 1000 * (uint64_t)i + 500,
				      "st", BASE, "st.r", HM_SRC_TIMER });
	}
	build(s, 1000);
	assert_int_equal(s->lines.lines[0].verdict, HM_V_FEW_SAMPLES);
	set_free(s);
}

/* Watch counts every access: no sample minimum, only one-offs (a side with at most
 * HM_ONE_OFF accesses in the whole run, such as main reading a counter once after join)
 * are not contention; the verdict says confirmed with its exact transfers. */
static void test_watch_counts_one_offs_apart(void **state)
{
	struct set *s = set_new();
	const struct hm_line *ln;

	(void)state;
	two_writers(s, HM_ONE_OFF, HM_SRC_WATCH);
	build(s, 0);
	ln = &s->lines.lines[0];
	assert_int_equal(ln->verdict, HM_V_FEW_SAMPLES);
	assert_non_null(strstr(ln->advice, "a one-off, not contention"));
	assert_null(strstr(ln->evidence, "confirmed"));
	set_free(s);

	s = set_new();
	two_writers(s, HM_ONE_OFF + 1, HM_SRC_WATCH);	/* 3 stores a side: no sample minimum */
	build(s, 0);
	ln = &s->lines.lines[0];
	assert_int_equal(ln->verdict, HM_V_FALSE_SHARING);
	assert_int_equal(ln->confidence, HM_CONF_HIGH);
	assert_true(ln->pairs[0].events > 0);
	assert_non_null(strstr(ln->evidence, "confirmed: "));
	assert_non_null(strstr(ln->evidence, "transfers between them"));
	set_free(s);
}

/* A rotated watch recording (record --confirm with more ranges than registers): the
 * verdict says what share of the run both sides of its pair were armed, from the slice
 * marks. Here ops and errors are armed together in [0, 4000) and [6000, 8000) of a run
 * that ends at 10000 (another group's slice between): 60%. A slice arming ops alone
 * does not count. */
static void test_rotated_watch_says_watched_share(void **state)
{
	struct set *s = set_new();
	struct hm_watched w = {0};
	const struct hm_line *ln;

	(void)state;
	two_writers(s, 4, HM_SRC_WATCH);
	build(s, 0);
	hm_watched_mark(&w, 0, BASE, 8);
	hm_watched_mark(&w, 0, BASE + 8, 8);
	hm_watched_mark(&w, 4000, 0, 0);
	hm_watched_mark(&w, 4000, BASE, 8);	/* ops alone: not a slice of the pair */
	hm_watched_mark(&w, 6000, 0, 0);
	hm_watched_mark(&w, 6000, BASE + 8, 8);
	hm_watched_mark(&w, 6000, BASE, 8);
	hm_watched_mark(&w, 8000, 0, 0);
	hm_watched_mark(&w, 8000, BASE + 0x100, 8);	/* another line's group */
	hm_watched_mark(&w, 10000, 0, 0);
	hm_sharing_watched(&s->a, &s->lines, &w);
	ln = &s->lines.lines[0];
	assert_int_equal(ln->verdict, HM_V_FALSE_SHARING);
	assert_non_null(strstr(ln->evidence, "confirmed: "));
	assert_non_null(strstr(ln->evidence, " in 0.00 s (watched 60% of the time); "));
	hm_watched_free(&w);
	set_free(s);
}

/* Many samples that interleave: high; many that never meet in the window: medium. */
static void test_confidence_high_needs_records_and_interleaving(void **state)
{
	struct set *s = set_new();
	const struct hm_line *ln;

	(void)state;
	two_writers(s, HM_HIGH_RECORDS, HM_SRC_TIMER);
	build(s, 1000);
	ln = &s->lines.lines[0];
	assert_int_equal(ln->verdict, HM_V_FALSE_SHARING);
	assert_true(ln->pairs[0].events > 0);
	assert_int_equal(ln->confidence, HM_CONF_HIGH);
	assert_string_equal(hm_confidence_name(ln->confidence), "high");
	set_free(s);

	s = set_new();
	two_writers(s, HM_HIGH_RECORDS, HM_SRC_TIMER);
	build(s, 100);	/* samples 500 ns apart never fall in a 100 ns window */
	ln = &s->lines.lines[0];
	assert_int_equal(ln->verdict, HM_V_FALSE_SHARING);
	assert_int_equal(ln->contention, 0);
	assert_int_equal(ln->confidence, HM_CONF_MEDIUM);
	set_free(s);
}

static void test_evidence_names_both_sides_with_counts(void **state)
{
	struct set *s = set_new();
	const struct hm_line *ln;

	(void)state;
	two_writers(s, 10, HM_SRC_TIMER);
	add(s, (struct spec){ BASE + 8, 8, HM_OP_LOAD, 102, 1, 20000, "worker_stats", BASE,
			      "worker_stats.errors", HM_SRC_TIMER });
	build(s, 1000);
	ln = &s->lines.lines[0];
	assert_int_equal(ln->verdict, HM_V_FALSE_SHARING);
	assert_non_null(ln->evidence);
	assert_non_null(strstr(ln->evidence, "thread 101 writes worker_stats.ops (10 records, "
					     "10 writes)"));
	assert_non_null(strstr(ln->evidence, "thread 102 writes worker_stats.errors (11 "
					     "records, 10 writes)"));
	assert_non_null(strstr(ln->evidence, "on 2 CPUs"));
	set_free(s);
}

/* A false-sharing line whose samples never met in the window (contention 0) ranks above
 * a private line with more records and some contention of its own. */
static void test_shared_line_ranks_above_private(void **state)
{
	struct set *s = set_new();

	(void)state;
	two_writers(s, HM_MIN_RECORDS, HM_SRC_TIMER);
	for (int i = 0; i < 200; i++)
		add(s, (struct spec){ BASE + 0x1000, 8, HM_OP_STORE, 103, 0, 7 * (uint64_t)i,
				      "mine", BASE + 0x1000, "mine.x", HM_SRC_TIMER });
	build(s, 100);
	assert_int_equal(s->lines.nr, 2);
	assert_int_equal(s->lines.lines[0].addr, BASE);
	assert_int_equal(s->lines.lines[0].verdict, HM_V_FALSE_SHARING);
	assert_int_equal(s->lines.lines[1].verdict, HM_V_PRIVATE);
	set_free(s);
}

/* gargs[0] and gargs[1] of lreg_args gargs[2] (one object, two elements) written by two
 * threads: the fix gives each element its own line; padding before a member would not. */
static void test_array_elements_of_one_global_get_element_fix(void **state)
{
	struct set *s = set_new();
	struct hm_type elem = { .kind = HM_T_STRUCT, .alias = "lreg_args", .size = 16 };
	struct hm_type arr = { .kind = HM_T_ARRAY, .nelems = 2, .ref = &elem, .size = 32 };
	const struct hm_line *ln;

	(void)state;
	for (int i = 0; i < 40; i++)
		add(s, (struct spec){ BASE + 16 * (uint64_t)(i % 2), 8, HM_OP_STORE,
				      501 + (uint32_t)(i % 2), (uint32_t)(i % 2), (uint64_t)i, "gargs",
				      BASE, i % 2 ? "gargs[1].hits" : "gargs[0].hits", HM_SRC_TIMER });
	for (size_t i = 0; i < s->n; i++)
		s->acc[i].type = &arr;
	build(s, 0);
	ln = &s->lines.lines[0];
	assert_int_equal(ln->verdict, HM_V_FALSE_SHARING);
	assert_non_null(strstr(ln->fix, "give each element of gargs its own cache line"));
	assert_non_null(strstr(ln->fix, "align lreg_args to 64"));
	assert_non_null(strstr(ln->fix, "pads it from 16 to 64 bytes"));
	assert_null(strstr(ln->fix, "insert"));
	set_free(s);
}

/* Two threads' own __thread counters, sampled by the timer: only their offsets from the
 * thread pointer are known (%fs:-0x10, %fs:-0x8), and each thread's block is its own
 * space, so they never share a line; kernel-half addresses of kernel samples stay one
 * space for every CPU. */
static void test_tls_copies_of_two_threads_never_share(void **state)
{
	struct set *s = set_new();

	(void)state;
	for (int i = 0; i < 40; i++) {
		add(s, (struct spec){ (uint64_t)-16, 8, HM_OP_STORE, 101, 0, 1000 * (uint64_t)i,
				      "nr_reads", (uint64_t)-16, "nr_reads", HM_SRC_TIMER });
		add(s, (struct spec){ (uint64_t)-8, 8, HM_OP_STORE, 102, 1, 1000 * (uint64_t)i + 500,
				      "nr_writes", (uint64_t)-8, "nr_writes", HM_SRC_TIMER });
	}
	build(s, 1000);
	assert_int_equal(s->lines.nr, 2);
	for (size_t i = 0; i < 2; i++) {
		const struct hm_line *ln = &s->lines.lines[i];

		assert_int_equal(ln->verdict, HM_V_PRIVATE);
		assert_true(HM_LINES_IS_TLS(ln->pid));
		assert_string_equal(ln->object, ln->threads[0].id == 101 ? "nr_reads (thread 101)"
									 : "nr_writes (thread 102)");
	}
	set_free(s);

	s = set_new();
	for (int i = 0; i < 40; i++) {
		add(s, (struct spec){ (uint64_t)-16, 8, HM_OP_STORE, 101, 0, 1000 * (uint64_t)i,
				      "kvar", (uint64_t)-16, "kvar.a", HM_SRC_TIMER });
		add(s, (struct spec){ (uint64_t)-8, 8, HM_OP_STORE, 102, 1, 1000 * (uint64_t)i + 500,
				      "kvar", (uint64_t)-16, "kvar.b", HM_SRC_TIMER });
	}
	for (size_t i = 0; i < s->n; i++)
		s->acc[i].s.kernel = 1;
	build(s, 1000);
	assert_int_equal(s->lines.nr, 1);
	assert_int_equal(s->lines.lines[0].pid, HM_LINES_KERNEL_PID);
	assert_int_equal(s->lines.lines[0].verdict, HM_V_FALSE_SHARING);
	set_free(s);
}

/* lock add: decoded as a store and atomic; it is one write, not two. */
static void test_locked_store_is_one_write(void **state)
{
	struct set *s = set_new();
	const struct hm_line *ln;

	(void)state;
	two_writers(s, 10, HM_SRC_TIMER);
	for (size_t i = 0; i < s->n; i++)
		s->acc[i].locked = 1;
	build(s, 1000);
	ln = &s->lines.lines[0];
	assert_int_equal(ln->verdict, HM_V_FALSE_SHARING);
	assert_int_equal(ln->ev_writes[0], 10);
	assert_int_equal(ln->ev_writes[1], 10);
	assert_non_null(strstr(ln->evidence, "(10 records, 10 writes)"));
	set_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_threads_on_one_cpu_are_latent_sharing),
		cmocka_unit_test(test_few_timer_samples_give_no_verdict),
		cmocka_unit_test(test_writer_needs_minimum_stores),
		cmocka_unit_test(test_watch_counts_one_offs_apart),
		cmocka_unit_test(test_rotated_watch_says_watched_share),
		cmocka_unit_test(test_confidence_high_needs_records_and_interleaving),
		cmocka_unit_test(test_evidence_names_both_sides_with_counts),
		cmocka_unit_test(test_shared_line_ranks_above_private),
		cmocka_unit_test(test_array_elements_of_one_global_get_element_fix),
		cmocka_unit_test(test_tls_copies_of_two_threads_never_share),
		cmocka_unit_test(test_locked_store_is_one_write),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
