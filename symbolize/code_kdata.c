/* Kernel variables' addresses from kallsyms, for reading them from kcore: where KASLR
 * put the direct map and the struct pages (page_offset_base, vmemmap_base) is a value
 * in kernel memory, not in any file (symbolize/data_slab.c). */
#include "symbolize/code_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int hm_code_kernel_data(struct hm_code *c, const char *const *names, uint64_t *addrs,
			size_t n)
{
	struct code_kernel *k = &c->k;
	struct hm_code_kernel img;
	char *line = NULL;
	size_t cap = 0, found = 0;
	FILE *f;

	for (size_t i = 0; i < n; i++)
		addrs[i] = 0;
	if (hm_code_kernel_image(c, &img) != 0 || !img.kcore)
		return -1;
	if (!k->ksyms_loaded)
		code_ksyms_load(c);
	/* kcore is this boot's memory; kallsyms of another boot would misplace it */
	if (!k->kcore_path || k->ksyms_error || k->restricted || k->ksyms_shift ||
	    !(f = fopen(c->kallsyms, "re")))
		return -1;
	while (found < n && getline(&line, &cap, f) > 0) {
		unsigned long long at;
		char type, name[128];

		if (sscanf(line, "%llx %c %127s", &at, &type, name) != 3 || !at)
			continue;
		for (size_t i = 0; i < n; i++)
			if (!addrs[i] && !strcmp(name, names[i])) {
				addrs[i] = at;
				found++;
			}
	}
	free(line);
	fclose(f);
	return found == n ? 0 : -1;
}
