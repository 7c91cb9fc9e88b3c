/* Precise memory sampling events: presets and libpfm4 event strings turned into
 * perf_event_attr per CPU model (Intel PEBS, AMD IBS op, Arm SPE), and the diagnosis of why
 * no PMU is usable here. Nothing in this module prints; record and check do. */
#ifndef HM_PMU_H
#define HM_PMU_H

#include <stdint.h>

#include <linux/perf_event.h>

#include "core/err.h"

#define HM_PMU_MAX_EVENTS 4
#define HM_PMU_SYSFS "/sys/bus/event_source/devices"
#define HM_PMU_PARANOID "/proc/sys/kernel/perf_event_paranoid"

/* What every preset samples; PHYS_ADDR is added only with hm_pmu_opts.phys because the
 * kernel allows it only where kernel addresses are allowed (paranoid <= 1, CAP_PERFMON). */
#define HM_PMU_SAMPLE_TYPE                                                                   \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |      \
	 PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_DATA_SRC |    \
	 PERF_SAMPLE_WEIGHT_STRUCT)

enum hm_pmu_vendor { HM_PMU_NONE = 0, HM_PMU_INTEL, HM_PMU_AMD, HM_PMU_ARM, HM_PMU_OTHER };

enum hm_pmu_event_flags {
	HM_PMU_EV_COUNT_ONLY = 1,	/* group leader that only counts (SPR mem-loads-aux) */
	HM_PMU_EV_AUX = 2,		/* records arrive in the AUX area (Arm SPE) */
	HM_PMU_EV_NO_ADDR = 4,		/* not a precise memory event: no data address */
	HM_PMU_EV_KERNEL_UNFILTERED = 8, /* IBS without swfilt: the reader drops kernel samples */
};

struct hm_pmu_event {
	struct perf_event_attr attr;
	char name[96];		/* the event as encoded, e.g. "MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=30" */
	int leader;		/* index of the group leader in hm_pmu_events.ev, -1 for none */
	unsigned flags;		/* enum hm_pmu_event_flags */
	uint8_t op;		/* enum hm_op: what its samples are, when the event says */
};

struct hm_pmu_events {
	unsigned nr;
	struct hm_pmu_event ev[HM_PMU_MAX_EVENTS];	/* a leader comes before its members */
	enum hm_pmu_vendor vendor;
	char pmu[32];		/* libpfm4 PMU ("icl", "amd64_fam19h_zen3") or sysfs PMU ("ibs_op") */
	char preset[16];	/* empty for a user event string */
};

struct hm_pmu_opts {
	int kernel;		/* sample kernel space too (-k) */
	int phys;		/* sample physical addresses; hm_pmu_opts_init sets it when allowed */
	int precise;		/* precise_ip; -1: the most the model supports */
	uint32_t ldlat;		/* load-latency threshold in cycles; 0: preset default (c2c 30) */
	uint64_t period;	/* sample period; 0: preset default */
	const char *sysfs;	/* PMU directory; NULL: HM_PMU_SYSFS (tests point it elsewhere) */
};

/* Defaults: user space only, the model's precise level, phys when this process may see
 * kernel addresses. */
void hm_pmu_opts_init(struct hm_pmu_opts *o);

/* NULL-terminated list of preset names: c2c, hitm, split, miss, stall. */
const char *const *hm_pmu_presets(void);
int hm_pmu_is_preset(const char *name);

/* Encodes a preset or a libpfm4 event string for the detected (or LIBPFM_FORCE_PMU-forced)
 * model. Errors: HM_EXIT_INPUT for an unknown or malformed event, HM_EXIT_ENV when this
 * machine has no PMU or the preset has no event on this model. */
int hm_pmu_encode(const char *what, const struct hm_pmu_opts *o, struct hm_pmu_events *out,
		  struct hm_err *err);

/* The core PMU libpfm4 detected (or was forced to); 0 when there is one. */
struct hm_pmu_model {
	char name[32];		/* libpfm4 name: "icl", "amd64_fam19h_zen4" */
	char desc[96];		/* "Intel Icelake" */
	enum hm_pmu_vendor vendor;
	int pfm_id;		/* pfm_pmu_t */
};
int hm_pmu_model(struct hm_pmu_model *m);

/* Facts about this machine's PMUs and permissions, gathered without opening events. */
struct hm_pmu_status {
	char sysfs[256];	/* directory that was read */
	int cpu_pmu;		/* a core PMU in sysfs: cpu, cpu_core/cpu_atom, armv8_* */
	char cpu_pmu_name[32];
	int ibs_op_type;	/* -1: no ibs_op */
	int spe_type;		/* -1: no arm_spe_* */
	char spe_name[32];
	int paranoid;		/* perf_event_paranoid; -99 when unreadable */
	int privileged;		/* root, CAP_PERFMON or CAP_SYS_ADMIN: paranoid does not apply */
	int have_model;		/* libpfm4 knows the core PMU */
	struct hm_pmu_model model;
};
int hm_pmu_probe(struct hm_pmu_status *st);
int hm_pmu_probe_at(const char *sysfs, const char *paranoid_path, struct hm_pmu_status *st);

/* 0 when precise sampling can work here (user space, or kernel too with `kernel`); else -1
 * with one line in err (HM_EXIT_ENV) that names the reason and suggests -c timer. */
int hm_pmu_diagnose(const struct hm_pmu_status *st, int kernel, struct hm_err *err);

/* Opens each event on this process, disabled, and closes it: the kernel's verdict before a
 * recording starts. Adjusts what the kernel refuses but has an older form for, as perf
 * does (WEIGHT_STRUCT -> WEIGHT before Linux 5.12; precise_ip lowered down to 1). */
int hm_pmu_open_check(struct hm_pmu_events *ev, const struct hm_pmu_status *st,
		      struct hm_err *err);

#endif
