/* hitmap diff OLD NEW [-t TYPE]... [--globals] [--line-size N] [--fail-on LIST] [--md|--json] */
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "render/diff_print.h"
#include "cli/cmds.h"

#define MAX_TYPES 256

struct diff_args {
	const char *old, *new;
	const char *types[MAX_TYPES];
	int nr_types, globals, md, json, wide;
	uint32_t line_size;
	unsigned fail_mask;
};

static void diff_usage(FILE *out)
{
	fprintf(out,
		"usage: hitmap diff OLD NEW [-t TYPE]... [--globals] [--line-size N]\n"
		"                   [--fail-on KINDS] [--md | --json]\n\n"
		"OLD and NEW: two builds (ELF with DWARF, debug files, modules, or raw BTF).\n"
		"  -t, --type TYPE   only TYPE (repeatable); default: every named type\n"
		"  --globals         also compare which variables share each data/bss line\n"
		"  --line-size N     cache-line size (default 64)\n"
		"  --fail-on KINDS   exit 4 when a finding of these kinds exists, e.g.\n"
		"                    straddle,shared,size,hole (also line,embeds,added,...)\n"
		"  --md              a markdown review comment;  --json  hitmap.diff/1\n"
		"  --wide            text lines as long as they come (default: wrapped at 120)\n");
}

static int parse_args(int argc, char **argv, struct diff_args *a)
{
	static const struct option longopts[] = {
		{"type", required_argument, NULL, 't'}, {"globals", no_argument, NULL, 'g'},
		{"line-size", required_argument, NULL, 'L'}, {"fail-on", required_argument, NULL, 'F'},
		{"md", no_argument, NULL, 'm'}, {"json", no_argument, NULL, 'j'},
		{"wide", no_argument, NULL, 'W'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
	};
	int c;

	memset(a, 0, sizeof(*a));
	a->line_size = 64;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":t:C:h", longopts, NULL)) != -1) {
		switch (c) {
		case 't':
		case 'C':
			if (a->nr_types == MAX_TYPES)
				return cli_err("diff", -1, "-t %s: at most %d -t options", optarg,
					       MAX_TYPES);
			a->types[a->nr_types++] = optarg;
			break;
		case 'g': a->globals = 1; break;
		case 'm': a->md = 1; break;
		case 'j': a->json = 1; break;
		case 'W': a->wide = 1; break;
		case 'L':
			if (cli_line_size("diff", optarg, 8, 4096, &a->line_size))
				return -1;
			break;
		case 'F':
			if (hm_fkind_mask(optarg, &a->fail_mask)) {
				fprintf(stderr, "hitmap diff: --fail-on %s: use a comma-separated "
						"list of straddle, shared, size, hole, line, embeds, "
						"moved, added, removed, renamed, retyped, align\n", optarg);
				return -1;
			}
			break;
		case 'h': diff_usage(stdout); exit(HM_EXIT_OK);
		default: cli_bad_option("diff", c, argv); return -1;
		}
	}
	if (argc - optind != 2)
		return cli_err("diff", -1, "give two builds, OLD and NEW (got %d %s); see 'hitmap "
			       "diff --help'", argc - optind, argc - optind == 1 ? "file" : "files");
	if (a->md && a->json)
		return cli_err("diff", -1, "--md and --json: choose one");
	a->old = argv[optind];
	a->new = argv[optind + 1];
	return 0;
}

/* ELF files are read for DWARF; anything else is tried as raw BTF. */
static int open_any(const char *path, struct hm_layout **lay, struct hm_err *err)
{
	char magic[4] = {0};
	int fd = open(path, O_RDONLY);

	if (fd >= 0) {
		if (read(fd, magic, 4) != 4)
			magic[0] = 0;
		close(fd);
	}
	if (fd >= 0 && memcmp(magic, "\177ELF", 4) != 0 && hm_layout_open_btf(path, lay, err) == 0)
		return 0;
	return hm_layout_open(path, lay, err);
}

static int same_arch(struct hm_layout *o, struct hm_layout *n)
{
	uint16_t mo, mn;
	uint8_t co, cn;

	hm_layout_machine(o, &mo, &co);
	hm_layout_machine(n, &mn, &cn);
	if (!mo || !mn || (mo == mn && co == cn))
		return 1;
	fprintf(stderr, "hitmap diff: %s is ELF machine %u (%d-bit) but %s is machine %u (%d-bit): "
			"diff two builds for the same architecture\n", hm_layout_path(o), mo,
		co == 1 ? 32 : 64, hm_layout_path(n), mn, cn == 1 ? 32 : 64);
	return 0;
}

static int load_globals(struct hm_arena *a, const struct diff_args *args, struct hm_gdiff *gd)
{
	struct hm_global *go = NULL, *gn = NULL;
	size_t no = 0, nn = 0;
	struct hm_err err = {0};
	int rc = 0;

	if (hm_globals_load(a, args->old, &go, &no, &err) < 0 ||
	    hm_globals_load(a, args->new, &gn, &nn, &err) < 0) {
		fprintf(stderr, "hitmap diff: %s\n", err.msg);
		rc = -1;
	} else {
		hm_globals_diff(a, go, no, gn, nn, args->line_size, gd);
	}
	free(go);
	free(gn);
	return rc;
}

static int failing(const struct diff_args *a, const struct hm_diff *d, const struct hm_gdiff *g)
{
	for (size_t i = 0; i < d->nr; i++)
		for (uint32_t k = 0; k < d->types[i]->nr; k++)
			if (a->fail_mask & (1u << d->types[i]->f[k].kind))
				return 1;
	for (size_t i = 0; g && i < g->nr; i++)
		if (((a->fail_mask & (1u << HM_F_SHARED)) && g->f[i].kind == HM_G_GAINED) ||
		    ((a->fail_mask & (1u << HM_F_STRADDLE)) && g->f[i].kind == HM_G_STRADDLE))
			return 1;
	return 0;
}

static int damaged(const struct hm_layout *lay)
{
	if (!hm_layout_damage(lay))
		return 0;
	fprintf(stderr, "hitmap diff: %s\n", hm_layout_damage(lay));
	return 1;
}

int cmd_diff(int argc, char **argv)
{
	struct diff_args args;
	struct hm_layout *old = NULL, *new = NULL;
	struct hm_err err = {0};
	struct hm_arena arena;
	struct hm_diff d = {0};
	struct hm_gdiff gd = {0};
	struct hm_diff_view v;
	int rc = HM_EXIT_INPUT;

	if (parse_args(argc, argv, &args))
		return HM_EXIT_USAGE;
	if (open_any(args.old, &old, &err) < 0 || open_any(args.new, &new, &err) < 0) {
		fprintf(stderr, "hitmap diff: %s\n", err.msg);
		hm_layout_close(old);
		return err.code ? err.code : HM_EXIT_INPUT;
	}
	hm_arena_init(&arena);
	if (!same_arch(old, new))
		goto out;
	if (hm_diff_types(&arena, old, new, args.types, (size_t)args.nr_types, args.line_size, &d,
			  &err) < 0) {
		fprintf(stderr, "hitmap diff: %s\n", err.msg);
		goto out;
	}
	if (args.globals && load_globals(&arena, &args, &gd) < 0)
		goto out;
	v = (struct hm_diff_view){args.old, args.new, &d, args.globals ? &gd : NULL};
	if (args.json)
		hm_diff_print_json(stdout, &v);
	else if (args.md)
		hm_diff_print_md(stdout, &v);
	else {
		struct cli_text t;

		hm_diff_print_text(cli_text_begin(&t, args.wide), &v);
		cli_text_end(&t);
	}
	rc = failing(&args, &d, args.globals ? &gd : NULL) ? HM_EXIT_FINDINGS : HM_EXIT_OK;
	if (damaged(old) | damaged(new))
		rc = HM_EXIT_INPUT;	/* types lost to damage read as "removed": never a pass */
out:
	hm_diff_free(&d);
	free(gd.f);
	hm_arena_free(&arena);
	hm_layout_close(old);
	hm_layout_close(new);
	return rc;
}
