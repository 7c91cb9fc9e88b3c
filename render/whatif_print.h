/* whatif's text, hitmap.whatif/1 JSON and suggested struct as C (whatif_print.c). */
#ifndef HM_RENDER_WHATIF_PRINT_H
#define HM_RENDER_WHATIF_PRINT_H

#include <stddef.h>
#include <stdio.h>

#include "analyzer/whatif.h"

struct hm_wi_view {
	const char *input;
	const char *change;		/* the change as the user wrote it */
	const struct hm_whatif *w;
	const struct hm_wi_suggestion *sug;	/* --suggest; NULL otherwise */
	size_t top;			/* changes shown; 0: all */
};
void hm_whatif_print_text(FILE *out, struct hm_arena *a, const struct hm_wi_view *v);
/* {"schema": "hitmap.whatif/1", ...}: docs/whatif.md. */
void hm_whatif_print_json(FILE *out, struct hm_arena *a, const struct hm_wi_view *v);
/* The suggestion as C, with the group of each member in a comment. */
void hm_whatif_print_struct(FILE *out, struct hm_arena *a, const struct hm_wi_type *t,
			    const struct hm_wi_suggestion *sug);

/* Shared by whatif_print.c (text) and whatif_json.c. */
/* The member's type in the new layout, else the old one's; NULL when neither has one. */
const struct hm_type *hm_wi_member_type(const struct hm_wi_member *m);
/* One sentence: what the prediction is, for scripts and for people. */
const char *hm_whatif_prediction(struct hm_arena *a, const struct hm_whatif *w);

#endif
