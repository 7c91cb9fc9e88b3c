/* Private to collectors/record*.c. */
#ifndef HM_RECORD_INT_H
#define HM_RECORD_INT_H

#include "collectors/alloc.h"
#include "collectors/record.h"
#include "collectors/ring.h"
#include "core/arena.h"
#include "core/hash.h"
#include "core/perfdata.h"

#define HM_MAX_CPUS 512
#define HM_MAX_FDS 4096
#define HM_MAX_IDS 4096
#define HM_MAX_RINGS (HM_MAX_CPUS + 256)	/* per CPU, and per probed thread */
#define HM_ALLOC_ID (1ULL << 62)		/* the ids the file gives the probes */

struct hm_sfd {
	int fd, event, cpu;
	int pidx;			/* index of the target pid */
};

struct hm_session {
	struct perf_event_attr attrs[HM_MAX_EVENTS];
	const char *names[HM_MAX_EVENTS];
	int watch_event[HM_MAX_EVENTS];
	int leader[HM_MAX_EVENTS];	/* group leader's event index, -1 for none */
	int nr_events;
	uint64_t ids[HM_MAX_EVENTS][HM_MAX_IDS];
	uint32_t nr_ids[HM_MAX_EVENTS];
	struct hm_sfd fds[HM_MAX_FDS];
	int nr_fds;
	struct hm_ring rings[HM_MAX_RINGS];
	int ring_of_cpu[HM_MAX_CPUS];
	int ring_of_pid[256];		/* allocation probes (cpu -1): one ring per thread */
	int nr_rings;
	unsigned pages;
	unsigned pages_min;		/* > 0: a ring that cannot be mapped retries this */
	struct hm_perfdata_writer *w;
	struct hm_record_stats *st;
	struct hm_arena arena;		/* mapped file names, for the BUILD_ID feature */
	struct hm_hash files;
	struct hm_err *err;		/* the drain callback's error slot */
	int failed;
	/* watch_rotate.c: more ranges than debug registers, armed a group per slice */
	int rotating;
	int slot_event[HM_MAX_WATCH];	/* the events that are debug registers */
	struct perf_event_attr slot_attr[HM_MAX_WATCH];	/* as opened: MODIFY compares */
	int nr_slots;
	int marker_event;		/* HM_WATCH_SLICE_EVENT's index, -1 for none */
	int group, slice_open;
	long long next_ns;		/* CLOCK_MONOTONIC end of this slice */
	struct hm_alloc_probes alloc;	/* events first_alloc.. are its probes */
	int first_alloc;		/* nr_events when there are none */
	int first_alloc_ring;		/* rings from here on are the probes' */
	struct hm_map64 alloc_ids;	/* their kernel ids -> the file's (HM_ALLOC_ID + k) */
	uint64_t alloc_id[HM_MAX_EVENTS];
	uint8_t alloc_patch[65536];	/* a probe sample rewritten under the file's id */
	int alloc_stopped;		/* the budget is spent: probes closed */
};

/* Adds the slot events and the slice marker event when o->nr_groups >= 1. */
void hm_rotate_build(struct hm_session *s, const struct hm_record_opts *o);
/* After the events are open: the file's view of the slots. */
void hm_rotate_opened(struct hm_session *s);
/* Arms group g (-1: none, closing the slice) and marks it in the file. */
int hm_rotate_arm(struct hm_session *s, const struct hm_record_opts *o, int g,
		  struct hm_err *err);
/* Moves to the next group when the slice is over; lowers *wait_ms to its end. */
int hm_rotate_tick(struct hm_session *s, const struct hm_record_opts *o, int *wait_ms,
		   struct hm_err *err);

void hm_session_names_init(struct hm_session *s);
void hm_session_names_free(struct hm_session *s);
void hm_session_note_file(void *ctx, const char *file);	/* a hm_synth_note_fn */
/* Closes the allocation probes and their rings (record.c). */
int hm_session_close_alloc(struct hm_session *s);
int hm_session_run(struct hm_session *s, const struct hm_record_opts *o, pid_t child,
		   struct hm_err *err);

#endif
