/* Allocation probes for the threads a workload starts while it is recorded. The probes
 * are not inherited (alloc.h says what that cost), so each new thread, seen in a FORK
 * record of a probed thread, gets probes of its own from the record loop. Its events
 * have ids the file's header does not declare (it was written at the start), so their
 * samples are written under the first id of the same probe: perf and hitmap then read
 * them as that probe's. A new thread runs before its probes exist: what it allocates in
 * the first moments (until the recorder reads the FORK record) is not seen. A thread
 * without probes still traps on the shared breakpoints, so probing it adds the samples,
 * not the traps. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "collectors/record_int.h"

void hm_alloc_track_init(struct hm_session *s, const pid_t *tids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		hm_map64_put(&s->alloc_tids, (uint64_t)(uint32_t)tids[i] + 1, (void *)1);
	s->alloc_nthreads = (int)n;
}

/* A FORK record: {pid, ppid, tid, ptid, time}. A thread (or process) started by a
 * probed thread is probed too. */
void hm_alloc_track_fork(struct hm_session *s, const struct perf_event_header *h)
{
	const uint32_t *f = (const uint32_t *)(const void *)(h + 1);

	if (s->alloc_stopped || !s->alloc_ids.len || h->size < sizeof(*h) + 16 ||
	    !hm_map64_get(&s->alloc_tids, (uint64_t)f[3] + 1) ||
	    hm_map64_get(&s->alloc_tids, (uint64_t)f[2] + 1) ||
	    s->alloc_npending == HM_ALLOC_PENDING)
		return;
	hm_map64_put(&s->alloc_tids, (uint64_t)f[2] + 1, (void *)1);
	s->alloc_pending[s->alloc_npending++] = (pid_t)f[2];
}

/* One probe on tid; 0, or -1 when it cannot be had (the thread is gone, no fd). */
static int open_probe(struct hm_session *s, int k, pid_t tid, int *ring)
{
	int fd = (int)syscall(SYS_perf_event_open, &s->attrs[k], tid, -1, -1,
			      PERF_FLAG_FD_CLOEXEC);
	uint64_t id;

	if (fd < 0)
		return -1;
	if (s->nr_fds == HM_MAX_FDS || ioctl(fd, PERF_EVENT_IOC_ID, &id) != 0) {
		close(fd);
		return -1;
	}
	if (*ring < 0) {
		struct hm_err ignore;

		if (s->nr_rings == HM_MAX_RINGS ||
		    hm_ring_open(&s->rings[s->nr_rings], fd, s->pages_min ? s->pages_min : s->pages,
				 &ignore)) {
			close(fd);
			return -1;
		}
		*ring = s->nr_rings++;
	} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, s->rings[*ring].fd) != 0) {
		close(fd);
		return -1;
	}
	s->fds[s->nr_fds++] = (struct hm_sfd){.fd = fd, .event = k, .cpu = -1, .pidx = -1};
	hm_map64_put(&s->alloc_ids, id, (void *)1);
	hm_map64_put(&s->alloc_remap, id, (void *)(uintptr_t)s->ids[k][0]);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	return 0;
}

void hm_alloc_track_open(struct hm_session *s)
{
	for (int i = 0; i < s->alloc_npending; i++) {
		int ring = -1;

		if (s->alloc_stopped || s->alloc_nthreads >= HM_ALLOC_MAX_THREADS) {
			s->st->alloc_unprobed++;
			continue;
		}
		for (int k = s->first_alloc; k < s->nr_events; k++)
			if (s->nr_ids[k] && open_probe(s, k, s->alloc_pending[i], &ring))
				break;	/* gone already, or out of fds: the rest too */
		s->alloc_nthreads++;
	}
	s->alloc_npending = 0;
}

/* A sample of a probe opened here, under its probe's first id; NULL for any other. */
const struct perf_event_header *hm_alloc_track_patch(struct hm_session *s,
						      const struct perf_event_header *h)
{
	uint64_t id, to;

	/* h->size is 16 bits: alloc_patch holds any record */
	if (!s->alloc_remap.len || h->type != PERF_RECORD_SAMPLE || h->size < 16)
		return NULL;
	memcpy(&id, h + 1, 8);
	if (!(to = (uint64_t)(uintptr_t)hm_map64_get(&s->alloc_remap, id)))
		return NULL;
	memcpy(s->alloc_patch, h, h->size);
	memcpy(s->alloc_patch + sizeof(*h), &to, 8);
	return (const struct perf_event_header *)(const void *)s->alloc_patch;
}
