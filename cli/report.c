/* hitmap report [-i FILE] [--view lines|fields|sharing|splits|heatmap] [--type T] [--top N]
 *               [--line-size 64|128] [--json | --html FILE] [--stats] [--vmlinux F]
 *               [--kcore F] ... */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/heatmap.h"
#include "analyzer/report_print.h"
#include "analyzer/load.h"
#include "cli/cmds.h"
#include "analyzer/stats_print.h"

#define MAX_HEAT_TYPES 5
#define HM_REPORT_BATCH (1 << 18)	/* accesses per batch: docs/report.md, Memory */

struct report_args {
	const char *input, *type, *html;
	int view, heatmap, json, stats;
	size_t top;
	uint32_t line_size;
	uint64_t window_ns;
	size_t batch;
	struct hm_resolve_opts ro;
};

static void report_usage(FILE *out)
{
	fprintf(out,
		"usage: hitmap report [-i FILE] [--view lines|fields|sharing|splits|heatmap]\n"
		"                     [--type T] [--top N] [--line-size 64|128] [--json | --html F]\n"
		"                     [--stats] [--vmlinux F] [--kcore F] [--sysroot D]\n"
		"                     [--buildid-dir D] [--window US] [--batch N]\n"
		"                     [--force]\n\n"
		"  -i FILE        perf.data from 'hitmap record', 'perf record', 'perf mem record'\n"
		"                 or 'perf c2c record' (default perf.data; - reads a pipe)\n"
		"  --view V       lines (c2c-style table), fields, sharing (false/true sharing\n"
		"                 and the fix), splits, heatmap (the hot type's layout with counts)\n"
		"  --type T       only accesses to objects of type T (or the global T)\n"
		"  --html F       write a self-contained page with the hot types' heat maps\n"
		"  --stats        how many samples got an address and an object, by method\n"
		"  --vmlinux F    the recorded kernel's vmlinux (default: the -dbg package's);\n"
		"                 one of another build (build-id) is refused: exit 2\n"
		"  --force        use that --vmlinux anyway, with a warning (stderr, JSON)\n"
		"  --kcore F      without a vmlinux, kernel code bytes from this core file of\n"
		"                 the running kernel (default /proc/kcore, as root, when the\n"
		"                 recorded kernel runs here); types from /sys/kernel/btf/vmlinux\n"
		"  --window US    timer conflict window in microseconds (default 100)\n"
		"  --batch N      accesses held in memory at once (default %d, about 160 MB):\n"
		"                 memory is this plus per-line tables, whatever the file's size\n",
		HM_REPORT_BATCH);
}

static int parse_args(int argc, char **argv, struct report_args *a)
{
	static const struct option longopts[] = {
		{"input", required_argument, NULL, 'i'}, {"view", required_argument, NULL, 'v'},
		{"type", required_argument, NULL, 't'}, {"top", required_argument, NULL, 'n'},
		{"line-size", required_argument, NULL, 'L'}, {"json", no_argument, NULL, 'j'},
		{"html", required_argument, NULL, 'H'}, {"stats", no_argument, NULL, 's'},
		{"vmlinux", required_argument, NULL, 'k'}, {"kcore", required_argument, NULL, 'K'},
		{"sysroot", required_argument, NULL, 'R'},
		{"buildid-dir", required_argument, NULL, 'B'}, {"window", required_argument, NULL, 'w'},
		{"batch", required_argument, NULL, 'b'}, {"force", no_argument, NULL, 'f'},
		{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
	};
	int c;
	char *end;

	memset(a, 0, sizeof(*a));
	a->input = "perf.data";
	a->line_size = 64;
	a->view = HM_VIEW_LINES;
	a->batch = HM_REPORT_BATCH;
	while ((c = getopt_long(argc, argv, "i:t:n:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i': a->input = optarg; break;
		case 'v':
			if (!strcmp(optarg, "heatmap")) {
				a->heatmap = 1;
			} else if ((a->view = hm_report_view_parse(optarg)) < 0) {
				fprintf(stderr, "hitmap report: --view %s: choose lines, fields, sharing, "
						"splits or heatmap\n", optarg);
				return -1;
			}
			break;
		case 't': a->type = optarg; break;
		case 'n': a->top = strtoul(optarg, &end, 0); if (*end) return -1; break;
		case 'L':
			if (cli_line_size("report", optarg, 32, 128, &a->line_size))
				return -1;
			break;
		case 'j': a->json = 1; break;
		case 'H': a->html = optarg; break;
		case 's': a->stats = 1; break;
		case 'k': a->ro.vmlinux = optarg; break;
		case 'K': a->ro.kcore = optarg; break;
		case 'f': a->ro.force = 1; break;
		case 'R': a->ro.sysroot = optarg; break;
		case 'B': a->ro.buildid_dir = optarg; break;
		case 'w': a->window_ns = strtoull(optarg, &end, 0) * 1000; if (*end) return -1; break;
		case 'b':
			a->batch = strtoull(optarg, &end, 0);
			if (*end || !a->batch) {
				fprintf(stderr, "hitmap report: --batch %s: give a number of accesses "
						"above 0\n", optarg);
				return -1;
			}
			break;
		case 'h': report_usage(stdout); exit(HM_EXIT_OK);
		default: report_usage(stderr); return -1;
		}
	}
	if (optind != argc) {
		report_usage(stderr);
		return -1;
	}
	return 0;
}

/* The type or global an access belongs to, as --type names it. */
static int matches_type(const struct hm_access *a, const char *want)
{
	const struct hm_type *t = hm_type_strip(a->type);
	const char *obj = a->object;

	if (t && t->name && (!strcmp(t->name, want) ||
			     (!strncmp(want, "struct ", 7) && !strcmp(t->name, want + 7))))
		return 1;
	return obj && (!strcmp(obj, want) ||
		       (!strncmp(obj, "struct ", 7) && !strcmp(obj + 7, want)));
}

static int keep_type(const struct hm_access *x, void *ctx)
{
	return matches_type(x, ctx);
}

/* What the batches build: lines, splits, and heat maps of the first MAX_HEAT_CANDS
 * aggregate types seen (matching --type), of which the busiest are drawn. */
#define MAX_HEAT_CANDS (MAX_HEAT_TYPES * 8)

struct heat_cand {
	const struct hm_type *t;
	uint64_t count;
	struct hm_heat heat;
	struct hm_heat_acc *acc;
};

struct run {
	const struct report_args *a;
	struct hm_arena ar;
	struct hm_lines_acc *lines;
	struct hm_splits_acc *splits;
	struct hm_splits split_out;
	struct heat_cand cand[MAX_HEAT_CANDS];
	size_t nr_cand;
	struct hm_err err;
};

static void heat_count(struct run *r, const struct hm_access *acc, size_t n)
{
	struct hm_heat_opts o = {.line_size = r->a->line_size};

	for (size_t i = 0; i < n; i++) {
		const struct hm_type *t = hm_type_strip(acc[i].type);
		struct heat_cand *c = NULL;

		if (!t || !hm_type_is_aggregate(t) || !t->size ||
		    (r->a->type && !matches_type(&acc[i], r->a->type)))
			continue;
		for (size_t k = 0; k < r->nr_cand && !c; k++)
			if (hm_heat_type_matches(r->cand[k].t, t))
				c = &r->cand[k];
		if (!c && r->nr_cand < MAX_HEAT_CANDS) {
			c = &r->cand[r->nr_cand];
			if (hm_heat_begin(&r->ar, t, &o, &c->heat, &c->acc, NULL))
				continue;
			c->t = t;
			r->nr_cand++;
		}
		if (c)
			c->count++;
	}
	for (size_t k = 0; k < r->nr_cand; k++)
		hm_heat_add(r->cand[k].acc, acc, n);
}

static int on_batch(const struct hm_access *acc, size_t n, void *arg)
{
	struct run *r = arg;

	if (hm_lines_acc_add(r->lines, acc, n, &r->err))
		return -1;
	hm_splits_add(r->splits, acc, n);
	if (r->a->heatmap || r->a->html)
		heat_count(r, acc, n);
	return 0;
}

static int heatmaps(const struct report_args *a, struct run *r)
{
	const struct hm_heat *hp[MAX_HEAT_TYPES];
	size_t n = 0, max = a->type || !a->html ? 1 : MAX_HEAT_TYPES;
	FILE *f;

	while (n < max) {
		struct heat_cand *best = NULL;

		for (size_t k = 0; k < r->nr_cand; k++)
			if (r->cand[k].count && (!best || r->cand[k].count > best->count))
				best = &r->cand[k];
		if (!best)
			break;
		hp[n++] = &best->heat;
		best->count = 0;
	}
	if (!n) {
		fprintf(stderr, "hitmap report: no accesses %s%s%s have a known struct type: see "
				"--stats for what resolved\n", a->type ? "to '" : "",
			a->type ? a->type : "", a->type ? "'" : "");
		return HM_EXIT_INPUT;
	}
	if (a->html) {
		if (!(f = fopen(a->html, "w"))) {
			fprintf(stderr, "hitmap report: cannot write %s: check the path\n", a->html);
			return HM_EXIT_ENV;
		}
		hm_heat_print_html(f, hp, n, a->input);
		fclose(f);
	}
	if (a->heatmap && !a->json)
		for (size_t i = 0; i < n; i++)
			hm_heat_print_text(stdout, hp[i]);
	if (a->heatmap && a->json) {
		struct hm_json j;

		hm_json_init(&j, stdout);
		hm_json_obj_begin(&j, NULL);
		hm_json_str(&j, "schema", "hitmap.heatmap/1");
		hm_json_str(&j, "input", a->input);
		hm_json_arr_begin(&j, "types");
		for (size_t i = 0; i < n; i++)
			hm_heat_print_json(&j, hp[i]);
		hm_json_arr_end(&j);
		hm_json_obj_end(&j);
		hm_json_finish(&j);
	}
	return 0;
}

static int analyze(struct report_args *a, struct run *r, struct hm_recording *rec)
{
	struct hm_lines lines;
	int rc = 0;

	hm_lines_acc_end(r->lines, &lines);
	r->lines = NULL;
	hm_splits_end(r->splits);
	r->splits = NULL;
	for (size_t k = 0; k < r->nr_cand; k++) {
		hm_heat_end(r->cand[k].acc);
		r->cand[k].acc = NULL;
	}
	if (a->heatmap || a->html)
		rc = heatmaps(a, r);
	if (!rc && !a->heatmap) {
		struct hm_report_view v = {
			.input = a->input, .source = lines.source,
			.lost = rec->lost, .top = a->top,
			.view = (enum hm_report_view_kind)a->view, .lines = &lines,
			.splits = &r->split_out, .warning = rec->kernel_warning,
		};

		if (a->json)
			hm_report_print_json(stdout, &v);
		else
			hm_report_print_text(stdout, &v);
	}
	if (!rc && a->stats)
		hm_stats_print(a->json ? stderr : stdout, rec->resolver);
	return rc;
}

static void run_free(struct run *r)
{
	struct hm_lines discard;

	if (r->lines)
		hm_lines_acc_end(r->lines, &discard);
	hm_splits_end(r->splits);
	for (size_t k = 0; k < r->nr_cand; k++)
		hm_heat_end(r->cand[k].acc);
	hm_arena_free(&r->ar);
}

int cmd_report(int argc, char **argv)
{
	struct report_args a;
	struct hm_recording rec;
	struct hm_err err = {0};
	struct run r = {0};
	int rc = 0;

	if (parse_args(argc, argv, &a))
		return HM_EXIT_USAGE;
	r.a = &a;
	hm_arena_init(&r.ar);
	r.lines = hm_lines_acc_new(&r.ar, a.line_size, a.window_ns);
	if (hm_splits_begin(&r.ar, a.line_size, &r.split_out, &r.splits, &err) ||
	    hm_recording_stream(a.input, &a.ro, a.type ? keep_type : NULL, (void *)a.type,
				a.batch, on_batch, &r, &rec, &err)) {
		if (r.err.msg[0])
			err = r.err;
		fprintf(stderr, "hitmap report: %s\n", err.msg);
		run_free(&r);
		return err.code ? err.code : HM_EXIT_INPUT;
	}
	if (rec.warning)
		fprintf(stderr, "hitmap report: warning: %s\n", rec.warning);
	if (rec.kernel_warning)
		fprintf(stderr, "hitmap report: warning: %s\n", rec.kernel_warning);
	if (rec.lost)
		fprintf(stderr, "hitmap report: %llu samples were lost while recording: the "
				"numbers undercount; record with a larger -m or a lower -F\n",
			(unsigned long long)rec.lost);
	if (rec.total == 0)
		fprintf(stderr, "hitmap report: %s: no samples%s%s\n", a.input,
			a.type ? " of type " : "", a.type ? a.type : "");
	else
		rc = analyze(&a, &r, &rec);
	run_free(&r);
	hm_recording_free(&rec);
	return rc;
}
