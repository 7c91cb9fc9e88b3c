/* hitmap compare A1.data[:NAME=V,...]... -- B1.data[:NAME=V,...]... [--metric NAME]
 *                [--metric NAME=V1,V2,...] [--line-size N] [--top N] [--json] ... */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyzer/compare.h"
#include "analyzer/lines.h"
#include "resolve/load.h"
#include "cli/cmds.h"
#include "core/oom.h"
#include "render/compare_print.h"

#define HM_COMPARE_BATCH (1 << 18)	/* accesses held at once per run, as report's --batch */

struct run_batch {
	struct hm_cmp_acc *acc;
	struct hm_err err;
};

#define MAX_OPTS 64

struct compare_args {
	const char **files;		/* A's runs, then B's */
	const char **suffix;		/* per run: "NAME=V,..." given after FILE:, or NULL */
	size_t na, nb;
	const char *filters[MAX_OPTS], *lists[MAX_OPTS];	/* --metric NAME, NAME=V1,.. */
	size_t nr_filters, nr_lists;
	int json, no_layout, wide;
	size_t top, max_lines;
	double hot_min;			/* --hot */
	uint32_t line_size;
	struct hm_resolve_opts ro;
	const char *vmlinux_a, *vmlinux_b;	/* --vmlinux-a/-b: each side's kernel */
	struct hm_cmp_groups groups;	/* run groups in time order: A, B, A... */
};

static void compare_usage(FILE *out)
{
	fprintf(out,
		"usage: hitmap compare A1.data A2.data ... -- B1.data B2.data ... [--json]\n"
		"                      [--metric NAME] [--metric NAME=V1,V2,...] [--top N]\n"
		"                      [--line-size N] [--no-layout] [--vmlinux F] [--sysroot D]\n"
		"                      [--buildid-dir D] [--vmlinux-a F] [--vmlinux-b F]\n"
		"                      [--max-lines N] [--hot PER1000] [--jobs N]\n\n"
		"A: runs of the base build, B: runs of the new build (3 to 5 each: the test needs\n"
		"at least 2). Each run is read with its own build's debuginfo and matched by\n"
		"type.field. A run's own metrics: FILE:NAME=VALUE[,NAME=VALUE], or a file\n"
		"FILE.metrics (or FILE without .data, plus .metrics) of 'NAME VALUE' lines.\n"
		"  --metric NAME          show only metrics whose name contains NAME\n"
		"  --metric NAME=V1,...   one value per run: A's runs, then B's, in order\n"
		"  --top N                non-significant rows shown in text (default 20; 0: all)\n"
		"  --line-size N          cache-line size (default 64)\n"
		"  --no-layout            skip the layout diff of the two builds\n"
		"  --hot PER1000          a field is hot for the layout diff with this many samples\n"
		"                         per 1000 on either side, or any contention (default 10)\n"
		"  --max-lines N          distinct cache lines kept per run (default %d, as\n"
		"                         report's); past it the least contended are dropped,\n"
		"                         and the fields on them not counted (a note says so)\n"
		"  --vmlinux-a F, -b F    each side's kernel (default: the -dbg package's of the\n"
		"                         recorded release); one of another build is refused\n"
		"  --jobs N               2 (the default with two CPUs online): two runs load at\n"
		"                         once, each resolved on one thread and tabulated on\n"
		"                         another; 3: each also read on a third (slower on two\n"
		"                         CPUs); 1: one thread. The output is the same byte for\n"
		"                         byte\n"
		"  --json                 hitmap.compare/1\n"
		"  --wide                 text lines as long as they come (default: wrapped at 120)\n",
		HM_CMP_MAX_LINES);
}

/* "A1.data:throughput=12" -> file and suffix, unless the whole argument is a file. */
static void split_file(const char *arg, const char **file, const char **suffix)
{
	const char *c;

	*file = arg;
	*suffix = NULL;
	if (access(arg, F_OK) == 0)
		return;
	for (c = strrchr(arg, ':'); c; c = c > arg ? memrchr(arg, ':', (size_t)(c - arg)) : NULL) {
		char *f = strndup(arg, (size_t)(c - arg));
		int ok = f && access(f, F_OK) == 0;	/* "a1.data:tput" fails in the parser */

		if (ok) {
			*file = f;	/* lives as long as the command */
			*suffix = c + 1;
			return;
		}
		free(f);
	}
}

static int value_opt(const char *arg, const char *name, int argc, char **argv, int *i,
		     const char **val)
{
	size_t n = strlen(name);

	if (strncmp(arg, name, n))
		return 0;
	if (arg[n] == '=') {
		*val = arg + n + 1;
		return 1;
	}
	if (arg[n] || *i + 1 >= argc)
		return arg[n] ? 0 : -1;
	*val = argv[++*i];
	return 1;
}

static int option(struct compare_args *a, int argc, char **argv, int *i)
{
	static const char *const names[] = {"--metric", "--line-size", "--top", "--vmlinux",
					    "--sysroot", "--buildid-dir", "--vmlinux-a",
					    "--vmlinux-b", "--max-lines", "--hot", "--jobs"};
	const char *arg = argv[*i], *val = NULL;
	size_t k;
	int r = 0;

	if (!strcmp(arg, "--json"))
		return a->json = 1;
	if (!strcmp(arg, "--no-layout"))
		return a->no_layout = 1;
	if (!strcmp(arg, "--wide"))
		return a->wide = 1;
	if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
		compare_usage(stdout);
		exit(HM_EXIT_OK);
	}
	for (k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		if ((r = value_opt(arg, names[k], argc, argv, i, &val)))
			break;
	if (r <= 0)
		return cli_err("compare", -1, "%s: %s; see 'hitmap compare --help'", arg,
			       r < 0 ? "needs a value" : "unknown option");
	switch (k) {
	case 0:
		if (strchr(val, '=') ? a->nr_lists == MAX_OPTS : a->nr_filters == MAX_OPTS)
			return cli_err("compare", -1, "--metric %s: at most %d --metric of a kind",
				       val, MAX_OPTS);
		if (strchr(val, '='))
			a->lists[a->nr_lists++] = val;
		else
			a->filters[a->nr_filters++] = val;
		return 1;
	case 1:
		return cli_line_size("compare", val, 8, 4096, &a->line_size) ? -1 : 1;
	case 2:
		return cli_size_t("compare", "--top", val, &a->top) ? -1 : 1;
	case 3: a->ro.vmlinux = val; return 1;
	case 4: a->ro.sysroot = val; return 1;
	case 5: a->ro.buildid_dir = val; return 1;
	case 6: a->vmlinux_a = val; return 1;
	case 7: a->vmlinux_b = val; return 1;
	case 10: return cli_jobs("compare", val, &a->ro.jobs) ? -1 : 1;
	case 9: {
		char *end;

		a->hot_min = strtod(val, &end);
		if (*end || end == val || !(a->hot_min > 0 && a->hot_min <= HM_CMP_PER))
			return cli_err("compare", -1, "--hot %s: give samples per 1000, above 0 and "
				       "at most 1000 (default 10)", val);
		return 1;
	}
	default: {
		uint64_t v;

		if (cli_number("compare", "--max-lines", val, 1, 1ull << 31, &v))
			return -1;
		a->max_lines = (size_t)v;
		return 1;
	}
	}
}

/* Runs in command-line order, each with its group (0, 1, 2...: A, B, A...), put in the
 * order the rest reads them: A's runs (group by group), then B's. */
static int order_runs(struct compare_args *a, const char **files, const char **suffix,
		      const int *group, size_t n, int groups)
{
	size_t k = 0;

	if (groups > 2 * HM_CMP_MAX_GROUPS - 1)
		return cli_err("compare", -1, "%d groups of runs: at most %d (A -- B -- A ...)",
			       groups, 2 * HM_CMP_MAX_GROUPS - 1);
	for (int side = 0; side < 2; side++)
		for (int g = side; g < groups; g += 2) {
			size_t *len = side ? &a->groups.b[a->groups.nr_b++]
					   : &a->groups.a[a->groups.nr_a++];

			for (size_t i = 0; i < n; i++)
				if (group[i] == g) {
					a->files[k] = files[i];
					a->suffix[k++] = suffix[i];
					++*len;
					++*(side ? &a->nb : &a->na);
				}
			if (!*len)
				return cli_err("compare", -1, "group %d of runs (between '--') is "
					       "empty: give A1.data ... -- B1.data ... [-- A2.data ...]",
					       g + 1);
		}
	return 0;
}

static int parse_args(int argc, char **argv, struct compare_args *a)
{
	const char **files = calloc((size_t)argc, sizeof(*files));
	const char **suffix = calloc((size_t)argc, sizeof(*suffix));
	int *group = calloc((size_t)argc, sizeof(*group));
	int g = 0, rc = 0;
	size_t n = 0;

	memset(a, 0, sizeof(*a));
	a->ro.jobs = cli_jobs_default();
	a->ro.flush_apart = 1;	/* line tables and latencies only */
	a->line_size = 64;
	a->top = 20;
	a->max_lines = HM_CMP_MAX_LINES;
	a->files = calloc((size_t)argc, sizeof(*a->files));
	a->suffix = calloc((size_t)argc, sizeof(*a->suffix));
	if (!a->files || !a->suffix || !files || !suffix || !group)
		hm_oom();
	for (int i = 1; i < argc && !rc; i++) {
		const char *arg = argv[i];

		if (!strcmp(arg, "--")) {
			g++;
		} else if (arg[0] == '-' && arg[1]) {
			rc = option(a, argc, argv, &i) < 0 ? -1 : 0;
		} else {
			split_file(arg, &files[n], &suffix[n]);
			group[n++] = g;
		}
	}
	if (!rc && (g < 1 || !n))
		rc = cli_err("compare", -1, "give the runs of both builds: A1.data A2.data ... "
			     "-- B1.data B2.data ... (interleaved: ... -- A3.data ...)");
	if (!rc)
		rc = order_runs(a, files, suffix, group, n, g + 1);
	free(files);
	free(suffix);
	free(group);
	return rc;
}

/* FILE.metrics, else FILE without its extension plus .metrics. */
static int metrics_file(struct hm_arena *ar, struct hm_cmp_run *r, const char *file,
			struct hm_err *err)
{
	const char *dot = strrchr(file, '.'), *slash = strrchr(file, '/');
	int rc = hm_cmp_user_file(ar, r, hm_arena_printf(ar, "%s.metrics", file), err);

	if (rc == 1 && dot && (!slash || dot > slash))
		rc = hm_cmp_user_file(ar, r, hm_arena_printf(ar, "%.*s.metrics",
							     (int)(dot - file), file), err);
	return rc < 0 ? -1 : 0;
}

/* --metric NAME=V1,V2,...: value i belongs to run i (A's runs, then B's). */
static int metric_lists(struct hm_arena *ar, const struct compare_args *a,
			struct hm_cmp_run *runs, struct hm_err *err)
{
	size_t n = a->na + a->nb;

	for (size_t k = 0; k < a->nr_lists; k++) {
		const char *s = a->lists[k], *eq = strchr(s, '=');
		char *name = hm_arena_printf(ar, "%.*s", (int)(eq - s), s), *end;
		size_t i = 0;

		for (s = eq + 1; i < n && *s; i++) {
			hm_cmp_user_set(ar, &runs[i], name, strtod(s, &end));
			if (end == s || (*end && *end != ','))
				break;
			s = *end ? end + 1 : end;
		}
		if (i != n || *s)
			return hm_err_set(err, HM_EXIT_USAGE, "--metric %s: give %zu numbers, one "
					  "per run (A's runs, then B's, in command-line order)",
					  a->lists[k], n);
	}
	return 0;
}

static int on_batch(const struct hm_access *acc, size_t n, void *arg)
{
	struct run_batch *b = arg;

	return hm_cmp_acc_add(b->acc, acc, n, &b->err);
}

/* Each run is streamed (HM_COMPARE_BATCH accesses at a time) into its metrics' tables:
 * memory does not grow with the run's length (docs/hardening.md). */
static int load_run(struct hm_arena *ar, const struct compare_args *a, size_t i,
		    struct hm_cmp_run *r, const char ***notes, size_t *nr_notes,
		    struct hm_err *err)
{
	struct hm_recording rec;
	struct run_batch b = {0};
	struct hm_resolve_opts ro = a->ro;
	const char *v = i < a->na ? a->vmlinux_a : a->vmlinux_b;
	int rc;

	hm_cmp_run_init(r, a->files[i]);
	if (v)
		ro.vmlinux = v;	/* refused by the load when not this run's kernel */
	b.acc = hm_cmp_acc_new(ar, a->line_size, r);
	hm_cmp_acc_set_max(b.acc, a->max_lines);
	rc = hm_recording_stream(a->files[i], &ro, NULL, NULL, HM_COMPARE_BATCH, on_batch,
				 &b, &rec, err);
	hm_cmp_acc_end(b.acc);	/* before rec: the tables point at the resolver's strings */
	if (rc) {
		if (b.err.msg[0])
			*err = b.err;
		hm_recording_free(&rec);
		return -1;
	}
	if (rec.kernel_warning)
		(*notes)[(*nr_notes)++] = hm_arena_printf(ar, "%s: %s", a->files[i],
							  rec.kernel_warning);
	if (rec.warning)	/* what the reader skipped: unknown ids, unreadable files */
		(*notes)[(*nr_notes)++] = hm_arena_printf(ar, "%s: %s", a->files[i], rec.warning);
	if (rec.lost)
		(*notes)[(*nr_notes)++] = hm_arena_printf(ar, "%s: %llu samples were lost while "
			"recording: its counts are low; record with a larger -m or a lower -F",
			a->files[i], (unsigned long long)rec.lost);
	if (r->dropped_lines)
		(*notes)[(*nr_notes)++] = hm_arena_printf(ar, "%s: %llu of its distinct lines "
			"dropped past --max-lines %zu, the least contended, with %llu samples: the "
			"fields on them are not counted", a->files[i],
			(unsigned long long)r->dropped_lines, a->max_lines,
			(unsigned long long)r->dropped_samples);
	hm_recording_free(&rec);
	if (a->suffix[i])
		rc = hm_cmp_user_parse(ar, r, a->suffix[i], err);
	if (!rc)
		rc = metrics_file(ar, r, a->files[i], err);
	return rc;
}

/* A run loaded on a thread of its own, into an arena of its own: two runs load at once
 * with --jobs 2 or more (each also tabulates on a thread of its own), and what they made
 * is adopted into the compare's arena in run order, so the output is --jobs 1's. */
#define RUN_NOTES 4	/* load_run's notes: kernel, reader, lost, dropped lines */

struct load_job {
	const struct compare_args *a;
	size_t i;
	struct hm_cmp_run *r;
	struct hm_arena ar;
	const char *notes[RUN_NOTES], **np;
	size_t nr_notes;
	struct hm_err err;
	int rc;
};

static void *load_job(void *arg)
{
	struct load_job *j = arg;

	j->np = j->notes;
	j->rc = load_run(&j->ar, j->a, j->i, j->r, &j->np, &j->nr_notes, &j->err);
	return NULL;
}

/* Runs i and i + 1 (when both exist and jobs allow) at once: 0, or -1 with err the first
 * failing run's in run order (as --jobs 1 would stop there); *loaded: runs to free. */
static int load_pair(struct hm_arena *ar, const struct compare_args *a, size_t i, size_t n,
		     struct hm_cmp_run *runs, const char **notes, size_t *nr_notes,
		     size_t *loaded, struct hm_err *err)
{
	struct load_job j[2];
	size_t m = a->ro.jobs > 1 && i + 1 < n ? 2 : 1;
	pthread_t th;
	int threaded = 0, rc = 0;

	for (size_t k = 0; k < m; k++) {
		j[k] = (struct load_job){.a = a, .i = i + k, .r = &runs[i + k]};
		hm_arena_init(&j[k].ar);
	}
	if (m == 2)
		threaded = pthread_create(&th, NULL, load_job, &j[1]) == 0;
	load_job(&j[0]);
	if (threaded)
		pthread_join(th, NULL);
	else if (m == 2)
		load_job(&j[1]);
	for (size_t k = 0; k < m; k++) {
		hm_arena_adopt(ar, &j[k].ar);
		if (rc)
			continue;	/* the run is loaded: freed by the caller all the same */
		memcpy(&notes[*nr_notes], j[k].notes, j[k].nr_notes * sizeof(*notes));
		*nr_notes += j[k].nr_notes;
		if (j[k].rc) {
			*err = j[k].err;
			rc = -1;
		}
	}
	*loaded = i + m;
	return rc;
}

static int identify(struct hm_arena *ar, const struct compare_args *a, struct hm_cmp_ident *ids,
		    struct hm_err *err)
{
	for (size_t i = 0; i < a->na + a->nb; i++)
		if (hm_cmp_identify(ar, a->files[i], &ids[i], err))
			return -1;
	if (hm_cmp_check_side("A", a->files, ids, a->na, err) ||
	    hm_cmp_check_side("B", a->files + a->na, ids + a->na, a->nb, err))
		return -1;
	hm_cmp_label_modules(ar, ids, a->na, ids + a->na, a->nb);
	return 0;
}

/* A kernel side's vmlinux: the one given for it, else the -dbg package's by release. */
static const char *kernel_file(struct hm_arena *ar, const struct compare_args *a,
			       const struct hm_cmp_ident *id, const char *given)
{
	return given ? given : a->ro.vmlinux ? a->ro.vmlinux
			     : hm_cmp_find_vmlinux(ar, id, a->ro.sysroot);
}

/* The layout side; what stops it is a note, not a failure: the statistics stand alone. */
static const struct hm_cmp_layout *layout_side(struct hm_arena *ar, const struct compare_args *a,
					       const struct hm_cmp_ident *ia,
					       const struct hm_cmp_ident *ib, const struct hm_cmp *c,
					       struct hm_cmp_layout *out, const char **note)
{
	int kernel = ia->kind == HM_CMP_BUILD_KERNEL;
	const char *pa = kernel ? kernel_file(ar, a, ia, a->vmlinux_a)
				: hm_cmp_find_binary(ar, ia, a->ro.sysroot, a->ro.buildid_dir);
	const char *pb = kernel ? kernel_file(ar, a, ib, a->vmlinux_b)
				: hm_cmp_find_binary(ar, ib, a->ro.sysroot, a->ro.buildid_dir);
	const struct hm_cmp_mod *ma = NULL, *mb = NULL;
	struct hm_layout *la = NULL, *lb = NULL;
	struct hm_err err = {0};
	int rc;

	if (hm_cmp_same_build(ia, ib)) {
		*note = "A and B ran the same build: no layout to compare";
		return NULL;
	}
	/* One kernel, another build of a module (an out-of-tree xfs.ko): its files. */
	if (kernel && ia->kernel_build_id_size &&
	    ia->kernel_build_id_size == ib->kernel_build_id_size &&
	    !memcmp(ia->kernel_build_id, ib->kernel_build_id, ia->kernel_build_id_size) &&
	    (ma = hm_cmp_changed_module(ia, ib, &mb))) {
		pa = hm_cmp_find_module(ar, ma, a->ro.sysroot, a->ro.buildid_dir);
		pb = hm_cmp_find_module(ar, mb, a->ro.sysroot, a->ro.buildid_dir);
		if (!pa || !pb) {
			const struct hm_cmp_mod *m = pa ? mb : ma;

			*note = hm_arena_printf(ar, "layout side skipped: no file with build-id %s of "
						"%s is at hand: add it to a build-id cache ('perf "
						"--buildid-dir DIR buildid-cache -a FILE') and give "
						"--buildid-dir DIR, or --sysroot", m->hex, m->name);
			return NULL;
		}
	}
	if (!pa || !pb) {
		const struct hm_cmp_ident *m = pa ? ib : ia;

		*note = kernel ? hm_arena_printf(ar, "layout side skipped: no vmlinux of kernel %s "
						 "(build-id %s) is at hand: install linux-image-%s-dbg "
						 "or give --vmlinux-%s FILE", m->kernel_release,
						 m->kernel_build_id_hex ? m->kernel_build_id_hex
									: "none",
						 m->kernel_release, pa ? "b" : "a")
			: hm_arena_printf(ar, "layout side skipped: no file with build-id %s of %s is "
					  "at hand (rebuilt since recording?): give it with "
					  "--buildid-dir (perf's build-id cache) or --sysroot",
					  m->build_id_hex, m->exe);
		return NULL;
	}
	if (hm_layout_open(pa, &la, &err) || hm_layout_open(pb, &lb, &err)) {
		*note = hm_arena_printf(ar, "layout side skipped: %s", err.msg);
		if (la)
			hm_layout_close(la);
		return NULL;
	}
	rc = hm_cmp_layout(ar, c, la, lb, a->line_size, a->hot_min, out, &err);
	hm_layout_close(la);
	hm_layout_close(lb);
	if (rc) {
		*note = hm_arena_printf(ar, "layout side skipped: %s", err.msg);
		return NULL;
	}
	return out;
}

static void table_notes(struct hm_arena *ar, const struct hm_cmp *c, const char **notes,
			size_t *nr)
{
	if (c->na < 2 || c->nb < 2)
		notes[(*nr)++] = hm_arena_printf(ar, "%zu run%s in A and %zu in B: means only, no "
			"test (p n/a) without 2 runs per side: record 3 to 5 runs of each build",
			c->na, c->na == 1 ? "" : "s", c->nb);
	if (c->source_a != c->source_b)
		notes[(*nr)++] = hm_arena_printf(ar, "A was recorded with %s and B with %s: "
			"their contention measures differ and do not compare: record both sides "
			"with the same -c", hm_source_name(c->source_a), hm_source_name(c->source_b));
}

static int run_compare(struct hm_arena *ar, const struct compare_args *a, struct hm_err *err)
{
	size_t n = a->na + a->nb, nr_notes = 0;
	struct hm_cmp_ident *ids = hm_arena_alloc(ar, n * sizeof(*ids));
	struct hm_cmp_run *runs = calloc(n, sizeof(*runs));
	const char **notes = hm_arena_alloc(ar, (RUN_NOTES * n + 8) * sizeof(*notes));
	struct hm_cmp cmp;
	struct hm_cmp_layout lay;
	struct hm_cmp_view v = {0};
	size_t i = 0;
	int rc = -1;

	if (!runs || identify(ar, a, ids, err))
		goto out;
	while (i < n)
		if (load_pair(ar, a, i, n, runs, notes, &nr_notes, &i, err))
			goto out;
	if (metric_lists(ar, a, runs, err))
		goto out;
	hm_cmp_build(ar, runs, a->na, runs + a->na, a->nb, &cmp);
	if (a->groups.nr_a > 1)
		hm_cmp_drift(&cmp, &a->groups);
	table_notes(ar, &cmp, notes, &nr_notes);
	v.a = (struct hm_cmp_side){a->files, a->na, &ids[0], runs};
	v.b = (struct hm_cmp_side){a->files + a->na, a->nb, &ids[a->na], runs + a->na};
	v.cmp = &cmp;
	if (!a->no_layout)
		v.layout = layout_side(ar, a, &ids[0], &ids[a->na], &cmp, &lay, &notes[nr_notes]);
	nr_notes += !a->no_layout && !v.layout;
	v.notes = notes;
	v.nr_notes = nr_notes;
	v.only = a->filters;
	v.nr_only = a->nr_filters;
	v.top = a->top;
	v.line_size = a->line_size;
	if (a->json) {
		hm_cmp_print_json(stdout, &v);
	} else {
		struct cli_text t;

		hm_cmp_print_text(cli_text_begin(&t, a->wide), &v);
		cli_text_end(&t);
	}
	rc = 0;
out:
	while (runs && i--)
		hm_cmp_run_free(&runs[i]);
	free(runs);
	return rc;
}

int cmd_compare(int argc, char **argv)
{
	struct compare_args a;
	struct hm_arena ar;
	struct hm_err err = {0};
	int rc = HM_EXIT_OK;

	if (parse_args(argc, argv, &a)) {
		free(a.files);
		free(a.suffix);
		return HM_EXIT_USAGE;
	}
	hm_arena_init(&ar);
	if (run_compare(&ar, &a, &err)) {
		fprintf(stderr, "hitmap compare: %s\n", err.msg);
		rc = err.code ? err.code : HM_EXIT_INPUT;
	}
	hm_arena_free(&ar);
	for (size_t i = 0; i < a.na + a.nb; i++)
		if (a.suffix[i])
			free((char *)a.files[i]);	/* split_file's copy */
	free(a.files);
	free(a.suffix);
	return rc;
}
