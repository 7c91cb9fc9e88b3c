/* ksyms FILE VMLINUX [SYSROOT [KALLSYMS]]: for every kernel sample of FILE, "IP ADDR FUNCTION" as
 * `hitmap report` names the sample's code site (the same library calls: MMAP records,
 * then hm_resolver_sample), so that the lab can compare every kernel ip, modules too,
 * with the names `perf script` gives the same file. ADDR: the data address (0: none);
 * FUNCTION "[unknown]" where none. VMLINUX "" with KALLSYMS: names from that kallsyms file
 * only (report --vmlinux "" --kallsyms F). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resolve/load.h"
#include "symbolize/code.h"

/* ksyms --patched VMLINUX RELEASE ADDR...: "ADDR KIND" per link address, KIND as
 * hm_code_kernel_patched says (0 none, 1 paravirt, 2 alternative). */
static int patched(int argc, char **argv)
{
	struct hm_code_opts o = {.vmlinux = argv[2], .kernel_release = argv[3]};
	struct hm_code *c;
	struct hm_err err = {0};

	if (hm_code_open(&o, &c, &err)) {
		fprintf(stderr, "ksyms: %s\n", err.msg);
		return 2;
	}
	for (int i = 4; i < argc; i++)
		printf("%s %d\n", argv[i],
		       hm_code_kernel_patched(c, strtoull(argv[i], NULL, 16)));
	hm_code_close(c);
	return 0;
}

int main(int argc, char **argv)
{
	struct hm_resolve_opts o = {0};
	struct hm_recording rec;
	struct hm_err err = {0};

	if (argc > 4 && !strcmp(argv[1], "--patched"))
		return patched(argc, argv);
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
