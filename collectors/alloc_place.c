/* The probed file's path at one address in both hitmap and the workload.
 *
 * A uprobe-PMU event names its file by a user pointer (attr.config1), and the kernel
 * reads that pointer again whenever the event is inherited: in the thread that calls
 * clone or fork, from the workload's memory (perf_uprobe_init, kernel 6.18 here). A
 * pointer into hitmap made every pthread_create of the workload fail with EFAULT; a
 * pointer into memory the workload may rewrite (its environment, setproctitle) would
 * probe another file at the same offset. So the path gets a page of its own, mapped
 * read-only at the same address in both processes: the workload's is created by one
 * mmap system call run in it while it is stopped at exec (ptrace), and the probes are
 * removed on exec (remove_on_exec), where the page goes away. */
#include "collectors/alloc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAGE 4096

/* The address of a `syscall` instruction (0f 05) in an executable mapping of pid. */
static uint64_t find_syscall_insn(pid_t pid)
{
	char path[64], line[4352];
	uint8_t buf[65536];
	uint64_t found = 0;
	FILE *f;
	int mem;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if (!(f = fopen(path, "r")))
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	if ((mem = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		fclose(f);
		return 0;
	}
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char perms[5];

		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) != 3 || perms[2] != 'x')
			continue;
		for (uint64_t at = lo; !found && at < hi; at += sizeof(buf) - 1) {
			size_t want = hi - at < sizeof(buf) ? hi - at : sizeof(buf);
			ssize_t n = pread(mem, buf, want, (off_t)at);

			for (ssize_t i = 0; i + 1 < n && !found; i++)
				if (buf[i] == 0x0f && buf[i + 1] == 0x05)
					found = at + (uint64_t)i;
			if (n <= 0)
				break;
		}
	}
	close(mem);
	fclose(f);
	return found;
}

/* Runs mmap(addr, PAGE, PROT_READ, MAP_FIXED_NOREPLACE...) in the stopped pid; 0 when
 * the page is at addr. */
static int remote_mmap(pid_t pid, uint64_t addr)
{
	struct user_regs_struct saved, r;
	uint64_t insn = find_syscall_insn(pid);
	int status, rc = -1;

	if (!insn || ptrace(PTRACE_GETREGS, pid, NULL, &saved))
		return -1;
	r = saved;
	r.rax = SYS_mmap;
	r.orig_rax = (unsigned long long)-1;	/* no syscall restart on resume */
	r.rdi = addr;
	r.rsi = PAGE;
	r.rdx = PROT_READ;
	r.r10 = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE;
	r.r8 = (unsigned long long)-1;
	r.r9 = 0;
	r.rip = insn;
	if (ptrace(PTRACE_SETREGS, pid, NULL, &r) == 0 &&
	    ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL) == 0 && waitpid(pid, &status, 0) == pid &&
	    WIFSTOPPED(status) && ptrace(PTRACE_GETREGS, pid, NULL, &r) == 0)
		rc = r.rax == addr ? 0 : -1;
	if (ptrace(PTRACE_SETREGS, pid, NULL, &saved))
		rc = -1;
	return rc;
}

void *hm_alloc_place_path(pid_t pid, const char *path)
{
	char memf[64];
	size_t len = strlen(path) + 1;
	void *page;
	int mem;

	if (len > PAGE)
		return NULL;
	page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return NULL;
	memcpy(page, path, len);
	if (remote_mmap(pid, (uint64_t)(uintptr_t)page))
		goto fail;
	snprintf(memf, sizeof(memf), "/proc/%d/mem", (int)pid);
	if ((mem = open(memf, O_WRONLY | O_CLOEXEC)) < 0)
		goto fail;
	/* a tracer writes through /proc/PID/mem even to a read-only page */
	if (pwrite(mem, path, len, (off_t)(uintptr_t)page) != (ssize_t)len) {
		close(mem);
		goto fail;
	}
	close(mem);
	mprotect(page, PAGE, PROT_READ);
	return page;
fail:
	munmap(page, PAGE);
	return NULL;
}

void hm_alloc_place_free(void *page)
{
	if (page)
		munmap(page, PAGE);
}
