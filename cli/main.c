/* hitmap: find data-layout performance bugs. Dispatches to one file per subcommand. */
#include <stdio.h>
#include <string.h>

#include "cli/cmds.h"
#include "core/err.h"
#include "core/file.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{"record", cmd_record, "sample memory accesses of a workload into perf.data"},
	{"report", cmd_report, "contended cache lines per field, false/true sharing, splits, heat maps"},
	{"layout", cmd_layout, "struct layouts from DWARF or BTF, pahole-style, with cache lines"},
	{"script", cmd_script, "dump the samples of a perf.data file, like perf script"},
	{"check", cmd_check, "what can be collected on this machine, and why not"},
	{"diff", cmd_diff, "what a struct change between two builds does to cache lines"},
	{"whatif", cmd_whatif, "replay a recording through another layout: which lines stop or start being shared"},
	{"compare", cmd_compare, "runs of two builds: per-field statistics, significance, layout changes"},
};

static void usage(FILE *out)
{
	fprintf(out, "usage: hitmap COMMAND [ARGS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n'hitmap COMMAND --help' shows a command's options; 'hitmap --version' "
		"the version.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return HM_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return HM_EXIT_OK;
	}
	hm_file_guard_sigbus();	/* an input that shrinks under a mapping: one line, exit 2 */
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V") || !strcmp(argv[1], "version")) {
		printf("hitmap %s\n", HITMAP_VERSION);
		return HM_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "hitmap: %s: unknown command; run 'hitmap --help' for the list\n", argv[1]);
	return HM_EXIT_USAGE;
}
