/* c2c_synth OUT: a SYNTHESIZED perf.data of PMU memory samples with HITM, for checking
 * `hitmap report --view c2c` against real `perf c2c report` on the same file
 * (tests/e2e/c2c_view.sh). This machine has no PMU, and none of the real Intel fixtures in
 * shared/data/perf has a HITM, a remote access, a DRAM load or a shared line: what the
 * c2c view's numbers are mostly about. The samples are not recorded; each is a load or
 * store with a hand-set data_src (union perf_mem_data_src, as Intel PEBS reports it),
 * address, CPU and weight. The events are those `hitmap record -c pmu -e c2c` opens on
 * an Ice Lake (collectors/pmu.c with LIBPFM_FORCE_PMU=icl: mem-loads with ldlat and
 * mem-stores, HM_PMU_SAMPLE_TYPE, so WEIGHT_STRUCT and IDENTIFIER), loads written to the
 * first and stores to the second, as the kernel would; the machine has 4 CPUs and one
 * node (the CPU and NUMA topology features perf c2c needs).
 *
 * Lines (64 bytes, pid 4242):
 *   0x601000  false sharing: tid 1 stores to +0x0 (L1 miss, some L1 hit, one locked),
 *             tids 2, 3 and 4 load +0x8 with local and remote HITM (weights differ;
 *             tids 3 and 4 at one code address, so that -c tid splits its row)
 *   0x601040  one remote HITM, below perf's 0.1% display limit beside 0x601000
 *   0x601080  loads only: L1, LFB, L2, LLC, local and remote DRAM, remote cache hit
 *   0x6010c0  stores only, with "no level" (N/A) and a peer (snoopx) load pair
 * Prints the number of samples written. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <stdlib.h>

#include "collectors/pmu.h"
#include "core/perfdata.h"

#define PID 4242
#define NR_CPUS 4

static uint64_t dsrc(uint64_t op, uint64_t lvl, uint64_t snoop, uint64_t lock, uint64_t snoopx)
{
	return op << PERF_MEM_OP_SHIFT | lvl << PERF_MEM_LVL_SHIFT |
	       snoop << PERF_MEM_SNOOP_SHIFT | lock << PERF_MEM_LOCK_SHIFT |
	       snoopx << PERF_MEM_SNOOPX_SHIFT;
}

#define LD PERF_MEM_OP_LOAD
#define ST PERF_MEM_OP_STORE
#define HIT PERF_MEM_LVL_HIT

struct spec {
	uint64_t addr, ip, data_src;
	uint32_t tid, cpu, weight, count;
};

static const struct spec *specs(size_t *n)
{
	static struct spec s[32];
	size_t i = 0;

	/* 0x601000: the writer */
	s[i++] = (struct spec){ 0x601000, 0x401100, dsrc(ST, PERF_MEM_LVL_MISS | PERF_MEM_LVL_L1,
		 PERF_MEM_SNOOP_NA, 0, 0), 1, 0, 0, 400 };
	s[i++] = (struct spec){ 0x601000, 0x401100, dsrc(ST, HIT | PERF_MEM_LVL_L1,
		 PERF_MEM_SNOOP_NA, 0, 0), 1, 0, 0, 100 };
	s[i++] = (struct spec){ 0x601000, 0x401120, dsrc(ST, HIT | PERF_MEM_LVL_L1,
		 PERF_MEM_SNOOP_NA, PERF_MEM_LOCK_LOCKED, 0), 1, 0, 0, 7 };
	/* readers: local HITM on CPU 1, remote HITM on CPUs 2 and 3 */
	s[i++] = (struct spec){ 0x601008, 0x401200, dsrc(LD, HIT | PERF_MEM_LVL_L3,
		 PERF_MEM_SNOOP_HITM, 0, 0), 2, 1, 180, 900 };
	s[i++] = (struct spec){ 0x601008, 0x401200, dsrc(LD, HIT | PERF_MEM_LVL_L3,
		 PERF_MEM_SNOOP_HITM, 0, 0), 2, 1, 221, 101 };
	s[i++] = (struct spec){ 0x601008, 0x401208, dsrc(LD, HIT | PERF_MEM_LVL_REM_CCE1,
		 PERF_MEM_SNOOP_HITM, 0, 0), 3, 2, 310, 250 };
	s[i++] = (struct spec){ 0x601008, 0x401208, dsrc(LD, HIT | PERF_MEM_LVL_REM_CCE1,
		 PERF_MEM_SNOOP_HITM, 0, 0), 4, 3, 333, 50 };
	s[i++] = (struct spec){ 0x601010, 0x401210, dsrc(LD, HIT | PERF_MEM_LVL_L1,
		 PERF_MEM_SNOOP_NONE, 0, 0), 2, 1, 7, 40 };
	/* 0x601040: 1 HITM of 1302, under 0.1% */
	s[i++] = (struct spec){ 0x601040, 0x401300, dsrc(LD, HIT | PERF_MEM_LVL_REM_CCE1,
		 PERF_MEM_SNOOP_HITM, 0, 0), 3, 2, 400, 1 };
	s[i++] = (struct spec){ 0x601040, 0x401310, dsrc(ST, HIT | PERF_MEM_LVL_L1,
		 PERF_MEM_SNOOP_NA, 0, 0), 1, 0, 0, 3 };
	/* 0x601080: every load level */
	s[i++] = (struct spec){ 0x601080, 0x401400, dsrc(LD, HIT | PERF_MEM_LVL_L1,
		 PERF_MEM_SNOOP_NONE, 0, 0), 2, 1, 5, 30 };
	s[i++] = (struct spec){ 0x601088, 0x401404, dsrc(LD, HIT | PERF_MEM_LVL_LFB,
		 PERF_MEM_SNOOP_NONE, 0, 0), 2, 1, 40, 6 };
	s[i++] = (struct spec){ 0x601090, 0x401408, dsrc(LD, HIT | PERF_MEM_LVL_L2,
		 PERF_MEM_SNOOP_NONE, 0, 0), 3, 2, 14, 5 };
	s[i++] = (struct spec){ 0x601098, 0x40140c, dsrc(LD, HIT | PERF_MEM_LVL_L3,
		 PERF_MEM_SNOOP_HIT, 0, 0), 3, 2, 60, 4 };
	s[i++] = (struct spec){ 0x6010a0, 0x401410, dsrc(LD, HIT | PERF_MEM_LVL_LOC_RAM,
		 PERF_MEM_SNOOP_MISS, 0, 0), 2, 3, 250, 3 };
	s[i++] = (struct spec){ 0x6010a8, 0x401414, dsrc(LD, HIT | PERF_MEM_LVL_REM_RAM1,
		 PERF_MEM_SNOOP_HIT, 0, 0), 2, 3, 420, 2 };
	s[i++] = (struct spec){ 0x6010b0, 0x401418, dsrc(LD, HIT | PERF_MEM_LVL_REM_CCE1,
		 PERF_MEM_SNOOP_HIT, 0, 0), 3, 1, 380, 2 };
	/* 0x6010c0: stores without a level, loads from a peer cache */
	s[i++] = (struct spec){ 0x6010c0, 0x401500, dsrc(ST, PERF_MEM_LVL_NA,
		 PERF_MEM_SNOOP_NA, 0, 0), 1, 0, 0, 9 };
	s[i++] = (struct spec){ 0x6010c8, 0x401504, dsrc(LD, HIT | PERF_MEM_LVL_L2,
		 PERF_MEM_SNOOP_NONE, 0, PERF_MEM_SNOOPX_PEER), 2, 1, 90, 8 };
	s[i++] = (struct spec){ 0x6010d0, 0x401508, dsrc(LD, PERF_MEM_LVL_REM_CCE1,
		 PERF_MEM_SNOOP_NONE, 0, PERF_MEM_SNOOPX_PEER), 3, 2, 150, 4 };
	*n = i;
	return s;
}

static void topology(struct hm_perf_topology *t)
{
	static const char *core[] = { "0-3" }, *thread[] = { "0", "1", "2", "3" };
	static uint32_t ids[NR_CPUS] = { 0, 1, 2, 3 }, zero[NR_CPUS];
	static struct hm_perf_numa_node node = { 0, 16u << 20, 8u << 20, "0-3" };

	memset(t, 0, sizeof(*t));
	t->nr_core_sibs = 1;
	t->core_sibs = core;
	t->nr_thread_sibs = NR_CPUS;
	t->thread_sibs = thread;
	t->nr_die_sibs = 1;
	t->die_sibs = core;
	t->nr_cpus = NR_CPUS;
	t->core_id = ids;
	t->socket_id = zero;
	t->die_id = zero;
	t->nr_nodes = 1;
	t->nodes = &node;
}

static int write_samples(struct hm_perfdata_writer *w, const struct hm_perf_attr *ld,
			 const struct hm_perf_attr *st, struct hm_err *err)
{
	size_t n, written = 0;
	const struct spec *s = specs(&n);
	struct hm_perf_event ev;
	uint64_t t = 1000000;

	/* Round-robin over the specs so that the lines interleave in time, as they would. */
	for (uint32_t round = 0;; round++) {
		int any = 0;

		for (size_t i = 0; i < n; i++) {
			if (round >= s[i].count)
				continue;
			memset(&ev, 0, sizeof(ev));
			ev.type = PERF_RECORD_SAMPLE;
			ev.misc = PERF_RECORD_MISC_USER;
			ev.sample.ip = s[i].ip;
			ev.sample.pid = PID;
			ev.sample.tid = PID + s[i].tid;
			ev.sample.time = t += 1000;
			ev.sample.addr = s[i].addr;
			ev.sample.cpu = s[i].cpu;
			ev.sample.period = 1;
			ev.sample.data_src = s[i].data_src;
			ev.sample.weight = hm_perf_weight_struct(s[i].weight, 0, 0);
			ev.sample.weight_var1 = s[i].weight;
			ev.attr = (s[i].data_src >> PERF_MEM_OP_SHIFT) & PERF_MEM_OP_STORE ? st : ld;
			if (hm_perfdata_write(w, &ev, err))
				return -1;
			written++;
			any = 1;
		}
		if (!any)
			break;
	}
	printf("%zu samples\n", written);
	return 0;
}

/* The c2c preset's load and store events, as hitmap record encodes them on Ice Lake. */
static int c2c_attrs(struct hm_perf_attr *pa, uint32_t *nr, struct hm_err *err)
{
	static const uint64_t ids[2] = { 101, 102 };	/* samples go to their event by id */
	struct hm_pmu_events ev;
	struct hm_pmu_opts o;

	setenv("LIBPFM_FORCE_PMU", "icl", 1);
	hm_pmu_opts_init(&o);
	o.phys = 0;
	if (hm_pmu_encode("c2c", &o, &ev, err))
		return -1;
	*nr = 0;
	for (unsigned i = 0; i < ev.nr && *nr < 2; i++) {
		if (ev.ev[i].flags & HM_PMU_EV_COUNT_ONLY)
			continue;
		pa[*nr].attr = ev.ev[i].attr;
		pa[*nr].name = strdup(ev.ev[i].name);
		pa[*nr].ids = &ids[*nr];
		pa[*nr].nr_ids = 1;
		(*nr)++;
	}
	if (*nr != 2)
		return hm_err_set(err, 3, "the c2c preset has %u sampling events, not 2", *nr);
	if (ev.ev[0].op == HM_OP_STORE) {	/* loads first */
		struct hm_perf_attr t = pa[0];

		pa[0] = pa[1];
		pa[1] = t;
		pa[0].ids = &ids[0];
		pa[1].ids = &ids[1];
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct hm_perf_attr pa[2] = { 0 };
	struct hm_perf_features f = { .hostname = "synth", .osrelease = "6.1.0", .arch = "x86_64",
				      .version = "hitmap c2c_synth", .nr_cpus_avail = NR_CPUS,
				      .nr_cpus_online = NR_CPUS };
	struct hm_perf_topology topo;
	struct hm_perfdata_writer *w = NULL;
	struct hm_err err = { 0 };
	uint32_t nr;

	if (argc != 2) {
		fprintf(stderr, "usage: c2c_synth OUT\n");
		return 1;
	}
	topology(&topo);
	f.topo = &topo;
	int rc = 0;

	if (c2c_attrs(pa, &nr, &err) || hm_perfdata_create(argv[1], pa, nr, 0, &w, &err) ||
	    write_samples(w, hm_perfdata_writer_attr(w, 0), hm_perfdata_writer_attr(w, 1), &err) ||
	    hm_perfdata_finish(w, &f, &err)) {
		fprintf(stderr, "c2c_synth: %s\n", err.msg);
		rc = 2;
	}
	if (w)
		hm_perfdata_writer_close(w);
	for (int i = 0; i < 2; i++)
		free((char *)pa[i].name);	/* strdup'd by c2c_attrs */
	return rc;
}
