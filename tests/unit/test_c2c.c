/* analyzer/c2c.c: DATA_SRC decoded into perf c2c's categories, on crafted values and on
 * the real PMU recordings in shared/data/perf, against the "Trace Event Information" of
 * `perf c2c report --stdio` stored beside each (parsed here, at test time). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "analyzer/c2c.h"
#include "analyzer/lines.h"
#include "core/perfdata.h"

#define DS(a, s) PERF_MEM_S(a, s)
#define LOAD DS(OP, LOAD)
#define STORE DS(OP, STORE)

static struct hm_c2c_stats one(uint64_t ds, uint64_t addr, int mapped, int *kept)
{
	struct hm_c2c_stats st;

	memset(&st, 0, sizeof(st));
	*kept = hm_c2c_count(&st, ds, addr, mapped);
	return st;
}

static void test_c2c_l3_hitm_is_local_hitm_not_llc_hit(void **state)
{
	int kept;
	struct hm_c2c_stats st = one(LOAD | DS(LVL, HIT) | DS(LVL, L3) | DS(SNOOP, HITM), 0x1000, 1,
				     &kept);

	(void)state;
	assert_int_equal(kept, 1);
	assert_int_equal(st.records, 1);
	assert_int_equal(st.loads, 1);
	assert_int_equal(st.hitm_local, 1);
	assert_int_equal(st.ld_llc, 0);
	assert_int_equal(hm_c2c_hitm(&st), 1);
	assert_int_equal(hm_c2c_level(LOAD | DS(LVL, HIT) | DS(LVL, L3) | DS(SNOOP, HITM)),
			 HM_LVL_HITM_LOCAL);
	assert_int_equal(hm_c2c_level(LOAD | DS(LVL, HIT) | DS(LVL, L3) | DS(SNOOP, HIT)),
			 HM_LVL_LLC);
}

static void test_c2c_remote_cache_hitm_counts_without_hit_bit(void **state)
{
	int kept;
	uint64_t ds = LOAD | DS(LVL, MISS) | DS(LVL, REM_CCE1) | DS(SNOOP, HITM);
	struct hm_c2c_stats st = one(ds, 0x1000, 1, &kept);

	(void)state;
	assert_int_equal(st.hitm_remote, 1);
	assert_int_equal(st.ld_miss, 1);
	assert_int_equal(st.dram_remote, 0);
	assert_int_equal(hm_c2c_llc_misses(&st), 1);
	assert_int_equal(hm_c2c_level(ds), HM_LVL_HITM_REMOTE);
	assert_true(hm_c2c_is_hitm(ds));
}

/* Skylake's remote bit without a hop count stands for both remote DRAM and remote cache;
 * with a hop count (POWER: another core of this node) it is not remote. */
static void test_c2c_remote_bit_without_hops_is_remote(void **state)
{
	int kept;
	uint64_t ds = LOAD | DS(LVL, HIT) | DS(REMOTE, REMOTE) | DS(SNOOP, HIT);
	struct hm_c2c_stats st = one(ds, 0x1000, 1, &kept);

	(void)state;
	assert_int_equal(st.dram_remote, 1);
	assert_int_equal(st.mesi_shared, 1);
	assert_int_equal(st.hit_remote, 1);
	st = one(ds | DS(HOPS, 0), 0x1000, 1, &kept);
	assert_int_equal(st.dram_remote, 0);
	assert_int_equal(st.hit_remote, 0);
}

static void test_c2c_peer_snoops_local_and_remote(void **state)
{
	int kept;
	struct hm_c2c_stats st = one(LOAD | DS(LVL, HIT) | DS(LVL, L2) | DS(SNOOPX, PEER), 0x10,
				     1, &kept);

	(void)state;
	assert_int_equal(st.ld_l2, 1);
	assert_int_equal(st.peer_local, 1);
	st = one(LOAD | DS(LVL, REM_CCE2) | DS(SNOOPX, PEER), 0x10, 1, &kept);
	assert_int_equal(st.peer_remote, 1);
	assert_int_equal(st.hit_remote, 1);
	assert_int_equal(hm_c2c_peer(&st), 1);
}

static void test_c2c_stores_l1_hit_miss_and_na(void **state)
{
	int kept;
	struct hm_c2c_stats st;

	(void)state;
	st = one(STORE | DS(LVL, HIT) | DS(LVL, L1), 0x10, 1, &kept);
	assert_int_equal(st.stores, 1);
	assert_int_equal(st.st_l1hit, 1);
	st = one(STORE | DS(LVL, MISS) | DS(LVL, L1), 0x10, 1, &kept);
	assert_int_equal(st.st_l1miss, 1);
	st = one(STORE | DS(LVL, NA), 0x10, 1, &kept);
	assert_int_equal(st.st_na, 1);
	assert_true(hm_c2c_is_store(STORE));
	assert_false(hm_c2c_is_store(STORE | LOAD));	/* load wins, as in perf */
}

static void test_c2c_no_address_stops_before_levels_and_map(void **state)
{
	int kept;
	struct hm_c2c_stats st = one(LOAD | DS(LVL, HIT) | DS(LVL, L1) | DS(LOCK, LOCKED), 0, 0,
				     &kept);

	(void)state;
	assert_int_equal(kept, 0);
	assert_int_equal(st.loads, 1);
	assert_int_equal(st.ld_noaddr, 1);
	assert_int_equal(st.locked, 1);
	assert_int_equal(st.ld_l1, 0);
	assert_int_equal(st.nomap, 0);
	st = one(STORE, 0, 1, &kept);
	assert_int_equal(st.st_noaddr, 1);
}

static void test_c2c_unmapped_and_unparsable(void **state)
{
	int kept;
	struct hm_c2c_stats st = one(LOAD | DS(LVL, HIT) | DS(LVL, L1), 0x10, 0, &kept);
	struct hm_access acc;

	(void)state;
	assert_int_equal(kept, 0);
	assert_int_equal(st.ld_l1, 1);		/* levels count before the map check */
	assert_int_equal(st.nomap, 1);
	st = one(DS(OP, NA), 0x10, 1, &kept);
	assert_int_equal(st.noparse, 1);
	assert_int_equal(st.records, 1);

	memset(&acc, 0, sizeof(acc));
	memset(&st, 0, sizeof(st));
	acc.s.addr = 0x10;
	acc.s.data_src = LOAD | DS(LVL, HIT) | DS(LVL, L1);
	acc.mapped = 0;
	assert_int_equal(hm_c2c_add_access(&st, &acc), 0);
	acc.mapped = 1;
	assert_int_equal(hm_c2c_add_access(&st, &acc), 1);
	assert_int_equal(st.nomap, 1);
	assert_int_equal(st.ld_l1, 2);
}

/* --- perf's own output on real recordings --- */

struct map {
	uint32_t pid;			/* UINT32_MAX: kernel */
	uint64_t start, end;
};

struct fixture {
	struct map *maps;
	size_t nr_maps, cap_maps;
	uint32_t (*forks)[2];		/* child, parent */
	size_t nr_forks, cap_forks;
	struct hm_access *acc;
	uint16_t *mode;			/* cpumode of each access */
	size_t nr, cap;
};

#define PUSH(arr, nr, cap)                                                              \
	do {                                                                            \
		if ((nr) == (cap)) {                                                    \
			(cap) = (cap) ? 2 * (cap) : 64;                                 \
			(arr) = realloc((arr), (cap) * sizeof(*(arr)));                 \
			assert_non_null(arr);                                           \
		}                                                                       \
	} while (0)

static int in_maps(const struct fixture *fx, uint32_t pid, uint64_t addr)
{
	for (int depth = 0; depth < 64; depth++) {
		uint32_t parent = pid;

		for (size_t i = 0; i < fx->nr_maps; i++)
			if (fx->maps[i].pid == pid && addr >= fx->maps[i].start &&
			    addr < fx->maps[i].end)
				return 1;
		for (size_t i = 0; i < fx->nr_forks; i++)
			if (fx->forks[i][0] == pid)
				parent = fx->forks[i][1];
		if (parent == pid)
			return 0;
		pid = parent;	/* a forked child starts with its parent's maps */
	}
	return 0;
}

/* perf's rule for "No Page Map Rejects": the data address must lie in a map of the
 * sample's cpumode (kernel maps for kernel samples, the process's maps for user ones) and
 * the ip in any map. Maps are taken from the whole file (perf sorts by time; the
 * synthesized maps come first). */
static int perf_mapped(const struct fixture *fx, const struct hm_access *x, uint16_t mode)
{
	int data, ip;

	if (mode == PERF_RECORD_MISC_KERNEL)
		data = in_maps(fx, UINT32_MAX, x->s.addr);
	else if (mode == PERF_RECORD_MISC_USER)
		data = in_maps(fx, x->s.pid, x->s.addr);
	else
		data = 0;
	ip = in_maps(fx, UINT32_MAX, x->s.ip) || in_maps(fx, x->s.pid, x->s.ip);
	return data && ip;
}

static void fixture_read(const char *path, struct fixture *fx)
{
	struct hm_perfdata *pd;
	struct hm_perf_event ev;
	struct hm_err err;
	int r;

	memset(fx, 0, sizeof(*fx));
	if (hm_perfdata_open(path, &pd, &err))
		fail_msg("%s", err.msg);
	while ((r = hm_perfdata_next(pd, &ev, &err)) > 0) {
		if (ev.type == PERF_RECORD_SAMPLE) {
			PUSH(fx->acc, fx->nr, fx->cap);
			fx->mode = realloc(fx->mode, fx->cap * sizeof(*fx->mode));
			assert_non_null(fx->mode);
			memset(&fx->acc[fx->nr], 0, sizeof(fx->acc[0]));
			hm_perfdata_to_sample(&ev, HM_SRC_PMU, &fx->acc[fx->nr].s);
			fx->mode[fx->nr++] = ev.misc & PERF_RECORD_MISC_CPUMODE_MASK;
		} else if (ev.type == PERF_RECORD_MMAP || ev.type == PERF_RECORD_MMAP2) {
			PUSH(fx->maps, fx->nr_maps, fx->cap_maps);
			fx->maps[fx->nr_maps++] = (struct map){
				(ev.misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL
					? UINT32_MAX
					: ev.mmap.pid,
				ev.mmap.start, ev.mmap.start + ev.mmap.len };
		} else if (ev.type == PERF_RECORD_FORK && ev.task.pid != ev.task.ppid) {
			PUSH(fx->forks, fx->nr_forks, fx->cap_forks);
			fx->forks[fx->nr_forks][0] = ev.task.pid;
			fx->forks[fx->nr_forks++][1] = ev.task.ppid;
		}
	}
	if (r < 0)
		fail_msg("%s", err.msg);
	hm_perfdata_close(pd);
	/* What a symbolizer following perf's rule would say: named, or not. */
	for (size_t i = 0; i < fx->nr; i++)
		fx->acc[i].mapped = (uint8_t)perf_mapped(fx, &fx->acc[i], fx->mode[i]);
}

static void fixture_free(struct fixture *fx)
{
	free(fx->maps);
	free(fx->forks);
	free(fx->acc);
	free(fx->mode);
}

static const struct hm_c2c_row *row_by_label(const char *label)
{
	for (unsigned i = 0; i < hm_c2c_nr_rows; i++)
		if (strcmp(hm_c2c_rows[i].label, label) == 0)
			return &hm_c2c_rows[i];
	return NULL;
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\n' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = 0;
	return s;
}

/* Compares one "  Label : value" row; returns 1 when equal, printing what differs. */
static int compare_row(const char *file, const struct hm_c2c_stats *st, const char *label,
		       const char *value)
{
	const struct hm_c2c_row *r = row_by_label(label);
	char *end;

	if (!r) {
		printf("%s: perf row \"%s\" is not decoded by hitmap\n", file, label);
		return 0;
	}
	if (r->kind == HM_C2C_PCT_OF_MISSES) {
		double want = strtod(value, &end), got = hm_c2c_row_pct(st, r);

		if (end == value || *end != '%') {
			printf("%s: \"%s\": unreadable percentage \"%s\"\n", file, label, value);
			return 0;
		}
		if ((isnan(want) && isnan(got)) || fabs(want - got) < 0.051)
			return 1;
		printf("%s: \"%s\": perf %s, hitmap %.1f%%\n", file, label, value, got);
		return 0;
	}
	{
		unsigned long long want = strtoull(value, &end, 10);
		uint64_t got = hm_c2c_row_count(st, r);

		if (end == value || *end) {
			printf("%s: \"%s\": unreadable count \"%s\"\n", file, label, value);
			return 0;
		}
		if (want == got)
			return 1;
		printf("%s: \"%s\": perf %llu, hitmap %llu\n", file, label, want,
		       (unsigned long long)got);
		return 0;
	}
}

/* Returns the number of rows compared, or -1 after printing mismatches. */
static int compare_c2c_txt(const char *txt, const struct hm_c2c_stats *st)
{
	FILE *f = fopen(txt, "r");
	char buf[512];
	int in_table = 0, rows = 0, bad = 0;

	if (!f)
		fail_msg("%s: cannot open", txt);
	while (fgets(buf, sizeof(buf), f)) {
		char *colon, *label;

		if (strstr(buf, "Trace Event Information")) {
			in_table = 1;
			continue;
		}
		if (!in_table || buf[0] == '=')
			continue;
		colon = strchr(buf, ':');
		if (!colon) {
			if (rows)
				break;	/* the blank line that ends the table */
			continue;
		}
		*colon = 0;
		label = trim(buf);
		bad += !compare_row(txt, st, label, trim(colon + 1));
		rows++;
	}
	fclose(f);
	if (rows && !bad)
		return rows;
	if (!rows)
		printf("%s: no Trace Event Information table\n", txt);
	return -1;
}

/* Per-line counts add up to the totals, less the samples that have no address. */
static void lines_consistent(const struct hm_lines *l, const struct hm_c2c_stats *all)
{
	struct hm_c2c_stats sum;
	uint64_t records = 0;

	memset(&sum, 0, sizeof(sum));
	for (size_t i = 0; i < l->nr; i++) {
		if (l->lines[i].c2c)
			hm_c2c_merge(&sum, l->lines[i].c2c);
		records += l->lines[i].records;
	}
	assert_int_equal(records, l->with_addr);
	assert_int_equal(sum.records, all->records - all->ld_noaddr - all->st_noaddr);
	assert_int_equal(sum.ld_l1 + sum.ld_lfb + sum.ld_l2 + sum.ld_llc + hm_c2c_hitm(&sum),
			 all->ld_l1 + all->ld_lfb + all->ld_l2 + all->ld_llc + hm_c2c_hitm(all));
	assert_int_equal(sum.stores, all->stores - all->st_noaddr);
}

static const char *shared_dir(void)
{
	static const char *const dirs[] = { "../shared", "/work/shared" };
	const char *env = getenv("HM_SHARED");
	struct stat st;

	if (env && stat(env, &st) == 0)
		return env;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (stat(dirs[i], &st) == 0)
			return dirs[i];
	return NULL;
}

static void test_c2c_matches_perf_on_real_recordings(void **state)
{
	const char *dir = shared_dir();
	char pattern[512];
	glob_t g;
	int bad = 0;

	(void)state;
	if (!dir)
		skip();
	snprintf(pattern, sizeof(pattern), "%s/data/perf/*.c2c.txt", dir);
	if (glob(pattern, 0, NULL, &g) != 0 || g.gl_pathc == 0)
		fail_msg("no fixtures match %s", pattern);
	assert_true(g.gl_pathc >= 8);
	for (size_t i = 0; i < g.gl_pathc; i++) {
		char data[512];
		struct fixture fx;
		struct hm_c2c_stats st;
		struct hm_lines lines;
		struct hm_arena a;
		struct hm_err err;
		int rows;

		snprintf(data, sizeof(data), "%.*s.data",
			 (int)(strlen(g.gl_pathv[i]) - strlen(".c2c.txt")), g.gl_pathv[i]);
		fixture_read(data, &fx);
		memset(&st, 0, sizeof(st));
		for (size_t j = 0; j < fx.nr; j++)
			hm_c2c_add_access(&st, &fx.acc[j]);
		/* The lines view's totals are what is compared with perf. */
		hm_arena_init(&a);
		assert_int_equal(hm_lines_build(&a, fx.acc, fx.nr, 64, 0, &lines, &err), 0);
		assert_memory_equal(&lines.c2c, &st, sizeof(st));
		assert_int_equal(lines.source, HM_SRC_PMU);
		lines_consistent(&lines, &st);
		rows = compare_c2c_txt(g.gl_pathv[i], &lines.c2c);
		hm_arena_free(&a);
		if (rows < 0)
			bad++;
		else
			printf("equal: %s (%d rows, %zu samples)\n", strrchr(data, '/') + 1, rows,
			       fx.nr);
		fixture_free(&fx);
	}
	globfree(&g);
	assert_int_equal(bad, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_c2c_l3_hitm_is_local_hitm_not_llc_hit),
		cmocka_unit_test(test_c2c_remote_cache_hitm_counts_without_hit_bit),
		cmocka_unit_test(test_c2c_remote_bit_without_hops_is_remote),
		cmocka_unit_test(test_c2c_peer_snoops_local_and_remote),
		cmocka_unit_test(test_c2c_stores_l1_hit_miss_and_na),
		cmocka_unit_test(test_c2c_no_address_stops_before_levels_and_map),
		cmocka_unit_test(test_c2c_unmapped_and_unparsable),
		cmocka_unit_test(test_c2c_matches_perf_on_real_recordings),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
