/* hitmap whatif -i FILE (--layout NEWBUILD [-t TYPE] | --pad T.F=BYTES | --align T.F=N |
 *                        --order T=f1,f2,... | --suggest TYPE) [--line-size N] [--json] */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "resolve/load.h"
#include "resolve/spill.h"
#include "analyzer/whatif.h"
#include "cli/cmds.h"
#include "core/hash.h"
#include "core/oom.h"
#include "render/whatif_print.h"

#define MAX_ORDER 1024
/* Distinct lines kept per side, as report's --max-lines (docs/whatif.md, Memory). */
#define WHATIF_MAX_LINES 500000

struct whatif_args {
	const char *input, *layout, *only, *suggest;
	struct hm_wi_edit edits[HM_WI_MAX_EDITS];
	uint32_t nr_edits;
	int json, wide, aligned_alloc, stream, jobs;
	size_t top, max_lines;
	uint32_t line_size;
	uint64_t window_ns;
	char change[1024];		/* the change as given, for the output */
	struct hm_resolve_opts ro;
};

static void whatif_usage(FILE *out)
{
	fprintf(out,
		"usage: hitmap whatif [-i FILE] (--layout NEWBUILD [-t TYPE] | --pad TYPE.FIELD=BYTES |\n"
		"                     --align TYPE.FIELD=N | --order TYPE=f1,f2,... | --suggest TYPE)\n"
		"                     [--line-size 64|128] [--json] [--top N] [--window US] [--wide]\n"
		"                     [--max-lines N] [--stream] [--jobs 1|2]\n\n"
		"Replays the recorded accesses through another layout and predicts which cache\n"
		"lines stop or start being shared (docs/whatif.md).\n\n"
		"  -i FILE        the recording (default perf.data)\n"
		"  --layout F     the same types as built in F (ELF with DWARF); -t limits it to one\n"
		"  --pad T.F=N    insert N bytes before member F of struct T\n"
		"  --align T.F=N  align member F to N (the struct's alignment becomes at least N)\n"
		"  --order T=a,b  lay T's members out in this order (the rest follow), as a C\n"
		"                 compiler would; --pad, --align and --order combine\n"
		"  --suggest T    propose a layout that separates members written by different\n"
		"                 threads, and predict it\n"
		"  --aligned-alloc  heap objects get the type's new alignment, as if allocated\n"
		"                 with aligned_alloc or posix_memalign (default: they keep the\n"
		"                 16-byte aligned address malloc gave them)\n"
		"  --vmlinux F    the recorded kernel's vmlinux; --kallsyms F its /proc/kallsyms\n"
		"  --force        use binaries rebuilt since the recording (another build-id),\n"
		"                 or a --vmlinux/--kallsyms of another kernel\n"
		"  --top N        lines shown (0: all)\n"
		"  --stream       read the recording twice instead of holding it, whatever its\n"
		"                 length (the default for runs over 262144 accesses)\n"
		"  --max-lines N  distinct cache lines kept per side (default %d, as report's);\n"
		"                 past it the run is read in batches, the least contended lines\n"
		"                 are dropped, and counted\n"
		"  --wide         text lines as long as they come (default: wrapped at 120)\n"
		"  --jobs N       2 (the default with two CPUs online): a streamed run is\n"
		"                 summed on a second thread as it is read, and replayed into\n"
		"                 the new layout on one while the other builds the recorded\n"
		"                 side; 1: one thread. The output is the same byte for byte\n",
		WHATIF_MAX_LINES);
}

static void append(struct whatif_args *a, const char *opt, const char *arg)
{
	size_t used = strlen(a->change);

	snprintf(a->change + used, sizeof(a->change) - used, "%s%s %s", used ? " " : "", opt, arg);
}

static int split_edit(struct whatif_args *a, enum hm_wi_kind kind, char *arg)
{
	struct hm_wi_edit *e = &a->edits[a->nr_edits];
	static const char *const opt[] = {"--layout", "--pad", "--align", "--order"};
	char *eq = strrchr(arg, '='), *dot, *end;

	if (a->nr_edits == HM_WI_MAX_EDITS) {
		return cli_err("whatif", -1, "%s: more than %d edits: combine fewer", arg,
			       HM_WI_MAX_EDITS);
	}
	append(a, opt[kind], arg);
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	if (!eq || eq == arg)
		goto bad;
	*eq = '\0';
	e->type = arg;
	if (kind == HM_WI_ORDER) {
		e->order = calloc(MAX_ORDER, sizeof(*e->order));
		for (char *f = strtok(eq + 1, ","); f && e->nr_order < MAX_ORDER; f = strtok(NULL, ","))
			e->order[e->nr_order++] = f;
		if (!e->nr_order)
			goto bad;
		a->nr_edits++;
		return 0;
	}
	if (!(dot = strrchr(arg, '.')) || dot == arg || !dot[1])
		goto bad;
	*dot = '\0';
	e->field = dot + 1;
	e->value = strtoull(eq + 1, &end, 0);
	if (*end || !eq[1])
		goto bad;
	a->nr_edits++;
	return 0;
bad:
	cli_err("whatif", 0, "%s %s: write %s", opt[kind], arg,
		kind == HM_WI_ORDER ? "TYPE=field1,field2,..." : kind == HM_WI_PAD
			? "TYPE.FIELD=BYTES, e.g. worker_stats.errors=56"
			: "TYPE.FIELD=N, e.g. worker_stats.errors=64");
	return -1;
}

static int parse_args(int argc, char **argv, struct whatif_args *a)
{
	static const struct option longopts[] = {
		{"input", required_argument, NULL, 'i'}, {"layout", required_argument, NULL, 'l'},
		{"type", required_argument, NULL, 't'}, {"pad", required_argument, NULL, 'p'},
		{"align", required_argument, NULL, 'a'}, {"order", required_argument, NULL, 'o'},
		{"suggest", required_argument, NULL, 's'}, {"line-size", required_argument, NULL, 'L'},
		{"json", no_argument, NULL, 'j'}, {"top", required_argument, NULL, 'n'},
		{"window", required_argument, NULL, 'w'}, {"vmlinux", required_argument, NULL, 'k'},
		{"sysroot", required_argument, NULL, 'R'}, {"buildid-dir", required_argument, NULL, 'B'},
		{"aligned-alloc", no_argument, NULL, 'A'}, {"force", no_argument, NULL, 'f'},
		{"wide", no_argument, NULL, 'W'}, {"kallsyms", required_argument, NULL, 'Y'},
		{"stream", no_argument, NULL, 'S'}, {"help", no_argument, NULL, 'h'},
		{"max-lines", required_argument, NULL, 'M'}, {"jobs", required_argument, NULL, 'J'},
		{NULL, 0, NULL, 0},
	};
	int c;
	uint64_t v;

	memset(a, 0, sizeof(*a));
	/* a held run is read on one thread; a streamed one is summed on a second as it is
	 * read (try_stream), and its replay builds the two sides on two (whatif_run.c).
	 * Reading the file ahead on a third (report's --jobs 3) costs more than it saves
	 * on two CPUs (docs/report.md) */
	a->ro.jobs = 1;
	a->jobs = cli_jobs_default();
	a->max_lines = WHATIF_MAX_LINES;
	a->input = "perf.data";
	a->line_size = 64;
	a->top = 20;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":i:t:n:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i': a->input = optarg; break;
		case 'l': a->layout = optarg; break;
		case 't': a->only = optarg; break;
		case 'p': if (split_edit(a, HM_WI_PAD, optarg)) return -1; break;
		case 'a': if (split_edit(a, HM_WI_ALIGN, optarg)) return -1; break;
		case 'o': if (split_edit(a, HM_WI_ORDER, optarg)) return -1; break;
		case 's': a->suggest = optarg; break;
		case 'L':
			if (cli_line_size("whatif", optarg, 32, 128, &a->line_size))
				return -1;
			break;
		case 'j': a->json = 1; break;
		case 'n': if (cli_size_t("whatif", "--top", optarg, &a->top)) return -1; break;
		case 'w': if (cli_window("whatif", optarg, &a->window_ns)) return -1; break;
		case 'W': a->wide = 1; break;
		case 'k': a->ro.vmlinux = optarg; break;
		case 'Y': a->ro.kallsyms = optarg; break;
		case 'R': a->ro.sysroot = optarg; break;
		case 'B': a->ro.buildid_dir = optarg; break;
		case 'A': a->aligned_alloc = 1; break;
		case 'f': a->ro.force = 1; break;
		case 'S': a->stream = 1; break;
		case 'M':
			if (cli_number("whatif", "--max-lines", optarg, 1, 1ull << 31, &v))
				return -1;
			a->max_lines = (size_t)v;
			break;
		case 'J':
			if (cli_number("whatif", "--jobs", optarg, 1, 2, &v))
				return -1;
			a->jobs = (int)v;
			break;
		case 'h': whatif_usage(stdout); exit(HM_EXIT_OK);
		default: cli_bad_option("whatif", c, argv); return -1;
		}
	}
	if (optind != argc)
		return cli_err("whatif", -1, "%s: unexpected argument: give the recording with -i "
			       "FILE", argv[optind]);
	if ((!!a->layout + !!a->nr_edits + !!a->suggest) != 1)
		return cli_err("whatif", -1, "give one of --layout, --suggest, or edits (--pad, "
			       "--align, --order); see 'hitmap whatif --help'");
	if (a->only && !a->layout)
		return cli_err("whatif", -1, "-t goes with --layout; edits name their type");
	if (a->layout)
		append(a, "--layout", a->layout);
	if (a->only)
		append(a, "-t", a->only);
	if (a->suggest)
		append(a, "--suggest", a->suggest);
	return 0;
}

static void set_groups(struct hm_wi_plan *p, const struct hm_wi_suggestion *s)
{
	uint32_t nr;
	const struct hm_member *base = hm_type_members(s->t, &nr);

	for (uint32_t i = 0; i < p->nr_types; i++) {
		if (strcmp(p->types[i].name, s->type))
			continue;
		if (i) {	/* the suggested type first */
			struct hm_wi_type t = p->types[i];

			p->types[i] = p->types[0];
			p->types[0] = t;
		}
		for (uint32_t k = 0; k < p->types[0].nr; k++) {
			const struct hm_member *m = p->types[0].m[k].old_m;

			if (m && m >= base && m < base + nr)
				p->types[0].m[k].group = s->group_of[m - base];
		}
		return;
	}
}

/* --- a long run, streamed (docs/whatif.md, Memory): a first read of the recording builds
 * the summary the plan, --suggest and the placing of objects need; the replay reads it
 * again, batch by batch, once per pass of hm_whatif_run_feed. Each read opens its own
 * resolver, so a later read's types are mapped to the first read's, which the plan
 * holds: by kind, size, name, DIE offset or BTF id and file, down the chain of types
 * each refers to. */

#define STREAM_BATCH (1u << 16)
#define MAX_READS 2			/* the replay; the after side again (PMU) */

struct wfeed {
	const struct whatif_args *a;
	struct hm_map64 sig;		/* signature -> the first read's type */
	struct hm_map64 tr;		/* a later read's type -> the first read's */
	struct hm_recording recs[MAX_READS];	/* open to the end: lines point at
						 * their strings */
	int nrec, failed;
	struct hm_access *buf;		/* HM_WI_BATCH accesses, made on first use */
	size_t nbuf;
	struct hm_spill *spill;	/* the first read's accesses (resolve/spill.h), or NULL */
	int reads;
	const struct hm_wi_sink *sink;
};

static uint64_t mix(uint64_t h, uint64_t v)
{
	h = (h ^ v) * 0x100000001b3ull;
	return h ^ h >> 29;
}

static uint64_t type_sig(const struct hm_type *t)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (int depth = 0; t && depth < 8; t = t->ref, depth++) {
		h = mix(mix(mix(mix(h, t->kind), t->size), t->nelems), t->align);
		h = mix(mix(h, t->name ? hm_hash_str(t->name) : 0), t->alias ? hm_hash_str(t->alias) : 0);
		if (t->src)
			h = mix(mix(h, t->key), hm_hash_str(hm_layout_path(t->src)));
	}
	return h | 1;
}

static const struct hm_type *first_type(struct wfeed *f, const struct hm_type *t)
{
	const struct hm_type *t1;

	if (!t)
		return NULL;
	if ((t1 = hm_map64_get(&f->tr, (uintptr_t)t)))
		return t1;
	if (!(t1 = hm_map64_get(&f->sig, type_sig(t))))
		t1 = t;
	hm_map64_put(&f->tr, (uintptr_t)t, (void *)t1);
	return t1;
}

static struct hm_access *feed_buf(struct wfeed *f)
{
	if (!f->buf && !(f->buf = malloc(HM_WI_BATCH * sizeof(*f->buf))))
		hm_oom();
	return f->buf;
}

static int feed_batch(const struct hm_access *acc, size_t n, void *arg)
{
	struct wfeed *f = arg;

	for (size_t i = 0; i < n; i++) {
		f->buf[f->nbuf] = acc[i];
		f->buf[f->nbuf].type = first_type(f, acc[i].type);
		if (++f->nbuf == HM_WI_BATCH) {
			f->nbuf = 0;
			if (f->sink->fn(f->buf, HM_WI_BATCH, f->sink->fa)) {
				f->failed = 1;
				return -1;
			}
		}
	}
	return 0;
}

/* The replay's accesses from the spill: the first read's, with its strings and types
 * (which stay open to the end), as the summary and the plan have them and as a held run
 * is replayed: nothing to map. They are written where the sink lends room (the after
 * side's own slots), else into batches of HM_WI_BATCH here. */
static int spill_read(struct wfeed *f)
{
	const struct hm_wi_sink *k = f->sink;

	if (hm_spill_rewind(f->spill))
		return -1;
	for (;;) {
		size_t max = HM_WI_BATCH, n;
		struct hm_access *to = k->room ? k->room(k->fa, &max) : feed_buf(f);

		if (!to)
			return -1;	/* the replay failed: err set by it */
		if (!(n = hm_spill_read(f->spill, to, max)))
			return 0;
		if (k->fn(to, n, k->fa))
			return -1;
		if (n < max)
			return 0;	/* the end */
	}
}

static int feed(void *arg, const struct hm_wi_sink *sink, struct hm_err *err)
{
	struct wfeed *f = arg;
	struct hm_err e = {0};
	int rc;

	if (f->reads++ == MAX_READS)
		return hm_err_set(err, HM_EXIT_INPUT, "%s: read more than %d times", f->a->input,
				  MAX_READS);
	f->sink = sink;
	f->nbuf = 0;
	f->failed = 0;
	if (f->spill)
		return spill_read(f) ? -1 : 0;	/* err set by fn */
	feed_buf(f);
	rc = hm_recording_stream(f->a->input, &f->a->ro, NULL, NULL, STREAM_BATCH, feed_batch,
				 f, &f->recs[f->nrec++], &e);
	if (!rc && f->nbuf && sink->fn(f->buf, f->nbuf, sink->fa))
		f->failed = 1;
	if (f->failed)
		return -1;	/* err set by fn */
	if (rc)
		*err = e;
	return rc ? -1 : 0;
}

static void feed_init(struct wfeed *f, const struct whatif_args *a, const struct hm_wi_sum *sum)
{
	memset(f, 0, sizeof(*f));
	f->a = a;
	hm_map64_init(&f->sig);
	hm_map64_init(&f->tr);
	for (size_t i = 0; i < sum->n; i++) {
		const struct hm_type *t = sum->acc[i].type;

		if (t && !hm_map64_get(&f->sig, type_sig(t)))
			hm_map64_put(&f->sig, type_sig(t), (void *)t);
	}
}

static void feed_free(struct wfeed *f)
{
	for (int i = 0; i < f->nrec; i++)
		hm_recording_free(&f->recs[i]);
	hm_map64_free(&f->sig);
	hm_map64_free(&f->tr);
	free(f->buf);
	hm_spill_close(f->spill);
}

/* The run: held (acc, n) or streamed (sum, f). */
struct wsrc {
	const struct hm_access *acc;
	size_t n;
	const struct hm_wi_sum *sum;
	struct wfeed *f;
	struct hm_wi_before *before;	/* the recorded side, built by the first read */
};

static int plan_run(struct hm_arena *ar, const struct whatif_args *a, const struct wsrc *r,
		    struct hm_wi_spec *spec, struct hm_wi_suggestion *sug, struct hm_wi_plan *plan,
		    struct hm_whatif *w, struct hm_err *err)
{
	if (a->suggest && (r->sum ? hm_whatif_suggest_sum(ar, r->sum, a->suggest, a->line_size,
							  sug, err)
				  : hm_whatif_suggest(ar, r->acc, r->n, a->suggest, a->line_size,
						      sug, err)) == 0) {
		spec->edits = sug->edits;
		spec->nr_edits = sug->nr_edits;
	}
	if (err->msg[0])
		return -1;
	if (r->sum)
		return hm_whatif_plan_sum(ar, r->sum, spec, plan, err) ||
		       hm_whatif_run_feed(ar, r->sum, plan, a->window_ns, feed, r->f, r->before, w,
					  err);
	return hm_whatif_plan(ar, r->acc, r->n, spec, plan, err) ||
	       hm_whatif_run(ar, r->acc, r->n, plan, a->window_ns, w, err);
}

static int run(struct whatif_args *a, const struct wsrc *src, struct hm_layout *build)
{
	struct hm_arena ar;
	struct hm_err err = {0};
	struct hm_wi_suggestion sug;
	struct hm_wi_spec spec = {
		.kind = a->layout ? HM_WI_LAYOUT : a->suggest ? HM_WI_SUGGEST : a->edits[0].kind,
		.build = build, .only = a->only, .edits = a->edits, .nr_edits = a->nr_edits,
		.line_size = a->line_size, .aligned_alloc = a->aligned_alloc,
		.max_lines = a->max_lines, .jobs = a->jobs,
	};
	struct hm_wi_plan plan;
	struct hm_whatif w = {0};
	int rc = 0;

	hm_arena_init(&ar);
	memset(&plan, 0, sizeof(plan));
	if (plan_run(&ar, a, src, &spec, &sug, &plan, &w, &err)) {
		cli_err("whatif", 0, "%s", err.msg);
		rc = err.code ? err.code : HM_EXIT_INPUT;
	} else {
		struct hm_wi_view v = {.input = a->input, .change = a->change, .w = &w,
				       .sug = a->suggest ? &sug : NULL, .top = a->top};

		if (a->suggest)
			set_groups(&plan, &sug);
		if (a->json) {
			hm_whatif_print_json(stdout, &ar, &v);
		} else {
			struct cli_text t;

			hm_whatif_print_text(cli_text_begin(&t, a->wide), &ar, &v);
			cli_text_end(&t);
		}
	}
	hm_whatif_free(&w);
	hm_whatif_plan_free(&plan);
	hm_arena_free(&ar);
	return rc;
}

struct first_read {
	struct hm_wi_sum *sum;
	struct hm_spill *spill;
	struct hm_wi_before *before;
};

static int sum_batch(const struct hm_access *acc, size_t n, void *arg)
{
	struct first_read *fr = arg;

	hm_wi_sum_add(fr->sum, acc, n);
	hm_wi_before_add(fr->before, acc, n);
	if (fr->spill && hm_spill_write(fr->spill, acc, n)) {
		hm_spill_close(fr->spill);	/* no space: the replay reads the recording */
		fr->spill = NULL;
	}
	return 0;
}

/* A first streamed read: when the run is long enough to be replayed in batches, has
 * more distinct lines than --max-lines, or --stream, it is replayed streamed: 1, *rc its
 * exit code. 0 when it is better held (a short run, or one of few accesses per line
 * within the bound, or a pipe), or the read failed (the load says why). */
static int try_stream(struct whatif_args *a, struct hm_layout *build, int *rc)
{
	struct hm_recording rec;
	struct hm_resolve_opts ro1;
	struct hm_wi_sum sum;
	struct first_read fr;
	struct hm_err err = {0};
	struct wfeed f;
	struct stat st;
	int held;

	/* A pipe is read once: held. A missing file: the load says so. */
	if (!strcmp(a->input, "-") || (!stat(a->input, &st) && !S_ISREG(st.st_mode))) {
		if (!a->stream)
			return 0;
		*rc = cli_err("whatif", HM_EXIT_USAGE, "--stream reads %s twice: give a file, "
			      "not a pipe", a->input);
		return 1;
	}
	hm_wi_sum_init(&sum, a->line_size);
	fr = (struct first_read){&sum, hm_spill_open(),
				 hm_wi_before_new(a->line_size, a->window_ns, a->max_lines)};
	/* the summary, the spill and the recorded side touch only the accesses: on a thread
	 * of their own */
	ro1 = a->ro;
	ro1.jobs = a->jobs;
	ro1.flush_apart = 1;
	held = hm_recording_stream(a->input, &ro1, NULL, NULL, STREAM_BATCH, sum_batch, &fr,
				   &rec, &err) ||
	       (!a->stream && !hm_wi_sum_batched(&sum) && sum.nlines <= a->max_lines);
	if (fr.spill && hm_spill_rewind(fr.spill)) {
		hm_spill_close(fr.spill);
		fr.spill = NULL;
	}
	if (held) {
		hm_spill_close(fr.spill);
		hm_wi_before_free(fr.before);
		hm_wi_sum_free(&sum);
		hm_recording_free(&rec);
		return 0;
	}
	if (rec.warning)
		fprintf(stderr, "hitmap whatif: warning: %s\n", rec.warning);
	if (!(*rc = cli_stale("whatif", &rec, a->ro.force))) {
		feed_init(&f, a, &sum);
		f.spill = fr.spill;
		fr.spill = NULL;
		/* a replay that reads the recording again builds both sides from what it reads */
		*rc = run(a, &(struct wsrc){NULL, 0, &sum, &f, f.spill ? fr.before : NULL}, build);
		feed_free(&f);
	}
	hm_spill_close(fr.spill);
	hm_wi_before_free(fr.before);
	hm_wi_sum_free(&sum);
	hm_recording_free(&rec);	/* last: the plan holds its types */
	return 1;
}

int cmd_whatif(int argc, char **argv)
{
	struct whatif_args a;
	struct hm_recording rec;
	struct hm_layout *build = NULL;
	struct hm_err err = {0};
	int rc;

	if (parse_args(argc, argv, &a)) {
		rc = HM_EXIT_USAGE;
		goto out;
	}
	if (a.layout && hm_layout_open(a.layout, &build, &err)) {
		fprintf(stderr, "hitmap whatif: %s\n", err.msg);
		rc = err.code ? err.code : HM_EXIT_INPUT;
		goto out;
	}
	if (try_stream(&a, build, &rc))
		goto out;
	if (hm_recording_load(a.input, &a.ro, NULL, NULL, &rec, &err)) {
		fprintf(stderr, "hitmap whatif: %s\n", err.msg);
		rc = err.code ? err.code : HM_EXIT_INPUT;
		goto out;
	}
	if (rec.warning)
		fprintf(stderr, "hitmap whatif: warning: %s\n", rec.warning);
	if ((rc = cli_stale("whatif", &rec, a.ro.force))) {
		;	/* replayed fields would be of another build */
	} else if (rec.n == 0) {
		fprintf(stderr, "hitmap whatif: %s: no samples to replay: record a workload first "
				"(hitmap record -c timer -- CMD)\n", a.input);
		rc = HM_EXIT_INPUT;
	} else {
		rc = run(&a, &(struct wsrc){rec.acc, rec.n, NULL, NULL, NULL}, build);
	}
	hm_recording_free(&rec);
out:
	if (build)
		hm_layout_close(build);
	for (uint32_t i = 0; i < a.nr_edits; i++)
		free(a.edits[i].order);
	return rc;
}
