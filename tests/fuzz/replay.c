/* Runs saved inputs through a fuzz target without libFuzzer, so that make check replays
 * tests/data/fuzz-regress/ under the normal and the ASan build: tests/e2e/fuzz_regress.sh
 * links this with one tests/fuzz/TARGET_fuzz.c and $BUILD/libhitmap.a.
 *   usage: replay FILE...    exit 0 when every input ran to the end */
#include <stdio.h>
#include <stdlib.h>

#include "tests/fuzz/fuzz_util.h"

static int replay(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (!f) {
		perror(path);
		return 1;
	}
	do {
		if (len == cap) {
			uint8_t *nb = realloc(buf, cap = cap ? cap * 2 : 65536);

			if (!nb) {
				free(buf);
				fclose(f);
				return 1;
			}
			buf = nb;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int rc = 0;

	for (int i = 1; i < argc; i++)
		rc |= replay(argv[i]);
	return rc;
}
