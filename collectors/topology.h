/* The recording machine's CPU and NUMA topology from sysfs, for the perf.data features
 * perf c2c needs (core/perfdata.h, struct hm_perf_topology). */
#ifndef HM_TOPOLOGY_H
#define HM_TOPOLOGY_H

#include "core/arena.h"
#include "core/perfdata.h"

/* Fills t (arrays in a) for nr_cpus CPUs from sysroot/sys/devices/system (sysroot "" for
 * this machine: tests give a fake tree). A CPU whose topology cannot be read (offline)
 * gets ids -1, as perf writes them; a machine without node directories gets one node 0
 * holding every CPU. Never fails: what cannot be read is left out. */
void hm_topology_read(struct hm_arena *a, const char *sysroot, uint32_t nr_cpus,
		      struct hm_perf_topology *t);

#endif
