#include "analyzer/c2c.h"

#include <math.h>
#include <stddef.h>

#include <linux/perf_event.h>

/* The fields of union perf_mem_data_src, taken by shift and width rather than through the
 * uapi bitfields, whose layout depends on the host's byte order. */
struct dsrc {
	unsigned op, lvl, snoop, lock, remote, snoopx, blk, hops;
};

static unsigned bits(uint64_t v, unsigned shift, unsigned width)
{
	return (unsigned)((v >> shift) & ((1ull << width) - 1));
}

static struct dsrc decode(uint64_t v)
{
	struct dsrc d = {
		.op = bits(v, PERF_MEM_OP_SHIFT, 5),
		.lvl = bits(v, PERF_MEM_LVL_SHIFT, 14),
		.snoop = bits(v, PERF_MEM_SNOOP_SHIFT, 5),
		.lock = bits(v, PERF_MEM_LOCK_SHIFT, 2),
		.remote = bits(v, PERF_MEM_REMOTE_SHIFT, 1),
		.snoopx = bits(v, PERF_MEM_SNOOPX_SHIFT, 2),
		.blk = bits(v, PERF_MEM_BLK_SHIFT, 3),
		.hops = bits(v, PERF_MEM_HOPS_SHIFT, 3),
	};
	return d;
}

/* Skylake reports some remote accesses with only the remote bit set; on POWER the same bit
 * with a hop count means another core of the same node, which is not remote. */
static int unknown_remote(const struct dsrc *d)
{
	return d->remote && !d->hops;
}

static int is_remote_dram(const struct dsrc *d)
{
	return (d->lvl & (PERF_MEM_LVL_REM_RAM1 | PERF_MEM_LVL_REM_RAM2)) || unknown_remote(d);
}

static int is_remote_cache(const struct dsrc *d)
{
	return (d->lvl & (PERF_MEM_LVL_REM_CCE1 | PERF_MEM_LVL_REM_CCE2)) || unknown_remote(d);
}

/* A DRAM load's MESI state: a snoop hit elsewhere means another cache held it shared. */
static void count_mesi(struct hm_c2c_stats *st, const struct dsrc *d)
{
	if (d->snoop & PERF_MEM_SNOOP_HIT)
		st->mesi_shared++;
	else
		st->mesi_excl++;
}

/* perf only looks at the levels of a load when the HIT bit is set; several level bits may
 * be set at once and each counts. */
static void count_load_hit(struct hm_c2c_stats *st, const struct dsrc *d)
{
	int peer = (d->snoopx & PERF_MEM_SNOOPX_PEER) != 0;

	if (d->lvl & PERF_MEM_LVL_UNC)
		st->ld_uncached++;
	if (d->lvl & PERF_MEM_LVL_IO)
		st->ld_io++;
	if (d->lvl & PERF_MEM_LVL_LFB)
		st->ld_lfb++;
	if (d->lvl & PERF_MEM_LVL_L1)
		st->ld_l1++;
	if (d->lvl & PERF_MEM_LVL_L2) {
		st->ld_l2++;
		st->peer_local += peer;
	}
	if (d->lvl & PERF_MEM_LVL_L3) {
		if (d->snoop & PERF_MEM_SNOOP_HITM)
			st->hitm_local++;
		else
			st->ld_llc++;
		st->peer_local += peer;
	}
	if (d->lvl & PERF_MEM_LVL_LOC_RAM) {
		st->dram_local++;
		count_mesi(st, d);
	}
	if (is_remote_dram(d)) {
		st->dram_remote++;
		count_mesi(st, d);
	}
}

static void count_load(struct hm_c2c_stats *st, const struct dsrc *d)
{
	if (d->lvl & PERF_MEM_LVL_HIT)
		count_load_hit(st, d);
	/* Remote cache counts whether or not HIT is set; HIT wins over HITM, HITM over peer. */
	if (is_remote_cache(d)) {
		if (d->snoop & PERF_MEM_SNOOP_HIT) {
			st->hit_remote++;
		} else if (d->snoop & PERF_MEM_SNOOP_HITM) {
			st->hitm_remote++;
		} else if (d->snoopx & PERF_MEM_SNOOPX_PEER) {
			st->hit_remote++;
			st->peer_remote++;
		}
	}
	if (d->lvl & PERF_MEM_LVL_MISS)
		st->ld_miss++;
}

static void count_store(struct hm_c2c_stats *st, const struct dsrc *d)
{
	if (d->lvl & PERF_MEM_LVL_HIT) {
		if (d->lvl & PERF_MEM_LVL_UNC)
			st->st_uncached++;
		if (d->lvl & PERF_MEM_LVL_L1)
			st->st_l1hit++;
	}
	if ((d->lvl & PERF_MEM_LVL_MISS) && (d->lvl & PERF_MEM_LVL_L1))
		st->st_l1miss++;
	if (d->lvl & PERF_MEM_LVL_NA)
		st->st_na++;
}

int hm_c2c_count(struct hm_c2c_stats *st, uint64_t data_src, uint64_t addr, int mapped)
{
	struct dsrc d = decode(data_src);

	st->records++;
	if (d.lock & PERF_MEM_LOCK_LOCKED)
		st->locked++;
	if (d.blk & PERF_MEM_BLK_DATA)
		st->blk_data++;
	if (d.blk & PERF_MEM_BLK_ADDR)
		st->blk_addr++;

	/* LOAD wins when both op bits are set, as in perf. Samples without an address stop
	 * after their op is counted: they reach neither the level rows nor the map check. */
	if (d.op & PERF_MEM_OP_LOAD) {
		st->loads++;
		if (!addr) {
			st->ld_noaddr++;
			return 0;
		}
		count_load(st, &d);
	} else if (d.op & PERF_MEM_OP_STORE) {
		st->stores++;
		if (!addr) {
			st->st_noaddr++;
			return 0;
		}
		count_store(st, &d);
	} else {
		st->noparse++;
		return 0;
	}
	if (!mapped) {
		st->nomap++;
		return 0;
	}
	return 1;
}

int hm_c2c_add_access(struct hm_c2c_stats *st, const struct hm_access *a)
{
	int mapped = a->mapped;

	return hm_c2c_count(st, a->s.data_src, a->s.addr, mapped);
}

void hm_c2c_merge(struct hm_c2c_stats *dst, const struct hm_c2c_stats *src)
{
	uint64_t *d = (uint64_t *)dst;
	const uint64_t *s = (const uint64_t *)src;

	for (size_t i = 0; i < sizeof(*dst) / sizeof(uint64_t); i++)
		d[i] += s[i];
}

uint64_t hm_c2c_llc_misses(const struct hm_c2c_stats *st)
{
	return st->dram_local + st->dram_remote + st->hit_remote + st->hitm_remote;
}

int hm_c2c_is_load(uint64_t data_src)
{
	return (decode(data_src).op & PERF_MEM_OP_LOAD) != 0;
}

int hm_c2c_is_store(uint64_t data_src)
{
	struct dsrc d = decode(data_src);

	return !(d.op & PERF_MEM_OP_LOAD) && (d.op & PERF_MEM_OP_STORE);
}

int hm_c2c_is_locked(uint64_t data_src)
{
	return (decode(data_src).lock & PERF_MEM_LOCK_LOCKED) != 0;
}

int hm_c2c_is_hitm(uint64_t data_src)
{
	enum hm_c2c_level lv = hm_c2c_level(data_src);

	return lv == HM_LVL_HITM_LOCAL || lv == HM_LVL_HITM_REMOTE;
}

/* One class per load, the farthest level first, consistent with the counters above: a
 * sample perf counts as remote HITM is HITM_REMOTE here, and so on. */
enum hm_c2c_level hm_c2c_level(uint64_t data_src)
{
	struct dsrc d = decode(data_src);
	int hit = (d.lvl & PERF_MEM_LVL_HIT) != 0;

	if (!(d.op & PERF_MEM_OP_LOAD))
		return HM_LVL_OTHER;
	if (is_remote_cache(&d)) {
		if (d.snoop & PERF_MEM_SNOOP_HIT)
			return HM_LVL_REMOTE_CACHE;
		if (d.snoop & PERF_MEM_SNOOP_HITM)
			return HM_LVL_HITM_REMOTE;
		if (d.snoopx & PERF_MEM_SNOOPX_PEER)
			return HM_LVL_REMOTE_CACHE;
	}
	if (!hit)
		return HM_LVL_OTHER;
	if (is_remote_dram(&d))
		return HM_LVL_DRAM_REMOTE;
	if (d.lvl & PERF_MEM_LVL_LOC_RAM)
		return HM_LVL_DRAM_LOCAL;
	if (d.lvl & PERF_MEM_LVL_L3)
		return (d.snoop & PERF_MEM_SNOOP_HITM) ? HM_LVL_HITM_LOCAL : HM_LVL_LLC;
	if (d.lvl & PERF_MEM_LVL_L2)
		return HM_LVL_L2;
	if (d.lvl & PERF_MEM_LVL_LFB)
		return HM_LVL_LFB;
	if (d.lvl & PERF_MEM_LVL_L1)
		return HM_LVL_L1;
	if (d.lvl & (PERF_MEM_LVL_UNC | PERF_MEM_LVL_IO))
		return HM_LVL_UNCACHED;
	return HM_LVL_OTHER;
}

const char *hm_c2c_level_name(enum hm_c2c_level lv)
{
	static const char *const names[HM_LVL__COUNT] = {
		[HM_LVL_L1] = "L1",
		[HM_LVL_LFB] = "LFB",
		[HM_LVL_L2] = "L2",
		[HM_LVL_LLC] = "LLC",
		[HM_LVL_HITM_LOCAL] = "HITM-local",
		[HM_LVL_HITM_REMOTE] = "HITM-remote",
		[HM_LVL_REMOTE_CACHE] = "remote-cache",
		[HM_LVL_DRAM_LOCAL] = "DRAM-local",
		[HM_LVL_DRAM_REMOTE] = "DRAM-remote",
		[HM_LVL_UNCACHED] = "uncached",
		[HM_LVL_OTHER] = "other",
	};
	return (unsigned)lv < HM_LVL__COUNT ? names[lv] : "other";
}

#define ROW(label, key, field) { label, key, HM_C2C_COUNT, offsetof(struct hm_c2c_stats, field) }
#define PCT(label, key, field) \
	{ label, key, HM_C2C_PCT_OF_MISSES, offsetof(struct hm_c2c_stats, field) }

const struct hm_c2c_row hm_c2c_rows[] = {
	ROW("Total records", "records", records),
	ROW("Locked Load/Store Operations", "locked", locked),
	ROW("Load Operations", "loads", loads),
	ROW("Loads - uncacheable", "ld_uncached", ld_uncached),
	ROW("Loads - IO", "ld_io", ld_io),
	ROW("Loads - Miss", "ld_miss", ld_miss),
	ROW("Loads - no mapping", "ld_noaddr", ld_noaddr),
	ROW("Load Fill Buffer Hit", "ld_lfb", ld_lfb),
	ROW("Load L1D hit", "ld_l1", ld_l1),
	ROW("Load L2D hit", "ld_l2", ld_l2),
	ROW("Load LLC hit", "ld_llc", ld_llc),
	ROW("Load Local HITM", "hitm_local", hitm_local),
	ROW("Load Remote HITM", "hitm_remote", hitm_remote),
	ROW("Load Remote HIT", "hit_remote", hit_remote),
	ROW("Load Local DRAM", "dram_local", dram_local),
	ROW("Load Remote DRAM", "dram_remote", dram_remote),
	ROW("Load MESI State Exclusive", "mesi_excl", mesi_excl),
	ROW("Load MESI State Shared", "mesi_shared", mesi_shared),
	{ "Load LLC Misses", "llc_misses", HM_C2C_LLC_MISSES, 0 },
	ROW("Load access blocked by data", "blk_data", blk_data),
	ROW("Load access blocked by address", "blk_addr", blk_addr),
	ROW("Load HIT Local Peer", "peer_local", peer_local),
	ROW("Load HIT Remote Peer", "peer_remote", peer_remote),
	PCT("LLC Misses to Local DRAM", "pct_dram_local", dram_local),
	PCT("LLC Misses to Remote DRAM", "pct_dram_remote", dram_remote),
	PCT("LLC Misses to Remote cache (HIT)", "pct_hit_remote", hit_remote),
	PCT("LLC Misses to Remote cache (HITM)", "pct_hitm_remote", hitm_remote),
	ROW("Store Operations", "stores", stores),
	ROW("Store - uncacheable", "st_uncached", st_uncached),
	ROW("Store - no mapping", "st_noaddr", st_noaddr),
	ROW("Store L1D Hit", "st_l1hit", st_l1hit),
	ROW("Store L1D Miss", "st_l1miss", st_l1miss),
	ROW("Store No available memory level", "st_na", st_na),
	ROW("No Page Map Rejects", "nomap", nomap),
	ROW("Unable to parse data source", "noparse", noparse),
};
const unsigned hm_c2c_nr_rows = sizeof(hm_c2c_rows) / sizeof(hm_c2c_rows[0]);

uint64_t hm_c2c_row_count(const struct hm_c2c_stats *st, const struct hm_c2c_row *r)
{
	if (r->kind == HM_C2C_LLC_MISSES)
		return hm_c2c_llc_misses(st);
	return *(const uint64_t *)((const char *)st + r->off);
}

double hm_c2c_row_pct(const struct hm_c2c_stats *st, const struct hm_c2c_row *r)
{
	uint64_t misses = hm_c2c_llc_misses(st);

	if (!misses)
		return NAN;
	return 100.0 * (double)*(const uint64_t *)((const char *)st + r->off) / (double)misses;
}
