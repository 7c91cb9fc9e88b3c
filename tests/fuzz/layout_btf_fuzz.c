/* libFuzzer target for the BTF layout path (libbpf underneath): raw BTF or an ELF file's
 * .BTF section. Built and run by `make fuzz` (tests/fuzz/README.md). */
#include "tests/fuzz/layout_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hm_layout *lay;
	struct hm_err err;
	const char *path = hm_fuzz_file(data, size, NULL);

	if (!path || hm_layout_open_btf(path, &lay, &err) < 0)
		return 0;
	fuzz_layout(lay);
	hm_layout_close(lay);
	return 0;
}
