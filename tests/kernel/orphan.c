/* ext4: create, write, ftruncate and unlink files in one directory. Truncate and unlink
 * put the inode on the superblock's orphan list under s_orphan_lock: the ext4 orphan
 * regression. usage: orphan DIR [threads] [seconds] */
#include <fcntl.h>
#include <unistd.h>
#include "wl.h"

static const char *dir;

static void body(int tid, unsigned long i)
{
	char name[4096], buf[4096] = { 1 };
	snprintf(name, sizeof(name), "%s/o%d.%lu", dir, tid, i & 15);
	int fd = open(name, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf) ||
	    ftruncate(fd, 0) != 0) {
		perror(name);
		exit(1);
	}
	close(fd);
	if (unlink(name) != 0) {
		perror(name);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: orphan DIR [threads] [seconds]\n");
		return 1;
	}
	dir = argv[1];
	return wl_run(argc - 1, argv + 1, 2, body);
}
