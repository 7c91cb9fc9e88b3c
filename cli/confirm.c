/* record --confirm FIRST.data: the second step of a two-step diagnosis. The shared lines
 * of a first (sampled) recording are ranked as report ranks them; each line's top field
 * pair names two byte ranges of a global or static variable, found again in the new
 * process by symbol and offset (SYMBOL+OFF/LEN). Up to four such ranges, x86's debug
 * registers, are armed for the whole run: the busiest lines' pairs first, both sides of
 * a pair or neither (a transfer needs both). The ranges that did not fit, and objects
 * that cannot be found again (heap, stack, TLS: their addresses belong to the first
 * run), are listed, not armed. docs/report.md, "Confirmation by watchpoints". */
#include "cli/confirm.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "analyzer/lines.h"
#include "analyzer/load.h"

/* A pair side as a watch: by member path when the first run named it (stats.errors:
 * found again in a rebuilt program, the fixed build too), else by offset, aligned, at
 * most 8 bytes. */
static int side_spec(const struct hm_lfield *f, char *buf, size_t len)
{
	const char *tn = hm_type_name(hm_type_agg(f->type, NULL));
	uint64_t off = f->field_off;
	uint32_t size = f->size ? f->size : 1, w = 8;
	size_t n = tn ? strlen(tn) : 0;

	if (f->method != HM_M_GLOBAL || !f->obj_base || !f->object || strchr(f->object, ' '))
		return -1;	/* heap, stack, TLS, or several objects: not found again */
	if (f->named && tn && hm_type_strip(f->type) == hm_type_agg(f->type, NULL) &&
	    !strncmp(f->field, tn, n) && f->field[n] == '.' && f->field[n + 1]) {
		snprintf(buf, len, "%s.%s", f->object, f->field + n + 1);
		return 0;
	}
	while (w > 1 && (w > size || off % w))
		w /= 2;
	snprintf(buf, len, "%s+%" PRIu64 "/%u", f->object, off, w);
	return 0;
}

static int known(const struct confirm_plan *p, const char *spec)
{
	for (int i = 0; i < p->nr; i++)
		if (!strcmp(p->spec[i], spec))
			return 1;
	return 0;
}

/* Arms the pair of line ln when both sides can be found again and fit. */
static void take_pair(struct confirm_plan *p, const struct hm_line *ln)
{
	const struct hm_pair *pr = &ln->pairs[0];
	const struct hm_lfield *side[2] = {&ln->fields[pr->a], &ln->fields[pr->b]};
	char s[2][CONFIRM_SPEC_LEN];
	int need = 0;

	for (int k = 0; k < 2; k++) {
		if (side_spec(side[k], s[k], sizeof(s[k]))) {
			p->skipped++;
			snprintf(p->why, sizeof(p->why), "%s is not a global or static variable "
				 "(its address belongs to the first run)", side[k]->field);
			return;
		}
		need += !known(p, s[k]) && (k == 0 || strcmp(s[0], s[1]));
	}
	if (p->nr + need > CONFIRM_MAX) {
		p->skipped++;
		snprintf(p->why, sizeof(p->why), "the %d debug registers are taken by busier lines",
			 CONFIRM_MAX);
		return;
	}
	for (int k = 0; k < 2; k++) {
		if (known(p, s[k]))
			continue;
		memcpy(p->spec[p->nr], s[k], sizeof(s[k]));
		snprintf(p->field[p->nr], sizeof(p->field[p->nr]), "%s", side[k]->field);
		p->nr++;
	}
	p->lines++;
}

int confirm_plan(const char *first, const struct hm_resolve_opts *ro, struct confirm_plan *p,
		 struct hm_err *err)
{
	struct hm_recording rec;
	struct hm_arena a;
	struct hm_lines l;
	int rc = 0;

	memset(p, 0, sizeof(*p));
	if (hm_recording_load(first, ro, NULL, NULL, &rec, err))
		return -1;
	hm_arena_init(&a);
	if (hm_lines_build(&a, rec.acc, rec.n, 64, 0, &l, err)) {
		rc = -1;
		goto out;
	}
	for (size_t i = 0; i < l.nr; i++) {
		const struct hm_line *ln = &l.lines[i];

		/* too few samples is what a watch settles; too few exact accesses is settled */
		if ((hm_verdict_shared(ln->verdict) ||
		     (ln->verdict == HM_V_FEW_SAMPLES && l.source != HM_SRC_WATCH)) && ln->nr_pairs)
			take_pair(p, ln);
	}
	if (!p->nr)
		rc = hm_err_set(err, HM_EXIT_INPUT, "--confirm %s: %s", first,
				p->skipped ? p->why
					   : "no line in it is shared by threads with a writer, so "
					     "there is nothing to confirm");
out:
	hm_arena_free(&a);
	hm_recording_free(&rec);
	return rc;
}
