/* ksyms FILE VMLINUX [SYSROOT [KALLSYMS]]: for every kernel sample of FILE, "IP ADDR FUNCTION" as
 * `hitmap report` names the sample's code site (the same library calls: MMAP records,
 * then hm_resolver_sample), so that the lab can compare every kernel ip, modules too,
 * with the names `perf script` gives the same file. ADDR: the data address (0: none);
 * FUNCTION "[unknown]" where none. VMLINUX "" with KALLSYMS: names from that kallsyms file
 * only (report --vmlinux "" --kallsyms F). */
#include <inttypes.h>
#include <stdio.h>

#include "analyzer/load.h"

int main(int argc, char **argv)
{
	struct hm_resolve_opts o = {0};
	struct hm_recording rec;
	struct hm_err err = {0};

	if (argc < 3 || argc > 5) {
		fprintf(stderr, "usage: ksyms FILE VMLINUX [SYSROOT [KALLSYMS]]\n");
		return 1;
	}
	o.vmlinux = argv[2];
	o.sysroot = argc > 3 && argv[3][0] ? argv[3] : NULL;
	o.kallsyms = argc > 4 ? argv[4] : NULL;
	if (hm_recording_load(argv[1], &o, NULL, NULL, &rec, &err)) {
		fprintf(stderr, "ksyms: %s\n", err.msg);
		return err.code ? err.code : 2;
	}
	for (size_t i = 0; i < rec.n; i++)
		if (rec.acc[i].s.kernel)
			printf("%" PRIx64 " %" PRIx64 " %s\n", rec.acc[i].s.ip, rec.acc[i].s.addr,
			       rec.acc[i].func ? rec.acc[i].func : "[unknown]");
	hm_recording_free(&rec);
	return 0;
}
