/* The text views: one header line per table, numbers right-aligned, names in columns as
 * wide as the longest shown (up to NAME_MAX_W), every fix spelled out. */
#include "render/report_print.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "core/sort.h"
#include "core/oom.h"

#define NAME_MIN_W 8
#define NAME_MAX_W 40
#define LIST_SHOWN 4		/* threads or CPUs listed per row before "+N" */

static const char *const view_names[] = { "lines", "fields", "sharing", "splits" };

int hm_report_view_parse(const char *name)
{
	for (size_t i = 0; i < sizeof(view_names) / sizeof(view_names[0]); i++)
		if (strcmp(name, view_names[i]) == 0)
			return (int)i;
	return -1;
}

const char *hm_report_view_name(enum hm_report_view_kind v)
{
	return (unsigned)v < sizeof(view_names) / sizeof(view_names[0]) ? view_names[v] : "lines";
}

static size_t shown(size_t nr, size_t top)
{
	return top && top < nr ? top : nr;
}

static int width(size_t len)
{
	return len < NAME_MIN_W ? NAME_MIN_W : len > NAME_MAX_W ? NAME_MAX_W : (int)len;
}

static const char *pl(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

static const char *or_q(const char *s)
{
	return s ? s : "?";
}

static void summary(FILE *out, const struct hm_report_view *v)
{
	const struct hm_lines *l = v->lines;

	fprintf(out,
		"%s (%s): %" PRIu64 " samples, %" PRIu64 " with an address, %" PRIu64
		" resolved, %" PRIu64 " lost; %zu %s of %u bytes\n",
		or_q(v->input), hm_source_name(v->source), l->total, l->with_addr, l->resolved,
		v->lost, l->nr, pl(l->nr, "line", "lines"), l->line_size);
	if (l->dropped_lines)
		fprintf(out, "%" PRIu64 " %s dropped past --max-lines %zu, the least contended, with "
			"%" PRIu64 " %s (counted above, in no line): raise --max-lines to keep them\n",
			l->dropped_lines, pl(l->dropped_lines, "line", "lines"), l->max_lines,
			l->dropped_records, pl(l->dropped_records, "sample", "samples"));
	if (!l->total)
		fprintf(out, "no samples: record a workload that runs long enough to be sampled "
			     "(hitmap record -- CMD)\n");
	else if (!l->with_addr)
		fprintf(out, "no sample has a data address: record memory samples (hitmap record "
			     "-c pmu -e c2c where a PMU exists, else -c timer)\n");
	if (l->by_source[HM_SRC_PMU]) {
		const struct hm_c2c_stats *c = &l->c2c;

		fprintf(out,
			"c2c: %" PRIu64 " loads (L1 %" PRIu64 ", LFB %" PRIu64 ", L2 %" PRIu64
			", LLC %" PRIu64 ", HITM local %" PRIu64 " remote %" PRIu64
			", peer local %" PRIu64 " remote %" PRIu64 ", DRAM local %" PRIu64
			" remote %" PRIu64 ")\n     %" PRIu64 " stores (L1 hit %" PRIu64 ", miss %"
			PRIu64 "), %" PRIu64 " locked, %" PRIu64 " unresolved (no page map)\n",
			c->loads, c->ld_l1, c->ld_lfb, c->ld_l2, c->ld_llc, c->hitm_local,
			c->hitm_remote, c->peer_local, c->peer_remote, c->dram_local, c->dram_remote,
			c->stores, c->st_l1hit, c->st_l1miss, c->locked, c->nomap);
	}
}

/* "1234(170) 1235(3) +2" into buf. */
static const char *count_list(char *buf, size_t len, const struct hm_count *c, uint32_t n)
{
	size_t at = 0;

	buf[0] = 0;
	for (uint32_t i = 0; i < n && i < LIST_SHOWN && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%u(%" PRIu64 ")", i ? " " : "",
				       c[i].id, c[i].records);
	if (n > LIST_SHOWN && at < len)
		snprintf(buf + at, len - at, " +%u", n - LIST_SHOWN);
	return buf;
}

static const char *site_list(char *buf, size_t len, const struct hm_lfield *f)
{
	size_t at = 0;

	buf[0] = 0;
	for (uint32_t i = 0; i < f->nr_sites && at < len; i++) {
		const struct hm_site *s = &f->sites[i];

		if (s->func)
			at += (size_t)snprintf(buf + at, len - at, "%s%s %s:%d (%" PRIu64 ")",
					       i ? "; " : "", s->func, or_q(s->file), s->line,
					       s->count);
		else
			at += (size_t)snprintf(buf + at, len - at, "%s0x%" PRIx64 " (%" PRIu64 ")",
					       i ? "; " : "", s->ip, s->count);
	}
	if (f->nr_sites_all > f->nr_sites && at < len)
		snprintf(buf + at, len - at, "; +%u more", f->nr_sites_all - f->nr_sites);
	return buf;
}

/* "0xffff88810a3c4c00"; a per-CPU line is CPU N's copy of that %gs: offset; one
 * thread's TLS line is named by its offset from the thread pointer. */
static void line_addr(char *buf, size_t len, const struct hm_line *ln)
{
	if (HM_LINES_IS_PERCPU(ln->pid))
		snprintf(buf, len, "cpu%u:0x%" PRIx64, HM_LINES_PERCPU_CPU(ln->pid), ln->addr);
	else if (HM_LINES_IS_TLS(ln->pid))
		snprintf(buf, len, "%%fs-0x%" PRIx64, -ln->addr);
	else
		snprintf(buf, len, "0x%" PRIx64, ln->addr);
}

static void latency(FILE *out, const struct hm_line *ln)
{
	int any = 0;

	if (!ln->lat)
		return;
	for (int lv = 0; lv < HM_LVL__COUNT; lv++) {
		if (!ln->lat[lv].n)
			continue;
		fprintf(out, "%s%s %" PRIu64 " avg %" PRIu64, any ? ", " : "        load latency: ",
			hm_c2c_level_name((enum hm_c2c_level)lv), ln->lat[lv].n,
			ln->lat[lv].sum / ln->lat[lv].n);
		any = 1;
	}
	if (any)
		fputs(" cycles\n", out);
}

static void lines_table(FILE *out, const struct hm_report_view *v)
{
	const struct hm_lines *l = v->lines;
	size_t n = shown(l->nr, v->top), wn = 0;
	char tl[256], cl[256], sl[1024];
	int w;

	for (size_t i = 0; i < n; i++) {
		const struct hm_line *ln = &l->lines[i];

		if (ln->object && strlen(ln->object) > wn)
			wn = strlen(ln->object);
		for (uint32_t j = 0; j < ln->nr_fields; j++)
			if (strlen(ln->fields[j].field) > wn)
				wn = strlen(ln->fields[j].field);
	}
	w = width(wn > strlen("object / field") ? wn : strlen("object / field"));
	fprintf(out, "\n%5s  %-18s  %-*s  %-15s %10s %9s %9s %9s %7s %4s\n", "#",
		"line / offset", w, "object / field", "verdict", hm_contention_name(l->source),
		"records", "loads", "stores", "threads", "cpus");
	for (size_t i = 0; i < n; i++) {
		const struct hm_line *ln = &l->lines[i];
		char addr[32];

		line_addr(addr, sizeof(addr), ln);
		fprintf(out, "%5zu  %-18s  %-*s  %-15s %10" PRIu64 " %9" PRIu64 " %9" PRIu64
			" %9" PRIu64 " %7u %4u\n", i + 1, addr, w, or_q(ln->object),
			hm_verdict_name(ln->verdict), ln->contention, ln->records, ln->loads,
			ln->stores, ln->nr_threads, ln->nr_cpus);
		for (uint32_t j = 0; j < ln->nr_fields; j++) {
			const struct hm_lfield *f = &ln->fields[j];
			char off[32];

			if (f->size)
				snprintf(off, sizeof(off), "+0x%x/%u", f->offset, f->size);
			else	/* the access size is unknown (a PMU sample): no "/0" */
				snprintf(off, sizeof(off), "+0x%x", f->offset);
			fprintf(out, "%5s  %18s  %-*s  %-13s %10" PRIu64 " %9" PRIu64 " %9" PRIu64
				" %9" PRIu64 " %7u %4u\n", "", off, w, f->field, "", f->contention,
				f->records, f->loads, f->stores, f->nr_threads, f->nr_cpus);
			fprintf(out, "%27sthreads %s; cpus %s; at %s\n", "",
				count_list(tl, sizeof(tl), f->threads, f->nr_threads),
				count_list(cl, sizeof(cl), f->cpus, f->nr_cpus),
				site_list(sl, sizeof(sl), f));
		}
		latency(out, ln);
	}
	if (n < l->nr)
		fprintf(out, "(%zu more %s: --top %zu shows them)\n", l->nr - n,
			pl(l->nr - n, "line", "lines"), l->nr);
}

struct row_ref {
	const struct hm_line *ln;
	const struct hm_lfield *f;
};

static int cmp_row_ref(const void *x, const void *y)
{
	const struct row_ref *a = x, *b = y;

	if (a->f->contention != b->f->contention)
		return a->f->contention > b->f->contention ? -1 : 1;
	if (a->f->records != b->f->records)
		return a->f->records > b->f->records ? -1 : 1;
	if (a->ln->addr != b->ln->addr)
		return a->ln->addr < b->ln->addr ? -1 : 1;
	return a->f->offset < b->f->offset ? -1 : a->f->offset > b->f->offset;
}

static void fields_table(FILE *out, const struct hm_report_view *v)
{
	const struct hm_lines *l = v->lines;
	struct row_ref *rows;
	size_t nr = 0, n, wn = 0;
	char tl[256];
	int w;

	for (size_t i = 0; i < l->nr; i++)
		nr += l->lines[i].nr_fields;
	rows = malloc((nr ? nr : 1) * sizeof(*rows));
	if (!rows)
		hm_oom();	/* as the arena does */
	nr = 0;
	for (size_t i = 0; i < l->nr; i++)
		for (uint32_t j = 0; j < l->lines[i].nr_fields; j++)
			rows[nr++] = (struct row_ref){ &l->lines[i], &l->lines[i].fields[j] };
	hm_sort(rows, nr, sizeof(*rows), cmp_row_ref);
	n = shown(nr, v->top);
	for (size_t i = 0; i < n; i++)
		if (strlen(rows[i].f->field) > wn)
			wn = strlen(rows[i].f->field);
	w = width(wn);
	fprintf(out, "\n%-*s  %10s %9s %9s %9s  %-22s %-13s  %s\n", w, "field",
		hm_contention_name(l->source), "records", "loads", "stores", "line", "verdict",
		"threads");
	for (size_t i = 0; i < n; i++) {
		const struct hm_lfield *f = rows[i].f;
		char at[48];

		line_addr(at, sizeof(at) - 8, rows[i].ln);
		snprintf(at + strlen(at), 8, "+0x%x", f->offset);
		fprintf(out, "%-*s  %10" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64
			"  %-22s %-13s  %s\n", w, f->field, f->contention, f->records, f->loads,
			f->stores, at, hm_verdict_name(rows[i].ln->verdict),
			count_list(tl, sizeof(tl), f->threads, f->nr_threads));
	}
	if (n < nr)
		fprintf(out, "(%zu more %s: --top %zu shows them)\n", nr - n, pl(nr - n, "row", "rows"),
			nr);
	free(rows);
}

/* "worker_stats.ops (+0x0, 8 bytes; thread 1234 writes; 0 loads, 170 stores)" */
static void pair_side(FILE *out, const struct hm_lfield *f, uint32_t tid)
{
	const char *does = "reads";

	for (uint32_t i = 0; i < f->nr_threads; i++)
		if (f->threads[i].id == tid && (f->threads[i].stores || f->threads[i].locked))
			does = "writes";
	fprintf(out, "%s (+0x%x, %u bytes; thread %u %s; %" PRIu64 " loads, %" PRIu64 " stores)",
		f->field, f->offset, f->size, tid, does, f->loads, f->stores);
}

static void sharing_line(FILE *out, const struct hm_lines *l, const struct hm_line *ln)
{
	char addr[32];

	line_addr(addr, sizeof(addr), ln);
	fprintf(out, "%s (%s): %s, %" PRIu64 " %s, %u %s on %u %s, confidence %s\n", addr,
		or_q(ln->object), ln->verdict == HM_V_FALSE_SHARING ? "false sharing" : "true sharing",
		ln->contention, hm_contention_name(l->source), ln->nr_threads,
		pl(ln->nr_threads, "thread", "threads"), ln->nr_cpus, pl(ln->nr_cpus, "CPU", "CPUs"),
		hm_confidence_name(ln->confidence));
	for (uint32_t j = 0; j < ln->nr_pairs; j++) {
		const struct hm_pair *p = &ln->pairs[j];

		fprintf(out, "    %s: ", hm_verdict_name(p->kind));
		pair_side(out, &ln->fields[p->a], p->tid_a);
		fputs(" with ", out);
		pair_side(out, &ln->fields[p->b], p->tid_b);
		if (p->events)
			fprintf(out, "; %" PRIu64 " interleaving%s", p->events,
				p->events == 1 ? "" : "s");
		fputc('\n', out);
	}
	if (ln->evidence)
		fprintf(out, "    evidence: %s\n", ln->evidence);
	if (ln->advice)
		fprintf(out, "    %s\n", ln->advice);
	if (ln->fix)
		fprintf(out, "    fix: %s\n", ln->fix);
	if (ln->fix_replay)
		fprintf(out, "    %s\n", ln->fix_replay);
}

static void sharing_section(FILE *out, const struct hm_report_view *v)
{
	const struct hm_lines *l = v->lines;
	size_t n = 0, multi = 0, few = 0;

	fputs("\nsharing\n", out);
	for (size_t i = 0; i < l->nr; i++) {
		multi += l->lines[i].nr_threads > 1;
		few += l->lines[i].verdict == HM_V_FEW_SAMPLES;
	}
	for (size_t i = 0; i < l->nr && (!v->top || n < v->top); i++) {
		if (!hm_verdict_shared(l->lines[i].verdict))
			continue;
		n++;
		sharing_line(out, l, &l->lines[i]);
	}
	if (!n)
		fprintf(out, "no line is shared by threads with a writer on enough samples "
			     "(%zu %s, %zu of them used by several threads): nothing to move\n",
			l->nr, pl(l->nr, "line", "lines"), multi);
	if (few)
		fprintf(out, "\n%zu line%s may be shared but rest on too few samples or "
			     "accesses:\n", few,
			few == 1 ? "" : "s");
	for (size_t i = 0, k = 0; i < l->nr && k < few && (!v->top || k < v->top); i++) {
		const struct hm_line *ln = &l->lines[i];

		if (ln->verdict != HM_V_FEW_SAMPLES)
			continue;
		char addr[32];

		k++;
		line_addr(addr, sizeof(addr), ln);
		fprintf(out, "%s (%s): %s\n    %s\n", addr, or_q(ln->object),
			ln->evidence, ln->advice);
	}
}

static void splits_section(FILE *out, const struct hm_report_view *v)
{
	const struct hm_splits *s = v->splits;
	size_t n, wn = 0;
	int w;

	if (!s)
		return;
	fputs("\nsplits\n", out);
	if (!s->sized) {
		fputs("no sample has an access size, so none can be seen to split (PMU samples "
		      "carry no size): record with -c timer or -c watch to decode sizes\n", out);
		return;
	}
	fprintf(out, "%" PRIu64 " of %" PRIu64 " sized accesses cross a %u-byte line, %" PRIu64
		" of them a 4 KiB page\n", s->line_splits, s->sized, s->line_size, s->page_splits);
	if (!s->nr)
		return;
	n = shown(s->nr, v->top);
	for (size_t i = 0; i < n; i++)
		if (strlen(s->s[i].field) > wn)
			wn = strlen(s->s[i].field);
	w = width(wn);
	fprintf(out, "%9s %6s %5s %7s  %-*s  %s\n", "count", "page", "size", "offset", w, "field",
		"site");
	for (size_t i = 0; i < n; i++) {
		const struct hm_split *x = &s->s[i];
		char off[16];

		snprintf(off, sizeof(off), "+0x%x", x->line_offset);
		fprintf(out, "%9" PRIu64 " %6" PRIu64 " %5u %7s  %-*s  ", x->count, x->page_splits,
			x->size, off, w, x->field);
		if (x->func)
			fprintf(out, "%s %s:%d\n", x->func, or_q(x->file), x->line);
		else
			fprintf(out, "0x%" PRIx64 "\n", x->ip);
	}
	fprintf(out, "fix: align each of these fields to its size (or pack the struct so that "
		     "none crosses a %u-byte boundary)\n", s->line_size);
}

static void straddles_section(FILE *out, const struct hm_report_view *v)
{
	const struct hm_splits *s = v->splits;
	size_t n;

	if (!s || !s->nr_st)
		return;
	n = shown(s->nr_st, v->top);
	fprintf(out, "\nfields that straddle a %u-byte line in the layout of accessed types\n",
		s->line_size);
	fprintf(out, "%10s %7s %5s  %s\n", "accesses", "offset", "size", "field");
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%10" PRIu64 " %7" PRIu64 " %5" PRIu64 "  %s\n", s->st[i].accesses,
			s->st[i].offset, s->st[i].size, s->st[i].field);
}

void hm_report_print_text(FILE *out, const struct hm_report_view *v)
{
	summary(out, v);
	if (!v->lines->total)
		return;		/* the summary said what to do; empty tables say nothing more */
	switch (v->view) {
	case HM_VIEW_FIELDS:
		fields_table(out, v);
		break;
	case HM_VIEW_SHARING:
		sharing_section(out, v);
		break;
	case HM_VIEW_SPLITS:
		splits_section(out, v);
		straddles_section(out, v);
		break;
	case HM_VIEW_LINES:
		lines_table(out, v);
		sharing_section(out, v);
		splits_section(out, v);
		straddles_section(out, v);
		break;
	}
}
