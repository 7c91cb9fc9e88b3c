/* collectors/pmu*.c: preset and format-string parsing, and preset encoding per Intel model
 * with LIBPFM_FORCE_PMU (icl, spr, hsw, ivb). Expected configs are libpfm4 4.13's table
 * values (event | umask << 8, cmask << 24), cross-checked with the kernel's
 * mem-loads/mem-stores aliases. AMD, Arm SPE and the diagnosis are in test_pmu_sysfs.c. */
#include "pmu_util.h"

/* --- presets and format strings ---------------------------------------------------------- */

static void test_presets_listed(void **state)
{
	const char *const *p = hm_pmu_presets();

	(void)state;
	assert_string_equal(p[0], "c2c");
	assert_string_equal(p[1], "hitm");
	assert_string_equal(p[2], "split");
	assert_string_equal(p[3], "miss");
	assert_string_equal(p[4], "stall");
	assert_null(p[5]);
	assert_true(hm_pmu_is_preset("stall"));
	assert_false(hm_pmu_is_preset("MEM_LOAD_RETIRED:L1_MISS"));
}

static void test_format_spec_parsed(void **state)
{
	uint64_t mask;
	int word;

	(void)state;
	assert_int_equal(hm_pmu_format_parse("config:19", &word, &mask), 0);
	assert_int_equal(word, 0);
	assert_int_equal(mask, 1ULL << 19);
	assert_int_equal(hm_pmu_format_parse("config2:0-11\n", &word, &mask), 0);
	assert_int_equal(word, 2);
	assert_int_equal(mask, 0xfff);
	assert_int_equal(hm_pmu_format_parse("config1:0-63", &word, &mask), 0);
	assert_int_equal(mask, ~0ULL);
	assert_int_equal(hm_pmu_format_parse("config:0-7,32-35", &word, &mask), 0);
	assert_int_equal(mask, 0xf000000ffULL);
	assert_int_equal(hm_pmu_format_parse("config3:0", &word, &mask), -1);
	assert_int_equal(hm_pmu_format_parse("config:64", &word, &mask), -1);
	assert_int_equal(hm_pmu_format_parse("config:5-2", &word, &mask), -1);
	assert_int_equal(hm_pmu_format_parse("bogus", &word, &mask), -1);
}

/* --- Intel ------------------------------------------------------------------------------- */

/* perf c2c record on Ice Lake: mem-loads (0xcd/0x01, ldlat in config1) and mem-stores
 * (0xd0/0x82), both with PDIR precision. */
static void test_icl_c2c_is_load_latency_and_all_stores(void **state)
{
	struct hm_pmu_opts o = opts();
	struct shared r;

	(void)state;
	encode_as("icl", "c2c", &o, &r);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.ev.vendor, HM_PMU_INTEL);
	assert_string_equal(r.ev.pmu, "icl");
	assert_string_equal(r.ev.preset, "c2c");
	assert_int_equal(r.ev.nr, 2);
	check_pebs(&r.ev.ev[0], "MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=30", 0x1cd, 30, 3,
		   HM_OP_LOAD);
	check_pebs(&r.ev.ev[1], "MEM_INST_RETIRED:ALL_STORES", 0x82d0, 0, 3, HM_OP_STORE);
	assert_int_equal(r.ev.ev[0].leader, -1);
	assert_int_equal(r.ev.ev[1].leader, -1);
	assert_int_equal(r.ev.ev[0].attr.sample_period, 1009);
}

static void test_icl_hitm_split_miss_stall(void **state)
{
	struct hm_pmu_opts o = opts();
	struct shared r;

	(void)state;
	encode_as("icl", "hitm", &o, &r);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.ev.nr, 1);	/* client part: no REMOTE_HITM */
	check_pebs(&r.ev.ev[0], "MEM_LOAD_L3_HIT_RETIRED:XSNP_HITM", 0x4d2, 0, 3, HM_OP_LOAD);

	encode_as("icl", "split", &o, &r);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.ev.nr, 2);
	check_pebs(&r.ev.ev[0], "MEM_INST_RETIRED:SPLIT_LOADS", 0x41d0, 0, 3, HM_OP_LOAD);
	check_pebs(&r.ev.ev[1], "MEM_INST_RETIRED:SPLIT_STORES", 0x42d0, 0, 3, HM_OP_STORE);

	encode_as("icl", "miss", &o, &r);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.ev.nr, 2);
	check_pebs(&r.ev.ev[0], "MEM_LOAD_RETIRED:L1_MISS", 0x8d1, 0, 3, HM_OP_LOAD);
	check_pebs(&r.ev.ev[1], "MEM_LOAD_RETIRED:L3_MISS", 0x20d1, 0, 3, HM_OP_LOAD);

	encode_as("icl", "stall", &o, &r);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.ev.nr, 1);
	check_pebs(&r.ev.ev[0], "MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=128", 0x1cd, 128, 3,
		   HM_OP_LOAD);
}

static void test_icl_options_kernel_ldlat_period_precise(void **state)
{
	struct hm_pmu_opts o = opts();
	struct shared r;

	(void)state;
	o.kernel = 1;
	o.phys = 0;
	o.ldlat = 50;
	o.period = 5003;
	o.precise = 2;
	encode_as("icl", "c2c", &o, &r);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.ev.ev[0].attr.config1, 50);
	assert_int_equal(r.ev.ev[0].attr.sample_period, 5003);
	assert_int_equal(r.ev.ev[0].attr.precise_ip, 2);
	assert_false(r.ev.ev[0].attr.exclude_kernel);
	assert_int_equal(r.ev.ev[0].attr.sample_type, HM_PMU_SAMPLE_TYPE);

	o.ldlat = 2;
	encode_as("icl", "c2c", &o, &r);
	assert_int_equal(r.rc, -1);
	assert_int_equal(r.err.code, HM_EXIT_INPUT);
	assert_non_null(strstr(r.err.msg, "load latency 2"));
}

/* Golden Cove: the load-latency event must follow mem-loads-aux (0x03/0x82) in a group, and
 * PDIR (precise 3) cannot count it. HITM became XSNP_FWD. */
static void test_spr_c2c_groups_mem_loads_aux(void **state)
{
	struct hm_pmu_opts o = opts();
	struct shared r;

	(void)state;
	encode_as("spr", "c2c", &o, &r);
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.ev.pmu, "spr");
	assert_int_equal(r.ev.nr, 3);
	assert_string_equal(r.ev.ev[0].name, "mem-loads-aux");
	assert_int_equal(r.ev.ev[0].attr.type, PERF_TYPE_RAW);
	assert_int_equal(r.ev.ev[0].attr.config, 0x8203);
	assert_int_equal(r.ev.ev[0].attr.sample_period, 0);
	assert_int_equal(r.ev.ev[0].flags, HM_PMU_EV_COUNT_ONLY);
	assert_int_equal(r.ev.ev[0].leader, -1);
	check_pebs(&r.ev.ev[1], "MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=30", 0x1cd, 30, 2,
		   HM_OP_LOAD);
	assert_int_equal(r.ev.ev[1].leader, 0);
	check_pebs(&r.ev.ev[2], "MEM_INST_RETIRED:ALL_STORES", 0x82d0, 0, 2, HM_OP_STORE);
	assert_int_equal(r.ev.ev[2].leader, -1);

	encode_as("spr", "hitm", &o, &r);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.ev.nr, 2);
	check_pebs(&r.ev.ev[0], "MEM_LOAD_L3_HIT_RETIRED:XSNP_FWD", 0x4d2, 0, 2, HM_OP_LOAD);
	check_pebs(&r.ev.ev[1], "MEM_LOAD_L3_MISS_RETIRED:REMOTE_HITM", 0x4d3, 0, 2, HM_OP_LOAD);

	encode_as("spr", "stall", &o, &r);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.ev.nr, 2);
	assert_int_equal(r.ev.ev[0].attr.config, 0x8203);
	assert_int_equal(r.ev.ev[1].attr.config1, 128);
	assert_int_equal(r.ev.ev[1].leader, 0);
}

/* Haswell names: MEM_UOPS_RETIRED and MEM_LOAD_UOPS_*, same codes. */
static void test_hsw_uses_uops_names(void **state)
{
	struct hm_pmu_opts o = opts();
	struct shared r;

	(void)state;
	encode_as("hsw", "c2c", &o, &r);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.ev.nr, 2);
	check_pebs(&r.ev.ev[0], "MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=30", 0x1cd, 30, 2,
		   HM_OP_LOAD);
	check_pebs(&r.ev.ev[1], "MEM_UOPS_RETIRED:ALL_STORES", 0x82d0, 0, 2, HM_OP_STORE);

	encode_as("hsw", "hitm", &o, &r);
	assert_int_equal(r.rc, 0);
	check_pebs(&r.ev.ev[0], "MEM_LOAD_UOPS_L3_HIT_RETIRED:XSNP_HITM", 0x4d2, 0, 2,
		   HM_OP_LOAD);

	encode_as("hsw", "miss", &o, &r);
	assert_int_equal(r.rc, 0);
	check_pebs(&r.ev.ev[0], "MEM_LOAD_UOPS_RETIRED:L1_MISS", 0x8d1, 0, 2, HM_OP_LOAD);
	check_pebs(&r.ev.ev[1], "MEM_LOAD_UOPS_RETIRED:L3_MISS", 0x20d1, 0, 2, HM_OP_LOAD);
}

/* Ivy Bridge PEBS has data addresses only for load latency and precise stores (0xcd/0x02,
 * the kernel's mem-stores there): c2c works, hitm is refused with the reason. */
static void test_ivb_c2c_precise_store_and_hitm_refused(void **state)
{
	struct hm_pmu_opts o = opts();
	struct shared r;

	(void)state;
	encode_as("ivb", "c2c", &o, &r);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.ev.nr, 2);
	check_pebs(&r.ev.ev[0], "MEM_TRANS_RETIRED:LATENCY_ABOVE_THRESHOLD:ldlat=30", 0x1cd, 30,
		   2, HM_OP_LOAD);
	check_pebs(&r.ev.ev[1], "MEM_TRANS_RETIRED:PRECISE_STORE", 0x2cd, 0, 2, HM_OP_STORE);

	encode_as("ivb", "hitm", &o, &r);
	assert_int_equal(r.rc, -1);
	assert_int_equal(r.err.code, HM_EXIT_ENV);
	assert_non_null(strstr(r.err.msg, "PEBS on ivb"));
	assert_non_null(strstr(r.err.msg, "-c timer"));
}

static void test_unknown_event_is_input_error(void **state)
{
	struct hm_pmu_opts o = opts();
	struct shared r;

	(void)state;
	encode_as("icl", "NO_SUCH_EVENT", &o, &r);
	assert_int_equal(r.rc, -1);
	assert_int_equal(r.err.code, HM_EXIT_INPUT);
	assert_non_null(strstr(r.err.msg, "'NO_SUCH_EVENT'"));
	assert_non_null(strstr(r.err.msg, "hitmap check"));
	assert_non_null(strstr(r.err.msg, "showevtinfo"));
	assert_non_null(strstr(r.err.msg, "icl"));

	encode_as("icl", "MEM_LOAD_RETIRED:NOPE", &o, &r);
	assert_int_equal(r.rc, -1);
	assert_int_equal(r.err.code, HM_EXIT_INPUT);
	assert_non_null(strstr(r.err.msg, "attribute"));
}

static void test_user_event_strings(void **state)
{
	struct hm_pmu_opts o = opts();
	struct shared r;

	(void)state;
	encode_as("icl", "MEM_LOAD_RETIRED:L3_HIT", &o, &r);
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.ev.preset, "");
	check_pebs(&r.ev.ev[0], "MEM_LOAD_RETIRED:L3_HIT", 0x4d1, 0, 3, HM_OP_UNKNOWN);

	/* Not PEBS: counts cycles with cmask 6, carries no data address. */
	encode_as("icl", "CYCLE_ACTIVITY:STALLS_L3_MISS", &o, &r);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.ev.ev[0].attr.config, 0x60006a3);
	assert_int_equal(r.ev.ev[0].attr.precise_ip, 0);
	assert_true(r.ev.ev[0].flags & HM_PMU_EV_NO_ADDR);

	/* An explicit precise level in the string wins over the model's. */
	encode_as("icl", "MEM_LOAD_RETIRED:L1_MISS:precise=1", &o, &r);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.ev.ev[0].attr.precise_ip, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_presets_listed),
		cmocka_unit_test(test_format_spec_parsed),
		cmocka_unit_test(test_icl_c2c_is_load_latency_and_all_stores),
		cmocka_unit_test(test_icl_hitm_split_miss_stall),
		cmocka_unit_test(test_icl_options_kernel_ldlat_period_precise),
		cmocka_unit_test(test_spr_c2c_groups_mem_loads_aux),
		cmocka_unit_test(test_hsw_uses_uops_names),
		cmocka_unit_test(test_ivb_c2c_precise_store_and_hitm_refused),
		cmocka_unit_test(test_unknown_event_is_input_error),
		cmocka_unit_test(test_user_event_strings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
