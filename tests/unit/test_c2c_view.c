/* analyzer/c2c_view.c: perf c2c's rules on crafted PMU accesses (the numbers against real
 * perf are in tests/e2e/c2c_view.sh): the 0.1% display limit and --show-all, the shared
 * lines' totals, the latency classes of perf's compute_stats, Pareto order and -c keys,
 * timer accesses without a data source, option parsing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <linux/perf_event.h>

#include "analyzer/c2c_view.h"

#define DS(a, s) PERF_MEM_S(a, s)
#define LCL_HITM (DS(OP, LOAD) | DS(LVL, HIT) | DS(LVL, L3) | DS(SNOOP, HITM))
#define RMT_HITM (DS(OP, LOAD) | DS(LVL, HIT) | DS(LVL, REM_CCE1) | DS(SNOOP, HITM))
#define L1_LOAD (DS(OP, LOAD) | DS(LVL, HIT) | DS(LVL, L1) | DS(SNOOP, NONE))
#define L1_STORE (DS(OP, STORE) | DS(LVL, HIT) | DS(LVL, L1))

static struct hm_access pmu(uint64_t addr, uint64_t ip, uint64_t ds, uint32_t tid, uint32_t cpu,
			    uint32_t weight)
{
	struct hm_access a;

	memset(&a, 0, sizeof(a));
	a.s.addr = addr;
	a.s.ip = ip;
	a.s.data_src = ds;
	a.s.pid = 100;
	a.s.tid = tid;
	a.s.cpu = cpu;
	a.s.weight = weight;
	a.s.source = HM_SRC_PMU;
	a.s.op = (ds & DS(OP, STORE)) ? HM_OP_STORE : HM_OP_LOAD;
	a.mapped = 1;
	return a;
}

/* n copies of x. */
static void add(struct hm_c2c_acc *c, struct hm_access x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		hm_c2c_acc_add(c, &x, 1);
}

static void build(const struct hm_c2c_opts *o, struct hm_arena *ar, struct hm_c2c_view *v)
{
	struct hm_c2c_acc *c = hm_c2c_acc_new(64, o);

	add(c, pmu(0x1008, 0x10, LCL_HITM, 2, 1, 100), 999);
	add(c, pmu(0x1008, 0x10, RMT_HITM, 2, 2, 300), 1);
	add(c, pmu(0x1000, 0x20, L1_STORE, 1, 0, 0), 5);
	add(c, pmu(0x1000, 0x24, L1_STORE, 3, 0, 0), 5);
	add(c, pmu(0x2000, 0x30, RMT_HITM, 3, 3, 500), 1);	/* 1 of 1001: under 0.1% */
	add(c, pmu(0x3000, 0x40, L1_LOAD, 1, 0, 4), 7);		/* no HITM: not shared */
	hm_c2c_acc_end(c, ar, NULL, v);
}

static void test_c2c_view_shows_lines_over_perfs_limit(void **state)
{
	struct hm_c2c_opts o = { .coalesce = HM_C2C_BY_IADDR };
	struct hm_arena ar;
	struct hm_c2c_view v;

	(void)state;
	hm_arena_init(&ar);
	build(&o, &ar, &v);
	assert_true(v.data_src);
	assert_int_equal(v.nr, 3);
	assert_int_equal(v.nr_shared, 2);
	assert_int_equal(v.nr_shown, 1);
	assert_int_equal(v.cls[0].addr, 0x1000);
	assert_int_equal(hm_c2c_hitm(&v.shared), 1001);
	assert_int_equal(v.shared.stores, 10);
	assert_int_equal(v.shared.loads, 1001);
	o.show_all = 1;
	build(&o, &ar, &v);
	assert_int_equal(v.nr_shown, 3);
	assert_int_equal(v.cls[1].addr, 0x2000);	/* by the metric */
	o.show_all = 0;
	o.display = HM_C2C_RMT;				/* 1 of 2 remote HITM: shown */
	build(&o, &ar, &v);
	assert_int_equal(v.nr_shown, 2);
	hm_arena_free(&ar);
}

static void test_c2c_view_pareto_rows_and_cycles(void **state)
{
	struct hm_c2c_opts o = { .coalesce = HM_C2C_BY_IADDR };
	struct hm_arena ar;
	struct hm_c2c_view v;
	const struct hm_c2c_cl *cl;

	(void)state;
	hm_arena_init(&ar);
	build(&o, &ar, &v);
	cl = &v.cls[0];
	assert_int_equal(cl->nr_ents, 3);		/* by offset, then code address */
	assert_int_equal(cl->ents[0].off, 0);
	assert_int_equal(cl->ents[0].ip, 0x20);
	assert_int_equal(cl->ents[1].ip, 0x24);
	assert_int_equal(cl->ents[2].off, 8);
	assert_int_equal(cl->ents[2].cyc_n[HM_CYC_LCL_HITM], 999);
	assert_int_equal(cl->ents[2].cyc_sum[HM_CYC_LCL_HITM], 99900);
	assert_int_equal(cl->ents[2].cyc_n[HM_CYC_RMT_HITM], 1);
	assert_int_equal(cl->ents[2].cyc_n[HM_CYC_LOAD], 0);
	assert_int_equal(cl->ents[2].nr_cpus, 2);
	assert_int_equal(cl->nr_cpus, 3);
	o.coalesce = HM_C2C_BY_TID;			/* offset and tid: the two stores' tids */
	build(&o, &ar, &v);
	assert_int_equal(v.cls[0].nr_ents, 3);
	assert_int_equal(v.cls[0].ents[0].tid, 1);
	assert_int_equal(v.cls[0].ents[1].tid, 3);
	o.coalesce = 0;					/* offset only */
	build(&o, &ar, &v);
	assert_int_equal(v.cls[0].nr_ents, 2);
	hm_arena_free(&ar);
}

static void test_c2c_view_timer_has_no_data_source(void **state)
{
	struct hm_c2c_opts o = { .coalesce = HM_C2C_BY_IADDR, .show_all = 1 };
	struct hm_c2c_acc *c = hm_c2c_acc_new(64, &o);
	struct hm_access x = pmu(0x1000, 0x10, 0, 1, 0, 0);
	struct hm_arena ar;
	struct hm_c2c_view v;

	(void)state;
	x.s.source = HM_SRC_TIMER;
	x.s.op = HM_OP_STORE;
	hm_arena_init(&ar);
	add(c, x, 4);
	hm_c2c_acc_end(c, &ar, NULL, &v);
	assert_false(v.data_src);
	assert_int_equal(v.all.records, 0);	/* no Trace Event Information */
	assert_int_equal(v.nr, 1);
	assert_int_equal(v.cls[0].stores, 4);
	assert_int_equal(v.cls[0].st.stores, 0);
	hm_arena_free(&ar);
}

static void test_c2c_view_options_parse(void **state)
{
	const char *bad = NULL;
	size_t len = 0;

	(void)state;
	assert_int_equal(hm_c2c_display_parse("peer"), HM_C2C_PEER);
	assert_int_equal(hm_c2c_display_parse("lcl"), HM_C2C_LCL);
	assert_int_equal(hm_c2c_display_parse("all"), -1);
	assert_int_equal(hm_c2c_coalesce_parse("tid,pid,iaddr", &bad, &len),
			 HM_C2C_BY_TID | HM_C2C_BY_PID | HM_C2C_BY_IADDR);
	assert_int_equal(hm_c2c_coalesce_parse("tid,dso", &bad, &len), 0);
	assert_int_equal(len, 3);
	assert_memory_equal(bad, "dso", 3);
	assert_int_equal(hm_c2c_coalesce_parse("", &bad, &len), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_c2c_view_shows_lines_over_perfs_limit),
		cmocka_unit_test(test_c2c_view_pareto_rows_and_cycles),
		cmocka_unit_test(test_c2c_view_timer_has_no_data_source),
		cmocka_unit_test(test_c2c_view_options_parse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
