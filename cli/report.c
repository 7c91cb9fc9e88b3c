/* hitmap report [-i FILE] [--view lines|fields|sharing|splits|heatmap] [--type T] [--top N]
 *               [--line-size 64|128] [--json | --html FILE] [--stats] [--vmlinux F]
 *               [--kcore F] ... */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/c2c_view.h"
#include "core/oom.h"
#include "analyzer/fixcheck.h"
#include "analyzer/heatmap.h"
#include "render/html.h"
#include "render/accesses_print.h"
#include "render/report_print.h"
#include "resolve/load.h"
#include "cli/cmds.h"
#include "render/stats_print.h"
#include "render/c2c_print.h"
#include "render/heatmap_print.h"
#include "symbolize/data.h"

#define MAX_HEAT_TYPES 5
#define HM_REPORT_BATCH (1 << 18)	/* accesses per batch: docs/report.md, Memory */
/* Lines kept at most (--max-lines): docs/report.md, Memory, has the arithmetic; with the
 * prune's copy this peaks near 2.5 GB, under 4 GB with the batch and the resolver. */
#define HM_REPORT_MAX_LINES 500000

struct report_args {
	const char *input, *type, *html;
	int view, heatmap, json, stats, wide;
	int accesses;			/* --view accesses: the list, no analysis */
	int c2c, view_given, c2c_opt;	/* --view c2c; -d, -c, --show-all, -N given */
	struct hm_c2c_opts c2o;
	size_t top;
	uint32_t line_size;
	uint64_t window_ns;
	size_t batch, max_lines;
	struct hm_resolve_opts ro;
};

static void report_usage(FILE *out)
{
	fprintf(out,
		"usage: hitmap report [-i FILE] [--view V] [--type T] [--top N]\n"
		"                     [--line-size 64|128] [--json | --html F]\n"
		"                     [--stats] [--vmlinux F] [--kcore F] [--sysroot D]\n"
		"                     [--buildid-dir D] [--window US] [--batch N] [--wide]\n"
		"                     [--kallsyms F] [--max-lines N] [--force] [--jobs N]\n"
		"                     [-d tot|lcl|rmt|peer] [-c tid,pid,iaddr] [--show-all] [-N]\n"
		"                     [--stdio]\n\n"
		"  -i FILE        perf.data from 'hitmap record', 'perf record', 'perf mem record'\n"
		"                 or 'perf c2c record' (default perf.data; - reads a pipe)\n"
		"  --view V       lines (c2c-style table), fields, sharing (false/true sharing\n"
		"                 and the fix), splits, heatmap (the hot type's layout with counts)\n"
		"                 c2c (perf c2c report's sections and columns, shared lines)\n"
		"                 or accesses (each sample as resolved, in time order: what\n"
		"                 named it; --json: hitmap.accesses/1; --top N: the first N)\n"
		"  -d M           c2c: sort and filter lines on tot, lcl or rmt HITM, or peer\n"
		"  -c KEYS        c2c: Pareto rows by offset and KEYS of tid,pid,iaddr (iaddr)\n"
		"  --show-all     c2c: every line, not only those with HITM (0.1%% or more)\n"
		"  -N             c2c: node columns (says why there are none)\n"
		"  --stdio        accepted, as perf c2c takes it: the output is always text\n"
		"  --type T       only accesses to objects of type T (or the global T)\n"
		"  --html F       write a self-contained page with the hot types' heat maps (and\n"
		"                 print nothing else)\n"
		"  --json         hitmap.report/1 (with --view heatmap, plus \"heatmap\")\n"
		"  --wide         text lines as long as they come (default: wrapped at 120)\n"
		"  --stats        how many samples got an address and an object, by method\n"
		"  --vmlinux F    the recorded kernel's vmlinux (default: the -dbg package's);\n"
		"                 one of another build (build-id) is refused: exit 2\n"
		"  --kallsyms F   the recording machine's /proc/kallsyms (default: this one's,\n"
		"                 when the recorded kernel release runs here); one of another\n"
		"                 build or boot (text size, module addresses) is refused: exit 2\n"
		"  --force        use that --vmlinux or --kallsyms anyway, with a warning\n"
		"  --kcore F      without a vmlinux, kernel code bytes from this core file of\n"
		"                 the running kernel (default /proc/kcore, as root, when the\n"
		"                 recorded kernel runs here); types from /sys/kernel/btf/vmlinux\n"
		"  --window US    timer conflict window in microseconds (default 100)\n"
		"  --batch N      accesses held in memory at once (default %d, about 70 MB):\n"
		"                 memory is this plus per-line tables, whatever the file's size\n"
		"  --max-lines N  distinct cache lines kept (default %d, about 2.5 GB at the\n"
		"                 most); past it the least contended are dropped, and counted\n"
		"  --jobs N       2 (the default with two CPUs online): the samples are\n"
		"                 resolved on one thread and the report's tables built on\n"
		"                 another; 3: the file is also read on a third (slower on two\n"
		"                 CPUs); 1: one thread. The output is the same byte for byte\n",
		HM_REPORT_BATCH, HM_REPORT_MAX_LINES);
}

/* perf c2c report's -d, -c, --show-all and -N; any of them means --view c2c. */
static int c2c_option(struct report_args *a, int c, const char *arg)
{
	const char *bad = "";
	size_t bad_len = 0;
	int d;

	a->c2c_opt = 1;
	if (c == 'A') {
		a->c2o.show_all = 1;
	} else if (c == 'N') {
		a->c2o.node_info = 1;
	} else if (c == 'd') {
		if ((d = hm_c2c_display_parse(arg)) < 0)
			return cli_err("report", -1, "-d %s: choose tot, lcl, rmt or peer", arg);
		a->c2o.display = (enum hm_c2c_display)d;
	} else if (!(a->c2o.coalesce = hm_c2c_coalesce_parse(arg, &bad, &bad_len))) {
		return cli_err("report", -1, "-c %s: unknown key '%.*s': choose from tid,pid,iaddr "
			       "(perf's dso is not kept per sample)", arg, (int)bad_len, bad);
	}
	return 0;
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
		{"batch", required_argument, NULL, 'b'}, {"wide", no_argument, NULL, 'W'},
		{"force", no_argument, NULL, 'f'}, {"kallsyms", required_argument, NULL, 'Y'},
		{"display", required_argument, NULL, 'd'}, {"coalesce", required_argument, NULL, 'c'},
		{"show-all", no_argument, NULL, 'A'}, {"stdio", no_argument, NULL, 'S'},
		{"node-info", no_argument, NULL, 'N'},
		{"max-lines", required_argument, NULL, 'M'}, {"jobs", required_argument, NULL, 'J'},
		{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
	};
	uint64_t v;
	int c;

	memset(a, 0, sizeof(*a));
	a->input = "perf.data";
	a->line_size = 64;
	a->view = HM_VIEW_LINES;
	a->batch = HM_REPORT_BATCH;
	a->c2o.coalesce = HM_C2C_BY_IADDR;
	a->max_lines = HM_REPORT_MAX_LINES;
	a->ro.jobs = cli_jobs_default();
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":i:t:n:d:c:Nh", longopts, NULL)) != -1) {
		switch (c) {
		case 'i': a->input = optarg; break;
		case 'v':
			a->view_given = 1;
			if (!strcmp(optarg, "c2c")) {
				a->c2c = 1;
			} else if (!strcmp(optarg, "heatmap")) {
				a->heatmap = 1;
			} else if (!strcmp(optarg, "accesses")) {
				a->accesses = 1;
			} else if ((a->view = hm_report_view_parse(optarg)) < 0) {
				return cli_err("report", -1, "--view %s: choose lines, fields, "
					       "sharing, splits, heatmap, c2c or accesses", optarg);
			}
			break;
		case 't': a->type = optarg; break;
		case 'n': if (cli_size_t("report", "--top", optarg, &a->top)) return -1; break;
		case 'L':
			if (cli_line_size("report", optarg, 32, 128, &a->line_size))
				return -1;
			break;
		case 'j': a->json = 1; break;
		case 'H': a->html = optarg; break;
		case 's': a->stats = 1; break;
		case 'k': a->ro.vmlinux = optarg; break;
		case 'K': a->ro.kcore = optarg; break;
		case 'Y': a->ro.kallsyms = optarg; break;
		case 'f': a->ro.force = 1; break;
		case 'R': a->ro.sysroot = optarg; break;
		case 'B': a->ro.buildid_dir = optarg; break;
		case 'w': if (cli_window("report", optarg, &a->window_ns)) return -1; break;
		case 'b':
			if (cli_number("report", "--batch", optarg, 1, 1ull << 32, &v))
				return -1;
			a->batch = (size_t)v;
			break;
		case 'W': a->wide = 1; break;
		case 'd': case 'c': case 'A': case 'N':
			if (c2c_option(a, c, optarg))
				return -1;
			break;
		case 'S': break;	/* perf c2c's --stdio: hitmap always prints to stdio */
		case 'M':
			if (cli_number("report", "--max-lines", optarg, 1, 1ull << 31, &v))
				return -1;
			a->max_lines = (size_t)v;
			break;
		case 'J': if (cli_jobs("report", optarg, &a->ro.jobs)) return -1; break;
		case 'h': report_usage(stdout); exit(HM_EXIT_OK);
		default: cli_bad_option("report", c, argv); return -1;
		}
	}
	if (optind != argc)
		return cli_err("report", -1, "%s: unexpected argument: give the recording with -i "
			       "FILE", argv[optind]);
	if (a->json && a->html)
		return cli_err("report", -1, "--json and --html: choose one");
	if (a->c2c_opt && a->view_given && !a->c2c)
		return cli_err("report", -1, "-d, -c, --show-all and -N shape --view c2c: drop "
			       "--view or give --view c2c");
	a->c2c |= a->c2c_opt;
	if (a->c2c && (a->html || a->heatmap))
		return cli_err("report", -1, "--view c2c has no page: drop --html");
	if (a->accesses && (a->html || a->c2c))
		return cli_err("report", -1, "--view accesses is a list: drop %s",
			       a->html ? "--html" : "the c2c options");
	return 0;
}

/* The type or global an access belongs to, as --type names it. */
static int matches_type(const struct hm_access *a, const char *want)
{
	const char *name = hm_type_name(hm_type_agg(a->type, NULL));
	const char *obj = a->object;

	if (name && (!strcmp(name, want) ||
		     (!strncmp(want, "struct ", 7) && !strcmp(name, want + 7))))
		return 1;
	return obj && (!strcmp(obj, want) ||
		       (!strncmp(obj, "struct ", 7) && !strcmp(obj + 7, want)));
}

/* --type T, and the names seen that are not T, for the nearest-name hint. */
#define MAX_SEEN 256

struct type_filter {
	const char *want;
	const char *seen[MAX_SEEN];
	size_t nr_seen;
};

static void saw(struct type_filter *f, const char *name)
{
	for (size_t i = 0; i < f->nr_seen; i++)
		if (f->seen[i] == name || !strcmp(f->seen[i], name))
			return;
	if (f->nr_seen < MAX_SEEN)
		f->seen[f->nr_seen++] = name;
}

static int keep_type(const struct hm_access *x, void *ctx)
{
	struct type_filter *f = ctx;
	const struct hm_type *t;

	if (matches_type(x, f->want))
		return 1;
	t = hm_type_strip(x->type);
	if (t && t->name && hm_type_is_aggregate(t))
		saw(f, t->name);
	else if (x->object)
		saw(f, x->object);
	return 0;
}

/* No access to --type T: exit 2 naming the recorded types nearest to T. */
static int unknown_type(const struct report_args *a, const struct type_filter *f)
{
	const char *near[3];
	size_t n = cli_nearest(f->want, f->seen, f->nr_seen, near, 3);

	if (!n)
		return cli_err("report", HM_EXIT_INPUT, "--type %s: %s has no access to a typed "
			       "object: see --stats for what resolved", a->type, a->input);
	return cli_err("report", HM_EXIT_INPUT, "--type %s: no access to that type in %s; "
		       "nearest: %s%s%s%s%s", a->type, a->input, near[0], n > 1 ? ", " : "",
		       n > 1 ? near[1] : "", n > 2 ? ", " : "", n > 2 ? near[2] : "");
}

/* What the batches build: lines, splits, and the heat maps of the aggregate types seen
 * (matching --type: the stream keeps only those), of which the busiest are drawn. */
struct run {
	const struct report_args *a;
	struct hm_arena ar;
	struct hm_lines_acc *lines;
	struct hm_splits_acc *splits;
	struct hm_splits split_out;
	struct hm_heat_set heat;
	/* each run's heat map picks, from on_prep (the resolver's thread, where types
	 * load) to on_batch (maybe the tables' thread): hm_heat_set_prepare */
	struct heat_run {
		int8_t *pick;
		size_t cap, nr;
	} ring[HM_STREAM_PREP_AHEAD];
	size_t prepped, fed;
	struct hm_c2c_acc *c2c;		/* --view c2c */
	struct hm_err err;
};

static void on_prep(const struct hm_access *acc, size_t n, void *arg)
{
	struct run *r = arg;
	struct heat_run *h = &r->ring[r->prepped++ % HM_STREAM_PREP_AHEAD];

	if (n > h->cap) {
		free(h->pick);
		if (!(h->pick = malloc(h->cap = n)))
			hm_oom();
	}
	h->nr = hm_heat_set_prepare(&r->heat, acc, n, h->pick);
}

static int on_batch(const struct hm_access *acc, size_t n, void *arg)
{
	struct run *r = arg;

	if (hm_lines_acc_add(r->lines, acc, n, &r->err))
		return -1;
	hm_splits_add(r->splits, acc, n);
	if (r->c2c)
		hm_c2c_acc_add(r->c2c, acc, n);
	if (r->a->heatmap || r->a->html) {
		const struct heat_run *h = &r->ring[r->fed++ % HM_STREAM_PREP_AHEAD];

		hm_heat_set_feed(&r->heat, acc, n, h->pick, h->nr);
	}
	return 0;
}

/* --view accesses: printed as they come, nothing kept. */
static int on_accesses(const struct hm_access *acc, size_t n, void *arg)
{
	hm_accesses_add(arg, acc, n);
	return 0;
}

/* The busiest heat maps: one, or with --html and no --type up to MAX_HEAT_TYPES. */
static int pick_heat(const struct report_args *a, struct run *r, const struct hm_heat **hp,
		     size_t *n)
{
	size_t max = a->type || !a->html ? 1 : MAX_HEAT_TYPES;

	*n = hm_heat_set_busiest(&r->heat, hp, max);
	if (*n || (a->html && !a->type))
		return 0;	/* the page has its lines without any type */
	if (a->type)
		return cli_err("report", HM_EXIT_INPUT, "--type %s: no access to it has a known "
			       "struct type in %s: see --stats for what resolved", a->type, a->input);
	return cli_err("report", HM_EXIT_INPUT, "%s: no access has a known struct type: see "
		       "--stats for what resolved", a->input);
}

/* The recorded command line (perf's CMDLINE feature) in buf, or NULL without one. */
static const char *recorded_cmdline(const struct hm_recording *rec, char *buf, size_t size)
{
	const struct hm_perf_features *ft = rec->pd ? hm_perfdata_features(rec->pd) : NULL;
	size_t len = 0;

	if (!ft || !ft->nr_cmdline)
		return NULL;
	buf[0] = 0;
	for (uint32_t i = 0; i < ft->nr_cmdline && len + 1 < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? " " : "",
					ft->cmdline[i] ? ft->cmdline[i] : "");
	return buf;
}

/* --html: the page only, and one line on stderr saying where. */
static int write_html(const struct report_args *a, const struct hm_recording *rec,
		      const struct hm_lines *lines, const struct hm_heat **hp, size_t n)
{
	struct hm_html_page pg = {.input = a->input, .lost = rec->lost, .lines = lines,
				  .heat = hp, .nr_heat = n};
	char cmd[1024];
	FILE *f = fopen(a->html, "w");

	if (!f)
		return cli_err("report", HM_EXIT_ENV, "--html %s: cannot write it: check the path",
			       a->html);
	pg.command = recorded_cmdline(rec, cmd, sizeof(cmd));
	hm_html_print_report(f, &pg);
	if (fclose(f))
		return cli_err("report", HM_EXIT_ENV, "--html %s: write failed: check the disk",
			       a->html);
	fprintf(stderr, "hitmap report: wrote %s (%zu %s, heat %s of %zu %s)\n", a->html,
		lines->nr, cli_plural(lines->nr, "line", "lines"), cli_plural(n, "map", "maps"), n,
		cli_plural(n, "type", "types"));
	return 0;
}

static int analyze(struct report_args *a, struct run *r, struct hm_recording *rec)
{
	const struct hm_heat *hp[MAX_HEAT_TYPES];
	struct hm_c2c_view c2v;
	struct hm_lines lines;
	struct hm_report_view v = {.input = a->input, .lost = rec->lost, .top = a->top,
				   .view = (enum hm_report_view_kind)a->view, .lines = &lines,
				   .splits = &r->split_out, .heat = hp};
	struct cli_text t;
	size_t nh = 0;
	int rc = 0;
	FILE *out;

	hm_lines_acc_end(r->lines, &lines);
	hm_sharing_watched(&r->ar, &lines, &rec->watched);
	hm_fixcheck_lines(&r->ar, &lines, HM_FIX_CHECK_LINES);
	r->lines = NULL;
	hm_splits_end(r->splits);
	r->splits = NULL;
	hm_heat_set_end(&r->heat);
	if (r->c2c) {
		hm_c2c_acc_end(r->c2c, &r->ar, &lines, &c2v);
		r->c2c = NULL;
		v.c2c = &c2v;
	}
	v.source = lines.source;
	v.warning = rec->kernel_warning;
	{
		struct hm_data_stats ds;

		hm_data_stats(hm_resolver_data(rec->resolver), 0, &ds);
		v.slab_source = ds.slab_source;
		v.kernel_slab = ds.kernel_slab;
	}
	if ((a->heatmap || a->html) && (rc = pick_heat(a, r, hp, &nh)))
		return rc;
	if (a->html) {
		rc = write_html(a, rec, &lines, hp, nh);
	} else if (a->json) {
		v.nr_heat = a->heatmap ? nh : 0;
		hm_report_print_json(stdout, &v);
	} else {
		out = cli_text_begin(&t, a->wide);
		for (size_t i = 0; a->heatmap && i < nh; i++)
			hm_heat_print_text(out, hp[i]);
		if (v.c2c)
			hm_c2c_print_text(out, v.c2c, a->input, a->top, a->wide);
		else if (!a->heatmap)
			hm_report_print_text(out, &v);
		if (a->stats)
			hm_stats_print(out, rec->resolver);
		cli_text_end(&t);
	}
	if (!rc && a->stats && (a->json || a->html))
		hm_stats_print(stderr, rec->resolver);	/* stdout holds the JSON or nothing */
	return rc;
}

/* --view accesses: the JSON document's end, or --stats after the text list. */
static int list_end(const struct report_args *a, struct hm_accesses_out *ao,
		    const struct hm_recording *rec)
{
	hm_accesses_end(ao, rec->lost, rec->kernel_warning);
	fflush(stdout);
	if (a->stats)
		hm_stats_print(a->json ? stderr : stdout, rec->resolver);
	return 0;
}

static void run_free(struct run *r)
{
	struct hm_lines discard;

	if (r->lines)
		hm_lines_acc_end(r->lines, &discard);
	hm_splits_end(r->splits);
	hm_heat_set_end(&r->heat);
	for (size_t i = 0; i < HM_STREAM_PREP_AHEAD; i++)
		free(r->ring[i].pick);
	if (r->c2c)
		hm_c2c_acc_end(r->c2c, &r->ar, NULL, &(struct hm_c2c_view){0});
	hm_arena_free(&r->ar);
}

int cmd_report(int argc, char **argv)
{
	struct report_args a;
	struct hm_recording rec = {0};
	struct hm_err err = {0};
	struct type_filter tf = {0};
	struct hm_accesses_out ao = {0};
	struct run r = {0};
	int rc = 0;

	if (parse_args(argc, argv, &a))
		return HM_EXIT_USAGE;
	tf.want = a.type;
	r.a = &a;
	/* heat maps load struct members through libdw, which the resolver uses too: they
	 * are laid out on its thread (on_prep) and counted on the tables' thread */
	a.ro.flush_apart = 1;
	if ((a.heatmap || a.html) && !a.accesses)
		a.ro.prep = on_prep;
	hm_arena_init(&r.ar);
	hm_heat_set_init(&r.heat, &r.ar, &(struct hm_heat_opts){.line_size = a.line_size});
	r.lines = hm_lines_acc_new(&r.ar, a.line_size, a.window_ns);
	if (a.c2c)
		r.c2c = hm_c2c_acc_new(a.line_size, &a.c2o);
	hm_lines_acc_set_max(r.lines, a.max_lines);
	if (a.accesses)
		hm_accesses_begin(&ao, stdout, a.json, a.top, a.input);
	if (hm_splits_begin(&r.ar, a.line_size, &r.split_out, &r.splits, &err) ||
	    hm_recording_stream(a.input, &a.ro, a.type ? keep_type : NULL, &tf, a.batch,
				a.accesses ? on_accesses : on_batch,
				a.accesses ? (void *)&ao : (void *)&r, &rec, &err)) {
		if (r.err.msg[0])
			err = r.err;
		cli_err("report", 0, "%s", err.msg);
		run_free(&r);	/* before rec: it holds the resolver's strings */
		hm_recording_free(&rec);
		return err.code ? err.code : HM_EXIT_INPUT;
	}
	if (rec.warning)
		cli_err("report", 0, "warning: %s", rec.warning);
	if (rec.kernel_warning)
		cli_err("report", 0, "warning: %s", rec.kernel_warning);
	if (rec.lost)
		cli_err("report", 0, "%s: %llu %s lost while recording: the numbers undercount; "
			"record with a larger -m or a lower -F", a.input, (unsigned long long)rec.lost,
			cli_plural(rec.lost, "sample was", "samples were"));
	if ((rc = cli_stale("report", &rec, a.ro.force)))
		;	/* names and lines would be of another build */
	else if (rec.total == 0 && a.type)
		rc = unknown_type(&a, &tf);
	else if (a.accesses)
		rc = list_end(&a, &ao, &rec);
	else
		rc = analyze(&a, &r, &rec);
	run_free(&r);
	hm_recording_free(&rec);
	return rc;
}
