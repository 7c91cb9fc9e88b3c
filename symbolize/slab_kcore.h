/* Slab lookups over the running kernel's memory (/proc/kcore), and the snapshot of its
 * slab pages that `record -k` saves in perf.data (core/kslab.h). */
#ifndef HM_SLAB_KCORE_H
#define HM_SLAB_KCORE_H

#include <stddef.h>
#include <stdint.h>

#include "symbolize/slab.h"

struct hm_code;
struct hm_layout;

/* The slab lookup over the memory code reads (kcore of this boot), struct offsets and
 * the slab page mark from lay, the kernel's BTF: 0 with *out (and *max_pfn when not
 * NULL), else -1 with *why (one line: what is missing, and the fix). */
int hm_slab_open_kcore(struct hm_code *code, struct hm_layout *lay, struct hm_slab **out,
		       uint64_t *max_pfn, const char **why);
/* The running kernel's slab pages, encoded (malloc'd, *len bytes), or NULL with *why:
 * needs root (kcore, kallsyms addresses) and /sys/kernel/btf/vmlinux. */
uint8_t *hm_slab_snapshot_live(size_t *len, const char **why);

#endif
