/* hitmap layout FILE|--btf [FILE] [-t TYPE]... [-E] [--line-size N] [--json] */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/layout_print.h"
#include "cli/cmds.h"
#include "core/json.h"

#define DEFAULT_BTF "/sys/kernel/btf/vmlinux"
#define MAX_TYPES 64

struct layout_args {
	const char *file;
	int btf, json;
	const char *types[MAX_TYPES];
	int nr_types;
	struct hm_print_opts opts;
};

struct emit {
	const struct layout_args *args;
	struct hm_arena *arena;
	struct hm_json json;
	int count;
};

static void layout_usage(FILE *out)
{
	fprintf(out,
		"usage: hitmap layout FILE [-t TYPE]... [-E] [--line-size N] [--json]\n"
		"       hitmap layout --btf [FILE] [...]   (default FILE: " DEFAULT_BTF ")\n\n"
		"FILE is an ELF executable, shared object, .o, kernel module or separate debug\n"
		"file with DWARF. Without -t, every named struct/union/class is printed once.\n"
		"  -t, --type TYPE    only TYPE ('foo', 'struct foo', 'union foo', a typedef)\n"
		"  -E, --expand       expand nested named types in place\n"
		"  --line-size N      cache-line size for boundaries (default 64)\n"
		"  --json             hitmap.layout/1 JSON (docs/layout.md)\n");
}

static int parse_args(int argc, char **argv, struct layout_args *a)
{
	static const struct option longopts[] = {
		{"type", required_argument, NULL, 't'}, {"expand", no_argument, NULL, 'E'},
		{"line-size", required_argument, NULL, 'L'}, {"json", no_argument, NULL, 'j'},
		{"btf", no_argument, NULL, 'B'}, {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;

	memset(a, 0, sizeof(*a));
	a->opts.line_size = 64;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":t:EC:h", longopts, NULL)) != -1) {
		switch (c) {
		case 't':
		case 'C':	/* pahole's spelling */
			if (a->nr_types == MAX_TYPES) {
				return cli_err("layout", -1, "-t %s: at most %d -t options", optarg,
					       MAX_TYPES);
			}
			a->types[a->nr_types++] = optarg;
			break;
		case 'E': a->opts.expand = 1; break;
		case 'j': a->json = 1; break;
		case 'B': a->btf = 1; break;
		case 'L':
			if (cli_line_size("layout", optarg, 8, 4096, &a->opts.line_size))
				return -1;
			break;
		case 'h': layout_usage(stdout); exit(HM_EXIT_OK);
		default: cli_bad_option("layout", c, argv); return -1;
		}
	}
	if (optind < argc)
		a->file = argv[optind++];
	if (optind < argc)
		return cli_err("layout", -1, "%s: unexpected argument: give one FILE, and types "
			       "with -t", argv[optind]);
	if (!a->file && !a->btf)
		return cli_err("layout", -1, "give a FILE (ELF with DWARF), or --btf; see 'hitmap "
			       "layout --help'");
	if (!a->file)
		a->file = DEFAULT_BTF;
	return 0;
}

static int emit_type(const struct hm_type *t, void *ctx)
{
	struct emit *e = ctx;

	if (e->args->json) {
		hm_layout_print_json(&e->json, e->arena, t, &e->args->opts);
	} else {
		hm_layout_print_text(stdout, e->arena, t, &e->args->opts);
	}
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

int cmd_layout(int argc, char **argv)
{
	struct layout_args args;
	struct hm_layout *lay;
	struct hm_err err = {0};
	struct hm_arena arena;
	struct emit e = {.args = &args, .arena = &arena};
	int rc = HM_EXIT_OK;

	if (parse_args(argc, argv, &args))
		return HM_EXIT_USAGE;
	if ((args.btf ? hm_layout_open_btf(args.file, &lay, &err)
		      : hm_layout_open(args.file, &lay, &err)) < 0) {
		fprintf(stderr, "hitmap layout: %s\n", err.msg);
		return err.code ? err.code : HM_EXIT_INPUT;
	}
	hm_arena_init(&arena);
	for (int i = 0; i < args.nr_types; i++)
		if (!hm_layout_find(lay, args.types[i]) && (rc = unknown_type(lay, args.types[i])))
			goto out;
	if (args.json) {
		hm_json_init(&e.json, stdout);
		hm_json_obj_begin(&e.json, NULL);
		hm_json_str(&e.json, "schema", "hitmap.layout/1");
		hm_json_str(&e.json, "input", args.file);	/* as every command names its input */
		hm_json_str(&e.json, "file", args.file);	/* deprecated: input */
		hm_json_u64(&e.json, "line_size", args.opts.line_size);
		hm_json_arr_begin(&e.json, "types");
	}
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
	hm_arena_free(&arena);
	hm_layout_close(lay);
	return rc;
}
