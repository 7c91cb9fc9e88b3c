#include "collectors/events.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void common(struct perf_event_attr *a, int kernel)
{
	a->size = sizeof(*a);
	a->disabled = 1;
	a->inherit = 1;		/* threads the workload creates later are sampled too */
	a->exclude_kernel = !kernel;
	a->exclude_hv = 1;
	a->sample_id_all = 1;
	a->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
	a->read_format = PERF_FORMAT_ID;
	a->watermark = 1;	/* wake the reader per 16 KiB, not per sample */
	a->wakeup_watermark = 16384;
}

void hm_timer_attr(struct perf_event_attr *a, unsigned hz, int kernel)
{
	memset(a, 0, sizeof(*a));
	common(a, kernel);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_CPU_CLOCK;
	a->freq = 1;
	a->sample_freq = hz;
	a->sample_type |= PERF_SAMPLE_REGS_USER;
	a->sample_regs_user = HM_X86_EA_REGS;
	if (kernel) {
		a->sample_type |= PERF_SAMPLE_REGS_INTR;
		a->sample_regs_intr = HM_X86_EA_REGS;
	}
	/* The tracking records that let the report map ips to files. */
	a->mmap = 1;
	a->mmap2 = 1;
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
}

void hm_watch_attr(struct perf_event_attr *a, const struct hm_watch *w, int kernel)
{
	memset(a, 0, sizeof(*a));
	common(a, kernel);
	a->type = PERF_TYPE_BREAKPOINT;
	a->bp_type = w->type;
	a->bp_addr = w->addr;
	a->bp_len = w->len;
	a->sample_period = 1;
	a->sample_type |= PERF_SAMPLE_ADDR | PERF_SAMPLE_REGS_USER;
	a->sample_regs_user = HM_X86_EA_REGS;
}

const char *hm_watch_check(const struct hm_watch *w)
{
	if (w->len != 1 && w->len != 2 && w->len != 4 && w->len != 8)
		return "length must be 1, 2, 4 or 8 bytes";
	if (w->addr % w->len)
		return "address must be aligned to the length (debug registers cannot span)";
	if (w->type != HM_BP_W && w->type != HM_BP_RW)
		return "x86 debug registers trap writes or reads+writes, not reads alone: use :rw";
	return NULL;
}

/* The trap count of fd as the kernel hands it for read_format 0: one u64. A read of the
 * wrong size fails (ENOSPC when the buffer is smaller than read_format asks for), and a
 * failed read must not be mistaken for "no traps". */
static int read_count(int fd, uint64_t *count, struct hm_err *err)
{
	ssize_t n = read(fd, count, sizeof(*count));

	if (n == (ssize_t)sizeof(*count))
		return 0;
	return hm_err_set(err, HM_EXIT_ENV, "cannot read the watchpoint self-test count: %s",
			  n < 0 ? strerror(errno) : "short read");
}

/* One try: the traps counted for HM_WATCH_SELFTEST_STORES stores, or -1 with err. */
static int selftest_once(struct hm_err *err, uint64_t *count)
{
	static volatile uint64_t probe;
	struct perf_event_attr a;
	struct hm_watch w = {(uint64_t)(uintptr_t)&probe, sizeof(probe), HM_BP_W, "selftest"};
	int fd, rc;

	hm_watch_attr(&a, &w, 0);
	a.disabled = 0;
	a.inherit = 0;
	a.sample_type = 0;
	a.read_format = 0;	/* read() then returns exactly the u64 count */
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return hm_err_set(err, HM_EXIT_ENV, "cannot set a watchpoint: %s%s", strerror(errno),
				  errno == EACCES || errno == EPERM
					  ? " (run as root or lower perf_event_paranoid)"
					  : ": use -c timer");
	for (int i = 0; i < HM_WATCH_SELFTEST_STORES; i++)
		probe++;
	rc = read_count(fd, count, err);
	close(fd);
	return rc ? -1 : 0;
}

int hm_watch_selftest(struct hm_err *err, unsigned *lost)
{
	/* test hook (docs/hardening.md): the first N tries count 1 trap, as the VM did once */
	const char *drop = getenv("HITMAP_SELFTEST_DROP");
	int dropped = drop ? atoi(drop) : 0;
	uint64_t count = 0, fired = 0;

	*lost = 0;
	for (int t = 0; t < HM_WATCH_SELFTEST_TRIES; t++) {
		if (selftest_once(err, &count))
			return -1;
		if (t < dropped && count)
			count = 1;
		if (count == HM_WATCH_SELFTEST_STORES)
			return 0;
		fired |= count;
		(*lost)++;
	}
	if (!fired)
		return hm_err_set(err, HM_EXIT_ENV, "watchpoints are accepted but %d stores to a "
				  "watched word raised no trap, %d times (the hypervisor does not "
				  "deliver debug-register traps): use -c timer",
				  HM_WATCH_SELFTEST_STORES, HM_WATCH_SELFTEST_TRIES);
	return hm_err_set(err, HM_EXIT_ENV, "a watchpoint counted %llu traps for %d stores "
			  "(the last of %d tries, none exact): traps are lost here, so watch "
			  "counts would not be exact; use -c timer", (unsigned long long)count,
			  HM_WATCH_SELFTEST_STORES, HM_WATCH_SELFTEST_TRIES);
}
