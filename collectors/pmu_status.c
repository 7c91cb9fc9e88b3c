/* Why precise sampling does or does not work on this machine: which PMUs sysfs shows, the
 * paranoid level and privileges, and the kernel's verdict on the encoded events. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "collectors/pmu_int.h"

#define CAP_SYS_ADMIN_BIT 21
#define CAP_PERFMON_BIT 38

static int read_int(const char *path, int *v)
{
	FILE *f = fopen(path, "r");
	int ok;

	if (!f)
		return -1;
	ok = fscanf(f, "%d", v) == 1;
	fclose(f);
	return ok ? 0 : -1;
}

/* CAP_PERFMON (5.8+) or CAP_SYS_ADMIN lift perf_event_paranoid, as does uid 0. */
static int is_privileged(void)
{
	FILE *f;
	char line[256];
	unsigned long long caps = 0;

	if (geteuid() == 0)
		return 1;
	f = fopen("/proc/self/status", "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &caps) == 1)
			break;
	fclose(f);
	return !!(caps & (1ULL << CAP_SYS_ADMIN_BIT | 1ULL << CAP_PERFMON_BIT));
}

static void find_cpu_pmu(const char *sysfs, struct hm_pmu_status *st)
{
	/* cpu: Intel and AMD; cpu_core/cpu_atom: Intel hybrid; armv8_*, armv9_*: Arm cores. */
	static const char *const exact[] = {"cpu", "cpu_core", "cpu_atom"};
	static const char *const prefix[] = {"armv8_", "armv9_"};

	for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++) {
		if (hm_pmu_sysfs_type(sysfs, exact[i]) >= 0) {
			st->cpu_pmu = 1;
			snprintf(st->cpu_pmu_name, sizeof(st->cpu_pmu_name), "%s", exact[i]);
			return;
		}
	}
	for (size_t i = 0; i < sizeof(prefix) / sizeof(prefix[0]); i++) {
		if (!hm_pmu_sysfs_find(sysfs, prefix[i], st->cpu_pmu_name,
				       sizeof(st->cpu_pmu_name))) {
			st->cpu_pmu = 1;
			return;
		}
	}
}

int hm_pmu_probe_at(const char *sysfs, const char *paranoid_path, struct hm_pmu_status *st)
{
	memset(st, 0, sizeof(*st));
	snprintf(st->sysfs, sizeof(st->sysfs), "%s", sysfs);
	find_cpu_pmu(sysfs, st);
	st->ibs_op_type = hm_pmu_sysfs_type(sysfs, "ibs_op");
	st->spe_type = -1;
	if (!hm_pmu_sysfs_find(sysfs, "arm_spe_", st->spe_name, sizeof(st->spe_name)))
		st->spe_type = hm_pmu_sysfs_type(sysfs, st->spe_name);
	if (read_int(paranoid_path, &st->paranoid))
		st->paranoid = -99;
	st->privileged = is_privileged();
	st->have_model = !hm_pmu_model(&st->model);
	return 0;
}

int hm_pmu_probe(struct hm_pmu_status *st)
{
	return hm_pmu_probe_at(HM_PMU_SYSFS, HM_PMU_PARANOID, st);
}

int hm_pmu_diagnose(const struct hm_pmu_status *st, int kernel, struct hm_err *err)
{
	if (!st->cpu_pmu && st->ibs_op_type < 0 && st->spe_type < 0)
		return hm_err_set(err, HM_EXIT_ENV,
				  "no hardware PMU: %s has no 'cpu' (a VM without a virtual PMU); use "
				  "-c timer (register-decoded addresses) or -c watch", st->sysfs);
	if (st->privileged || st->paranoid == -99)
		return 0;
	/* 3 and above are distribution patches (Debian, Android) that close perf_event_open
	 * to unprivileged users altogether. */
	if (st->paranoid >= 3)
		return hm_err_set(err, HM_EXIT_ENV,
				  "perf_event_paranoid is %d: perf_event_open is closed to unprivileged "
				  "users; run as root or 'sysctl kernel.perf_event_paranoid=2' (-c timer "
				  "needs the same)", st->paranoid);
	if (kernel && st->paranoid >= 2)
		return hm_err_set(err, HM_EXIT_ENV,
				  "kernel sampling (-k) needs perf_event_paranoid <= 1 or CAP_PERFMON "
				  "(it is %d): run as root, 'sysctl kernel.perf_event_paranoid=1', or "
				  "drop -k", st->paranoid);
	return 0;
}

static int open_errno_msg(const struct hm_pmu_event *ev, int e, const struct hm_pmu_status *st,
			  struct hm_err *err)
{
	const struct perf_event_attr *a = &ev->attr;

	switch (e) {
	case EACCES:
	case EPERM:
		return hm_err_set(err, HM_EXIT_ENV,
				  "%s: permission denied (perf_event_paranoid %d%s): kernel samples "
				  "and physical addresses need <= 1; run as root or 'sysctl "
				  "kernel.perf_event_paranoid=1', or use -c timer",
				  ev->name, st->paranoid, st->privileged ? ", privileged" : "");
	case ENOENT:
		return hm_err_set(err, HM_EXIT_ENV,
				  "%s (type %u, config %#llx) is missing on this CPU's PMU (ENOENT): "
				  "run 'hitmap check', use -e c2c, or -c timer",
				  ev->name, a->type, (unsigned long long)a->config);
	case ENODEV:
		return hm_err_set(err, HM_EXIT_ENV,
				  "%s: no PMU of type %u on this machine (ENODEV): run 'hitmap check', "
				  "or use -c timer", ev->name, a->type);
	case EOPNOTSUPP:
		return hm_err_set(err, HM_EXIT_ENV,
				  "%s: precise sampling is not supported here (EOPNOTSUPP; virtual PMUs "
				  "often lack PEBS and IBS): use -c timer", ev->name);
	case EBUSY:
		return hm_err_set(err, HM_EXIT_ENV,
				  "%s: the counter is taken (EBUSY) by another profiler or the NMI "
				  "watchdog: retry later, or use -c timer", ev->name);
	case ENODATA:
		return hm_err_set(err, HM_EXIT_ENV,
				  "%s: the kernel wants the mem-loads-aux event as its group leader "
				  "(ENODATA): use -e c2c, which adds it", ev->name);
	default:
		return hm_err_set(err, HM_EXIT_ENV,
				  "%s: the kernel refused it (%s), even with precise_ip 1 and without "
				  "WEIGHT_STRUCT: use -c timer", ev->name, strerror(e));
	}
}

static int try_open(struct perf_event_attr *a, int group_fd)
{
	return (int)syscall(SYS_perf_event_open, a, 0, -1, group_fd, PERF_FLAG_FD_CLOEXEC);
}

/* Tries the attr as encoded, then with less precision, then with WEIGHT instead of
 * WEIGHT_STRUCT (kernels before 5.12), as perf's fallbacks do; keeps what worked. */
static int open_adjusting(struct perf_event_attr *a, int group_fd, int *fd)
{
	uint8_t precise = a->precise_ip;
	uint64_t st = a->sample_type;
	int e = 0;

	for (int weight = 0; weight < 2; weight++) {
		if (weight) {
			if (!(st & PERF_SAMPLE_WEIGHT_STRUCT))
				break;
			a->sample_type = (st & ~PERF_SAMPLE_WEIGHT_STRUCT) | PERF_SAMPLE_WEIGHT;
		}
		for (int p = precise; p >= (precise ? 1 : 0); p--) {
			a->precise_ip = (uint8_t)p;
			*fd = try_open(a, group_fd);
			if (*fd >= 0)
				return 0;
			e = errno;
			if (e != EINVAL && e != EOPNOTSUPP)
				goto out;
		}
	}
out:
	a->precise_ip = precise;
	a->sample_type = st;
	return e;
}

int hm_pmu_open_check(struct hm_pmu_events *ev, const struct hm_pmu_status *st,
		      struct hm_err *err)
{
	int fds[HM_PMU_MAX_EVENTS], ret = 0;

	for (unsigned i = 0; i < HM_PMU_MAX_EVENTS; i++)
		fds[i] = -1;
	for (unsigned i = 0; i < ev->nr && i < HM_PMU_MAX_EVENTS; i++) {
		int leader = ev->ev[i].leader;
		int group_fd = leader >= 0 && (unsigned)leader < i ? fds[leader] : -1;
		int e = open_adjusting(&ev->ev[i].attr, group_fd, &fds[i]);

		if (e) {
			ret = open_errno_msg(&ev->ev[i], e, st, err);
			break;
		}
	}
	for (unsigned i = 0; i < HM_PMU_MAX_EVENTS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return ret;
}
