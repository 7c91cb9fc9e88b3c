/* Shared by collectors/pmu*.c only: presets, sysfs PMU helpers and the per-vendor encoders. */
#ifndef HM_PMU_INT_H
#define HM_PMU_INT_H

#include <stddef.h>

#include "collectors/pmu.h"

enum hm_preset {
	HM_PRESET_C2C,
	HM_PRESET_HITM,
	HM_PRESET_SPLIT,
	HM_PRESET_MISS,
	HM_PRESET_STALL,
	HM_PRESET_NR,
};

/* Default load-latency thresholds: perf c2c's 30 cycles; "stall" keeps loads that miss
 * the L2 or wait for another core, where a load starts to hold up retirement. */
#define HM_PMU_LDLAT_C2C 30
#define HM_PMU_LDLAT_STALL 128

int hm_pmu_preset_id(const char *name);		/* enum hm_preset, -1 if not a preset */
const char *hm_pmu_sysfs_root(const struct hm_pmu_opts *o);

/* sysfs/PMU/type, or -1 when the PMU is absent. */
int hm_pmu_sysfs_type(const char *sysfs, const char *pmu);
/* First PMU whose name starts with prefix; 0 when found. */
int hm_pmu_sysfs_find(const char *sysfs, const char *prefix, char *name, size_t len);
/* Writes value into the attr bits that sysfs/PMU/format/FIELD names ("config:19",
 * "config2:0-11"), or fallback when the file is absent. -1 when neither says. */
int hm_pmu_format_set(const char *sysfs, const char *pmu, const char *field,
		      const char *fallback, uint64_t value, struct perf_event_attr *attr);
/* Parses a format spec; exposed for tests. */
int hm_pmu_format_parse(const char *spec, int *word, uint64_t *mask);

/* Fields every preset shares: sample type, period, privilege filter, id trailer. */
void hm_pmu_attr_base(struct perf_event_attr *a, const struct hm_pmu_opts *o, uint64_t period);

int hm_pmu_encode_ibs(enum hm_preset p, const struct hm_pmu_opts *o, const char *model,
		      struct hm_pmu_events *out, struct hm_err *err);
int hm_pmu_encode_spe(enum hm_preset p, const struct hm_pmu_opts *o, const char *spe,
		      struct hm_pmu_events *out, struct hm_err *err);

#endif
