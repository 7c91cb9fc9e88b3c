/* A streamed recording's accesses handed to their consumer (report's line tables, a
 * comparison's) on a second thread, while the first reads and resolves the next ones:
 * the two stages of hm_recording_stream overlap on two cores. The consumer sees the
 * same accesses in the same order as without it, in chunks of at most HM_HANDOFF_CHUNK
 * (the consumers carry their state across calls: docs/report.md, Two cores), so its
 * answers are the same byte for byte. It must touch nothing the resolver changes while
 * it runs: accesses' strings and types only (a struct's members load lazily through
 * libdw, which is not for two threads: heat maps load theirs on the producer's thread,
 * hm_resolve_opts.prep; whatif stays on one). */
#ifndef HM_HANDOFF_H
#define HM_HANDOFF_H

#include <stddef.h>

#include "resolve/order.h"
#include "symbolize/access.h"

#define HM_HANDOFF_CHUNK 8192	/* accesses a slot holds: 1.5 MB */
#define HM_HANDOFF_MAX_SLOTS 64	/* chunks in flight at most */

typedef int (*hm_handoff_fn)(const struct hm_access *acc, size_t n, void *arg);

struct hm_handoff;

/* Starts the consumer's thread, with room for half of batch accesses in flight (what one
 * flush hands on: the memory it adds); NULL when it cannot (out of memory, no thread):
 * the caller then calls fn itself. */
struct hm_handoff *hm_handoff_start(size_t batch, hm_handoff_fn fn, void *arg);
/* The next free slot's array (room for HM_HANDOFF_CHUNK), for the producer to write the
 * accesses into, after waiting for one; NULL when fn has failed (on an earlier chunk):
 * the read should stop. Then commit hands its first n (1 to HM_HANDOFF_CHUNK) on. */
struct hm_access *hm_handoff_slot(struct hm_handoff *h);
void hm_handoff_commit(struct hm_handoff *h, size_t n);
/* Hands on acc[k[i].idx] for i < n without copying them here: the consumer's thread
 * gathers them, in chunks as hm_handoff_slot's. acc and k are the consumer's to read
 * until hm_handoff_idle returns: the producer may only read them. -1 when fn has failed. */
int hm_handoff_gather(struct hm_handoff *h, const struct hm_access *acc,
		      const struct hm_okey *k, size_t n);
/* Waits until the consumer has finished everything handed on; -1 when fn has failed. */
int hm_handoff_idle(struct hm_handoff *h);
/* Hands on a copy of acc[0..n) in as many slots as it takes; -1 when fn has failed. */
int hm_handoff_copy(struct hm_handoff *h, const struct hm_access *acc, size_t n);
/* Waits for the consumer to finish what it was given and ends its thread; -1 when fn
 * failed. NULL is a no-op returning 0. */
int hm_handoff_end(struct hm_handoff *h);

#endif
