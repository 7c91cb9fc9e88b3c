/* Rendering of type layouts: pahole-style text and the hitmap.layout/1 JSON schema. */
#ifndef HM_LAYOUT_PRINT_H
#define HM_LAYOUT_PRINT_H

#include <stdio.h>

#include "core/json.h"
#include "symbolize/layout.h"

struct hm_print_opts {
	uint32_t line_size;	/* cache-line size for boundary markers, default 64 */
	int expand;		/* -E: expand named nested aggregates in place */
	const char *close_note;	/* text: after the closing "};" (pahole -R's saved note) */
	/* json: called inside the type's object, after its keys (--reorganize adds its own) */
	void (*json_extra)(struct hm_json *j, void *ctx);
	void *json_ctx;
};

void hm_layout_print_text(FILE *out, struct hm_arena *a, const struct hm_type *t,
			  const struct hm_print_opts *o);
/* Writes one element of the "types" array. */
void hm_layout_print_json(struct hm_json *j, struct hm_arena *a, const struct hm_type *t,
			  const struct hm_print_opts *o);

#endif
