/* What can be collected on this machine, and why not: each collector is tried for real
 * (an event opened on this process and closed), and every "no" names its fix. */
#ifndef HM_PROBE_H
#define HM_PROBE_H

#include "collectors/pmu.h"

enum hm_probe_id {
	HM_PROBE_PMU,
	HM_PROBE_TIMER,
	HM_PROBE_WATCH,
	HM_PROBE_KERNEL,
	HM_PROBE_BTF,
	HM_PROBE_VMLINUX,
	HM_PROBE_DEBUGINFOD,
	HM_PROBE_NR,
};

struct hm_probe_item {
	const char *name;	/* "pmu", "timer", ... */
	int ok;
	char detail[512];	/* what works, or the reason and the fix */
};

/* NULL fields mean the real locations; tests point them at fake trees. */
struct hm_probe_paths {
	const char *sysfs;	/* HM_PMU_SYSFS */
	const char *paranoid;	/* HM_PMU_PARANOID */
	const char *btf;	/* /sys/kernel/btf/vmlinux */
};

struct hm_probe {
	struct hm_probe_item item[HM_PROBE_NR];
	struct hm_pmu_status pmu;
	char presets[64];	/* presets that encode and open here, space-separated */
	int precise_ip;		/* of the c2c preset's sampling event, when it opens */
	int watch_slots;	/* hardware watchpoints this thread can hold */
	char release[65];	/* running kernel */
};

void hm_probe_run(struct hm_probe *p, const struct hm_probe_paths *paths);

/* The single probes, for callers that need one answer (record -c auto). */
int hm_probe_timer(struct hm_probe_item *it);
int hm_probe_watch(struct hm_probe_item *it, int *slots);
int hm_probe_kernel(struct hm_probe_item *it, const struct hm_pmu_status *st);

#endif
