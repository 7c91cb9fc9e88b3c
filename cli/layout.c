/* hitmap layout [FILE|--btf [FILE]] [-t TYPE]... [-E] [--line-size N] [--json]
 *               [--sizes] [-H N] [-R | --reorganize TYPE [-i perf.data] [--allow-splits]] */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/layout_print.h"
#include "resolve/load.h"
#include "render/reorganize_print.h"
#include "cli/cmds.h"
#include "core/json.h"

#define DEFAULT_BTF "/sys/kernel/btf/vmlinux"
#define MAX_TYPES 64

struct layout_args {
	const char *file;
	int btf, json, sizes, reorg, allow_splits, default_btf;
	uint64_t min_holes;		/* -H: only types with at least this many holes */
	const char *input;		/* -i: a recording for --reorganize's sharing rule */
	const char *buildid_dir;	/* --buildid-dir: where -i's binaries are found */
	const char *types[MAX_TYPES];
	int nr_types;
	struct hm_print_opts opts;
};

struct emit {
	const struct layout_args *args;
	struct hm_arena *arena;
	struct hm_json json;
	struct hm_recording *rec;
	int count;
};

static void layout_usage(FILE *out)
{
	fprintf(out,
		"usage: hitmap layout [FILE] [-t TYPE]... [-E] [--line-size N] [--json]\n"
		"       hitmap layout [FILE] --sizes [-H N]\n"
		"       hitmap layout [FILE] --reorganize TYPE [-i perf.data] [--allow-splits]\n"
		"       hitmap layout --btf [FILE] [...]\n\n"
		"FILE is an ELF executable, shared object, .o, kernel module or separate debug\n"
		"file with DWARF, or with --btf raw BTF or an ELF file's .BTF. Without FILE: the\n"
		"running kernel's BTF, " DEFAULT_BTF " (as pahole). Without -t, every named\n"
		"struct/union/class is printed once.\n"
		"  -t, -C, --type TYPE  only TYPE ('foo', 'struct foo', 'union foo', a typedef)\n"
		"  -E, --expand         expand nested named types in place\n"
		"  --line-size N        cache-line size for boundaries (default 64)\n"
		"  -s, --sizes          name, size and holes per type, tab-separated (pahole --sizes)\n"
		"  -H, --holes N        only types with at least N holes (pahole -H)\n"
		"  --reorganize TYPE    pack TYPE's members into its holes as pahole -R does, laid out\n"
		"                       by C's rules, never making a member touch more cache lines\n"
		"  -R                   the same for every -t TYPE (pahole's -R -C TYPE)\n"
		"  -i, --input FILE     a recording: never put members written by different threads\n"
		"                       on a line they did not share\n"
		"  --buildid-dir DIR    where -i's binaries are found by build-id (as perf's)\n"
		"  --allow-splits       pahole's moves without the cache-line rule\n"
		"  --json               hitmap.layout/1, hitmap.layout.sizes/1 or\n"
		"                       hitmap.layout.reorganize/1 JSON (docs/layout.md)\n");
}

static int add_type(struct layout_args *a, const char *name)
{
	if (a->nr_types == MAX_TYPES)
		return cli_err("layout", -1, "-t %s: at most %d types; run it again for more", name,
			       MAX_TYPES);
	a->types[a->nr_types++] = name;
	return 0;
}

static int parse_opt(int c, struct layout_args *a, char **argv)
{
	switch (c) {
	case 't':
	case 'C':	/* pahole's spelling */
		return add_type(a, optarg);
	case 'r': a->reorg = 1; return add_type(a, optarg);
	case 'R': a->reorg = 1; return 0;
	case 'E': a->opts.expand = 1; return 0;
	case 'j': a->json = 1; return 0;
	case 'B': a->btf = 1; return 0;
	case 's': a->sizes = 1; return 0;
	case 'S': a->allow_splits = 1; return 0;
	case 'i': a->input = optarg; return 0;
	case 'D': a->buildid_dir = optarg; return 0;
	case 'H': return cli_number("layout", "-H", optarg, 0, 1u << 30, &a->min_holes);
	case 'L': return cli_line_size("layout", optarg, 8, 4096, &a->opts.line_size);
	case 'h': layout_usage(stdout); exit(HM_EXIT_OK);
	default: cli_bad_option("layout", c, argv); return -1;
	}
}

static int check_args(struct layout_args *a)
{
	if (a->reorg && !a->nr_types)
		return cli_err("layout", -1, "-R: name the types to reorganize with -t TYPE, or "
			       "use --reorganize TYPE");
	if (a->reorg && (a->sizes || a->min_holes))
		return cli_err("layout", -1, "--reorganize: give it alone, without --sizes or -H");
	if (a->input && !a->reorg)
		return cli_err("layout", -1, "-i %s: a recording is for --reorganize TYPE", a->input);
	if (a->allow_splits && !a->reorg)
		return cli_err("layout", -1, "--allow-splits: only with --reorganize TYPE");
	if (!a->file) {
		a->file = DEFAULT_BTF;
		a->default_btf = !a->btf;
		a->btf = 1;
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct layout_args *a)
{
	static const struct option longopts[] = {
		{"type", required_argument, NULL, 't'}, {"expand", no_argument, NULL, 'E'},
		{"line-size", required_argument, NULL, 'L'}, {"json", no_argument, NULL, 'j'},
		{"btf", no_argument, NULL, 'B'}, {"help", no_argument, NULL, 'h'},
		{"sizes", no_argument, NULL, 's'}, {"holes", required_argument, NULL, 'H'},
		{"reorganize", required_argument, NULL, 'r'}, {"input", required_argument, NULL, 'i'},
		{"allow-splits", no_argument, NULL, 'S'}, {"buildid-dir", required_argument, NULL, 'D'},
		{NULL, 0, NULL, 0},
	};
	int c;

	memset(a, 0, sizeof(*a));
	a->opts.line_size = 64;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":t:EC:hsH:Ri:", longopts, NULL)) != -1)
		if (parse_opt(c, a, argv))
			return -1;
	if (optind < argc)
		a->file = argv[optind++];
	if (optind < argc)
		return cli_err("layout", -1, "%s: unexpected argument: give one FILE, and types "
			       "with -t", argv[optind]);
	return check_args(a);
}

static void emit_reorg(struct emit *e, const struct hm_type *t)
{
	struct hm_reorg_opts ro = {.line_size = e->args->opts.line_size,
				   .allow_splits = e->args->allow_splits};
	struct hm_reorg_writers w;
	struct hm_reorg r;

	if (e->rec) {
		hm_reorg_writers_collect(e->arena, t, e->rec->acc, e->rec->n, &w);
		ro.writers = &w;
	}
	hm_reorganize(e->arena, t, &ro, &r);
	if (e->args->json)
		hm_reorg_print_json(&e->json, e->arena, &r, &e->args->opts);
	else
		hm_reorg_print_text(stdout, e->arena, &r, &e->args->opts);
	if (e->rec && !e->args->json)
		printf("/* %s: %llu store%s to %s recorded */\n", e->rec->path,
		       (unsigned long long)w.stores, w.stores == 1 ? "" : "s", hm_type_name(t));
}

static int emit_type(const struct hm_type *t, void *ctx)
{
	struct emit *e = ctx;
	const struct layout_args *a = e->args;

	if (a->min_holes && hm_layout_nr_holes(e->arena, t) < a->min_holes)
		return 0;
	if (a->reorg)
		emit_reorg(e, t);
	else if (a->sizes)
		hm_layout_print_sizes(stdout, a->json ? &e->json : NULL, e->arena, t,
				      a->opts.line_size);
	else if (a->json)
		hm_layout_print_json(&e->json, e->arena, t, &a->opts);
	else
		hm_layout_print_text(stdout, e->arena, t, &a->opts);
	e->count++;
	return 0;
}

static int unknown_type(struct hm_layout *lay, const char *name)
{
	const char *near[5];
	size_t n = hm_layout_suggest(lay, name, near, 5);

	fprintf(stderr, "hitmap layout: %s: no struct, union or typedef named '%s'", hm_layout_path(lay),
		name);
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "%s%s", i ? ", " : "; nearest: ", near[i]);
	fprintf(stderr, "\n");
	return HM_EXIT_INPUT;
}

static void json_begin(struct emit *e)
{
	const struct layout_args *a = e->args;

	hm_json_init(&e->json, stdout);
	hm_json_obj_begin(&e->json, NULL);
	hm_json_str(&e->json, "schema", a->reorg ? "hitmap.layout.reorganize/1"
				: a->sizes ? "hitmap.layout.sizes/1" : "hitmap.layout/1");
	hm_json_str(&e->json, "input", a->file);	/* as every command names its input */
	hm_json_str(&e->json, "file", a->file);		/* deprecated: input */
	hm_json_str(&e->json, "source", a->btf ? "btf" : "dwarf");
	hm_json_u64(&e->json, "line_size", a->opts.line_size);
	if (a->reorg)
		a->input ? hm_json_str(&e->json, "recording", a->input)
			 : hm_json_null(&e->json, "recording");
	hm_json_arr_begin(&e->json, "types");
}

static int open_layout(const struct layout_args *a, struct hm_layout **lay)
{
	struct hm_err err = {0};

	if ((a->btf ? hm_layout_open_btf(a->file, lay, &err) : hm_layout_open(a->file, lay, &err)) < 0) {
		if (a->default_btf)
			fprintf(stderr, "hitmap layout: no FILE given and %s: give an ELF FILE with "
				"DWARF, or --btf FILE\n", err.msg);
		else
			fprintf(stderr, "hitmap layout: %s\n", err.msg);
		return err.code ? err.code : HM_EXIT_INPUT;
	}
	if (a->default_btf)	/* stdout stays pahole's: the note goes to stderr */
		fprintf(stderr, "hitmap layout: no FILE given: reading the running kernel's BTF, "
			DEFAULT_BTF "\n");
	return 0;
}

static int load_input(const char *path, const char *buildid_dir, struct hm_recording *rec)
{
	struct hm_resolve_opts ro = {.buildid_dir = buildid_dir};
	struct hm_err err = {0};

	if (hm_recording_load(path, &ro, NULL, NULL, rec, &err)) {
		fprintf(stderr, "hitmap layout: -i %s\n", err.msg);
		return err.code ? err.code : HM_EXIT_INPUT;
	}
	return 0;
}

int cmd_layout(int argc, char **argv)
{
	struct layout_args args;
	struct hm_layout *lay;
	struct hm_arena arena;
	struct hm_recording rec = {0};
	struct emit e = {.args = &args, .arena = &arena};
	int rc;

	if (parse_args(argc, argv, &args))
		return HM_EXIT_USAGE;
	if ((rc = open_layout(&args, &lay)))
		return rc;
	hm_arena_init(&arena);
	for (int i = 0; i < args.nr_types; i++)
		if (!hm_layout_find(lay, args.types[i]) && (rc = unknown_type(lay, args.types[i])))
			goto out;
	if (args.input && (rc = load_input(args.input, args.buildid_dir, &rec)))
		goto out;
	e.rec = args.input ? &rec : NULL;
	if (args.json)
		json_begin(&e);
	if (args.nr_types)
		for (int i = 0; i < args.nr_types; i++)
			emit_type(hm_layout_find(lay, args.types[i]), &e);
	else
		hm_layout_foreach(lay, emit_type, &e);
	if (args.json) {
		hm_json_arr_end(&e.json);
		hm_json_obj_end(&e.json);
		hm_json_finish(&e.json);
	}
out:
	if (hm_layout_damage(lay)) {	/* what was read is printed; the exit says it is partial */
		fprintf(stderr, "hitmap layout: %s\n", hm_layout_damage(lay));
		rc = HM_EXIT_INPUT;
	}
	if (args.input)
		hm_recording_free(&rec);
	hm_arena_free(&arena);
	hm_layout_close(lay);
	return rc;
}
