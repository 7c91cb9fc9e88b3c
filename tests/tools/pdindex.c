/* pdindex FILE: what hitmap's record index (core/perfdata_index.c) of a perf.data says, for
 * tests/e2e/alloc.sh to check against perf script's own count of the records on a real
 * recording. Prints "records N" (how many it lists, 0 without one), then one line
 * "lists EVENT" per event whose samples it lists, then "none", "index" or "index, not
 * used" (reading its records would cost more than the file). Exit 2 when the file cannot
 * be read. */
#include <inttypes.h>
#include <stdio.h>

#include "core/perfdata.h"

int main(int argc, char **argv)
{
	struct hm_perfdata *pd;
	struct hm_err err = {0};
	const uint64_t *off;
	uint64_t nr;
	int have;

	if (argc != 2) {
		fprintf(stderr, "usage: pdindex FILE\n");
		return 2;
	}
	if (hm_perfdata_open(argv[1], &pd, &err) < 0) {
		fprintf(stderr, "pdindex: %s\n", err.msg);
		return 2;
	}
	have = hm_perfdata_index(pd, &off, &nr);
	printf("records %" PRIu64 "\n", nr);
	for (uint32_t i = 0; i < hm_perfdata_nr_attrs(pd); i++)
		if (hm_perfdata_index_lists(pd, i))
			printf("lists %s\n", hm_perfdata_attr(pd, i)->name);
	printf("%s\n", !have ? "none" : hm_perfdata_index_pays(pd) ? "index" : "index, not used");
	hm_perfdata_close(pd);
	return 0;
}
