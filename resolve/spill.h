/* whatif's spill (cli/whatif.c): the first streamed read's accesses, kept in an unlinked
 * file in $TMPDIR as they go by, so that the replay reads them back instead of resolving
 * every sample again. Each access is stored as the 8-byte words in which it differs from
 * the last access of its thread's slot (one of 8, by thread id; a mask, then those words):
 * threads' accesses come interleaved in time order, and a run of one thread's samples
 * differs in its time and address, so a 192-byte access takes about 36 bytes (85 against
 * the last access of any thread, on a two-thread false-sharing recording), and the kernel
 * copies a fifth of what a whole-struct spill made it copy (a quarter of whatif's time).
 * Reads give back the exact bytes written. */
#ifndef HM_SPILL_H
#define HM_SPILL_H

#include <stddef.h>

#include "symbolize/access.h"

struct hm_spill;

/* A new, empty spill; NULL when no file can be made (the replay reads the recording). */
struct hm_spill *hm_spill_open(void);
/* Appends n accesses; -1 when the file cannot take them (no space): the spill is then
 * unusable and the caller closes it. */
int hm_spill_write(struct hm_spill *s, const struct hm_access *acc, size_t n);
/* Ends writing (or a read) and starts reading from the first access; -1 on a write
 * error (as hm_spill_write). */
int hm_spill_rewind(struct hm_spill *s);
/* The next accesses, at most max, into out: how many (0 at the end). */
size_t hm_spill_read(struct hm_spill *s, struct hm_access *out, size_t max);
void hm_spill_close(struct hm_spill *s);

#endif
