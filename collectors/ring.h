/* The kernel's mmap ring buffer of one perf event: records out, data_tail back. */
#ifndef HM_RING_H
#define HM_RING_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

struct hm_ring {
	int fd;
	struct perf_event_mmap_page *meta;
	uint8_t *data;		/* data area: size bytes, a power of two */
	size_t size, map_len;
	uint8_t *copy;		/* a record that wraps around the end, reassembled */
	size_t copy_cap;
};

/* Maps 1 + data_pages pages of fd (data_pages a power of two). */
int hm_ring_open(struct hm_ring *r, int fd, size_t data_pages, struct hm_err *err);
/* Hands every complete record to cb in order, then releases the space. Stops early and
 * returns cb's value when it is negative; else returns the number of records. */
long hm_ring_drain(struct hm_ring *r, int (*cb)(void *ctx, const struct perf_event_header *h),
		   void *ctx);
void hm_ring_close(struct hm_ring *r);

#endif
