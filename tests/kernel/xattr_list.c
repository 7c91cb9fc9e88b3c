/* tmpfs: every thread lists the xattrs of one file that has one xattr, like the shmem
 * simple_xattr_list regression (6.1 tmpfs refuses user.*; trusted.* needs root).
 * usage: xattr_list FILE [threads] [seconds] */
#include <fcntl.h>
#include <sys/xattr.h>
#include <unistd.h>
#include "wl.h"

static int fd;

static void body(int tid, unsigned long i)
{
	char buf[8192];
	(void)tid;
	(void)i;
	if (flistxattr(fd, buf, sizeof(buf)) < 0) {
		perror("flistxattr");
		exit(1);
	}
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: xattr_list FILE [threads] [seconds]\n");
		return 1;
	}
	fd = open(argv[1], O_RDWR | O_CREAT, 0644);
	if (fd < 0 || fsetxattr(fd, "trusted.hitmap", "v", 1, 0) != 0) {
		perror(argv[1]);
		return 1;
	}
	return wl_run(argc - 1, argv + 1, 2, body);
}
