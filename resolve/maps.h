/* resolve/load.c's first pass over a recording (resolve/maps.c). */
#ifndef HM_RESOLVE_MAPS_H
#define HM_RESOLVE_MAPS_H

#include "core/err.h"
#include "core/perfdata.h"
#include "resolve/alloc.h"

/* Calls fn with every MMAP and MMAP2 record, in time order (file order among equal
 * times); with alloc, *alloc becomes the recording's sealed allocation map (NULL when it
 * has no allocation events). 0; 1 when the file is damaged (what came before is given);
 * -1 with err when it cannot be opened. */
int hm_maps_pass(const char *path, void (*fn)(const struct hm_perf_event *ev, void *arg),
		 void *arg, struct hm_alloc_map **alloc, struct hm_err *err);
/* The file's first damage as a pass that decodes every sample finds it: -1 with err, or
 * 0 when none is found. */
int hm_first_damage(const char *path, struct hm_err *err);

#endif
