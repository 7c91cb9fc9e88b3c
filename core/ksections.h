/* A loaded module's section addresses, as `hitmap record -k` stores them in the module's
 * MMAP record after the filename (struct hm_perf_mmap.extra): perf reads that filename as
 * a string and never looks past its NUL, so `perf report`/`perf script` read the file as
 * before. The report needs them to place a module's .data, .bss, .rodata and per-CPU
 * section (/sys/module/M/sections/), which the loader puts apart from .text.
 *
 * Layout (little-endian, every part padded to 8 bytes so a sample_id trailer still
 * follows at an aligned offset): "hitmap.ksections/1\0" in 24 bytes, u32 count, u32 0,
 * then count times { u64 address, name NUL-terminated and zero-padded to 8 }. */
#ifndef HM_KSECTIONS_H
#define HM_KSECTIONS_H

#include <stddef.h>
#include <stdint.h>

#define HM_KSECT_MAGIC "hitmap.ksections/1"
#define HM_KSECT_NAME_MAX 64

struct hm_ksect {
	char name[HM_KSECT_NAME_MAX];
	uint64_t addr;
};

/* Encodes n sections into buf; returns the bytes written (a multiple of 8), 0 when
 * they do not fit in cap or n is 0. */
size_t hm_ksect_encode(const struct hm_ksect *v, size_t n, uint8_t *buf, size_t cap);
/* Decodes at most max sections of p (an MMAP record's extra bytes); returns how many,
 * 0 when p holds none (perf's own records: zero padding). */
size_t hm_ksect_decode(const uint8_t *p, size_t len, struct hm_ksect *out, size_t max);

#endif
