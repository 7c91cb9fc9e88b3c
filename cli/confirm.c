/* record --confirm FIRST.data: the second step of a two-step diagnosis. The shared lines
 * of a first (sampled) recording are ranked as report ranks them; each line's top field
 * pair names two byte ranges of a global or static variable, found again in the new
 * process by member path or by symbol and offset (SYMBOL+OFF/LEN). x86 has four debug
 * registers: each line's pairs (both sides of a pair or neither) are packed into groups
 * of at most four ranges, a line never split, at most CONFIRM_GROUPS groups, and record
 * arms one group per time slice in turn (collectors/watch_rotate.c). Lines that do not
 * fit, and objects that cannot be found again (heap, stack, TLS: their addresses belong
 * to the first run), are counted, not armed. docs/report.md, "Confirmation by
 * watchpoints". */
#include "cli/confirm.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "analyzer/lines.h"
#include "resolve/load.h"

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

/* One line's candidate ranges: both sides of each of its pairs, heaviest pair first, a
 * pair whole or not at all (a transfer needs both sides), while they fit the debug
 * registers of one slice. 0 when none can be found again in a new process. */
struct line_ranges {
	char spec[CONFIRM_REGS][CONFIRM_SPEC_LEN];
	const char *field[CONFIRM_REGS];
	int nr;
};

static int has_range(const struct line_ranges *lr, const char *spec)
{
	for (int i = 0; i < lr->nr; i++)
		if (!strcmp(lr->spec[i], spec))
			return 1;
	return 0;
}

static void take_pair(struct line_ranges *lr, const struct hm_line *ln, const struct hm_pair *pr,
		      struct confirm_plan *p)
{
	const struct hm_lfield *side[2] = {&ln->fields[pr->a], &ln->fields[pr->b]};
	char s[2][CONFIRM_SPEC_LEN];
	int need = 0;

	for (int k = 0; k < 2; k++) {
		if (side_spec(side[k], s[k], sizeof(s[k]))) {
			snprintf(p->why, sizeof(p->why), "%s is not a global or static variable "
				 "(its address belongs to the first run)", side[k]->field);
			return;
		}
		need += !has_range(lr, s[k]) && (k == 0 || strcmp(s[0], s[1]));
	}
	if (lr->nr + need > CONFIRM_REGS)
		return;		/* the line's lighter pairs wait for a line of their own */
	for (int k = 0; k < 2; k++) {
		if (has_range(lr, s[k]))
			continue;
		memcpy(lr->spec[lr->nr], s[k], sizeof(s[k]));
		lr->field[lr->nr++] = side[k]->field;
	}
}

static int group_used(const struct confirm_plan *p, int g)
{
	int n = 0;

	for (int i = 0; i < p->nr; i++)
		n += p->group[i] == g;
	return n;
}

/* Arms the line's ranges in the first group with room, or a new group (a slice of its
 * own); a line never spans groups, so its transfers are counted with all of its
 * ranges armed. */
static void take_line(struct confirm_plan *p, const struct hm_line *ln)
{
	struct line_ranges lr = {.nr = 0};
	int g;

	for (uint32_t i = 0; i < ln->nr_pairs; i++)
		take_pair(&lr, ln, &ln->pairs[i], p);
	if (!lr.nr) {
		p->skipped++;
		return;
	}
	for (g = 0; g < p->nr_groups && group_used(p, g) + lr.nr > CONFIRM_REGS; g++)
		;
	if (g == CONFIRM_GROUPS) {
		p->skipped++;
		snprintf(p->why, sizeof(p->why), "%d slices of %d debug registers are taken by "
			 "busier lines", CONFIRM_GROUPS, CONFIRM_REGS);
		return;
	}
	if (g == p->nr_groups)
		p->nr_groups++;
	for (int k = 0; k < lr.nr; k++) {
		memcpy(p->spec[p->nr], lr.spec[k], sizeof(lr.spec[k]));
		snprintf(p->field[p->nr], sizeof(p->field[p->nr]), "%s", lr.field[k]);
		p->group[p->nr++] = g;
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
			take_line(p, ln);
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
