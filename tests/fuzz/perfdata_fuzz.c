/* libFuzzer target for the perf.data reader: any input must give events, an error or a clean
 * end, never a crash or an overread. Not part of `make check`; build and run by hand:
 *   clang -g -O1 -std=c11 -D_GNU_SOURCE -I. -fsanitize=fuzzer,address,undefined \
 *     -o build/perfdata_fuzz tests/fuzz/perfdata_fuzz.c core/perfdata_*.c core/arena.c \
 *     core/hash.c core/err.c
 *   mkdir -p build/corpus && cp ../shared/data/perf/cml-i7-10700-perf-c2c-record.data build/corpus/
 *   build/perfdata_fuzz -max_total_time=300 -max_len=20000 build/corpus
 */
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/perfdata.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	struct hm_perfdata *pd;
	struct hm_perf_event ev;
	struct hm_sample s;
	struct hm_err err;

	if (fd < 0)
		fd = memfd_create("perfdata", 0);
	if (fd < 0 || ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size ||
	    lseek(fd, 0, SEEK_SET) < 0)
		return 0;
	if (hm_perfdata_open_fd(fd, "fuzz", &pd, &err) < 0)
		return 0;
	while (hm_perfdata_next(pd, &ev, &err) > 0)
		if (ev.type == PERF_RECORD_SAMPLE)
			hm_perfdata_to_sample(&ev, HM_SRC_PMU, &s);
	hm_perfdata_close(pd);
	return 0;
}
