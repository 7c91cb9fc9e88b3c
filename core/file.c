#include "core/file.h"
#include "core/err.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
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

int hm_file_is_elf(int fd)
{
	unsigned char m[4];

	return pread(fd, m, sizeof(m), 0) == 4 && !memcmp(m, "\177ELF", 4);
}

int hm_path_is_elf(const char *path)
{
	int fd = hm_file_open(path), elf;

	if (fd < 0)
		return 0;
	elf = hm_file_is_elf(fd);
	close(fd);
	return elf;
}

const char *hm_file_strerror(int e)
{
	if (e == HM_ENOTREG)
		return "not a regular file (a FIFO, device, socket or directory)";
	return strerror(e);
}

/* --- SIGBUS from a mapped file that shrank ---
 * libelf and libdw map the files they read; a page past the new end of a file that
 * shrank after it was mapped raises SIGBUS on first touch. Nothing can be recovered
 * there, but the file can be named: /proc/self/maps says what is mapped at the fault.
 * Only async-signal-safe calls below (open, read, write, _exit). */

static uint64_t hex_field(const char *s, size_t n, size_t *i)
{
	uint64_t v = 0;

	for (; *i < n; (*i)++) {
		char c = s[*i];
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;

		if (d < 0)
			break;
		v = v << 4 | (uint64_t)d;
	}
	return v;
}

static void skip_field(const char *s, size_t n, size_t *i)
{
	while (*i < n && s[*i] != ' ')
		(*i)++;
	while (*i < n && s[*i] == ' ')
		(*i)++;
}

/* One maps line: does it map addr? Then *path (in line) and *off (the file offset). */
static int maps_line(char *s, size_t n, uint64_t addr, const char **path, uint64_t *off)
{
	size_t i = 0;
	uint64_t lo = hex_field(s, n, &i), hi, pgoff;

	if (i >= n || s[i++] != '-')
		return 0;
	hi = hex_field(s, n, &i);
	if (addr < lo || addr >= hi)
		return 0;
	skip_field(s, n, &i);	/* to perms' end */
	skip_field(s, n, &i);
	pgoff = hex_field(s, n, &i);
	skip_field(s, n, &i);	/* offset */
	skip_field(s, n, &i);	/* dev */
	skip_field(s, n, &i);	/* inode */
	if (i >= n || s[i] != '/')
		return 0;
	s[n] = '\0';
	*path = s + i;
	*off = pgoff + (addr - lo);
	return 1;
}

static int maps_find(uint64_t addr, char *buf, size_t cap, const char **path, uint64_t *off)
{
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC), found = 0;
	size_t len = 0, start;
	ssize_t n;

	if (fd < 0)
		return 0;
	do {
		char *nl;

		n = read(fd, buf + len, cap - 1 - len);
		len += n > 0 ? (size_t)n : 0;
		for (start = 0; !found && (nl = memchr(buf + start, '\n', len - start));
		     start = (size_t)(nl - buf) + 1)
			found = maps_line(buf + start, (size_t)(nl - buf) - start, addr, path, off);
		if (!found && n <= 0 && len > start)
			found = maps_line(buf + start, len - start, addr, path, off);
		if (!found) {
			memmove(buf, buf + start, len - start);
			len -= start;
			if (len == cap - 1)
				len = 0;	/* a line longer than buf: not a path we can name */
		}
	} while (!found && n > 0);
	close(fd);
	return found;
}

static void put_str(char *out, size_t cap, size_t *at, const char *s)
{
	while (*s && *at + 1 < cap)
		out[(*at)++] = *s++;
}

static void put_u64(char *out, size_t cap, size_t *at, uint64_t v)
{
	char d[24];
	int k = 0;

	do
		d[k++] = (char)('0' + v % 10);
	while ((v /= 10) && k < 24);
	while (k && *at + 1 < cap)
		out[(*at)++] = d[--k];
}

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	static char buf[8192], msg[4608];	/* static: the stack may be what is short */
	const char *path;
	uint64_t off;
	size_t at = 0;

	(void)sig;
	(void)uc;
	if (!maps_find((uint64_t)(uintptr_t)si->si_addr, buf, sizeof(buf), &path, &off))
		return;	/* not a file mapping: SA_RESETHAND lets the fault end us as before */
	put_str(msg, sizeof(msg), &at, "hitmap: ");
	put_str(msg, sizeof(msg), &at, path);
	put_str(msg, sizeof(msg), &at, ": the file shrank while it was being read (no byte ");
	put_u64(msg, sizeof(msg), &at, off);
	put_str(msg, sizeof(msg), &at, " any more, SIGBUS): copy it where it cannot change "
		"and run again\n");
	if (write(STDERR_FILENO, msg, at) < 0)
		_exit(HM_EXIT_INPUT);
	_exit(HM_EXIT_INPUT);
}

int hm_file_guard_sigbus(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	return sigaction(SIGBUS, &sa, NULL);
}
