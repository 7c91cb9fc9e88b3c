/* Option values the subcommands share. */
#include "cli/cmds.h"

#include <stdio.h>
#include <stdlib.h>

int cli_line_size(const char *cmd, const char *arg, uint32_t min, uint32_t max, uint32_t *out)
{
	char *end;
	unsigned long v = strtoul(arg, &end, 0);

	if (*end || v < min || v > max || (v & (v - 1))) {
		fprintf(stderr, "hitmap %s: --line-size %s: give a power of two from %u to %u (64, "
				"or 128 for adjacent-line prefetch)\n", cmd, arg, min, max);
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}
