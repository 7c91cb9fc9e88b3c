/* run(): a shell command built printf-style, its system() status. Shared by the unit
 * tests that build programs or call binutils. */
#ifndef HM_TEST_RUN_UTIL_H
#define HM_TEST_RUN_UTIL_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef UNUSED
#define UNUSED __attribute__((unused))
#endif

static UNUSED int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static UNUSED int run(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

#endif
