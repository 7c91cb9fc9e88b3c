/* The recorded side of a streamed what-if, built while the run is first read (docs/
 * whatif.md, Memory), so that the replay builds only the new side. Per-line tables built
 * in chunks equal one build over the run (docs/report.md, What batches change), as long
 * as none is pruned: that holds when the run stays within --max-lines, the only case the
 * replay takes them in (its batches are HM_WI_BATCH then). The replay reads the same
 * accesses back from the spill, types and all, so the lines are those it would build,
 * byte for byte. It runs on the first read's second thread: it touches the accesses, and
 * no type (the resolver may still be filling them in). */
#include "analyzer/whatif.h"

#include <stdlib.h>
#include <string.h>

#include "core/oom.h"

struct hm_wi_before {
	struct hm_arena a;		/* the tables, adopted by the run's arena at the end */
	struct hm_lines_acc *acc;
	uint32_t line_size;
	uint64_t window_ns;
	size_t max_lines;
	int failed;
};

struct hm_wi_before *hm_wi_before_new(uint32_t line_size, uint64_t window_ns, size_t max_lines)
{
	struct hm_wi_before *b = calloc(1, sizeof(*b));

	if (!b)
		hm_oom();
	hm_arena_init(&b->a);
	b->line_size = line_size;
	b->window_ns = window_ns;
	b->max_lines = max_lines;
	b->acc = hm_lines_acc_new(&b->a, line_size, window_ns);
	hm_lines_acc_set_max(b->acc, max_lines);
	return b;
}

void hm_wi_before_add(struct hm_wi_before *b, const struct hm_access *acc, size_t n)
{
	struct hm_err err = {0};

	if (!b->failed && hm_lines_acc_add(b->acc, acc, n, &err))
		b->failed = 1;	/* the replay builds this side, and says what fails */
}

int hm_wi_before_end(struct hm_wi_before *b, struct hm_arena *a, const struct hm_wi_plan *p,
		     uint64_t window_ns, size_t batch, struct hm_lines *out)
{
	if (!b || !b->acc || b->failed || batch != HM_WI_BATCH || p->line_size != b->line_size ||
	    p->max_lines != b->max_lines || window_ns != b->window_ns)
		return -1;
	hm_lines_acc_end(b->acc, out);
	b->acc = NULL;
	if (out->dropped_lines) {	/* pruned where the replay's batches would not be */
		memset(out, 0, sizeof(*out));
		return -1;
	}
	hm_arena_adopt(a, &b->a);
	return 0;
}

void hm_wi_before_free(struct hm_wi_before *b)
{
	if (!b)
		return;
	hm_lines_acc_free(b->acc);	/* not used: held, or refused */
	hm_arena_free(&b->a);
	free(b);
}
