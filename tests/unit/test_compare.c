/* analyzer/compare.c on crafted accesses: metrics per type.field, matched across builds
 * whose addresses differ, fields present on one side only, user metrics, the run
 * identity checks, and the layout side on the padding pair in examples/bin. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "analyzer/compare.h"

#define L 64

struct set {
	struct hm_access acc[4096];
	size_t n;
};

static void add(struct set *s, uint64_t addr, uint64_t base, int op, uint32_t tid, uint64_t t,
		const char *field, int src, uint32_t weight)
{
	struct hm_access *x = &s->acc[s->n++];

	assert_true(s->n <= sizeof(s->acc) / sizeof(s->acc[0]));
	memset(x, 0, sizeof(*x));
	x->s.addr = addr;
	x->s.size = 8;
	x->s.op = (uint8_t)op;
	x->s.pid = 4242;
	x->s.tid = tid;
	x->s.cpu = tid & 1;
	x->s.time = t;
	x->s.ip = 0x401000 + tid;
	x->s.source = (uint8_t)src;
	x->s.weight = weight;
	x->object = field ? "stats" : NULL;
	x->obj_base = field ? base : 0;
	x->field = field;
	x->field_off = field ? addr - base : 0;
	x->method = field ? HM_M_GLOBAL : HM_M_NOADDR;
	x->func = "worker";
}

/* Two threads bump worker_stats.ops and .errors, n rounds of one store each, 500 ns
 * apart; errors_off is 8 (one line: false sharing) or 64 (padded). `extra` accesses
 * without an address pad the run's sample count. */
static void workload(struct set *s, uint64_t base, uint64_t errors_off, int rounds, int extra)
{
	s->n = 0;
	for (int i = 0; i < rounds; i++) {
		add(s, base, base, HM_OP_STORE, 101, 1000 * (uint64_t)(i + 1), "worker_stats.ops",
		    HM_SRC_TIMER, 0);
		add(s, base + errors_off, base, HM_OP_STORE, 102, 1000 * (uint64_t)(i + 1) + 500,
		    "worker_stats.errors", HM_SRC_TIMER, 0);
	}
	for (int i = 0; i < extra; i++)
		add(s, 0, 0, HM_OP_UNKNOWN, 101, 1000 * (uint64_t)(rounds + 1) + (uint64_t)i, NULL,
		    HM_SRC_TIMER, 0);
}

static double val(const struct hm_cmp_run *r, const char *name)
{
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->v[i].name, name))
			return r->v[i].v;
	fail_msg("run has no metric '%s'", name);
	return NAN;
}

static int has(const struct hm_cmp_run *r, const char *name)
{
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->v[i].name, name))
			return 1;
	return 0;
}

static void near(double got, double want, double tol)
{
	if (!(fabs(got - want) <= tol))
		fail_msg("got %.17g, want %.17g", got, want);
}

static void test_field_counts_per_1k_samples(void **state)
{
	struct set *s = calloc(1, sizeof(*s));
	struct hm_arena a;
	struct hm_cmp_run r;
	struct hm_err err;

	(void)state;
	hm_arena_init(&a);
	hm_cmp_run_init(&r, "a1.data");
	workload(s, 0x7f0000001000ull, 8, 100, 50);	/* 250 samples */
	assert_int_equal(hm_cmp_extract(&a, s->acc, s->n, L, &r, &err), 0);
	near(val(&r, "samples"), 250, 0);
	near(val(&r, "worker_stats.ops samples"), 100 * 1000.0 / 250, 1e-9);
	near(val(&r, "worker_stats.ops stores"), 400, 1e-9);
	near(val(&r, "worker_stats.ops loads"), 0, 0);
	assert_true(val(&r, "worker_stats.ops conflicts") > 0);
	near(val(&r, "worker_stats (type) lines touched"), 1, 0);
	assert_true(val(&r, "worker_stats (type) conflicts") > 0);
	near(val(&r, "elapsed seconds"), (101049 - 1000) / 1e9, 1e-15);
	assert_int_equal(r.source, HM_SRC_TIMER);
	hm_cmp_run_free(&r);
	hm_arena_free(&a);
	free(s);
}

/* A: false sharing at one address; B: padded, at another address and offset. The same
 * names meet in one metric; conflicts vanish in B. */
static void test_fields_matched_by_name_across_addresses(void **state)
{
	struct set *s = calloc(1, sizeof(*s));
	struct hm_arena a;
	struct hm_cmp_run ra[3], rb[3];
	struct hm_cmp c;
	struct hm_err err;
	const struct hm_cmp_metric *m;

	(void)state;
	hm_arena_init(&a);
	for (int i = 0; i < 3; i++) {
		hm_cmp_run_init(&ra[i], "a.data");
		workload(s, 0x555555558040ull, 8, 100 + 7 * i, 40 + 3 * i);
		assert_int_equal(hm_cmp_extract(&a, s->acc, s->n, L, &ra[i], &err), 0);
		hm_cmp_run_init(&rb[i], "b.data");
		workload(s, 0x5555deadb000ull, 64, 100 + 5 * i, 40 + 2 * i);
		assert_int_equal(hm_cmp_extract(&a, s->acc, s->n, L, &rb[i], &err), 0);
	}
	assert_int_equal(hm_cmp_build(&a, ra, 3, rb, 3, &c), 0);
	m = hm_cmp_find(&c, "worker_stats.ops conflicts");
	assert_non_null(m);
	assert_int_equal(m->seen_a, 3);
	assert_int_equal(m->seen_b, 3);
	assert_null(hm_cmp_presence(m));
	assert_true(m->c.a.mean > 0);
	near(m->c.b.mean, 0, 0);
	near(m->c.change_pct, -100, 1e-9);
	assert_true(m->c.t.ok && m->c.t.p < 0.05);
	assert_true(m->c.significant);
	m = hm_cmp_find(&c, "worker_stats (type) lines touched");
	near(m->c.a.mean, 1, 0);
	near(m->c.b.mean, 2, 0);
	assert_true(m->c.significant);
	m = hm_cmp_find(&c, "worker_stats.errors samples");
	assert_int_equal(m->seen_a + m->seen_b, 6);
	/* significant rows lead */
	assert_true(c.m[0].c.significant);
	for (size_t i = 1; i < c.nr; i++)
		assert_true(c.m[i - 1].c.significant >= c.m[i].c.significant);
	for (int i = 0; i < 3; i++) {
		hm_cmp_run_free(&ra[i]);
		hm_cmp_run_free(&rb[i]);
	}
	hm_arena_free(&a);
	free(s);
}

/* A field renamed in B is measured on one side only: reported, not dropped. */
static void test_field_on_one_side_only_is_reported(void **state)
{
	struct set *s = calloc(1, sizeof(*s));
	struct hm_arena a;
	struct hm_cmp_run ra[2], rb[2];
	struct hm_cmp c;
	struct hm_err err;
	const struct hm_cmp_metric *m;

	(void)state;
	hm_arena_init(&a);
	for (int i = 0; i < 2; i++) {
		hm_cmp_run_init(&ra[i], "a.data");
		s->n = 0;
		for (int k = 0; k < 50 + i; k++)
			add(s, 0x1000, 0x1000, HM_OP_LOAD, 7, (uint64_t)k * 1000, "cfg.old_limit",
			    HM_SRC_TIMER, 0);
		assert_int_equal(hm_cmp_extract(&a, s->acc, s->n, L, &ra[i], &err), 0);
		hm_cmp_run_init(&rb[i], "b.data");
		s->n = 0;
		for (int k = 0; k < 50 + i; k++)
			add(s, 0x2000, 0x2000, HM_OP_LOAD, 7, (uint64_t)k * 1000, "cfg.limit",
			    HM_SRC_TIMER, 0);
		assert_int_equal(hm_cmp_extract(&a, s->acc, s->n, L, &rb[i], &err), 0);
	}
	hm_cmp_build(&a, ra, 2, rb, 2, &c);
	m = hm_cmp_find(&c, "cfg.old_limit samples");
	assert_non_null(m);
	assert_string_equal(hm_cmp_presence(m), "only A");
	near(m->c.b.mean, 0, 0);	/* counted as 0 in B's runs */
	assert_int_equal(m->c.b.n, 2);
	m = hm_cmp_find(&c, "cfg.limit samples");
	assert_string_equal(hm_cmp_presence(m), "only B");
	assert_true(isnan(m->c.change_pct));	/* from nothing: unbounded */
	for (int i = 0; i < 2; i++) {
		hm_cmp_run_free(&ra[i]);
		hm_cmp_run_free(&rb[i]);
	}
	hm_arena_free(&a);
	free(s);
}

/* One stray sample per run is never a significant change, however steady. */
static void test_rare_fields_never_significant(void **state)
{
	struct set *s = calloc(1, sizeof(*s));
	struct hm_arena a;
	struct hm_cmp_run ra[3], rb[3];
	struct hm_cmp c;
	struct hm_err err;
	const struct hm_cmp_metric *m;

	(void)state;
	hm_arena_init(&a);
	for (int i = 0; i < 3; i++) {
		hm_cmp_run_init(&ra[i], "a.data");
		workload(s, 0x1000, 64, 100, 0);
		assert_int_equal(hm_cmp_extract(&a, s->acc, s->n, L, &ra[i], &err), 0);
		hm_cmp_run_init(&rb[i], "b.data");
		workload(s, 0x1000, 64, 100, 0);
		add(s, 0x9000, 0x9000, HM_OP_LOAD, 101, 5, "Elf64_Sym.st_info", HM_SRC_TIMER, 0);
		assert_int_equal(hm_cmp_extract(&a, s->acc, s->n, L, &rb[i], &err), 0);
	}
	hm_cmp_build(&a, ra, 3, rb, 3, &c);
	m = hm_cmp_find(&c, "Elf64_Sym.st_info samples");
	assert_true(m->c.t.p < 0.05);	/* 0,0,0 against 1,1,1: p says yes... */
	assert_true(m->rare);
	assert_false(m->c.significant);	/* ...the event floor says no */
	for (size_t i = 1; i < c.nr; i++)	/* rare rows sort last */
		assert_false(c.m[i - 1].rare && !c.m[i].rare);
	for (int i = 0; i < 3; i++) {
		hm_cmp_run_free(&ra[i]);
		hm_cmp_run_free(&rb[i]);
	}
	hm_arena_free(&a);
	free(s);
}

static void test_pmu_load_latency_mean(void **state)
{
	struct set *s = calloc(1, sizeof(*s));
	struct hm_arena a;
	struct hm_cmp_run r;
	struct hm_err err;

	(void)state;
	hm_arena_init(&a);
	hm_cmp_run_init(&r, "pmu.data");
	add(s, 0x1000, 0x1000, HM_OP_LOAD, 1, 10, "node.next", HM_SRC_PMU, 100);
	add(s, 0x1000, 0x1000, HM_OP_LOAD, 1, 20, "node.next", HM_SRC_PMU, 300);
	add(s, 0x1000, 0x1000, HM_OP_LOAD, 1, 30, "node.next", HM_SRC_PMU, 0);	/* untimed */
	add(s, 0x1000, 0x1000, HM_OP_STORE, 2, 40, "node.next", HM_SRC_PMU, 0);
	assert_int_equal(hm_cmp_extract(&a, s->acc, s->n, L, &r, &err), 0);
	near(val(&r, "node.next load latency"), 200, 0);
	assert_true(has(&r, "node.next HITM"));
	assert_false(has(&r, "node.next conflicts"));
	hm_cmp_run_free(&r);
	hm_arena_free(&a);
	free(s);
}

static void test_user_metrics_syntax(void **state)
{
	struct hm_arena a;
	struct hm_cmp_run r;
	struct hm_err err;

	(void)state;
	hm_arena_init(&a);
	hm_cmp_run_init(&r, "a1.data");
	assert_int_equal(hm_cmp_user_parse(&a, &r, "throughput=1234.5,p99_us=87", &err), 0);
	near(val(&r, "throughput"), 1234.5, 0);
	near(val(&r, "p99_us"), 87, 0);
	assert_int_equal(hm_cmp_user_parse(&a, &r, "throughput", &err), -1);
	assert_int_equal(err.code, HM_EXIT_USAGE);
	assert_non_null(strstr(err.msg, "NAME=VALUE"));
	assert_int_equal(hm_cmp_user_parse(&a, &r, "x=12abc", &err), -1);
	assert_int_equal(hm_cmp_user_parse(&a, &r, "=5", &err), -1);
	hm_cmp_run_free(&r);
	hm_arena_free(&a);
}

static void test_user_metrics_file(void **state)
{
	char path[] = "/tmp/hm_cmp_metricsXXXXXX";
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");
	struct hm_arena a;
	struct hm_cmp_run r;
	struct hm_err err;

	(void)state;
	assert_non_null(f);
	fprintf(f, "# from the benchmark's log\nthroughput 1200.5\n\n  latency_us   41 # p50\n");
	fclose(f);
	hm_arena_init(&a);
	hm_cmp_run_init(&r, "a1.data");
	assert_int_equal(hm_cmp_user_file(&a, &r, path, &err), 0);
	near(val(&r, "throughput"), 1200.5, 0);
	near(val(&r, "latency_us"), 41, 0);
	assert_int_equal(hm_cmp_user_file(&a, &r, "/nonexistent/a1.data.metrics", &err), 1);
	f = fopen(path, "w");
	fprintf(f, "throughput fast\n");
	fclose(f);
	assert_int_equal(hm_cmp_user_file(&a, &r, path, &err), -1);
	assert_non_null(strstr(err.msg, ":1:"));
	unlink(path);
	hm_cmp_run_free(&r);
	hm_arena_free(&a);
}

/* A user metric missing from a run leaves that run out; counts missing are 0. */
static void test_user_metric_missing_in_a_run_is_left_out(void **state)
{
	struct hm_arena a;
	struct hm_cmp_run ra[3], rb[2];
	struct hm_cmp c;
	const struct hm_cmp_metric *m;

	(void)state;
	hm_arena_init(&a);
	for (int i = 0; i < 3; i++)
		hm_cmp_run_init(&ra[i], "a.data");
	for (int i = 0; i < 2; i++)
		hm_cmp_run_init(&rb[i], "b.data");
	hm_cmp_user_set(&a, &ra[0], "throughput", 100);
	hm_cmp_user_set(&a, &ra[2], "throughput", 110);
	hm_cmp_user_set(&a, &rb[0], "throughput", 80);
	hm_cmp_user_set(&a, &rb[1], "throughput", 82);
	hm_cmp_build(&a, ra, 3, rb, 2, &c);
	m = hm_cmp_find(&c, "throughput");
	assert_int_equal(m->c.a.n, 2);
	near(m->c.a.mean, 105, 1e-12);
	assert_true(isnan(m->a[1]));
	near(m->c.change_pct, (81 - 105) / 105.0 * 100, 1e-9);
	for (int i = 0; i < 3; i++)
		hm_cmp_run_free(&ra[i]);
	for (int i = 0; i < 2; i++)
		hm_cmp_run_free(&rb[i]);
	hm_arena_free(&a);
}

static void test_one_run_per_side_has_means_no_p(void **state)
{
	struct hm_arena a;
	struct hm_cmp_run ra, rb;
	struct hm_cmp c;
	const struct hm_cmp_metric *m;

	(void)state;
	hm_arena_init(&a);
	hm_cmp_run_init(&ra, "a.data");
	hm_cmp_run_init(&rb, "b.data");
	hm_cmp_user_set(&a, &ra, "throughput", 100);
	hm_cmp_user_set(&a, &rb, "throughput", 50);
	hm_cmp_build(&a, &ra, 1, &rb, 1, &c);
	m = hm_cmp_find(&c, "throughput");
	near(m->c.change_pct, -50, 1e-12);
	assert_false(m->c.t.ok);
	assert_true(isnan(m->c.t.p));
	assert_false(m->c.significant);
	hm_cmp_run_free(&ra);
	hm_cmp_run_free(&rb);
	hm_arena_free(&a);
}

static struct hm_cmp_ident ident(const char *exe, uint8_t id0)
{
	static char hexes[4][8];
	static int k;
	struct hm_cmp_ident x = {.exe = exe, .build_id_size = 20};

	x.build_id[0] = id0;
	snprintf(hexes[k & 3], sizeof(hexes[0]), "%02x00", id0);
	x.build_id_hex = hexes[k++ & 3];
	return x;
}

/* A kernel run with modules (name, first build-id byte), as the BUILD_ID table gives. */
static struct hm_cmp_ident kernel_run(struct hm_cmp_mod *mods, size_t n)
{
	static const uint8_t kid[20] = {0x01, 0xd2, 0x64};
	struct hm_cmp_ident x = {.kind = HM_CMP_BUILD_KERNEL, .kernel_release = "6.1.0-57",
				 .kernel_build_id_size = 20, .kernel_build_id_hex = "01d264",
				 .mods = mods, .nr_mods = n};

	memcpy(x.kernel_build_id, kid, 20);
	return x;
}

/* One kernel, two builds of xfs.ko (the lab's xfs_imap case): not the same build, labelled
 * by the module that differs, which is found by build-id; a module only one side has, or
 * the same module build on both, changes nothing. */
static void test_kernel_runs_differ_by_a_module(void **state)
{
	struct hm_cmp_mod stock[2] = {{"/lib/modules/6.1.0-57/kernel/fs/xfs/xfs.ko", "xfs.ko",
				       {0xda, 0xaa}, 20, "daaa00"},
				      {"/lib/modules/6.1.0-57/kernel/drivers/block/loop.ko",
				       "loop.ko", {0x35}, 20, "3500"}};
	struct hm_cmp_mod pad[1] = {{"/lib/modules/6.1.0-57/kernel/fs/xfs/xfs.ko", "xfs.ko",
				     {0x58, 0x89}, 20, "588900"}};
	struct hm_cmp_mod loop_only[1] = {stock[1]};
	struct hm_cmp_ident a[1] = {kernel_run(stock, 2)}, b[1] = {kernel_run(pad, 1)};
	struct hm_cmp_ident c = kernel_run(loop_only, 1), d = kernel_run(NULL, 0);
	const struct hm_cmp_mod *ym = NULL;
	struct hm_arena ar;

	(void)state;
	hm_arena_init(&ar);
	assert_false(hm_cmp_same_build(&a[0], &b[0]));
	assert_ptr_equal(hm_cmp_changed_module(&a[0], &b[0], &ym), &stock[0]);
	assert_ptr_equal(ym, &pad[0]);
	assert_true(hm_cmp_same_build(&a[0], &c));	/* loop.ko: the same build */
	assert_true(hm_cmp_same_build(&b[0], &c));	/* no module in common */
	assert_true(hm_cmp_same_build(&a[0], &d));
	hm_cmp_label_modules(&ar, a, 1, b, 1);
	assert_string_equal(hm_cmp_build_label(&ar, &a[0]),
			    "kernel 6.1.0-57 (build-id 01d264) with xfs.ko (build-id daaa00)");
	assert_string_equal(hm_cmp_build_label(&ar, &b[0]),
			    "kernel 6.1.0-57 (build-id 01d264) with xfs.ko (build-id 588900)");
	assert_null(hm_cmp_find_module(&ar, &pad[0], "/nonexistent", NULL));
	/* Between two kernels every module differs: the label is the kernel's alone. */
	b[0].kernel_build_id[0] = 0x4f;
	b[0].kernel_build_id_hex = "4f61d8";
	b[0].kernel_release = "6.1.0-47";
	a[0].mods_label = b[0].mods_label = NULL;
	hm_cmp_label_modules(&ar, a, 1, b, 1);
	assert_false(hm_cmp_same_build(&a[0], &b[0]));
	assert_string_equal(hm_cmp_build_label(&ar, &b[0]), "kernel 6.1.0-47 (build-id 4f61d8)");
	hm_arena_free(&ar);
}

static void test_side_must_be_one_build_of_one_program(void **state)
{
	const char *paths[] = {"A1.data", "A2.data"};
	struct hm_cmp_ident same[2] = {ident("/bin/fs", 1), ident("/copy/of/fs2", 1)};
	struct hm_cmp_ident rebuilt[2] = {ident("/bin/fs", 1), ident("/bin/fs", 2)};
	struct hm_cmp_ident other[2] = {ident("/bin/fs", 1), ident("/bin/true_sharing", 3)};
	struct hm_err err;

	(void)state;
	assert_int_equal(hm_cmp_check_side("A", paths, same, 2, &err), 0);
	assert_int_equal(hm_cmp_check_side("A", paths, rebuilt, 2, &err), -1);
	assert_int_equal(err.code, HM_EXIT_INPUT);
	assert_non_null(strstr(err.msg, "A2.data was recorded from another build of fs"));
	assert_non_null(strstr(err.msg, "compare runs of one build per side"));
	assert_int_equal(hm_cmp_check_side("A", paths, other, 2, &err), -1);
	assert_non_null(strstr(err.msg, "different workloads"));
	assert_null(strchr(err.msg, '\n'));
	/* A kernel run beside one that spans program and kernel: each kind said as itself. */
	other[1] = ident("/bin/fs", 1);
	other[0].kind = HM_CMP_BUILD_KERNEL;
	other[1].kind = HM_CMP_BUILD_BOTH;
	other[1].kernel_samples = 80;
	other[1].samples = 100;
	assert_int_equal(hm_cmp_check_side("A", paths, other, 2, &err), -1);
	assert_non_null(strstr(err.msg, "A2.data measures the program and the kernel (80 of 100 "
				       "samples in the kernel) but A1.data measures the kernel"));
}

static void test_identify_refuses_what_is_not_a_recording(void **state)
{
	struct hm_arena a;
	struct hm_cmp_ident id;
	struct hm_err err;

	(void)state;
	hm_arena_init(&a);
	assert_int_equal(hm_cmp_identify(&a, "-", &id, &err), -1);
	assert_int_equal(hm_cmp_identify(&a, "/nonexistent.data", &id, &err), -1);
	assert_non_null(strstr(err.msg, "/nonexistent.data"));
	hm_arena_free(&a);
}

/* The layout side on the padding pair: B moved errors and bytes off ops's line. */
static void test_layout_side_names_moved_hot_fields(void **state)
{
	struct set *s = calloc(1, sizeof(*s));
	struct hm_arena a;
	struct hm_cmp_run ra[2], rb[2];
	struct hm_cmp c;
	struct hm_cmp_layout out;
	struct hm_layout *la, *lb;
	struct hm_err err;
	int saw_ops = 0;

	(void)state;
	if (hm_layout_open("examples/bin/false_sharing", &la, &err) ||
	    hm_layout_open("examples/bin/false_sharing_padded", &lb, &err)) {
		free(s);
		fail_msg("examples not built (make examples): %s", err.msg);
	}
	hm_arena_init(&a);
	for (int i = 0; i < 2; i++) {
		hm_cmp_run_init(&ra[i], "a.data");
		workload(s, 0x1000, 8, 100 + i, 10);
		hm_cmp_extract(&a, s->acc, s->n, L, &ra[i], &err);
		hm_cmp_run_init(&rb[i], "b.data");
		workload(s, 0x1000, 64, 100 + i, 10);
		for (int k = 0; k < 40; k++)
			add(s, 0x5000, 0x5000, HM_OP_LOAD, 7, 1, "libc_type.x", HM_SRC_TIMER, 0);
		hm_cmp_extract(&a, s->acc, s->n, L, &rb[i], &err);
	}
	hm_cmp_build(&a, ra, 2, rb, 2, &c);
	assert_int_equal(hm_cmp_layout(&a, &c, la, lb, L, 0, &out, &err), 0);
	hm_layout_close(la);
	hm_layout_close(lb);
	assert_true(out.nr >= 2);
	for (size_t i = 0; i < out.nr; i++) {
		const struct hm_cmp_hot *h = &out.hot[i];

		assert_int_equal(h->status, HM_CMP_CHANGED);
		assert_true(h->nr_f > 0);
		if (!strcmp(h->field, "worker_stats.errors"))
			assert_true(h->f[0]->kind == HM_F_LINE && h->f[0]->new_line == 1);
		saw_ops |= !strcmp(h->field, "worker_stats.ops");
		if (i)	/* by how much contention moved */
			assert_true(fabs(h->b - h->a) <= fabs(h[-1].b - h[-1].a));
		assert_string_equal(h->measure, "conflicts");
	}
	assert_true(saw_ops);
	assert_true(out.hot[0].a > 0 && out.hot[0].b == 0);
	assert_int_equal(out.nr_elsewhere, 1);
	assert_string_equal(out.elsewhere[0], "libc_type");
	assert_non_null(strstr(out.a_path, "false_sharing"));
	for (int i = 0; i < 2; i++) {
		hm_cmp_run_free(&ra[i]);
		hm_cmp_run_free(&rb[i]);
	}
	hm_arena_free(&a);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_field_counts_per_1k_samples),
		cmocka_unit_test(test_fields_matched_by_name_across_addresses),
		cmocka_unit_test(test_field_on_one_side_only_is_reported),
		cmocka_unit_test(test_rare_fields_never_significant),
		cmocka_unit_test(test_pmu_load_latency_mean),
		cmocka_unit_test(test_user_metrics_syntax),
		cmocka_unit_test(test_user_metrics_file),
		cmocka_unit_test(test_user_metric_missing_in_a_run_is_left_out),
		cmocka_unit_test(test_one_run_per_side_has_means_no_p),
		cmocka_unit_test(test_side_must_be_one_build_of_one_program),
		cmocka_unit_test(test_identify_refuses_what_is_not_a_recording),
		cmocka_unit_test(test_kernel_runs_differ_by_a_module),
		cmocka_unit_test(test_layout_side_names_moved_hot_fields),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
