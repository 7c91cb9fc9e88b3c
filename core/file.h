/* Opening files whose paths came from someone else's data (a recording's MMAP records,
 * build-id links, a debug link): only regular files, and never blocking. */
#ifndef HM_FILE_H
#define HM_FILE_H

#include <errno.h>

/* errno of hm_file_open for a path that is not a regular file (a FIFO, a device, a
 * directory, a socket): open() or read() on those can block forever or never end. */
#define HM_ENOTREG EMEDIUMTYPE

/* Opens path read-only and close-on-exec without blocking (O_NONBLOCK, cleared again
 * once the file is known to be regular). fd, or -1 with errno set: open's, or
 * HM_ENOTREG. */
int hm_file_open(const char *path);
/* Whether the file starts with the ELF magic. Check it before libdwfl opens a file: on
 * anything else it tries every decompressor, and each leaks its 1 MiB buffer (elfutils
 * 0.188: 3 MiB for /sys/kernel/btf/vmlinux named by an MMAP record). */
int hm_file_is_elf(int fd);
/* The same by path, opened as hm_file_open does; 0 when it cannot be opened. */
int hm_path_is_elf(const char *path);
/* strerror, and "not a regular file (a FIFO, device or directory)" for HM_ENOTREG. */
const char *hm_file_strerror(int e);

/* For cli/ only (it sets process state): SIGBUS from a page of a mapped file that no
 * longer exists (the file shrank after libelf, libdw or the perf.data reader mapped it)
 * ends the process with one line naming the file and the offset, and exit 2. A SIGBUS
 * outside a file mapping keeps its default action. 0, or -1 with errno. */
int hm_file_guard_sigbus(void);

#endif
