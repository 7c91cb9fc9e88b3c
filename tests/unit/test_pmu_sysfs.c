/* collectors/pmu*.c: AMD IBS and Arm SPE from fake sysfs trees, and the no-PMU diagnosis. */
#include "pmu_util.h"

/* --- AMD --------------------------------------------------------------------------------- */

static void make_ibs(const char *root, int swfilt, int l3missonly)
{
	put(root, "cpu/type", "4\n");
	put(root, "ibs_op/type", "11\n");
	put(root, "ibs_op/format/cnt_ctl", "config:19\n");
	if (swfilt)
		put(root, "ibs_op/format/swfilt", "config2:0\n");
	if (l3missonly)
		put(root, "ibs_op/format/l3missonly", "config:16\n");
}

static void test_zen3_c2c_is_ibs_op_counting_ops(void **state)
{
	struct hm_pmu_opts o = opts();
	struct shared r;
	char root[64];

	(void)state;
	make_root(root, sizeof(root));
	make_ibs(root, 1, 0);
	o.sysfs = root;
	encode_as("amd64_fam19h_zen3", "c2c", &o, &r);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.ev.vendor, HM_PMU_AMD);
	assert_string_equal(r.ev.pmu, "ibs_op");
	assert_int_equal(r.ev.nr, 1);
	assert_string_equal(r.ev.ev[0].name, "ibs_op/cnt_ctl=1,swfilt=1/");
	assert_int_equal(r.ev.ev[0].attr.type, 11);
	assert_int_equal(r.ev.ev[0].attr.config, 1ULL << 19);
	assert_int_equal(r.ev.ev[0].attr.config2, 1);
	assert_int_equal(r.ev.ev[0].attr.precise_ip, 0);
	assert_int_equal(r.ev.ev[0].attr.sample_period, 0x10000);
	assert_int_equal(r.ev.ev[0].attr.sample_type, sample_type);
	assert_true(r.ev.ev[0].attr.exclude_kernel);
	assert_int_equal(r.ev.ev[0].flags, 0);

	/* miss on Zen 3: no l3missonly in sysfs, so every op is tagged. */
	encode_as("amd64_fam19h_zen3", "miss", &o, &r);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.ev.ev[0].attr.config, 1ULL << 19);

	encode_as("amd64_fam19h_zen3", "split", &o, &r);
	assert_int_equal(r.rc, -1);
	assert_int_equal(r.err.code, HM_EXIT_ENV);
	assert_non_null(strstr(r.err.msg, "split"));
	assert_non_null(strstr(r.err.msg, "-c timer"));

	o.period = 1000;
	encode_as("amd64_fam19h_zen3", "c2c", &o, &r);
	assert_int_equal(r.rc, -1);
	assert_int_equal(r.err.code, HM_EXIT_INPUT);
	assert_non_null(strstr(r.err.msg, "multiple of 16"));
	rm_tree(root);
}

static void test_zen4_miss_is_l3missonly_and_kernel_unfiltered(void **state)
{
	struct hm_pmu_opts o = opts();
	struct shared r;
	char root[64];

	(void)state;
	make_root(root, sizeof(root));
	make_ibs(root, 0, 1);
	o.sysfs = root;
	encode_as("amd64_fam19h_zen4", "miss", &o, &r);
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.ev.ev[0].name, "ibs_op/cnt_ctl=1,l3missonly=1/");
	assert_int_equal(r.ev.ev[0].attr.config, (1ULL << 19) | (1ULL << 16));
	assert_int_equal(r.ev.ev[0].attr.config2, 0);
	/* Without swfilt the kernel refuses exclude_*: the reader filters instead. */
	assert_false(r.ev.ev[0].attr.exclude_kernel);
	assert_false(r.ev.ev[0].attr.exclude_hv);
	assert_int_equal(r.ev.ev[0].flags, HM_PMU_EV_KERNEL_UNFILTERED);
	rm_tree(root);
}

static void test_amd_without_ibs_and_core_events(void **state)
{
	struct hm_pmu_opts o = opts();
	struct shared r;
	char root[64];

	(void)state;
	make_root(root, sizeof(root));
	put(root, "cpu/type", "4\n");
	o.sysfs = root;
	encode_as("amd64_fam19h_zen3", "c2c", &o, &r);
	assert_int_equal(r.rc, -1);
	assert_int_equal(r.err.code, HM_EXIT_ENV);
	assert_non_null(strstr(r.err.msg, "no 'ibs_op'"));
	assert_non_null(strstr(r.err.msg, "-c timer"));

	/* Core counter events encode from libpfm4's Zen 3 table but are not precise. */
	encode_as("amd64_fam19h_zen3", "LS_DISPATCH:LD_DISPATCH", &o, &r);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.ev.vendor, HM_PMU_AMD);
	assert_string_equal(r.ev.pmu, "amd64_fam19h_zen3");
	assert_int_equal(r.ev.ev[0].attr.type, PERF_TYPE_RAW);
	assert_int_equal(r.ev.ev[0].attr.config, 0x129);
	assert_int_equal(r.ev.ev[0].attr.precise_ip, 0);
	assert_true(r.ev.ev[0].flags & HM_PMU_EV_NO_ADDR);
	rm_tree(root);
}

/* --- Arm SPE ----------------------------------------------------------------------------- */

static void make_spe(const char *root, int formats)
{
	put(root, "armv8_pmuv3_0/type", "8\n");
	put(root, "arm_spe_0/type", "9\n");
	put(root, "arm_spe_0/caps/min_interval", "256\n");
	if (!formats)
		return;
	put(root, "arm_spe_0/format/ts_enable", "config:0\n");
	put(root, "arm_spe_0/format/pa_enable", "config:1\n");
	put(root, "arm_spe_0/format/load_filter", "config:33\n");
	put(root, "arm_spe_0/format/store_filter", "config:34\n");
	put(root, "arm_spe_0/format/event_filter", "config1:0-63\n");
	put(root, "arm_spe_0/format/min_latency", "config2:0-11\n");
}

static void check_spe(const char *root)
{
	struct hm_pmu_opts o = opts();
	struct shared r;

	o.sysfs = root;
	encode_as(NULL, "c2c", &o, &r);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.ev.vendor, HM_PMU_ARM);
	assert_string_equal(r.ev.pmu, "arm_spe_0");
	assert_string_equal(r.ev.ev[0].name,
			    "arm_spe_0/ts_enable=1,pa_enable=1,load_filter=1,store_filter=1/");
	assert_int_equal(r.ev.ev[0].attr.type, 9);
	assert_int_equal(r.ev.ev[0].attr.config, 0x3ULL | 1ULL << 33 | 1ULL << 34);
	assert_int_equal(r.ev.ev[0].attr.sample_period, 4096);
	assert_int_equal(r.ev.ev[0].flags, HM_PMU_EV_AUX);

	encode_as(NULL, "stall", &o, &r);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.ev.ev[0].attr.config, 0x3ULL | 1ULL << 33);
	assert_int_equal(r.ev.ev[0].attr.config2, 128);

	encode_as(NULL, "miss", &o, &r);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.ev.ev[0].attr.config1, 1ULL << 3);

	o.phys = 0;
	o.period = 100;		/* below caps/min_interval */
	encode_as(NULL, "c2c", &o, &r);
	assert_int_equal(r.ev.ev[0].attr.config, 0x1ULL | 1ULL << 33 | 1ULL << 34);
	assert_int_equal(r.ev.ev[0].attr.sample_period, 256);
}

static void test_spe_from_sysfs_formats_and_fallbacks(void **state)
{
	char root[64];

	(void)state;
	make_root(root, sizeof(root));
	make_spe(root, 1);
	check_spe(root);
	rm_tree(root);
	make_root(root, sizeof(root));
	make_spe(root, 0);
	check_spe(root);
	rm_tree(root);
}

/* --- Diagnosis --------------------------------------------------------------------------- */

struct probe_arg {
	const char *sysfs, *paranoid;
};

static void do_probe(struct shared *sh, const void *arg)
{
	const struct probe_arg *a = arg;

	sh->rc = hm_pmu_probe_at(a->sysfs, a->paranoid, &sh->st);
}

static void test_no_cpu_pmu_means_no_hardware_pmu(void **state)
{
	struct shared r;
	struct hm_err err = {0};
	char root[64], par[128];
	struct probe_arg a = {root, par};

	(void)state;
	make_root(root, sizeof(root));
	snprintf(par, sizeof(par), "%s/paranoid", root);
	put(root, "paranoid", "2\n");
	in_child(NULL, do_probe, &a, &r);
	assert_int_equal(r.rc, 0);
	assert_false(r.st.cpu_pmu);
	assert_int_equal(r.st.ibs_op_type, -1);
	assert_int_equal(r.st.spe_type, -1);
	assert_int_equal(r.st.paranoid, 2);
	assert_int_equal(hm_pmu_diagnose(&r.st, 0, &err), -1);
	assert_int_equal(err.code, HM_EXIT_ENV);
	assert_non_null(strstr(err.msg, "no hardware PMU"));
	assert_non_null(strstr(err.msg, "no 'cpu'"));
	assert_non_null(strstr(err.msg, root));
	assert_non_null(strstr(err.msg, "-c timer"));
	rm_tree(root);
}

static void test_cpu_pmu_and_paranoid_levels(void **state)
{
	struct shared r;
	struct hm_err err = {0};
	char root[64], par[128];
	struct probe_arg a = {root, par};

	(void)state;
	make_root(root, sizeof(root));
	snprintf(par, sizeof(par), "%s/paranoid", root);
	put(root, "paranoid", "2\n");
	put(root, "cpu_core/type", "4\n");
	in_child(NULL, do_probe, &a, &r);
	assert_true(r.st.cpu_pmu);
	assert_string_equal(r.st.cpu_pmu_name, "cpu_core");
	assert_int_equal(hm_pmu_diagnose(&r.st, 0, &err), 0);

	r.st.privileged = 0;
	assert_int_equal(hm_pmu_diagnose(&r.st, 0, &err), 0);
	assert_int_equal(hm_pmu_diagnose(&r.st, 1, &err), -1);
	assert_int_equal(err.code, HM_EXIT_ENV);
	assert_non_null(strstr(err.msg, "perf_event_paranoid <= 1"));
	assert_non_null(strstr(err.msg, "it is 2"));
	r.st.paranoid = 3;
	assert_int_equal(hm_pmu_diagnose(&r.st, 0, &err), -1);
	assert_non_null(strstr(err.msg, "perf_event_paranoid is 3"));
	r.st.privileged = 1;
	assert_int_equal(hm_pmu_diagnose(&r.st, 1, &err), 0);
	rm_tree(root);

	make_root(root, sizeof(root));
	put(root, "armv8_pmuv3_0/type", "8\n");
	snprintf(par, sizeof(par), "%s/missing", root);
	in_child(NULL, do_probe, &a, &r);
	assert_true(r.st.cpu_pmu);
	assert_string_equal(r.st.cpu_pmu_name, "armv8_pmuv3_0");
	assert_int_equal(r.st.paranoid, -99);
	rm_tree(root);
}

/* Without a model libpfm4 knows and without a cpu PMU, a preset fails with the reason. */
static void do_encode_unforced(struct shared *sh, const void *arg)
{
	struct hm_pmu_model m;

	if (!hm_pmu_model(&m)) {
		sh->skipped = 1;	/* a machine with a real PMU: nothing to diagnose */
		return;
	}
	do_encode(sh, arg);
}

static void test_preset_without_pmu_says_why(void **state)
{
	struct encode_arg a = {"c2c", opts()};
	struct shared r;
	char root[64];

	(void)state;
	make_root(root, sizeof(root));
	a.o.sysfs = root;
	in_child(NULL, do_encode_unforced, &a, &r);
	rm_tree(root);
	if (r.skipped)
		skip();
	assert_int_equal(r.rc, -1);
	assert_int_equal(r.err.code, HM_EXIT_ENV);
	assert_non_null(strstr(r.err.msg, "no hardware PMU"));
	assert_non_null(strstr(r.err.msg, "-c timer"));
}

/* The kernel's verdict here: a software event opens; a raw PMU event fails as ENV with the
 * errno named when this machine has no cpu PMU. */
static void do_open_check(struct shared *sh, const void *arg)
{
	struct hm_pmu_events ev;
	struct hm_pmu_opts o = opts();

	(void)arg;
	hm_pmu_probe(&sh->st);
	memset(&ev, 0, sizeof(ev));
	ev.nr = 1;
	ev.ev[0].leader = -1;
	snprintf(ev.ev[0].name, sizeof(ev.ev[0].name), "cpu-clock");
	o.phys = 0;
	hm_pmu_attr_base(&ev.ev[0].attr, &o, 100000);
	ev.ev[0].attr.type = PERF_TYPE_SOFTWARE;
	ev.ev[0].attr.config = PERF_COUNT_SW_CPU_CLOCK;
	ev.ev[0].attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID;
	sh->skipped = hm_pmu_open_check(&ev, &sh->st, &sh->err);	/* 0 expected */
	snprintf(ev.ev[0].name, sizeof(ev.ev[0].name), "MEM_TRANS_RETIRED:LOAD_LATENCY");
	ev.ev[0].attr.type = PERF_TYPE_RAW;
	ev.ev[0].attr.config = 0x1cd;
	ev.ev[0].attr.config1 = 30;
	ev.ev[0].attr.precise_ip = 2;
	sh->rc = hm_pmu_open_check(&ev, &sh->st, &sh->err);
}

static void test_open_check_names_the_kernel_verdict(void **state)
{
	struct shared r;

	(void)state;
	in_child(NULL, do_open_check, NULL, &r);
	assert_int_equal(r.skipped, 0);
	if (r.st.cpu_pmu)
		skip();		/* a real PMU may well accept the raw event */
	assert_int_equal(r.rc, -1);
	assert_int_equal(r.err.code, HM_EXIT_ENV);
	assert_non_null(strstr(r.err.msg, "MEM_TRANS_RETIRED:LOAD_LATENCY"));
	assert_non_null(strstr(r.err.msg, "-c timer"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_zen3_c2c_is_ibs_op_counting_ops),
		cmocka_unit_test(test_zen4_miss_is_l3missonly_and_kernel_unfiltered),
		cmocka_unit_test(test_amd_without_ibs_and_core_events),
		cmocka_unit_test(test_spe_from_sysfs_formats_and_fallbacks),
		cmocka_unit_test(test_no_cpu_pmu_means_no_hardware_pmu),
		cmocka_unit_test(test_cpu_pmu_and_paranoid_levels),
		cmocka_unit_test(test_preset_without_pmu_says_why),
		cmocka_unit_test(test_open_check_names_the_kernel_verdict),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
