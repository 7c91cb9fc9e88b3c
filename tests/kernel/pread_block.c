/* xfs: every thread preads the same 4 KiB block of one file (page cache hits on one
 * folio and one inode: the xfs read regression). usage: pread_block FILE [threads] [seconds] */
#include <fcntl.h>
#include <unistd.h>
#include "wl.h"

static int fd;

static void body(int tid, unsigned long i)
{
	char buf[4096];
	(void)tid;
	(void)i;
	if (pread(fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf)) {
		perror("pread");
		exit(1);
	}
}

int main(int argc, char **argv)
{
	char block[4096] = { 7 };
	if (argc < 2) {
		fprintf(stderr, "usage: pread_block FILE [threads] [seconds]\n");
		return 1;
	}
	fd = open(argv[1], O_RDWR | O_CREAT, 0644);
	if (fd < 0 || pwrite(fd, block, sizeof(block), 0) != (ssize_t)sizeof(block) ||
	    fsync(fd) != 0) {
		perror(argv[1]);
		return 1;
	}
	return wl_run(argc - 1, argv + 1, 4, body);
}
