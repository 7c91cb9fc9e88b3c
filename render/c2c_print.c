/* The c2c view as text: perf c2c report --stdio's sections, labels and columns (perf 6.1),
 * hitmap's verdict, fix and field names beside them. Default width: the line table in two
 * parts and Pareto rows on two lines, within 120 columns; wide: perf's one row. */
#include "analyzer/c2c_view.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "analyzer/fixcheck.h"
#include "render/c2c_print.h"

#define RULE "================================================="

static void banner(FILE *out, const char *title)
{
	int pad = (int)(strlen(RULE) - strlen(title)) / 2;

	fprintf(out, "\n%s\n%*s%s\n%s\n", RULE, pad > 0 ? pad : 0, "", title, RULE);
}

static double pct(uint64_t n, uint64_t of)
{
	return of ? 100.0 * (double)n / (double)of : 0.0;
}

static const char *src_name(enum hm_source s)
{
	return s == HM_SRC_WATCH ? "watch" : "timer";
}

static void trace_info(FILE *out, const struct hm_c2c_view *v)
{
	banner(out, "Trace Event Information");
	for (unsigned i = 0; i < hm_c2c_nr_rows; i++) {
		const struct hm_c2c_row *r = &hm_c2c_rows[i];
		double p = r->kind == HM_C2C_PCT_OF_MISSES ? hm_c2c_row_pct(&v->all, r) : 0;

		if (r->kind != HM_C2C_PCT_OF_MISSES) {
			fprintf(out, "  %-33s : %10" PRIu64 "\n", r->label,
				hm_c2c_row_count(&v->all, r));
		} else if (!isnan(p)) {	/* there were LLC misses */
			fprintf(out, "  %-33s : %9.1f%%\n", r->label, p);
		} else {
			fprintf(out, "  %-33s : %10s\n", r->label, "n/a");	/* perf: -nan% */
		}
	}
}

static void row(FILE *out, const char *label, uint64_t n)
{
	fprintf(out, "  %-33s : %10" PRIu64 "\n", label, n);
}

/* perf's print_shared_cacheline_info, over the lines with HITM or peer loads. */
static void global_shared(FILE *out, const struct hm_c2c_view *v)
{
	const struct hm_c2c_stats *s = &v->shared;

	banner(out, "Global Shared Cache Line Event Information");
	row(out, "Total Shared Cache Lines", v->nr_shared);
	if (!v->data_src) {
		row(out, "Loads on shared lines", v->shared_loads);
		row(out, "Stores on shared lines", v->shared_stores);
		row(out, "Locked Access on shared lines", v->shared_locked);
		return;
	}
	row(out, "Load HITs on shared lines", s->loads);
	row(out, "Fill Buffer Hits on shared lines", s->ld_lfb);
	row(out, "L1D hits on shared lines", s->ld_l1);
	row(out, "L2D hits on shared lines", s->ld_l2);
	row(out, "LLC hits on shared lines", s->ld_llc + s->hitm_local);
	row(out, "Load hits on peer cache or nodes", hm_c2c_peer(s));
	row(out, "Locked Access on shared lines", s->locked);
	row(out, "Blocked Access on shared lines", s->blk_data + s->blk_addr);
	row(out, "Store HITs on shared lines", s->stores);
	row(out, "Store L1D hits on shared lines", s->st_l1hit);
	row(out, "Store No available memory level", s->st_na);
	row(out, "Total Merged records", hm_c2c_hitm(s) + s->stores);
}

static void details(FILE *out, const struct hm_c2c_view *v)
{
	static const char *const sort_on[] = { "Total HITMs", "Local HITMs", "Remote HITMs",
						"Total peers" };
	unsigned c = v->o.coalesce;

	banner(out, "c2c details");
	fprintf(out, "  %-33s : %s\n", "Cachelines sort on",
		v->data_src ? sort_on[v->o.display] : hm_contention_name(v->source));
	fprintf(out, "  %-33s : offset%s%s%s\n", "Cacheline data grouping",
		c & HM_C2C_BY_PID ? ",pid" : "", c & HM_C2C_BY_TID ? ",tid" : "",
		c & HM_C2C_BY_IADDR ? ",iaddr" : "");
	fprintf(out, "  %-33s : %s\n", "Lines shown",
		v->o.show_all ? "all (--show-all)" : "shared (--show-all for every line)");
}

static void addr_str(char *buf, size_t len, const struct hm_c2c_cl *cl)
{
	if (HM_LINES_IS_PERCPU(cl->pid))
		snprintf(buf, len, "cpu%u:0x%" PRIx64, HM_LINES_PERCPU_CPU(cl->pid), cl->addr);
	else if (HM_LINES_IS_TLS(cl->pid))
		snprintf(buf, len, "%%fs-0x%" PRIx64, -cl->addr);
	else
		snprintf(buf, len, "0x%" PRIx64, cl->addr);
}

static const char *verdict_of(const struct hm_c2c_cl *cl)
{
	return cl->line ? hm_verdict_name(cl->line->verdict) : "-";
}

static const char *object_of(const struct hm_c2c_cl *cl)
{
	return cl->line && cl->line->object ? cl->line->object : "?";
}

/* The line table's numeric columns, in perf's order. */
enum { C_MTOT, C_MLCL, C_MRMT, C_RECORDS, C_LOADS, C_STORES, C_ST_L1HIT, C_ST_L1MISS, C_ST_NA,
       C_FB, C_L1, C_L2, C_LLC, C_LLC_HITM, C_RMT_HIT, C_RMT_HITM, C_DRAM_LCL, C_DRAM_RMT,
       C__N };

static void cl_vals(const struct hm_c2c_view *v, const struct hm_c2c_cl *cl, uint64_t *x)
{
	const struct hm_c2c_stats *s = &cl->st;
	int peer = v->o.display == HM_C2C_PEER;

	x[C_MTOT] = peer ? hm_c2c_peer(s) : hm_c2c_hitm(s);
	x[C_MLCL] = peer ? s->peer_local : s->hitm_local;
	x[C_MRMT] = peer ? s->peer_remote : s->hitm_remote;
	x[C_RECORDS] = s->records;
	x[C_LOADS] = s->loads;
	x[C_STORES] = s->stores;
	x[C_ST_L1HIT] = s->st_l1hit;
	x[C_ST_L1MISS] = s->st_l1miss;
	x[C_ST_NA] = s->st_na;
	x[C_FB] = s->ld_lfb;
	x[C_L1] = s->ld_l1;
	x[C_L2] = s->ld_l2;
	x[C_LLC] = s->ld_llc;
	x[C_LLC_HITM] = s->hitm_local;
	x[C_RMT_HIT] = s->hit_remote;
	x[C_RMT_HITM] = s->hitm_remote;
	x[C_DRAM_LCL] = s->dram_local;
	x[C_DRAM_RMT] = s->dram_remote;
}

struct group {
	const char *label;
	int first, n;			/* columns under it */
};

static const char *const col_top[C__N] = {
	[C_RECORDS] = "Total", [C_LOADS] = "Total", [C_STORES] = "Total",
};

/* Two header lines over columns [from, to): group labels in dashes, then the names;
 * lead: the index, address and (with the metric) share columns. */
static void num_header(FILE *out, int from, int to, const char *const *names, int peer)
{
	static const struct group groups[] = {
		{ "Load Hitm", C_MTOT, 3 }, { "Stores", C_ST_L1HIT, 3 },
		{ "Core Load Hit", C_FB, 3 }, { "LLC Load Hit", C_LLC, 2 },
		{ "RMT Load Hit", C_RMT_HIT, 2 }, { "Load Dram", C_DRAM_LCL, 2 },
	};

	fprintf(out, "%-7s  %18s", "#", "");
	if (from == 0)
		fprintf(out, " %7s", "Tot");
	for (int c = from; c < to; c++) {
		const struct group *g = NULL;

		for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
			if (groups[i].first == c)
				g = &groups[i];
		if (g && c + g->n <= to) {
			const char *label = peer && c == C_MTOT ? "Load Peer" : g->label;
			int w = 8 * g->n - 1, l = (int)strlen(label) + 2, d = (w - l) / 2;

			fprintf(out, " %.*s %s %.*s", d, "--------------------", label,
				w - l - d, "--------------------");
			c += g->n - 1;
		} else {
			fprintf(out, " %7s", col_top[c] ? col_top[c] : "");
		}
	}
	fprintf(out, "\n%-7s  %18s", "# Index", "Address");
	if (from == 0)
		fprintf(out, " %7s", peer ? "Peer" : "Hitm");
	for (int c = from; c < to; c++)
		fprintf(out, " %7s", names[c]);
}

static const char *const col_names[C__N] = {
	"Total", "LclHitm", "RmtHitm", "records", "Loads", "Stores", "L1Hit", "L1Miss", "N/A",
	"FB", "L1", "L2", "LclHit", "LclHitm", "RmtHit", "RmtHitm", "Lcl", "Rmt",
};
static const char *const peer_names[C__N] = {
	"Total", "Local", "Remote", "records", "Loads", "Stores", "L1Hit", "L1Miss", "N/A",
	"FB", "L1", "L2", "LclHit", "LclHitm", "RmtHit", "RmtHitm", "Lcl", "Rmt",
};

/* One part of the line table: columns [from, to); the first part has the metric's
 * share, the last hitmap's verdict and object, a first part that is not the last the CPUs. */
static void pmu_table(FILE *out, const struct hm_c2c_view *v, size_t n, int from, int to)
{
	int peer = v->o.display == HM_C2C_PEER;
	const char *const *names = peer ? peer_names : col_names;
	uint64_t x[C__N], all = hm_c2c_metric(&v->all, v->o.display);
	char addr[40];

	num_header(out, from, to, names, peer);
	if (from == 0)
		fprintf(out, " %5s", "cpus");
	fprintf(out, to == C__N ? "  %s\n" : "\n", "verdict, object");
	for (size_t i = 0; i < n; i++) {
		const struct hm_c2c_cl *cl = &v->cls[i];

		cl_vals(v, cl, x);
		addr_str(addr, sizeof(addr), cl);
		fprintf(out, "%7zu  %18s", i, addr);
		if (from == 0)
			fprintf(out, " %6.2f%%", pct(hm_c2c_metric(&cl->st, v->o.display), all));
		for (int c = from; c < to; c++)
			fprintf(out, " %7" PRIu64, x[c]);
		if (from == 0)
			fprintf(out, " %5u", cl->nr_cpus);
		if (to == C__N)
			fprintf(out, "  %-15s %s", verdict_of(cl), object_of(cl));
		fputc('\n', out);
	}
}

/* Timer and watch lines: hitmap's contention measure in place of HITM. */
static void plain_table(FILE *out, const struct hm_c2c_view *v, size_t n)
{
	const char *kind = hm_contention_name(v->source);
	uint64_t all = 0;
	char addr[40];

	for (size_t i = 0; i < v->nr; i++)
		all += v->cls[i].rank;
	fprintf(out, "%-7s  %18s %7s %10s %8s %8s %8s %5s  %-15s %s\n", "# Index", "Address",
		"Tot %", kind, "records", "loads", "stores", "cpus", "verdict", "object");
	for (size_t i = 0; i < n; i++) {
		const struct hm_c2c_cl *cl = &v->cls[i];

		addr_str(addr, sizeof(addr), cl);
		fprintf(out, "%7zu  %18s %6.2f%% %10" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8" PRIu64
			" %5u  %-15s %s\n", i, addr, pct(cl->rank, all), cl->rank, cl->records,
			cl->loads, cl->stores, cl->nr_cpus, verdict_of(cl), object_of(cl));
	}
}

static void line_table(FILE *out, const struct hm_c2c_view *v, size_t n, int wide)
{
	banner(out, "Shared Data Cache Line Table");
	if (!v->data_src)
		plain_table(out, v, n);
	else if (wide)
		pmu_table(out, v, n, 0, C__N);
	else {
		pmu_table(out, v, n, 0, C_FB);
		fputc('\n', out);
		pmu_table(out, v, n, C_FB, C__N);
	}
	if (n < v->nr)
		fprintf(out, "# %zu of %zu lines shown%s\n", n, v->nr,
			v->o.show_all || n < v->nr_shown ? " (--top)" : ": --show-all shows the others");
}

/* perf shows a Pareto row when it has the metric's loads or stores. */
static int pareto_row(const struct hm_c2c_view *v, const struct hm_c2c_ent *e)
{
	return !v->data_src || e->metric || e->st.stores;
}

static void site_str(char *buf, size_t len, const struct hm_c2c_ent *e)
{
	if (e->func)
		snprintf(buf, len, "%s %s:%d", e->func, e->file ? e->file : "?", e->line);
	else
		snprintf(buf, len, "0x%" PRIx64, e->ip);
}

static double mean(const struct hm_c2c_ent *e, int cls)
{
	return e->cyc_n[cls] ? (double)e->cyc_sum[cls] / (double)e->cyc_n[cls] : 0.0;
}

/* The row's names: hitmap's field, the code site, and in the default width the pid and
 * tid coalesced by (wide: columns); nothing more when none is known. */
static void ent_names(FILE *out, const struct hm_c2c_view *v, const struct hm_c2c_ent *e,
		      int wide)
{
	int ids = (v->o.coalesce & (HM_C2C_BY_PID | HM_C2C_BY_TID)) != 0;
	char site[512];

	if (wide && ids)
		fprintf(out, " %7u %7u", e->pid, e->tid);
	if (!wide && !ids && !e->field && !e->object && !e->func) {
		fputc('\n', out);	/* the code address said it all */
		return;
	}
	site_str(site, sizeof(site), e);
	fputs(wide ? "  " : "\n          ", out);
	if (!wide && ids)
		fprintf(out, "pid %u tid %u  ", e->pid, e->tid);
	if (e->field)
		fprintf(out, "%s  ", e->field);
	else if (e->object)
		fprintf(out, "%s+0x%x  ", e->object, e->off);
	fprintf(out, "%s\n", site);
}

static void pmu_ent(FILE *out, const struct hm_c2c_view *v, const struct hm_c2c_cl *cl,
		    const struct hm_c2c_ent *e, int wide)
{
	int peer = v->o.display == HM_C2C_PEER;
	char off[16], ip[24];

	snprintf(off, sizeof(off), "0x%x", e->off);
	snprintf(ip, sizeof(ip), "0x%" PRIx64, e->ip);
	fprintf(out, "%7s %7.2f%% %7.2f%% %7.2f%% %7.2f%% %7.2f%% %6s %18s", "",
		pct(peer ? e->st.peer_remote : e->st.hitm_remote,
		    peer ? cl->st.peer_remote : cl->st.hitm_remote),
		pct(peer ? e->st.peer_local : e->st.hitm_local,
		    peer ? cl->st.peer_local : cl->st.hitm_local),
		pct(e->st.st_l1hit, cl->st.st_l1hit), pct(e->st.st_l1miss, cl->st.st_l1miss),
		pct(e->st.st_na, cl->st.st_na), off, ip);
	fprintf(out, " %7.0f %7.0f %7.0f %7" PRIu64 " %4u",
		mean(e, peer ? HM_CYC_RMT_PEER : HM_CYC_RMT_HITM),
		mean(e, peer ? HM_CYC_LCL_PEER : HM_CYC_LCL_HITM), mean(e, HM_CYC_LOAD),
		e->st.records, e->nr_cpus);
	ent_names(out, v, e, wide);
}

static void plain_ent(FILE *out, const struct hm_c2c_view *v, const struct hm_c2c_cl *cl,
		      const struct hm_c2c_ent *e, int wide)
{
	char off[16], ip[24];

	snprintf(off, sizeof(off), "0x%x", e->off);
	snprintf(ip, sizeof(ip), "0x%" PRIx64, e->ip);
	fprintf(out, "%7s %7.2f%% %7.2f%% %6s %18s %7" PRIu64 " %7" PRIu64 " %7" PRIu64
		" %4u", "", pct(e->stores, cl->stores), pct(e->loads, cl->loads), off, ip,
		e->records, e->loads, e->stores, e->nr_cpus);
	ent_names(out, v, e, wide);
}

static void pareto_header(FILE *out, const struct hm_c2c_view *v, int wide)
{
	int peer = v->o.display == HM_C2C_PEER, ids = wide && (v->o.coalesce &
							       (HM_C2C_BY_PID | HM_C2C_BY_TID));
	const char *names = wide ? "  field  code" : "\n#         [pid tid]  field  code";

	if (!v->data_src) {
		fprintf(out, "%-7s %8s %8s %6s %18s %7s %7s %7s %4s\n%-7s %8s %8s %6s %18s %7s %7s"
			" %7s %4s%s%s\n", "#", "Stores", "Loads", "Data", "Code", "Total",
			"Total", "Total", "cpu", "# Num", "%", "%", "Offset", "address", "records",
			"loads", "stores", "cnt", ids ? "     Pid     Tid" : "", names);
		return;
	}
	fprintf(out, "%-7s %17s %26s %6s %18s %23s %7s %4s\n", "#",
		peer ? "------- Peer ----" : "------- HITM ----", "-------- Store Refs --------",
		"Data", "Code", "------ mean cycles ----", "Total", "cpu");
	fprintf(out, "%-7s %8s %8s %8s %8s %8s %6s %18s %7s %7s %7s %7s %4s%s%s\n",
		"# Num", peer ? "RmtPeer" : "RmtHitm", peer ? "LclPeer" : "LclHitm", "L1 Hit",
		"L1 Miss", "N/A", "Offset", "address", peer ? "rmtpeer" : "rmthitm",
		peer ? "lclpeer" : "lclhitm", "load", "records", "cnt",
		ids ? "     Pid     Tid" : "", names);
}

static void cl_header(FILE *out, const struct hm_c2c_view *v, size_t i,
		      const struct hm_c2c_cl *cl)
{
	const struct hm_line *ln = cl->line;
	int peer = v->o.display == HM_C2C_PEER;
	char addr[40];

	addr_str(addr, sizeof(addr), cl);
	fputs("  ----------------------------------------------------------------------\n", out);
	if (v->data_src)
		fprintf(out, "%7zu %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8" PRIu64,
			i, peer ? cl->st.peer_remote : cl->st.hitm_remote,
			peer ? cl->st.peer_local : cl->st.hitm_local, cl->st.st_l1hit,
			cl->st.st_l1miss, cl->st.st_na);
	else
		fprintf(out, "%7zu %8" PRIu64 " %8" PRIu64, i, cl->stores, cl->loads);
	fprintf(out, " %19s  %s  %s\n", addr, verdict_of(cl), object_of(cl));
	if (ln && ln->evidence)
		fprintf(out, "        evidence: %s\n", ln->evidence);
	if (ln && ln->advice)
		fprintf(out, "        %s\n", ln->advice);
	if (ln && ln->fix)
		fprintf(out, "        fix (%s): %s\n", hm_fix_check_name(ln->fix_check), ln->fix);
	if (ln && ln->fix_replay)
		fprintf(out, "        %s\n", ln->fix_replay);
	fputs("  ----------------------------------------------------------------------\n", out);
}

static void pareto(FILE *out, const struct hm_c2c_view *v, size_t n, int wide)
{
	banner(out, "Shared Cache Line Distribution Pareto");
	pareto_header(out, v, wide);
	for (size_t i = 0; i < n; i++) {
		const struct hm_c2c_cl *cl = &v->cls[i];

		cl_header(out, v, i, cl);
		for (uint32_t k = 0; k < cl->nr_ents; k++) {
			if (!pareto_row(v, &cl->ents[k]))
				continue;
			if (v->data_src)
				pmu_ent(out, v, cl, &cl->ents[k], wide);
			else
				plain_ent(out, v, cl, &cl->ents[k], wide);
		}
		fputc('\n', out);
	}
}

void hm_c2c_print_text(FILE *out, const struct hm_c2c_view *v, const char *input, size_t top,
		       int wide)
{
	size_t n = top && top < v->nr_shown ? top : v->nr_shown;

	fprintf(out, "%s: perf c2c report's view (hitmap report --view c2c -d %s)\n",
		input ? input : "?", hm_c2c_display_name(v->o.display));
	if (!v->data_src)
		fprintf(out, "HITM and load/store level columns are unavailable from a %s recording: "
			"it has no data source (PERF_SAMPLE_DATA_SRC); lines are ranked by %s "
			"instead, and loads and stores are hitmap's decode. Record with -c pmu -e c2c "
			"where a PMU exists to measure them.\n", src_name(v->source),
			hm_contention_name(v->source));
	if (v->o.node_info)
		fprintf(out, "-N: no node columns: hitmap does not read the recording's NUMA "
			"topology, so no CPU or address has a known node\n");
	if (v->data_src)
		trace_info(out, v);
	global_shared(out, v);
	details(out, v);
	line_table(out, v, n, wide);
	pareto(out, v, n, wide);
}
