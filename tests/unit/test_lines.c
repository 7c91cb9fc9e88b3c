/* analyzer/lines.c, sharing.c and splits.c on crafted accesses with known answers; the
 * report printers are in test_lines_report.c. */
#include "lines_util.h"

static const struct hm_lfield *row(const struct hm_line *ln, const char *field)
{
	for (uint32_t i = 0; i < ln->nr_fields; i++)
		if (strcmp(ln->fields[i].field, field) == 0)
			return &ln->fields[i];
	fail_msg("no row %s", field);
	return NULL;
}

static int has_thread(const struct hm_lfield *f, uint32_t tid)
{
	for (uint32_t i = 0; i < f->nr_threads; i++)
		if (f->threads[i].id == tid)
			return 1;
	return 0;
}

static void test_false_sharing_two_threads_disjoint_fields(void **state)
{
	struct set *s = set_new();
	const struct hm_line *ln;
	const struct hm_lfield *ops, *errors;

	(void)state;
	false_sharing_set(s, HM_SRC_TIMER);
	build(s, 1000);
	assert_int_equal(s->lines.nr, 1);
	ln = &s->lines.lines[0];
	assert_int_equal(ln->addr, BASE);
	assert_string_equal(ln->object, "worker_stats");
	assert_int_equal(ln->verdict, HM_V_FALSE_SHARING);
	assert_int_equal(ln->records, 200);
	assert_int_equal(ln->stores, 200);
	assert_int_equal(ln->nr_threads, 2);
	assert_int_equal(ln->nr_cpus, 2);
	ops = row(ln, "worker_stats.ops");
	errors = row(ln, "worker_stats.errors");
	assert_int_equal(ops->offset, 0);
	assert_int_equal(errors->offset, 8);
	assert_int_equal(errors->size, 8);
	assert_true(has_thread(ops, 101) && !has_thread(ops, 102));
	assert_true(has_thread(errors, 102) && !has_thread(errors, 101));
	assert_int_equal(ops->nr_sites, 1);
	assert_string_equal(ops->sites[0].func, "worker");
	assert_int_equal(ops->sites[0].count, 100);
	assert_true(ln->nr_pairs >= 1);
	assert_int_equal(ln->pairs[0].kind, HM_V_FALSE_SHARING);
	assert_true((ln->pairs[0].tid_a == 101 && ln->pairs[0].tid_b == 102) ||
		    (ln->pairs[0].tid_a == 102 && ln->pairs[0].tid_b == 101));
	assert_non_null(ln->fix);
	assert_non_null(strstr(ln->fix, "move worker_stats.errors to its own cache line"));
	assert_non_null(strstr(ln->fix, "insert 56 bytes of padding"));
	assert_non_null(strstr(ln->fix, "aligned(64)"));
	set_free(s);
}

static void test_true_sharing_overlapping_writes(void **state)
{
	struct set *s = set_new();
	const struct hm_line *ln;

	(void)state;
	for (int i = 0; i < 50; i++) {
		add(s, (struct spec){ BASE + 16, 8, HM_OP_STORE, 201, 2, 10 * (uint64_t)i, "stats",
				      BASE, "stats.hits", HM_SRC_TIMER });
		add(s, (struct spec){ BASE + 16, 8, HM_OP_STORE, 202, 3, 10 * (uint64_t)i + 5,
				      "stats", BASE, "stats.hits", HM_SRC_TIMER });
	}
	add(s, (struct spec){ BASE + 20, 4, HM_OP_LOAD, 203, 4, 1, "stats", BASE, "stats.hits",
			      HM_SRC_TIMER });
	build(s, 0);
	ln = &s->lines.lines[0];
	assert_int_equal(ln->verdict, HM_V_TRUE_SHARING);
	assert_int_equal(ln->pairs[0].kind, HM_V_TRUE_SHARING);
	assert_non_null(strstr(ln->fix, "stats.hits"));
	assert_non_null(strstr(ln->fix, "its own copy"));
	set_free(s);
}

static void test_read_only_several_threads_not_flagged(void **state)
{
	struct set *s = set_new();

	(void)state;
	for (int i = 0; i < 30; i++)
		add(s, (struct spec){ BASE + 8 * (uint64_t)(i % 3), 8, HM_OP_LOAD,
				      300 + (uint32_t)(i % 3), (uint32_t)(i % 3), (uint64_t)i,
				      "config", BASE, i % 3 ? "config.b" : "config.a",
				      HM_SRC_TIMER });
	build(s, 0);
	assert_int_equal(s->lines.lines[0].verdict, HM_V_READ_ONLY);
	assert_null(s->lines.lines[0].fix);
	assert_int_equal(s->lines.lines[0].nr_pairs, 0);
	assert_int_equal(s->lines.lines[0].conflicts, 0);
	set_free(s);
}

static void test_private_one_thread(void **state)
{
	struct set *s = set_new();

	(void)state;
	for (int i = 0; i < 20; i++)
		add(s, (struct spec){ BASE + 8 * (uint64_t)(i % 2), 8, i % 2 ? HM_OP_STORE : HM_OP_LOAD,
				      7, (uint32_t)(i % 4), (uint64_t)i, "mine", BASE, NULL,
				      HM_SRC_TIMER });
	build(s, 0);
	assert_int_equal(s->lines.lines[0].verdict, HM_V_PRIVATE);
	assert_null(s->lines.lines[0].fix);
	assert_string_equal(s->lines.lines[0].fields[1].field, "mine+0x8");
	set_free(s);
}

/* Kernel %gs: accesses: the same per-CPU offset on two CPUs is two copies, two lines,
 * each private; without the flag the same stores are one truly shared line. */
static void test_percpu_copies_are_lines_of_their_own(void **state)
{
	struct set *s = set_new();

	(void)state;
	for (int i = 0; i < 40; i++)
		add(s, (struct spec){ 0x1fb40, 4, HM_OP_STORE, 101 + (uint32_t)(i % 2),
				      (uint32_t)(i % 2), 1000 * (uint64_t)i, "__preempt_count",
				      0x1fb40, "__preempt_count", HM_SRC_TIMER });
	build(s, 0);
	assert_int_equal(s->lines.nr, 1);
	assert_int_equal(s->lines.lines[0].verdict, HM_V_TRUE_SHARING);
	for (size_t i = 0; i < s->n; i++)
		s->acc[i].percpu = 1;
	build(s, 0);
	assert_int_equal(s->lines.nr, 2);
	for (size_t i = 0; i < 2; i++) {
		const struct hm_line *ln = &s->lines.lines[i];

		assert_int_equal(ln->addr, 0x1fb40);
		assert_int_equal(ln->nr_cpus, 1);
		assert_int_equal(ln->verdict, HM_V_PRIVATE);
		assert_true(HM_LINES_IS_PERCPU(ln->pid));
		assert_int_equal(HM_LINES_PERCPU_CPU(ln->pid), ln->cpus[0].id);
	}
	set_free(s);
}

static void test_padded_layout_nothing_shared(void **state)
{
	struct set *s = set_new();

	(void)state;
	for (int i = 0; i < 100; i++) {
		add(s, (struct spec){ BASE + 0, 8, HM_OP_STORE, 101, 0, 1000 * (uint64_t)i,
				      "worker_stats", BASE, "worker_stats.ops", HM_SRC_TIMER });
		add(s, (struct spec){ BASE + 64, 8, HM_OP_STORE, 102, 1, 1000 * (uint64_t)i + 500,
				      "worker_stats", BASE, "worker_stats.errors", HM_SRC_TIMER });
	}
	build(s, 1000);
	assert_int_equal(s->lines.nr, 2);
	for (size_t i = 0; i < s->lines.nr; i++) {
		assert_int_equal(s->lines.lines[i].verdict, HM_V_PRIVATE);
		assert_int_equal(s->lines.lines[i].conflicts, 0);
		assert_null(s->lines.lines[i].fix);
	}
	assert_int_equal(s->splits.nr, 0);
	set_free(s);
}

/* A read-mostly field beside a written one: the readers suffer from the writer. */
static void test_read_mostly_field_beside_written_is_false_sharing(void **state)
{
	struct set *s = set_new();
	const struct hm_line *ln;

	(void)state;
	for (int i = 0; i < 60; i++) {
		add(s, (struct spec){ BASE, 8, HM_OP_LOAD, 401 + (uint32_t)(i % 3), (uint32_t)(i % 3),
				      100 * (uint64_t)i, "server", BASE, "server.config",
				      HM_SRC_TIMER });
		if (i % 4 == 0)
			add(s, (struct spec){ BASE + 40, 8, HM_OP_STORE, 409, 7, 100 * (uint64_t)i + 50,
					      "server", BASE, "server.requests", HM_SRC_TIMER });
	}
	build(s, 0);
	ln = &s->lines.lines[0];
	assert_int_equal(ln->verdict, HM_V_FALSE_SHARING);
	assert_non_null(strstr(ln->fix, "move server.requests to its own cache line"));
	assert_non_null(strstr(ln->fix, "insert 24 bytes"));
	set_free(s);
}

/* Elements of an array of 16-byte structs, one per thread. */
static void test_array_elements_fix_pads_the_type(void **state)
{
	struct set *s = set_new();
	struct hm_type t = { .kind = HM_T_STRUCT, .name = "worker_stats", .size = 16 };

	(void)state;
	for (int i = 0; i < 40; i++)
		add(s, (struct spec){ BASE + 16 * (uint64_t)(i % 2), 8, HM_OP_STORE,
				      501 + (uint32_t)(i % 2), (uint32_t)(i % 2), (uint64_t)i,
				      "worker_stats", BASE + 16 * (uint64_t)(i % 2),
				      "worker_stats.ops", HM_SRC_TIMER });
	for (size_t i = 0; i < s->n; i++)
		s->acc[i].type = &t;
	build(s, 0);
	assert_int_equal(s->lines.lines[0].verdict, HM_V_FALSE_SHARING);
	assert_non_null(strstr(s->lines.lines[0].fix, "give each worker_stats its own cache line"));
	assert_non_null(strstr(s->lines.lines[0].fix, "pad it from 16 to 64 bytes"));
	set_free(s);
}

static void test_split_access_counted_and_named(void **state)
{
	struct set *s = set_new();
	const struct hm_split *sp;

	(void)state;
	for (int i = 0; i < 3; i++)
		add(s, (struct spec){ BASE + 62, 4, HM_OP_LOAD, 1, 0, (uint64_t)i, "packed", BASE + 60,
				      "packed.value", HM_SRC_TIMER });
	add(s, (struct spec){ BASE + 0xffe, 4, HM_OP_STORE, 1, 0, 9, "packed", BASE + 0xff0,
			      "packed.tail", HM_SRC_TIMER });
	add(s, (struct spec){ BASE + 56, 8, HM_OP_LOAD, 1, 0, 10, "packed", BASE, "packed.ok",
			      HM_SRC_TIMER });
	add(s, (struct spec){ BASE + 62, 0, HM_OP_LOAD, 1, 0, 11, NULL, 0, NULL, HM_SRC_PMU });
	build(s, 0);
	assert_int_equal(s->splits.sized, 5);
	assert_int_equal(s->splits.line_splits, 4);
	assert_int_equal(s->splits.page_splits, 1);
	assert_int_equal(s->splits.nr, 2);
	sp = &s->splits.s[0];
	assert_string_equal(sp->field, "packed.value");
	assert_int_equal(sp->count, 3);
	assert_int_equal(sp->line_offset, 62);
	assert_int_equal(sp->size, 4);
	assert_int_equal(sp->loads, 3);
	assert_string_equal(sp->func, "worker");
	assert_string_equal(s->splits.s[1].field, "packed.tail");
	assert_int_equal(s->splits.s[1].page_splits, 1);
	set_free(s);
}

/* Consecutive timer samples of the line, different threads, one writing, within the
 * window: 3 of the 8 pairs below. */
static void test_timer_conflict_estimator_counts_pairs_in_window(void **state)
{
	static const struct { uint64_t t; uint32_t tid; int op; } series[] = {
		{ 0, 1, HM_OP_STORE },	/* first */
		{ 10, 2, HM_OP_LOAD },	/* conflict 1: other thread, after a store, 10 <= 100 */
		{ 20, 2, HM_OP_LOAD },	/* same thread */
		{ 30, 1, HM_OP_LOAD },	/* two loads */
		{ 500, 2, HM_OP_STORE },	/* 470 ns apart: outside the window */
		{ 550, 1, HM_OP_LOAD },	/* conflict 2 */
		{ 560, 1, HM_OP_STORE },	/* same thread */
		{ 660, 2, HM_OP_LOAD },	/* conflict 3: exactly the window */
		{ 761, 1, HM_OP_LOAD },	/* two loads */
	};
	struct set *s = set_new();
	const struct hm_line *ln;

	(void)state;
	for (size_t i = 0; i < sizeof(series) / sizeof(series[0]); i++) {
		/* Shuffled input: the estimator sorts by time. */
		size_t k = (i * 5) % (sizeof(series) / sizeof(series[0]));

		add(s, (struct spec){ BASE + 8 * series[k].tid, 8, series[k].op, series[k].tid,
				      series[k].tid, series[k].t, "obj", BASE,
				      series[k].tid == 1 ? "obj.a" : "obj.b", HM_SRC_TIMER });
	}
	/* PMU and watch samples in between do not break timer pairs. */
	add(s, (struct spec){ BASE + 8, 8, HM_OP_STORE, 9, 9, 5, "obj", BASE, "obj.a",
			      HM_SRC_PMU });
	build(s, 100);
	ln = &s->lines.lines[0];
	assert_int_equal(s->lines.source, HM_SRC_TIMER);
	assert_int_equal(ln->conflicts, 3);
	assert_int_equal(ln->contention, 3);
	assert_int_equal(ln->transfers, 0);
	assert_int_equal(row(ln, "obj.b")->conflicts, 3);	/* both sides of each */
	assert_int_equal(row(ln, "obj.a")->conflicts, 3);
	assert_int_equal(ln->nr_inter, 1);
	assert_int_equal(ln->inter[0].n, 3);
	set_free(s);
}

/* Watch sees every access: 1w 1r 2r 2r 1w 3r 3w 1r 1r 2w gives 6 transfers (the
 * consecutive-pairs rule would miss 2r: 1's read in between does not give the line up). */
static void test_watch_transfers_exact_count(void **state)
{
	static const struct { uint32_t tid; int op; int moves; } series[] = {
		{ 1, HM_OP_STORE, 0 },	/* nobody else has it */
		{ 1, HM_OP_LOAD, 0 },
		{ 2, HM_OP_LOAD, 1 },	/* 1 holds it modified */
		{ 2, HM_OP_LOAD, 0 },
		{ 1, HM_OP_STORE, 1 },	/* 2 holds a copy */
		{ 3, HM_OP_LOAD, 1 },
		{ 3, HM_OP_STORE, 1 },	/* 1 still holds a copy */
		{ 1, HM_OP_LOAD, 1 },
		{ 1, HM_OP_LOAD, 0 },
		{ 2, HM_OP_STORE, 1 },	/* 3 and 1 hold copies */
	};
	struct set *s = set_new();
	uint64_t want = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(series) / sizeof(series[0]); i++) {
		add(s, (struct spec){ BASE + 32, 4, series[i].op, series[i].tid, series[i].tid,
				      100 + (uint64_t)i, "lock", BASE + 32, "lock.word",
				      HM_SRC_WATCH });
		want += (uint64_t)series[i].moves;
	}
	build(s, 0);
	assert_int_equal(want, 6);
	assert_int_equal(s->lines.source, HM_SRC_WATCH);
	assert_int_equal(s->lines.lines[0].transfers, want);
	assert_int_equal(s->lines.lines[0].contention, want);
	assert_int_equal(s->lines.lines[0].conflicts, 0);
	assert_int_equal(s->lines.lines[0].verdict, HM_V_TRUE_SHARING);
	set_free(s);
}

static void test_no_addr_counted_not_placed(void **state)
{
	struct set *s = set_new();

	(void)state;
	add(s, (struct spec){ 0, 8, HM_OP_LOAD, 1, 0, 1, NULL, 0, NULL, HM_SRC_PMU });
	add(s, (struct spec){ BASE, 8, HM_OP_LOAD, 1, 0, 2, NULL, 0, NULL, HM_SRC_PMU });
	build(s, 0);
	assert_int_equal(s->lines.total, 2);
	assert_int_equal(s->lines.with_addr, 1);
	assert_int_equal(s->lines.resolved, 0);
	assert_int_equal(s->lines.nr, 1);
	assert_int_equal(s->lines.lines[0].records, 1);
	assert_string_equal(s->lines.lines[0].fields[0].field, "+0x0");
	assert_int_equal(s->lines.by_method[HM_M_NOADDR], 1);
	set_free(s);
}

/* User addresses are per process; the kernel half is one address space. */
static void test_address_spaces_per_pid_except_kernel(void **state)
{
	struct set *s = set_new();

	(void)state;
	add(s, (struct spec){ BASE, 8, HM_OP_LOAD, 1, 0, 1, NULL, 0, NULL, HM_SRC_TIMER });
	add(s, (struct spec){ BASE, 8, HM_OP_LOAD, 2, 0, 2, NULL, 0, NULL, HM_SRC_TIMER });
	add(s, (struct spec){ 0xffff888000001000ull, 8, HM_OP_LOAD, 1, 0, 3, NULL, 0, NULL,
			      HM_SRC_TIMER });
	add(s, (struct spec){ 0xffff888000001008ull, 8, HM_OP_LOAD, 2, 1, 4, NULL, 0, NULL,
			      HM_SRC_TIMER });
	s->acc[1].s.pid = 77;
	s->acc[3].s.pid = 77;
	s->acc[2].s.kernel = s->acc[3].s.kernel = 1;	/* kernel data is touched by kernel code */
	build(s, 0);
	assert_int_equal(s->lines.nr, 3);
	for (size_t i = 0; i < s->lines.nr; i++)
		if (s->lines.lines[i].addr == 0xffff888000001000ull)
			assert_int_equal(s->lines.lines[i].pid, HM_LINES_KERNEL_PID);
	set_free(s);
}

/* PMU: HITM loads rank lines; ties by records. */
static void test_pmu_lines_sorted_by_hitm_then_records(void **state)
{
	struct set *s = set_new();
	uint64_t hitm = PERF_MEM_S(OP, LOAD) | PERF_MEM_S(LVL, HIT) | PERF_MEM_S(LVL, L3) |
			PERF_MEM_S(SNOOP, HITM);
	uint64_t l1 = PERF_MEM_S(OP, LOAD) | PERF_MEM_S(LVL, HIT) | PERF_MEM_S(LVL, L1);

	(void)state;
	for (int i = 0; i < 5; i++)
		add(s, (struct spec){ BASE + 0x40, 8, HM_OP_LOAD, 1, 0, (uint64_t)i, "a", BASE, "a.x",
				      HM_SRC_PMU });
	for (int i = 0; i < 3; i++)
		add(s, (struct spec){ BASE + 0x80, 8, HM_OP_LOAD, 2, 1, (uint64_t)i, "b", BASE, "b.y",
				      HM_SRC_PMU });
	for (int i = 0; i < 2; i++)
		add(s, (struct spec){ BASE + 0xc0, 8, HM_OP_LOAD, 2, 1, (uint64_t)i, "c", BASE, "c.z",
				      HM_SRC_PMU });
	for (size_t i = 0; i < s->n; i++) {
		s->acc[i].s.data_src = s->acc[i].object[0] == 'b' ? hitm : l1;
		s->acc[i].s.weight = s->acc[i].object[0] == 'b' ? 200 : 5;
	}
	build(s, 0);
	assert_int_equal(s->lines.source, HM_SRC_PMU);
	assert_int_equal(s->lines.lines[0].addr, BASE + 0x80);
	assert_int_equal(s->lines.lines[0].contention, 3);
	assert_int_equal(s->lines.lines[0].c2c->hitm_local, 3);
	assert_int_equal(s->lines.lines[0].lat[HM_LVL_HITM_LOCAL].n, 3);
	assert_int_equal(s->lines.lines[0].lat[HM_LVL_HITM_LOCAL].sum, 600);
	assert_int_equal(s->lines.lines[1].addr, BASE + 0x40);
	assert_int_equal(s->lines.lines[2].addr, BASE + 0xc0);
	assert_int_equal(s->lines.c2c.loads, 10);
	assert_int_equal(s->lines.c2c.ld_l1, 7);
	set_free(s);
}

/* Many rows (past the event matrix and the pair limit), threads and sources on few lines:
 * every count adds up. */
static void test_many_rows_threads_and_sources_add_up(void **state)
{
	struct set *s = set_new();
	uint64_t x = 88172645463325252ull, with_addr = 0;

	(void)state;
	for (int i = 0; i < 4000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		add(s, (struct spec){ (x % 5 ? BASE + (x >> 8) % 192 : 0), 1 + (uint32_t)(x >> 16) % 8,
				      1 + (int)((x >> 20) % 2), 10 + (uint32_t)(x >> 24) % 40,
				      (uint32_t)(x >> 32) % 6, (x >> 36) % 100000, "big", BASE, NULL,
				      (int)((x >> 40) % 3) });
		s->acc[s->n - 1].s.data_src = PERF_MEM_S(OP, LOAD) | PERF_MEM_S(LVL, HIT) |
					      PERF_MEM_S(LVL, L3) | PERF_MEM_S(SNOOP, HITM);
		with_addr += s->acc[s->n - 1].s.addr != 0;
	}
	build(s, 50);
	assert_int_equal(s->lines.with_addr, with_addr);
	for (size_t i = 0; i < s->lines.nr; i++) {
		const struct hm_line *ln = &s->lines.lines[i];
		uint64_t rec = 0, thr = 0, conf = 0, trans = 0, ev = 0;

		assert_true(ln->nr_fields > 32);
		for (uint32_t j = 0; j < ln->nr_fields; j++) {
			const struct hm_lfield *f = &ln->fields[j];
			uint64_t frec = 0;

			rec += f->records;
			conf += f->conflicts;
			trans += f->transfers;
			for (uint32_t k = 0; k < f->nr_threads; k++)
				frec += f->threads[k].records;
			assert_int_equal(frec, f->records);
			assert_true(f->nr_sites <= HM_LINES_TOP_SITES);
			if (j)
				assert_true(f->offset > ln->fields[j - 1].offset ||
					    (f->offset == ln->fields[j - 1].offset &&
					     f->size > ln->fields[j - 1].size));
		}
		for (uint32_t k = 0; k < ln->nr_threads; k++)
			thr += ln->threads[k].records;
		for (uint32_t k = 0; k < ln->nr_inter; k++)
			ev += ln->inter[k].n;
		assert_int_equal(rec, ln->records);
		assert_int_equal(thr, ln->records);
		assert_true(conf >= ln->conflicts && conf <= 2 * ln->conflicts);
		assert_int_equal(trans, ln->transfers);
		assert_int_equal(ev, ln->conflicts + ln->transfers);
		assert_true(ln->nr_pairs <= HM_LINES_MAX_PAIRS);
		assert_int_not_equal(ln->verdict, HM_V_PRIVATE);
		if (hm_verdict_shared(ln->verdict))	/* a verdict carries its fix ... */
			assert_non_null(ln->fix);
		else	/* ... and too few samples or a one-off says what to do instead */
			assert_true(ln->verdict == HM_V_FEW_SAMPLES && ln->advice && !ln->fix);
		if (i)
			assert_true(ln->contention <= s->lines.lines[i - 1].contention);
	}
	set_free(s);
}

static void test_bad_line_size_is_an_error(void **state)
{
	struct set *s = set_new();
	struct hm_err err;

	(void)state;
	assert_true(hm_lines_build(&s->a, s->acc, 0, 96, 0, &s->lines, &err) < 0);
	assert_non_null(strstr(err.msg, "use 64"));
	assert_int_equal(hm_lines_build(&s->a, s->acc, 0, 128, 0, &s->lines, &err), 0);
	assert_int_equal(s->lines.nr, 0);
	set_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_false_sharing_two_threads_disjoint_fields),
		cmocka_unit_test(test_true_sharing_overlapping_writes),
		cmocka_unit_test(test_read_only_several_threads_not_flagged),
		cmocka_unit_test(test_private_one_thread),
		cmocka_unit_test(test_percpu_copies_are_lines_of_their_own),
		cmocka_unit_test(test_padded_layout_nothing_shared),
		cmocka_unit_test(test_read_mostly_field_beside_written_is_false_sharing),
		cmocka_unit_test(test_array_elements_fix_pads_the_type),
		cmocka_unit_test(test_split_access_counted_and_named),
		cmocka_unit_test(test_timer_conflict_estimator_counts_pairs_in_window),
		cmocka_unit_test(test_watch_transfers_exact_count),
		cmocka_unit_test(test_no_addr_counted_not_placed),
		cmocka_unit_test(test_address_spaces_per_pid_except_kernel),
		cmocka_unit_test(test_pmu_lines_sorted_by_hitm_then_records),
		cmocka_unit_test(test_many_rows_threads_and_sources_add_up),
		cmocka_unit_test(test_bad_line_size_is_an_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
