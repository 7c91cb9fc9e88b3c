/* Shared by the libFuzzer targets: the input as a file that path-only APIs can open,
 * without touching the disk. */
#ifndef HM_FUZZ_UTIL_H
#define HM_FUZZ_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One memfd per process, rewritten for every input; *path names it for open(2), which
 * gives libelf/libbpf their own offset. NULL if it cannot be written. */
static inline const char *hm_fuzz_file(const uint8_t *data, size_t size, int *fd_out)
{
	static int fd = -1;
	static char path[64];

	if (fd < 0) {
		fd = memfd_create("hm-fuzz", 0);
		if (fd < 0)
			return NULL;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) < 0 || (size && pwrite(fd, data, size, 0) != (ssize_t)size) ||
	    lseek(fd, 0, SEEK_SET) < 0)
		return NULL;
	if (fd_out)
		*fd_out = fd;
	return path;
}

#endif
