/* hitmap script: dump what the perf.data reader sees, one line per sample, in the columns of
 * `perf script -F tid,cpu,event,addr,data_src,weight,ip`; a summary goes to stderr. Like
 * perf, samples come out in time order (stable), unless --file-order or --all. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmds.h"
#include "core/err.h"
#include "core/json.h"
#include "core/perfdata.h"
#include "core/sort.h"

struct script_opts {
	const char *input;
	int json, all, file_order;
};

/* What a line needs, kept so the samples can be sorted by time before printing. */
struct row {
	uint64_t time, seq, ip, addr, data_src, weight, period, phys;
	uint32_t pid, tid, cpu, attr;
	int has_cpu;
};

struct script_run {
	struct hm_perfdata *pd;
	struct hm_json j;
	uint64_t *per_attr;		/* samples per attr index */
	uint32_t nr_per_attr;
	uint64_t samples;
	int name_width;
	struct row *rows;
	size_t nr_rows, cap_rows;
};

static void usage(FILE *out)
{
	fprintf(out, "usage: hitmap script [-i FILE] [--json] [--file-order] [--all]\n"
		"  -i, --input FILE  perf.data to read, '-' for a pipe (default perf.data)\n"
		"  --json            one hitmap.script/1 object instead of text\n"
		"  --file-order      samples in the order of the file, not sorted by time\n"
		"  --all             also print mmap, comm, fork, exit and lost records "
		"(file order)\n");
}

static int parse_args(int argc, char **argv, struct script_opts *o)
{
	o->input = "perf.data";
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if ((!strcmp(a, "-i") || !strcmp(a, "--input")) && i + 1 < argc)
			o->input = argv[++i];
		else if (!strcmp(a, "-i") || !strcmp(a, "--input"))
			return cli_err("script", -1, "%s needs a value; see 'hitmap script --help'", a);
		else if (!strncmp(a, "--input=", 8))
			o->input = a + 8;
		else if (!strcmp(a, "--json"))
			o->json = 1;
		else if (!strcmp(a, "--all"))
			o->all = o->file_order = 1;
		else if (!strcmp(a, "--file-order"))
			o->file_order = 1;
		else if (!strcmp(a, "-h") || !strcmp(a, "--help"))
			return 1;
		else {
			return cli_err("script", -1, "%s: %s; see 'hitmap script --help'", a,
				       a[0] == '-' ? "unknown option" : "unexpected argument (give the "
				       "file with -i)");
		}
	}
	return 0;
}

/* Attrs arrive as records in pipe mode: grow the per-event counters on demand. */
static void count_sample(struct script_run *r, const struct hm_perf_attr *a)
{
	if (a->index >= r->nr_per_attr) {
		uint32_t n = a->index + 16;
		uint64_t *p = realloc(r->per_attr, n * sizeof(*p));

		if (!p)
			return;
		memset(p + r->nr_per_attr, 0, (n - r->nr_per_attr) * sizeof(*p));
		r->per_attr = p;
		r->nr_per_attr = n;
	}
	r->per_attr[a->index]++;
	r->samples++;
}

static void print_row_text(struct script_run *r, const struct row *w)
{
	const char *name = hm_perfdata_attr(r->pd, w->attr)->name;
	int width = (int)strlen(name);

	if (width > r->name_width)
		r->name_width = width;
	printf("%5u ", w->tid);
	if (w->has_cpu)
		printf("[%03u] ", w->cpu);
	printf("%*s: %16" PRIx64 " %16" PRIx64 " %6" PRIu64 " %16" PRIx64 "\n", r->name_width,
	       name, w->addr, w->data_src, w->weight, w->ip);
}

static void print_row_json(struct script_run *r, const struct row *w)
{
	struct hm_json *j = &r->j;

	hm_json_obj_begin(j, NULL);
	hm_json_str(j, "event", hm_perfdata_attr(r->pd, w->attr)->name);
	hm_json_u64(j, "pid", w->pid);
	hm_json_u64(j, "tid", w->tid);
	hm_json_u64(j, "cpu", w->cpu);
	hm_json_u64(j, "time", w->time);
	hm_json_hex(j, "ip", w->ip);
	hm_json_hex(j, "addr", w->addr);
	hm_json_hex(j, "data_src", w->data_src);
	hm_json_u64(j, "weight", w->weight);
	hm_json_u64(j, "period", w->period);
	hm_json_hex(j, "phys_addr", w->phys);
	hm_json_obj_end(j);
}

static void print_row(struct script_run *r, const struct script_opts *o, const struct row *w)
{
	if (o->json)
		print_row_json(r, w);
	else
		print_row_text(r, w);
}

static struct row make_row(const struct script_run *r, const struct hm_perf_event *ev)
{
	const struct hm_perf_sample *s = &ev->sample;

	return (struct row){
		.time = s->time, .seq = r->samples, .ip = s->ip, .addr = s->addr,
		.data_src = s->data_src, .weight = hm_perf_sample_weight(ev), .period = s->period,
		.phys = s->phys_addr, .pid = s->pid, .tid = s->tid, .cpu = s->cpu,
		.attr = ev->attr->index,
		.has_cpu = !!(ev->attr->attr.sample_type & PERF_SAMPLE_CPU),
	};
}

static int keep_row(struct script_run *r, const struct row *w)
{
	if (r->nr_rows == r->cap_rows) {
		size_t cap = r->cap_rows ? r->cap_rows * 2 : 1024;
		struct row *p = realloc(r->rows, cap * sizeof(*p));

		if (!p)
			return -1;
		r->rows = p;
		r->cap_rows = cap;
	}
	r->rows[r->nr_rows++] = *w;
	return 0;
}

static int row_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void print_other(const struct hm_perf_event *ev)
{
	switch (ev->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		printf("%5u MMAP%s %" PRIx64 "-%" PRIx64 " pgoff %" PRIx64 " %s\n", ev->mmap.tid,
		       ev->type == PERF_RECORD_MMAP2 ? "2" : "", ev->mmap.start,
		       ev->mmap.start + ev->mmap.len, ev->mmap.pgoff, ev->mmap.filename);
		break;
	case PERF_RECORD_COMM:
		printf("%5u COMM %s\n", ev->comm.tid, ev->comm.comm);
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		printf("%5u %s ppid %u ptid %u\n", ev->task.tid,
		       ev->type == PERF_RECORD_FORK ? "FORK" : "EXIT", ev->task.ppid, ev->task.ptid);
		break;
	default:
		printf("      LOST %" PRIu64 "\n", ev->lost.lost);
		break;
	}
}

static int read_all(struct script_run *r, const struct script_opts *o, struct hm_err *err)
{
	struct hm_perf_event ev;
	int rc;

	while ((rc = hm_perfdata_next(r->pd, &ev, err)) > 0) {
		if (ev.type == PERF_RECORD_SAMPLE) {
			struct row w = make_row(r, &ev);

			count_sample(r, ev.attr);
			if (o->file_order)
				print_row(r, o, &w);
			else if (keep_row(r, &w) < 0)
				return hm_err_set(err, HM_EXIT_ENV, "%s: out of memory sorting "
						  "samples: use --file-order", o->input);
		} else if (o->all && !o->json) {
			print_other(&ev);
		}
	}
	if (rc < 0)
		return rc;
	hm_sort(r->rows, r->nr_rows, sizeof(*r->rows), row_cmp);
	for (size_t i = 0; i < r->nr_rows; i++)
		print_row(r, o, &r->rows[i]);
	return 0;
}

static void summary_text(const struct script_run *r, const char *input)
{
	const struct hm_perfdata_stats *st = hm_perfdata_stats(r->pd);
	const struct hm_perf_features *ft = hm_perfdata_features(r->pd);
	uint32_t n = hm_perfdata_nr_attrs(r->pd);

	fprintf(stderr, "%s: %" PRIu64 " sample%s (%s mode)\n", input, r->samples,
		r->samples == 1 ? "" : "s",
		hm_perfdata_is_pipe(r->pd) ? "pipe" : "file");
	for (uint32_t i = 0; i < n; i++)
		fprintf(stderr, "  %-40s %10" PRIu64 " samples\n", hm_perfdata_attr(r->pd, i)->name,
			i < r->nr_per_attr ? r->per_attr[i] : 0);
	fprintf(stderr, "  lost: %" PRIu64 " events in %" PRIu64 " LOST records, %" PRIu64
		" in LOST_SAMPLES; %" PRIu64 " samples with an unknown id\n", st->lost,
		st->records[PERF_RECORD_LOST], st->lost_samples, st->unknown_id);
	fprintf(stderr, "  records: %" PRIu64 " mmap, %" PRIu64 " mmap2, %" PRIu64 " comm, %"
		PRIu64 " fork, %" PRIu64 " exit, %" PRIu64 " skipped\n",
		st->records[PERF_RECORD_MMAP], st->records[PERF_RECORD_MMAP2],
		st->records[PERF_RECORD_COMM], st->records[PERF_RECORD_FORK],
		st->records[PERF_RECORD_EXIT], st->skipped);
	fprintf(stderr, "  host %s, kernel %s, perf %s, %s, cpus %u/%u, %u build-ids\n",
		ft->hostname ? ft->hostname : "?", ft->osrelease ? ft->osrelease : "?",
		ft->version ? ft->version : "?", ft->cpudesc ? ft->cpudesc : "cpu ?",
		ft->nr_cpus_online, ft->nr_cpus_avail, ft->nr_build_ids);
	if (ft->nr_cmdline) {
		fprintf(stderr, "  cmdline:");
		for (uint32_t i = 0; i < ft->nr_cmdline; i++)
			fprintf(stderr, " %s", ft->cmdline[i]);
		fputc('\n', stderr);
	}
}

static void json_str_opt(struct hm_json *j, const char *key, const char *val)
{
	if (val)
		hm_json_str(j, key, val);
	else
		hm_json_null(j, key);
}

static void summary_json(struct script_run *r)
{
	const struct hm_perfdata_stats *st = hm_perfdata_stats(r->pd);
	const struct hm_perf_features *ft = hm_perfdata_features(r->pd);
	struct hm_json *j = &r->j;

	hm_json_arr_end(j);
	hm_json_arr_begin(j, "events");
	for (uint32_t i = 0; i < hm_perfdata_nr_attrs(r->pd); i++) {
		const struct hm_perf_attr *a = hm_perfdata_attr(r->pd, i);

		hm_json_obj_begin(j, NULL);
		hm_json_str(j, "name", a->name);
		hm_json_u64(j, "type", a->attr.type);	/* deprecated: "type" is a name elsewhere */
		hm_json_u64(j, "attr_type", a->attr.type);
		hm_json_hex(j, "config", a->attr.config);
		hm_json_hex(j, "sample_type", a->attr.sample_type);
		hm_json_u64(j, "samples", i < r->nr_per_attr ? r->per_attr[i] : 0);
		hm_json_obj_end(j);
	}
	hm_json_arr_end(j);
	hm_json_u64(j, "lost", st->lost + st->lost_samples);
	hm_json_u64(j, "unknown_id", st->unknown_id);
	hm_json_obj_begin(j, "features");
	json_str_opt(j, "hostname", ft->hostname);
	json_str_opt(j, "osrelease", ft->osrelease);
	json_str_opt(j, "cpudesc", ft->cpudesc);
	hm_json_u64(j, "nr_cpus_online", ft->nr_cpus_online);
	hm_json_u64(j, "build_ids", ft->nr_build_ids);
	hm_json_obj_end(j);
	json_str_opt(j, "warning", hm_perfdata_warning(r->pd));	/* deprecated: warnings */
	hm_json_arr_begin(j, "warnings");
	if (hm_perfdata_warning(r->pd))
		hm_json_str(j, NULL, hm_perfdata_warning(r->pd));
	hm_json_arr_end(j);
	hm_json_obj_end(j);
	hm_json_finish(j);
}

int cmd_script(int argc, char **argv)
{
	struct script_opts o = {0};
	struct script_run r = {0};
	struct hm_err err = {0};
	int rc = parse_args(argc, argv, &o);

	if (rc > 0)
		usage(stdout);
	if (rc)
		return rc > 0 ? HM_EXIT_OK : HM_EXIT_USAGE;
	if (hm_perfdata_open(o.input, &r.pd, &err) < 0) {
		fprintf(stderr, "hitmap script: %s\n", err.msg);
		return err.code ? err.code : HM_EXIT_INPUT;
	}
	for (uint32_t i = 0; i < hm_perfdata_nr_attrs(r.pd); i++) {
		int w = (int)strlen(hm_perfdata_attr(r.pd, i)->name);

		r.name_width = w > r.name_width ? w : r.name_width;
	}
	if (o.json) {
		hm_json_init(&r.j, stdout);
		hm_json_obj_begin(&r.j, NULL);
		hm_json_str(&r.j, "schema", "hitmap.script/1");
		hm_json_str(&r.j, "input", o.input);
		hm_json_str(&r.j, "mode", hm_perfdata_is_pipe(r.pd) ? "pipe" : "file");
		hm_json_arr_begin(&r.j, "samples");
	}
	rc = read_all(&r, &o, &err);
	fflush(stdout);
	if (rc < 0)
		fprintf(stderr, "hitmap script: %s\n", err.msg);
	else if (o.json)
		summary_json(&r);
	else
		summary_text(&r, o.input);
	if (rc == 0 && hm_perfdata_warning(r.pd))
		fprintf(stderr, "hitmap script: warning: %s\n", hm_perfdata_warning(r.pd));
	hm_perfdata_close(r.pd);
	free(r.per_attr);
	free(r.rows);
	return rc < 0 ? (err.code ? err.code : HM_EXIT_INPUT) : HM_EXIT_OK;
}
