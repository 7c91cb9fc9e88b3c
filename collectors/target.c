#include "collectors/target.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int hm_target_spawn(char *const argv[], pid_t *pid, struct hm_err *err)
{
	int pfd[2], status, child_errno = 0;
	pid_t p;

	/* The child reports a failed exec through a close-on-exec pipe. */
	if (pipe2(pfd, O_CLOEXEC) != 0)
		return hm_err_set(err, HM_EXIT_ENV, "pipe: %s", strerror(errno));
	p = fork();
	if (p < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return hm_err_set(err, HM_EXIT_ENV, "fork: %s", strerror(errno));
	}
	if (p == 0) {
		close(pfd[0]);
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) == 0)
			execvp(argv[0], argv);
		child_errno = errno;
		if (write(pfd[1], &child_errno, sizeof(child_errno)) < 0)
			_exit(127);
		_exit(127);
	}
	close(pfd[1]);
	if (read(pfd[0], &child_errno, sizeof(child_errno)) == sizeof(child_errno)) {
		close(pfd[0]);
		waitpid(p, &status, 0);
		return hm_err_set(err, HM_EXIT_USAGE, "cannot run '%s': %s%s", argv[0],
				  strerror(child_errno),
				  child_errno == ENOENT ? " (check the path or PATH)" : "");
	}
	close(pfd[0]);
	if (waitpid(p, &status, 0) != p || !WIFSTOPPED(status)) {
		return hm_err_set(err, HM_EXIT_ENV, "'%s' did not stop at exec (status 0x%x): is "
				  "hitmap itself being traced?", argv[0], status);
	}
	*pid = p;
	return 0;
}

int hm_target_resume(pid_t pid, struct hm_err *err)
{
	if (ptrace(PTRACE_DETACH, pid, NULL, NULL) != 0)
		return hm_err_set(err, HM_EXIT_ENV, "cannot start pid %d: %s", (int)pid,
				  strerror(errno));
	return 0;
}

size_t hm_target_threads(pid_t pid, pid_t *tids, size_t cap)
{
	char path[64];
	DIR *d;
	struct dirent *de;
	size_t n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (!(d = opendir(path)))
		return 0;
	while ((de = readdir(d)) && n < cap) {
		char *end;
		long t = strtol(de->d_name, &end, 10);

		if (*end == '\0' && t > 0)
			tids[n++] = (pid_t)t;
	}
	closedir(d);
	return n;
}

int hm_target_exe(pid_t pid, char *path, size_t len, unsigned long long *base)
{
	char link[64], line[4096];
	ssize_t n;
	FILE *f;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	n = readlink(link, path, len - 1);
	if (n <= 0)
		return -1;
	path[n] = '\0';
	*base = 0;
	snprintf(link, sizeof(link), "/proc/%d/maps", (int)pid);
	if (!(f = fopen(link, "r")))
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo;
		char *file = strchr(line, '/');

		if (!file || sscanf(line, "%llx-", &lo) != 1)
			continue;
		file[strcspn(file, "\n")] = '\0';
		if (!strcmp(file, path) && (!*base || lo < *base))
			*base = lo;
	}
	fclose(f);
	return 0;
}

int hm_target_watch(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	return -1;
#endif
}

int hm_target_gone(pid_t pid, int pidfd)
{
	struct pollfd p = {.fd = pidfd, .events = POLLIN};

	if (pidfd >= 0)
		return poll(&p, 1, 0) > 0;
	return kill(pid, 0) != 0 && errno == ESRCH;
}
