#include "core/file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int hm_file_open(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY), fl;
	struct stat st;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		int e = fstat(fd, &st) != 0 ? errno : HM_ENOTREG;

		close(fd);
		errno = e;
		return -1;
	}
	if ((fl = fcntl(fd, F_GETFL)) >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}

const char *hm_file_strerror(int e)
{
	if (e == HM_ENOTREG)
		return "not a regular file (a FIFO, device, socket or directory)";
	return strerror(e);
}
