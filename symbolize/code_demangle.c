/* C++ function names as a person reads them: symbol tables hold mangled names
 * (_ZN3srv4bumpEPNS_5StatsEi); the Itanium C++ ABI's own demangler (libstdc++, on every
 * machine with g++) turns them into srv::bump(srv::Stats*, int). */
#include "symbolize/code_int.h"

#include <stdlib.h>
#include <string.h>

/* The Itanium C++ ABI's demangler, exported with C linkage by libstdc++. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

const char *code_demangle(struct hm_arena *a, const char *name)
{
	char *d;
	const char *out;
	int status = 0;

	if (!name || strncmp(name, "_Z", 2) != 0)
		return name;
	d = __cxa_demangle(name, NULL, NULL, &status);
	if (status != 0 || !d) {
		free(d);
		return name;	/* not a C++ name after all (a C symbol spelt _Z...) */
	}
	out = hm_arena_strdup(a, d);
	free(d);
	return out;
}
