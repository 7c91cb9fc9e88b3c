/* When each watched range was armed, from a rotated watch recording (record --confirm,
 * collectors/watch_rotate.c): what share of the run a field pair was watched. */
#ifndef HM_WATCHED_H
#define HM_WATCHED_H

#include <stddef.h>
#include <stdint.h>

#include "core/perfdata.h"

#define HM_WATCH_SLICE_NAME "hitmap:watch-slice"

/* One range armed over [start, end) (CLOCK_MONOTONIC ns, the watch samples' clock). */
struct hm_wslice {
	uint64_t start, end;
	uint64_t addr;
	uint32_t len;
};

struct hm_watched {
	struct hm_wslice *s;		/* malloc'd, in time order */
	size_t nr, cap;
};

/* Whether a sample of attr is a slice mark (a dummy software event: the kernel never
 * samples one, so every sample of it was written by record). */
int hm_watched_is_mark(const struct hm_perf_attr *attr);
/* Takes one mark: addr/len armed from time on, or addr 0: every open range closed. */
void hm_watched_mark(struct hm_watched *w, uint64_t time, uint64_t addr, uint32_t len);
void hm_watched_free(struct hm_watched *w);
/* Nanoseconds both [a, a+alen) and [b, b+blen) were armed in one slice, and the span
 * from the first slice's start to the last one's end in *span. */
uint64_t hm_watched_both(const struct hm_watched *w, uint64_t a, uint32_t alen, uint64_t b,
			 uint32_t blen, uint64_t *span);

#endif
