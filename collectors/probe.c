/* hitmap check's facts: every collector is opened on this process and closed again, so
 * the answer is the kernel's, not a guess from version numbers. */
#include <errno.h>
#include <stdarg.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "collectors/events.h"
#include "collectors/probe.h"

#define BTF_VMLINUX "/sys/kernel/btf/vmlinux"
#define WATCH_MAX 16	/* x86 has 4 debug registers, arm64 at most 16 watchpoints */

/* General registers, ip and sp: what decoding a memory operand can need. x86-64 refuses
 * DS/ES/FS/GS (bits 12-15) in user regs. */
#if defined(__x86_64__)
#define USER_REGS_MASK 0xff01ffULL
#elif defined(__aarch64__)
#define USER_REGS_MASK ((1ULL << 33) - 1)
#else
#define USER_REGS_MASK 0ULL
#endif

static int perf_open(struct perf_event_attr *a)
{
	return (int)syscall(SYS_perf_event_open, a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static void set_item(struct hm_probe_item *it, const char *name, int ok, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void set_item(struct hm_probe_item *it, const char *name, int ok, const char *fmt, ...)
{
	va_list ap;

	it->name = name;
	it->ok = ok;
	va_start(ap, fmt);
	vsnprintf(it->detail, sizeof(it->detail), fmt, ap);
	va_end(ap);
}

static void cpu_clock_attr(struct perf_event_attr *a, int kernel)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_CPU_CLOCK;
	a->sample_period = 250000;	/* ns: 4 kHz, record's default */
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	a->exclude_kernel = !kernel;
	a->exclude_hv = 1;
	a->disabled = 1;
}

int hm_probe_timer(struct hm_probe_item *it)
{
	struct perf_event_attr a;
	int fd;

	cpu_clock_attr(&a, 0);
	if (USER_REGS_MASK) {
		a.sample_type |= PERF_SAMPLE_REGS_USER;
		a.sample_regs_user = USER_REGS_MASK;
	}
	fd = perf_open(&a);
	if (fd < 0) {
		set_item(it, "timer", 0,
			 "perf_event_open(cpu-clock, user regs): %s: allow it with 'sysctl "
			 "kernel.perf_event_paranoid=2' or run as root; -c watch needs the same",
			 strerror(errno));
		return -1;
	}
	close(fd);
	if (!USER_REGS_MASK)
		set_item(it, "timer", 1, "cpu-clock, but no register set known for this "
			 "architecture: samples have no data addresses");
	else
		set_item(it, "timer", 1, "cpu-clock + user regs: exact data addresses by decoding "
			 "the sampled instruction");
	return 0;
}

static int watch_open(void *addr)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_BREAKPOINT;
	a.bp_type = HW_BREAKPOINT_W;
	a.bp_addr = (uint64_t)(uintptr_t)addr;
	a.bp_len = HW_BREAKPOINT_LEN_8;
	a.sample_period = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.disabled = 1;
	return perf_open(&a);
}

/* Counts by taking watchpoints until the kernel says ENOSPC: the number of debug
 * registers is not in sysfs, and a debugger may already hold some. */
int hm_probe_watch(struct hm_probe_item *it, int *slots)
{
	uint64_t words[WATCH_MAX];
	int fds[WATCH_MAX], n = 0, e = 0;

	memset(words, 0, sizeof(words));
	while (n < WATCH_MAX) {
		fds[n] = watch_open(&words[n]);
		if (fds[n] < 0) {
			e = errno;
			break;
		}
		n++;
	}
	for (int i = 0; i < n; i++)
		close(fds[i]);
	*slots = n;
	if (n > 0) {
		struct hm_err err = {0};
		unsigned lost;

		/* Accepting the event is not enough: count real traps on a word of ours. */
		if (hm_watch_selftest(&err, &lost)) {
			set_item(it, "watch", 0, "%s (%d debug registers accepted)", err.msg, n);
			return -1;
		}
		set_item(it, "watch", 1, "%d hardware watchpoints (debug registers) per thread, "
			 "1/2/4/8 bytes; traps fire here (self-test: %d stores, %d traps)%s", n,
			 HM_WATCH_SELFTEST_STORES, HM_WATCH_SELFTEST_STORES,
			 lost ? "; an earlier try lost traps: this kernel drops one now and then"
			      : "");
		return 0;
	}
	if (e == ENOSPC)
		set_item(it, "watch", 0, "every debug register is taken (a debugger or another "
			 "tool holds them): detach it, or use -c timer");
	else
		set_item(it, "watch", 0, "perf_event_open(breakpoint): %s: the kernel needs "
			 "CONFIG_HAVE_HW_BREAKPOINT and perf_event_paranoid <= 2; use -c timer",
			 strerror(e));
	return -1;
}

int hm_probe_kernel(struct hm_probe_item *it, const struct hm_pmu_status *st)
{
	struct perf_event_attr a;
	int fd;

	cpu_clock_attr(&a, 1);
	fd = perf_open(&a);
	if (fd < 0) {
		set_item(it, "kernel", 0,
			 "kernel samples (-k) refused: %s (perf_event_paranoid %d): run as root or "
			 "'sysctl kernel.perf_event_paranoid=1'", strerror(errno), st->paranoid);
		return -1;
	}
	close(fd);
	set_item(it, "kernel", 1, "kernel samples with -k (%s, perf_event_paranoid %d)",
		 st->privileged ? "privileged" : "allowed", st->paranoid);
	return 0;
}

/* The PMU line: the diagnosis, then the presets that both encode and open here. */
static void probe_pmu(struct hm_probe *p, const char *sysfs)
{
	struct hm_probe_item *it = &p->item[HM_PROBE_PMU];
	const char *const *names = hm_pmu_presets();
	struct hm_pmu_opts o;
	struct hm_pmu_events ev;
	struct hm_err err = {0};
	char first_err[512] = "";

	p->precise_ip = -1;
	if (hm_pmu_diagnose(&p->pmu, 0, &err)) {
		set_item(it, "pmu", 0, "%s", err.msg);
		return;
	}
	hm_pmu_opts_init(&o);
	o.sysfs = sysfs;
	for (int i = 0; names[i]; i++) {
		if (hm_pmu_encode(names[i], &o, &ev, &err) || hm_pmu_open_check(&ev, &p->pmu, &err)) {
			if (!first_err[0])
				snprintf(first_err, sizeof(first_err), "%s", err.msg);
			continue;
		}
		if (i == 0)
			p->precise_ip = ev.ev[ev.nr - 1].attr.precise_ip;
		size_t n = strlen(p->presets);
		snprintf(p->presets + n, sizeof(p->presets) - n, "%s%s", n ? " " : "", names[i]);
	}
	if (!p->presets[0]) {
		set_item(it, "pmu", 0, "%s", first_err);
		return;
	}
	set_item(it, "pmu", 1, "%s (%s), precise_ip %d; presets: %s; perf_event_paranoid %d",
		 p->pmu.have_model ? p->pmu.model.name : p->pmu.cpu_pmu_name,
		 p->pmu.have_model ? p->pmu.model.desc : "no libpfm4 model",
		 p->precise_ip, p->presets, p->pmu.paranoid);
}

static void probe_btf(struct hm_probe_item *it, const char *path)
{
	struct stat sb;

	if (stat(path, &sb) || access(path, R_OK)) {
		set_item(it, "btf", 0, "no readable %s (kernel without CONFIG_DEBUG_INFO_BTF, or "
			 "not root): give 'hitmap layout' a vmlinux with DWARF instead", path);
		return;
	}
	set_item(it, "btf", 1, "%s (%.1f MB): kernel types for 'hitmap layout --btf'", path,
		 (double)sb.st_size / (1024 * 1024));
}

static void probe_vmlinux(struct hm_probe_item *it, const char *release)
{
	static const char *const fmt[] = {
		"/usr/lib/debug/boot/vmlinux-%s", "/usr/lib/debug/lib/modules/%s/vmlinux",
		"/boot/vmlinux-%s", "/lib/modules/%s/build/vmlinux",
	};
	char path[512];

	for (size_t i = 0; i < sizeof(fmt) / sizeof(fmt[0]); i++) {
		snprintf(path, sizeof(path), fmt[i], release);
		if (!access(path, R_OK)) {
			set_item(it, "vmlinux", 1, "%s: kernel code sites by file:line", path);
			return;
		}
	}
	set_item(it, "vmlinux", 0, "no DWARF vmlinux for %s: install the kernel's debug package "
		 "(linux-image-*-dbg, kernel-debuginfo) or set DEBUGINFOD_URLS; kernel ips then "
		 "resolve by kallsyms only", release);
}

static void probe_debuginfod(struct hm_probe_item *it)
{
	const char *urls = getenv("DEBUGINFOD_URLS");

	if (urls && *urls)
		set_item(it, "debuginfod", 1, "DEBUGINFOD_URLS=%s", urls);
	else
		set_item(it, "debuginfod", 0, "DEBUGINFOD_URLS is not set: set it (e.g. "
			 "https://debuginfod.debian.net) to fetch debuginfo of stripped binaries");
}

void hm_probe_run(struct hm_probe *p, const struct hm_probe_paths *paths)
{
	const char *sysfs = paths && paths->sysfs ? paths->sysfs : HM_PMU_SYSFS;
	const char *paranoid = paths && paths->paranoid ? paths->paranoid : HM_PMU_PARANOID;
	const char *btf = paths && paths->btf ? paths->btf : BTF_VMLINUX;
	struct utsname u;

	memset(p, 0, sizeof(*p));
	if (!uname(&u))
		snprintf(p->release, sizeof(p->release), "%s", u.release);
	hm_pmu_probe_at(sysfs, paranoid, &p->pmu);
	probe_pmu(p, sysfs);
	hm_probe_timer(&p->item[HM_PROBE_TIMER]);
	hm_probe_watch(&p->item[HM_PROBE_WATCH], &p->watch_slots);
	hm_probe_kernel(&p->item[HM_PROBE_KERNEL], &p->pmu);
	probe_btf(&p->item[HM_PROBE_BTF], btf);
	probe_vmlinux(&p->item[HM_PROBE_VMLINUX], p->release);
	probe_debuginfod(&p->item[HM_PROBE_DEBUGINFOD]);
}
