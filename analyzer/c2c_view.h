/* The c2c view of `hitmap report --view c2c`: perf c2c report's sections and columns
 * (Global Shared Cache Line Event Information, Shared Data Cache Line Table, Shared Cache
 * Line Distribution Pareto), counted as perf 6.1 counts them (tools/perf/builtin-c2c.c),
 * with hitmap's field names, verdicts and checked fixes beside them. c2c_view.c builds it
 * from the access stream, c2c_print.c renders text and JSON; docs/report.md has the rules. */
#ifndef HM_C2C_VIEW_H
#define HM_C2C_VIEW_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analyzer/c2c.h"
#include "analyzer/lines.h"
#include "core/arena.h"
#include "core/json.h"

/* perf c2c's -d: the metric lines are sorted, filtered and given a percentage on. */
enum hm_c2c_display { HM_C2C_TOT, HM_C2C_LCL, HM_C2C_RMT, HM_C2C_PEER };

/* perf c2c's -c: what Pareto rows are grouped by besides the offset (perf's dso is not
 * offered: an access keeps no dso). perf's default is iaddr. */
enum { HM_C2C_BY_IADDR = 1, HM_C2C_BY_PID = 2, HM_C2C_BY_TID = 4 };

struct hm_c2c_opts {
	enum hm_c2c_display display;
	unsigned coalesce;		/* HM_C2C_BY_* */
	int show_all;			/* every line, not only those over perf's 0.1% */
	int node_info;			/* -N: asked for nodes */
};

/* Mean latency classes of a Pareto row, each load in one (perf's compute_stats order). */
enum { HM_CYC_RMT_HITM, HM_CYC_LCL_HITM, HM_CYC_RMT_PEER, HM_CYC_LCL_PEER, HM_CYC_LOAD,
       HM_CYC__N };

#define HM_C2C_CPU_WORDS 16		/* CPUs counted per row: 0..1023 */

/* A Pareto row: one offset in a line (and code address, pid, tid as coalesced). */
struct hm_c2c_ent {
	uint32_t off;			/* first byte, from the start of the line */
	uint32_t pid, tid;		/* 0 unless coalesced by them */
	uint64_t ip;			/* the code address (the first seen unless by iaddr) */
	struct hm_c2c_stats st;		/* its PMU samples, as perf decodes them */
	uint64_t records, loads, stores; /* every source; loads/stores by decoded op */
	uint64_t cyc_n[HM_CYC__N], cyc_sum[HM_CYC__N];
	uint32_t nr_cpus;
	uint64_t cpus[HM_C2C_CPU_WORDS];
	const char *field, *object;	/* hitmap's names; NULL when unknown */
	const char *func, *file;	/* code site */
	int line;
	uint32_t line_idx;		/* c2c_view.c: the row's line while building */
	uint64_t metric;		/* hm_c2c_metric() of st: perf shows rows with it */
};

/* A row of the Shared Data Cache Line Table. */
struct hm_c2c_cl {
	uint64_t addr;			/* first byte of the line */
	uint32_t pid;			/* address space, as hm_line.pid */
	struct hm_c2c_stats st;
	uint64_t records, loads, stores;
	uint32_t nr_cpus;
	uint64_t cpus[HM_C2C_CPU_WORDS];
	struct hm_c2c_ent *ents;	/* Pareto rows: by offset, pid, tid, code address */
	uint32_t nr_ents;
	const struct hm_line *line;	/* hitmap's line: object, verdict, fix; NULL if none */
	int shared;			/* perf: HITM or peer loads (PMU); hitmap: contended */
	int shown;			/* in the table (perf's 0.1% filter, or --show-all) */
	uint64_t rank;			/* the metric (PMU), else hitmap's contention */
};

struct hm_c2c_view {
	struct hm_c2c_opts o;
	uint32_t line_size;
	int data_src;			/* PMU samples: the HITM and level columns are measured */
	enum hm_source source;		/* whose measure ranks timer and watch lines */
	struct hm_c2c_stats all;	/* Trace Event Information */
	struct hm_c2c_stats shared;	/* Global Shared Cache Line Event Information */
	uint64_t shared_loads, shared_stores, shared_locked; /* timer and watch: by op */
	uint64_t nr_shared;		/* Total Shared Cache Lines */
	struct hm_c2c_cl *cls;		/* shown lines first, by the metric */
	size_t nr, nr_shown;
};

struct hm_c2c_acc;
struct hm_c2c_acc *hm_c2c_acc_new(uint32_t line_size, const struct hm_c2c_opts *o);
/* Adds a batch; accesses without a data address are left out of lines (as hm_lines). */
void hm_c2c_acc_add(struct hm_c2c_acc *c, const struct hm_access *acc, size_t n);
/* Fills out (its arrays in a) from what was added and hitmap's lines (for names,
 * verdicts, fixes; may be NULL), then frees c. */
void hm_c2c_acc_end(struct hm_c2c_acc *c, struct hm_arena *a, const struct hm_lines *l,
		    struct hm_c2c_view *out);

/* perf's display metric of a set of counts, and its name ("Hitm", "Peer"). */
uint64_t hm_c2c_metric(const struct hm_c2c_stats *st, enum hm_c2c_display d);
const char *hm_c2c_display_name(enum hm_c2c_display d);	/* "tot", "lcl", "rmt", "peer" */
/* "tot" etc. -> display; -1 when unknown. */
int hm_c2c_display_parse(const char *s);
/* "tid,pid,iaddr" -> HM_C2C_BY_* (0 when one name is unknown; *bad then points at it). */
unsigned hm_c2c_coalesce_parse(const char *s, const char **bad, size_t *bad_len);


#endif
