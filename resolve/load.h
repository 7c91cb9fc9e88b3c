/* A recording, resolved: every sample of a perf.data file as a struct hm_access, with
 * the address spaces built first in time order. What report, compare and whatif share. */
#ifndef HM_LOAD_H
#define HM_LOAD_H

#include "resolve/watched.h"
#include "resolve/resolve.h"

struct hm_recording {
	const char *path;
	struct hm_access *acc;		/* malloc'd; strings owned by resolver */
	struct hm_access *spare;	/* streamed: the batch's other array, or NULL */
	size_t n;			/* streamed: the last batch's */
	size_t total;			/* accesses kept, every batch */
	uint64_t lost;			/* LOST and LOST_SAMPLES records */
	uint64_t unknown_id;		/* samples of ids no attr has: skipped */
	const char *warning;		/* what was skipped, one line (in warn), or NULL */
	char warn[1024];
	const char *kernel_warning;	/* a forced --vmlinux of another build, or NULL */
	struct hm_resolver *resolver;
	struct hm_perfdata *pd;		/* kept open: features and attrs stay valid */
	size_t batch;			/* hm_recording_stream: accesses per flush */
	int (*flush)(const struct hm_access *acc, size_t n, void *arg);
	void (*prep)(const struct hm_access *acc, size_t n, void *arg);	/* o->prep */
	void *flush_arg;
	struct hm_order *order;		/* time order across batches (resolve/order.h) */
	struct hm_handoff *handoff;	/* flush's thread (o->jobs 2), or NULL */
	struct hm_pd_ahead *ahead;	/* the file's reader thread (o->jobs 2), or NULL */
	struct hm_watched watched;	/* a rotated watch recording's slices, else empty */
	struct hm_alloc_map *alloc;	/* the recording's allocations, or NULL */
	struct hm_debugfile_prefetch *prefetch;	/* debug files inflated ahead, or NULL */
};

/* Calls fn with every MMAP and MMAP2 record of the file path, in time order, not file
 * order: how the address spaces are built before any sample is resolved. 0; -1 when the
 * file cannot be opened; 1 when it is damaged further in (the records before the damage
 * went to fn; samples are skipped undecoded, so only damage outside them counts). err
 * says why. */
int hm_recording_maps(const char *path, void (*fn)(const struct hm_perf_event *ev, void *arg),
		      void *arg, struct hm_err *err);
/* Reads and resolves path ("-" for a pipe). keep (may be NULL) filters accesses. On
 * failure out is freed. */
int hm_recording_load(const char *path, const struct hm_resolve_opts *o,
		      int (*keep)(const struct hm_access *a, void *ctx), void *ctx,
		      struct hm_recording *out, struct hm_err *err);
/* The same in batches of at most batch accesses, in time order (load.c says how far
 * that holds), to flush; the array is reused: flush keeps what it needs. Memory holds
 * about two batches.
 * With o->prep, each run flush gets went to prep first, on this thread, with the same
 * accesses: prep and flush see the same runs in the same order, and prep runs at most
 * HM_STREAM_PREP_AHEAD runs ahead of flush (which finished the run that many before).
 * So a ring of that many entries carries what prep works out to flush.
 * A non-zero return from flush stops the read (out of memory). On failure too, rec stays
 * open until hm_recording_free: what flush kept of earlier batches points at strings the
 * resolver owns, so the caller drops that first and frees rec after it. */
#define HM_STREAM_PREP_AHEAD 64

int hm_recording_stream(const char *path, const struct hm_resolve_opts *o,
			int (*keep)(const struct hm_access *a, void *ctx), void *ctx,
			size_t batch, int (*flush)(const struct hm_access *acc, size_t n, void *arg),
			void *arg, struct hm_recording *rec, struct hm_err *err);
void hm_recording_free(struct hm_recording *rec);

#endif
