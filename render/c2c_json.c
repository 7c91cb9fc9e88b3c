/* The "c2c_view" member of hitmap.report/1 (--view c2c --json): perf c2c's sections
 * under snake_case keys, hitmap's verdict and fix per line, its field names per row.
 * Measured-only keys are null in timer and watch recordings (docs/report.md). */
#include "analyzer/c2c_view.h"

#include "analyzer/fixcheck.h"
#include "render/c2c_print.h"

static void u64_or_null(struct hm_json *j, const char *key, int known, uint64_t v)
{
	if (known)
		hm_json_u64(j, key, v);
	else
		hm_json_null(j, key);
}

static double pct(uint64_t n, uint64_t of)
{
	return of ? 100.0 * (double)n / (double)of : 0.0;
}

static void global_shared(struct hm_json *j, const struct hm_c2c_view *v)
{
	const struct hm_c2c_stats *s = &v->shared;
	int m = v->data_src;

	hm_json_obj_begin(j, "global_shared");
	hm_json_u64(j, "shared_lines", v->nr_shared);
	hm_json_u64(j, "loads", m ? s->loads : v->shared_loads);
	hm_json_u64(j, "stores", m ? s->stores : v->shared_stores);
	hm_json_u64(j, "locked", m ? s->locked : v->shared_locked);
	u64_or_null(j, "ld_fb", m, s->ld_lfb);
	u64_or_null(j, "ld_l1", m, s->ld_l1);
	u64_or_null(j, "ld_l2", m, s->ld_l2);
	u64_or_null(j, "ld_llc", m, s->ld_llc + s->hitm_local);
	u64_or_null(j, "ld_peer", m, hm_c2c_peer(s));
	u64_or_null(j, "blocked", m, s->blk_data + s->blk_addr);
	u64_or_null(j, "st_l1hit", m, s->st_l1hit);
	u64_or_null(j, "st_na", m, s->st_na);
	u64_or_null(j, "merged_records", m, hm_c2c_hitm(s) + s->stores);
	hm_json_obj_end(j);
}

/* perf's cache line columns; levels null without a data source. */
static void cl_counts(struct hm_json *j, const struct hm_c2c_view *v, const struct hm_c2c_cl *cl)
{
	const struct hm_c2c_stats *s = &cl->st;
	int m = v->data_src;

	hm_json_u64(j, "records", cl->records);
	hm_json_u64(j, "loads", m ? s->loads : cl->loads);
	hm_json_u64(j, "stores", m ? s->stores : cl->stores);
	u64_or_null(j, "hitm_local", m, s->hitm_local);
	u64_or_null(j, "hitm_remote", m, s->hitm_remote);
	u64_or_null(j, "peer_local", m, s->peer_local);
	u64_or_null(j, "peer_remote", m, s->peer_remote);
	u64_or_null(j, "st_l1hit", m, s->st_l1hit);
	u64_or_null(j, "st_l1miss", m, s->st_l1miss);
	u64_or_null(j, "st_na", m, s->st_na);
	u64_or_null(j, "ld_fb", m, s->ld_lfb);
	u64_or_null(j, "ld_l1", m, s->ld_l1);
	u64_or_null(j, "ld_l2", m, s->ld_l2);
	u64_or_null(j, "ld_llc", m, s->ld_llc);
	u64_or_null(j, "ld_rmt_hit", m, s->hit_remote);
	u64_or_null(j, "dram_local", m, s->dram_local);
	u64_or_null(j, "dram_remote", m, s->dram_remote);
	hm_json_u64(j, "cpus", cl->nr_cpus);
}

static void cycles(struct hm_json *j, const struct hm_c2c_ent *e)
{
	static const char *const names[HM_CYC__N] = { "rmt_hitm", "lcl_hitm", "rmt_peer",
						      "lcl_peer", "load" };

	hm_json_obj_begin(j, "mean_cycles");
	for (int c = 0; c < HM_CYC__N; c++)
		if (e->cyc_n[c])
			hm_json_double(j, names[c], (double)e->cyc_sum[c] / (double)e->cyc_n[c]);
		else
			hm_json_null(j, names[c]);
	hm_json_obj_end(j);
}

static void ent(struct hm_json *j, const struct hm_c2c_view *v, const struct hm_c2c_cl *cl,
		const struct hm_c2c_ent *e)
{
	int m = v->data_src;

	hm_json_obj_begin(j, NULL);
	hm_json_u64(j, "offset", e->off);
	hm_json_str(j, "field", e->field);
	hm_json_str(j, "object", e->object);
	hm_json_hex(j, "ip", e->ip);
	hm_json_str(j, "func", e->func);
	hm_json_str(j, "file", e->file);
	if (e->func)
		hm_json_i64(j, "line", e->line);
	else
		hm_json_null(j, "line");
	if (v->o.coalesce & (HM_C2C_BY_PID | HM_C2C_BY_TID))
		hm_json_u64(j, "pid", e->pid);
	if (v->o.coalesce & HM_C2C_BY_TID)
		hm_json_u64(j, "tid", e->tid);
	hm_json_u64(j, "records", e->records);
	hm_json_u64(j, "loads", m ? e->st.loads : e->loads);
	hm_json_u64(j, "stores", m ? e->st.stores : e->stores);
	hm_json_u64(j, "cpus", e->nr_cpus);
	if (m) {
		hm_json_double(j, "pct_hitm_remote", pct(e->st.hitm_remote, cl->st.hitm_remote));
		hm_json_double(j, "pct_hitm_local", pct(e->st.hitm_local, cl->st.hitm_local));
		hm_json_double(j, "pct_peer_remote", pct(e->st.peer_remote, cl->st.peer_remote));
		hm_json_double(j, "pct_peer_local", pct(e->st.peer_local, cl->st.peer_local));
		hm_json_double(j, "pct_st_l1hit", pct(e->st.st_l1hit, cl->st.st_l1hit));
		hm_json_double(j, "pct_st_l1miss", pct(e->st.st_l1miss, cl->st.st_l1miss));
		hm_json_double(j, "pct_st_na", pct(e->st.st_na, cl->st.st_na));
		cycles(j, e);
	} else {
		hm_json_double(j, "pct_stores", pct(e->stores, cl->stores));
		hm_json_double(j, "pct_loads", pct(e->loads, cl->loads));
	}
	hm_json_obj_end(j);
}

static void verdict(struct hm_json *j, const struct hm_line *ln)
{
	hm_json_str(j, "object", ln ? ln->object : NULL);
	hm_json_str(j, "verdict", ln ? hm_verdict_name(ln->verdict) : NULL);
	hm_json_str(j, "confidence", ln ? hm_confidence_name(ln->confidence) : NULL);
	hm_json_str(j, "evidence", ln ? ln->evidence : NULL);
	hm_json_str(j, "fix", ln ? ln->fix : NULL);
	hm_json_str(j, "fix_check", ln ? hm_fix_check_name(ln->fix_check) : NULL);
	hm_json_str(j, "fix_replay", ln ? ln->fix_replay : NULL);
}

static void cacheline(struct hm_json *j, const struct hm_c2c_view *v, size_t i)
{
	const struct hm_c2c_cl *cl = &v->cls[i];
	uint64_t all = v->data_src ? hm_c2c_metric(&v->all, v->o.display) : 0;

	hm_json_obj_begin(j, NULL);
	hm_json_u64(j, "index", i);
	hm_json_hex(j, "addr", cl->addr);
	if (cl->pid == HM_LINES_KERNEL_PID || HM_LINES_IS_PERCPU(cl->pid) ||
	    HM_LINES_IS_TLS(cl->pid))
		hm_json_null(j, "pid");
	else
		hm_json_u64(j, "pid", cl->pid);
	hm_json_bool(j, "shared", cl->shared);
	if (v->data_src) {
		hm_json_u64(j, "metric", cl->rank);
		hm_json_double(j, "pct_metric", pct(cl->rank, all));
	} else {
		hm_json_null(j, "metric");
		hm_json_u64(j, "contention", cl->rank);
	}
	cl_counts(j, v, cl);
	verdict(j, cl->line);
	hm_json_arr_begin(j, "offsets");
	for (uint32_t k = 0; k < cl->nr_ents; k++)
		if (!v->data_src || cl->ents[k].metric || cl->ents[k].st.stores)
			ent(j, v, cl, &cl->ents[k]);
	hm_json_arr_end(j);
	hm_json_obj_end(j);
}

void hm_c2c_print_json(struct hm_json *j, const struct hm_c2c_view *v, size_t top)
{
	size_t n = top && top < v->nr_shown ? top : v->nr_shown;
	unsigned c = v->o.coalesce;

	hm_json_obj_begin(j, "c2c_view");
	hm_json_str(j, "display", hm_c2c_display_name(v->o.display));
	hm_json_arr_begin(j, "coalesce");
	if (c & HM_C2C_BY_PID)
		hm_json_str(j, NULL, "pid");
	if (c & HM_C2C_BY_TID)
		hm_json_str(j, NULL, "tid");
	if (c & HM_C2C_BY_IADDR)
		hm_json_str(j, NULL, "iaddr");
	hm_json_arr_end(j);
	hm_json_bool(j, "show_all", v->o.show_all);
	hm_json_bool(j, "data_src", v->data_src);
	hm_json_str(j, "unavailable", v->data_src ? NULL :
		    "HITM and level columns: the recording has no data source (timer or watch)");
	hm_json_null(j, "nodes");	/* the NUMA topology is not read */
	global_shared(j, v);
	hm_json_u64(j, "lines", v->nr);
	hm_json_u64(j, "lines_shown", n);
	hm_json_arr_begin(j, "cachelines");
	for (size_t i = 0; i < n; i++)
		cacheline(j, v, i);
	hm_json_arr_end(j);
	hm_json_obj_end(j);
}
