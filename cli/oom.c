/* What hitmap does when memory runs out anywhere in the library (core/oom.h): one line
 * with the figure and exit 3, the documented code for the environment, never an abort. */
#include <stdio.h>
#include <unistd.h>

#include "core/err.h"
#include "core/oom.h"

void hm_oom_report(size_t peak_kb)
{
	fprintf(stderr, "hitmap: out of memory at %zu MB resident: raise the memory limit "
		"(ulimit -v) or keep fewer lines (report, compare, whatif: a smaller "
		"--max-lines; report: a smaller --batch) or give a shorter recording\n",
		peak_kb / 1024);
	fflush(stderr);
	_exit(HM_EXIT_ENV);
}
