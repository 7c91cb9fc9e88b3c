/* Streaming JSON writer: tracks nesting and commas so callers only name keys and values. */
#ifndef HM_JSON_H
#define HM_JSON_H

#include <stdint.h>
#include <stdio.h>

#define HM_JSON_MAX_DEPTH 64

struct hm_json {
	FILE *out;
	int depth;
	int first[HM_JSON_MAX_DEPTH];	/* no element written yet at this depth */
};

void hm_json_init(struct hm_json *j, FILE *out);
/* key may be NULL inside arrays. */
void hm_json_obj_begin(struct hm_json *j, const char *key);
void hm_json_obj_end(struct hm_json *j);
void hm_json_arr_begin(struct hm_json *j, const char *key);
void hm_json_arr_end(struct hm_json *j);
void hm_json_str(struct hm_json *j, const char *key, const char *val);
void hm_json_u64(struct hm_json *j, const char *key, uint64_t val);
void hm_json_i64(struct hm_json *j, const char *key, int64_t val);
void hm_json_double(struct hm_json *j, const char *key, double val);
void hm_json_bool(struct hm_json *j, const char *key, int val);
void hm_json_null(struct hm_json *j, const char *key);
/* Addresses are hex strings in every schema (DESIGN.md, JSON contract). */
void hm_json_hex(struct hm_json *j, const char *key, uint64_t val);
/* Ends the document with a newline. */
void hm_json_finish(struct hm_json *j);

#endif
