/* One directory, every thread creates and unlinks its own files in it: the shmem
 * (tmpfs) create/unlink regression, where the parent's i_rwsem and dentry lines bounce.
 * usage: create_unlink DIR [threads] [seconds] */
#include <fcntl.h>
#include <unistd.h>
#include "wl.h"

static const char *dir;

static void body(int tid, unsigned long i)
{
	char name[4096];
	snprintf(name, sizeof(name), "%s/f%d.%lu", dir, tid, i & 63);
	int fd = open(name, O_RDWR | O_CREAT, 0644);
	if (fd < 0) {
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
		fprintf(stderr, "usage: create_unlink DIR [threads] [seconds]\n");
		return 1;
	}
	dir = argv[1];
	return wl_run(argc - 1, argv + 1, 2, body);
}
