/* DATA_SRC (union perf_mem_data_src) decoded into the categories `perf c2c report` counts
 * in its "Trace Event Information" table, with the same precedence and the same quirks
 * (perf 6.1, tools/perf/util/mem-events.c); see docs/report.md. */
#ifndef HM_C2C_H
#define HM_C2C_H

#include <stdint.h>

#include "symbolize/access.h"

/* One counter per row of perf's table; the comment names the row. */
struct hm_c2c_stats {
	uint64_t records;	/* Total records */
	uint64_t locked;	/* Locked Load/Store Operations */
	uint64_t loads;		/* Load Operations */
	uint64_t ld_uncached;	/* Loads - uncacheable */
	uint64_t ld_io;		/* Loads - IO */
	uint64_t ld_miss;	/* Loads - Miss */
	uint64_t ld_noaddr;	/* Loads - no mapping (no data address) */
	uint64_t ld_lfb;	/* Load Fill Buffer Hit */
	uint64_t ld_l1;		/* Load L1D hit */
	uint64_t ld_l2;		/* Load L2D hit */
	uint64_t ld_llc;	/* Load LLC hit (not HITM) */
	uint64_t hitm_local;	/* Load Local HITM */
	uint64_t hitm_remote;	/* Load Remote HITM */
	uint64_t hit_remote;	/* Load Remote HIT (remote cache, clean or via peer) */
	uint64_t dram_local;	/* Load Local DRAM */
	uint64_t dram_remote;	/* Load Remote DRAM */
	uint64_t mesi_excl;	/* Load MESI State Exclusive (DRAM loads without a snoop hit) */
	uint64_t mesi_shared;	/* Load MESI State Shared */
	uint64_t blk_data;	/* Load access blocked by data */
	uint64_t blk_addr;	/* Load access blocked by address */
	uint64_t peer_local;	/* Load HIT Local Peer */
	uint64_t peer_remote;	/* Load HIT Remote Peer */
	uint64_t stores;	/* Store Operations */
	uint64_t st_uncached;	/* Store - uncacheable */
	uint64_t st_noaddr;	/* Store - no mapping (no data address) */
	uint64_t st_l1hit;	/* Store L1D Hit */
	uint64_t st_l1miss;	/* Store L1D Miss */
	uint64_t st_na;		/* Store No available memory level */
	uint64_t nomap;		/* No Page Map Rejects */
	uint64_t noparse;	/* Unable to parse data source */
};

/* Where a load was served from, one class per sample (for latency by level). */
enum hm_c2c_level {
	HM_LVL_L1,
	HM_LVL_LFB,
	HM_LVL_L2,
	HM_LVL_LLC,
	HM_LVL_HITM_LOCAL,
	HM_LVL_HITM_REMOTE,
	HM_LVL_REMOTE_CACHE,
	HM_LVL_DRAM_LOCAL,
	HM_LVL_DRAM_REMOTE,
	HM_LVL_UNCACHED,	/* uncached or I/O */
	HM_LVL_OTHER,		/* not a load, or no level recorded */
	HM_LVL__COUNT
};

/* Counts one sample exactly as perf c2c does. addr: the data address (0: none).
 * mapped: perf's rule is "both the data address and the ip lie in a known mapping";
 * hm_c2c_add_access() below uses "the data address was named" instead. Returns 1 when
 * the sample is a load or store with an address that maps (perf then keeps it for the
 * shared-line statistics), 0 otherwise. */
int hm_c2c_count(struct hm_c2c_stats *st, uint64_t data_src, uint64_t addr, int mapped);
/* hm_c2c_count() for one access: mapped unless its method is HM_M_UNKNOWN or
 * HM_M_NOADDR (an address that names no object is hitmap's "no page map" reject). */
int hm_c2c_add_access(struct hm_c2c_stats *st, const struct hm_access *a);
void hm_c2c_merge(struct hm_c2c_stats *dst, const struct hm_c2c_stats *src);

/* Load LLC Misses as perf prints it: local and remote DRAM plus remote HIT and HITM. */
uint64_t hm_c2c_llc_misses(const struct hm_c2c_stats *st);
static inline uint64_t hm_c2c_hitm(const struct hm_c2c_stats *st)
{
	return st->hitm_local + st->hitm_remote;
}
static inline uint64_t hm_c2c_peer(const struct hm_c2c_stats *st)
{
	return st->peer_local + st->peer_remote;
}

/* Field-level decode. */
int hm_c2c_is_load(uint64_t data_src);
int hm_c2c_is_store(uint64_t data_src);
int hm_c2c_is_locked(uint64_t data_src);
int hm_c2c_is_hitm(uint64_t data_src);
enum hm_c2c_level hm_c2c_level(uint64_t data_src);
/* "L1", "LFB", "L2", "LLC", "HITM-local", ...; JSON-friendly (no spaces). */
const char *hm_c2c_level_name(enum hm_c2c_level lv);

/* Rows of perf's table in its order, for printers and the fixture test. */
enum hm_c2c_row_kind {
	HM_C2C_COUNT,		/* a counter: *(uint64_t *)((char *)st + off) */
	HM_C2C_LLC_MISSES,	/* hm_c2c_llc_misses() */
	HM_C2C_PCT_OF_MISSES,	/* 100 * counter at off / llc misses; NaN when 0/0 */
};
struct hm_c2c_row {
	const char *label;	/* perf's label, e.g. "Load L1D hit" */
	const char *key;	/* JSON key, e.g. "ld_l1" */
	enum hm_c2c_row_kind kind;
	unsigned off;		/* offsetof(struct hm_c2c_stats, counter) */
};
extern const struct hm_c2c_row hm_c2c_rows[];
extern const unsigned hm_c2c_nr_rows;
uint64_t hm_c2c_row_count(const struct hm_c2c_stats *st, const struct hm_c2c_row *r);
double hm_c2c_row_pct(const struct hm_c2c_stats *st, const struct hm_c2c_row *r);

#endif
