/* loop.ko's own globals: every thread asks /dev/loop-control for a free loop device
 * (LOOP_CTL_GET_FREE), which takes loop.ko's loop_ctl_mutex and walks its
 * loop_index_idr (drivers/block/loop.c, loop_control_get_free): the kernel's mutex and
 * idr code reads and writes a module's .data/.bss through pointers, and the threads
 * contend on that mutex. The lab checks that these accesses are named as the module's
 * variables (docs/kernel.md, Kernel modules). usage: loop_ctl DEV [threads] [seconds] */
#include <fcntl.h>
#include <linux/loop.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "wl.h"

static int fd;

static void body(int tid, unsigned long i)
{
	(void)tid;
	(void)i;
	if (ioctl(fd, LOOP_CTL_GET_FREE) < 0) {
		perror("LOOP_CTL_GET_FREE");
		exit(1);
	}
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: loop_ctl DEV [threads] [seconds]\n");
		return 1;
	}
	fd = open(argv[1], O_RDWR);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	return wl_run(argc - 1, argv + 1, 2, body);
}
