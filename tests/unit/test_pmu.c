/* collectors/pmu*.c: preset encoding per CPU model with LIBPFM_FORCE_PMU (Intel icl, spr,
 * hsw, ivb; AMD Zen 3/Zen 4 with a fake ibs_op in sysfs), Arm SPE from a fake sysfs, and
 * the no-PMU diagnosis. Expected configs are libpfm4 4.13's table values (event | umask <<
 * 8, cmask << 24), cross-checked with the kernel's mem-loads/mem-stores aliases.
 *
 * libpfm4 reads LIBPFM_FORCE_PMU once per process, and pfm_terminate() does not forget a
 * PMU it marked present, so every libpfm4 call runs in a forked child that reports back
 * through shared memory; the parent never initialises libpfm4. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <ftw.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collectors/pmu.h"
#include "collectors/pmu_int.h"
#include "core/sample.h"

struct shared {
	int rc, skipped;
	struct hm_err err;
	struct hm_pmu_events ev;
	struct hm_pmu_status st;
};

struct encode_arg {
	const char *what;
	struct hm_pmu_opts o;
};

typedef void (*child_fn)(struct shared *sh, const void *arg);

/* Runs fn in a child with LIBPFM_FORCE_PMU=force (unset for NULL); returns its report. */
static void in_child(const char *force, child_fn fn, const void *arg, struct shared *out)
{
	struct shared *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int status = 0;
	pid_t pid;

	assert_true(sh != MAP_FAILED);
	memset(sh, 0, sizeof(*sh));
	sh->rc = -12345;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (force)
			setenv("LIBPFM_FORCE_PMU", force, 1);
		else
			unsetenv("LIBPFM_FORCE_PMU");
		fn(sh, arg);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	*out = *sh;
	munmap(sh, sizeof(*sh));
}

static void do_encode(struct shared *sh, const void *arg)
{
	const struct encode_arg *a = arg;

	sh->rc = hm_pmu_encode(a->what, &a->o, &sh->ev, &sh->err);
}

static struct hm_pmu_opts opts(void)
{
	struct hm_pmu_opts o;

	memset(&o, 0, sizeof(o));
	o.precise = -1;
	o.phys = 1;
	return o;
}

static void encode_as(const char *model, const char *what, const struct hm_pmu_opts *o,
		      struct shared *out)
{
	struct encode_arg a = {what, *o};

	in_child(model, do_encode, &a, out);
}

static const uint64_t sample_type = HM_PMU_SAMPLE_TYPE | PERF_SAMPLE_PHYS_ADDR;

static void check_pebs(const struct hm_pmu_event *ev, const char *name, uint64_t config,
		       uint64_t config1, unsigned precise, uint8_t op)
{
	assert_string_equal(ev->name, name);
	assert_int_equal(ev->attr.type, PERF_TYPE_RAW);
	assert_int_equal(ev->attr.config, config);
	assert_int_equal(ev->attr.config1, config1);
	assert_int_equal(ev->attr.precise_ip, precise);
	assert_int_equal(ev->attr.sample_type, sample_type);
	assert_int_equal(ev->attr.size, sizeof(struct perf_event_attr));
	assert_true(ev->attr.exclude_kernel);
	assert_true(ev->attr.exclude_hv);
	assert_true(ev->attr.disabled);
	assert_true(ev->attr.sample_id_all);
	assert_true(ev->attr.sample_period > 0);
	assert_int_equal(ev->op, op);
	assert_int_equal(ev->flags, 0);
}

/* --- fake sysfs trees -------------------------------------------------------------------- */

static void put(const char *root, const char *rel, const char *text)
{
	char path[512], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (slash = strchr(path + strlen(root) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void rm_tree(const char *root)
{
	nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void make_root(char *root, size_t len)
{
	snprintf(root, len, "/tmp/hm_pmu_test.XXXXXX");
	assert_non_null(mkdtemp(root));
	put(root, "software/type", "1\n");
	put(root, "breakpoint/type", "5\n");
}

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
