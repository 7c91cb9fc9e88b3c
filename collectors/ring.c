#include "collectors/ring.h"
#include "core/oom.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int hm_ring_open(struct hm_ring *r, int fd, size_t data_pages, struct hm_err *err)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *map;

	memset(r, 0, sizeof(*r));
	r->fd = fd;
	r->size = data_pages * page;
	r->map_len = r->size + page;
	map = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return hm_err_set(err, HM_EXIT_ENV,
				  "cannot map a %zu-page perf ring buffer: %s (lower -m, or raise "
				  "/proc/sys/kernel/perf_event_mlock_kb)", data_pages, strerror(errno));
	r->meta = map;
	r->data = (uint8_t *)map + page;
	return 0;
}

long hm_ring_drain(struct hm_ring *r, int (*cb)(void *ctx, const struct perf_event_header *h),
		   void *ctx)
{
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->meta->data_tail;
	long n = 0;

	while (tail < head) {
		size_t at = (size_t)(tail & (r->size - 1));
		struct perf_event_header hdr;
		const struct perf_event_header *rec;
		int rc;

		if (head - tail < sizeof(hdr))
			break;
		/* The header itself may wrap: it is 8 bytes and records are 8-aligned, so no. */
		memcpy(&hdr, r->data + at, sizeof(hdr));
		if (hdr.size < sizeof(hdr) || hdr.size > head - tail)
			break;	/* a kernel bug or a torn read: stop, never read past head */
		if (at + hdr.size <= r->size) {
			rec = (const void *)(r->data + at);
		} else {
			size_t first = r->size - at;

			if (r->copy_cap < hdr.size) {
				free(r->copy);
				r->copy_cap = hdr.size;
				r->copy = malloc(r->copy_cap);
				if (!r->copy)
					hm_oom();
			}
			memcpy(r->copy, r->data + at, first);
			memcpy(r->copy + first, r->data, hdr.size - first);
			rec = (const void *)r->copy;
		}
		rc = cb(ctx, rec);
		tail += hdr.size;
		n++;
		if (rc < 0) {
			n = rc;
			break;
		}
	}
	__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
	return n;
}

void hm_ring_close(struct hm_ring *r)
{
	if (r->meta)
		munmap(r->meta, r->map_len);
	free(r->copy);
	memset(r, 0, sizeof(*r));
	r->fd = -1;
}
