#include "json.h"

#include <math.h>

void hm_json_init(struct hm_json *j, FILE *out)
{
	j->out = out;
	j->depth = 0;
	j->first[0] = 1;
}

/* The length of the well-formed UTF-8 sequence at s (RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF), or 0. */
static int utf8_len(const unsigned char *s)
{
	int n = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : 2;
	uint32_t cp = s[0] & (0x3f >> (n - 1));

	if (s[0] < 0xc2 || s[0] > 0xf4)
		return 0;
	for (int i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)	/* also stops at the terminating NUL */
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
}

/* JSON text is UTF-8 (RFC 8259): names read from hostile files (BTF, DWARF, perf.data
 * event names) may not be, so each byte of a broken sequence becomes U+FFFD. */
static void json_escaped(FILE *out, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	fputc('"', out);
	while (*s) {
		unsigned char c = *s;
		int n;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", out);
		else if (c == '\t')
			fputs("\\t", out);
		else if (c < 0x20 || c == 0x7f)
			fprintf(out, "\\u%04x", c);
		else if (c < 0x80)
			fputc(c, out);
		else if ((n = utf8_len(s))) {
			fwrite(s, 1, (size_t)n, out);
			s += n;
			continue;
		} else
			fputs("\\ufffd", out);
		s++;
	}
	fputc('"', out);
}

static void json_sep(struct hm_json *j, const char *key)
{
	if (!j->first[j->depth])
		fputc(',', j->out);
	j->first[j->depth] = 0;
	if (key) {
		json_escaped(j->out, key);
		fputc(':', j->out);
	}
}

static void json_open(struct hm_json *j, const char *key, char c)
{
	json_sep(j, key);
	fputc(c, j->out);
	if (j->depth + 1 < HM_JSON_MAX_DEPTH)
		j->depth++;
	j->first[j->depth] = 1;
}

static void json_close(struct hm_json *j, char c)
{
	fputc(c, j->out);
	if (j->depth > 0)
		j->depth--;
}

void hm_json_obj_begin(struct hm_json *j, const char *key) { json_open(j, key, '{'); }
void hm_json_obj_end(struct hm_json *j) { json_close(j, '}'); }
void hm_json_arr_begin(struct hm_json *j, const char *key) { json_open(j, key, '['); }
void hm_json_arr_end(struct hm_json *j) { json_close(j, ']'); }

void hm_json_str(struct hm_json *j, const char *key, const char *val)
{
	json_sep(j, key);
	if (val)
		json_escaped(j->out, val);
	else
		fputs("null", j->out);
}

void hm_json_u64(struct hm_json *j, const char *key, uint64_t val)
{
	json_sep(j, key);
	fprintf(j->out, "%llu", (unsigned long long)val);
}

void hm_json_i64(struct hm_json *j, const char *key, int64_t val)
{
	json_sep(j, key);
	fprintf(j->out, "%lld", (long long)val);
}

void hm_json_double(struct hm_json *j, const char *key, double val)
{
	json_sep(j, key);
	if (isfinite(val))
		fprintf(j->out, "%.6g", val);
	else
		fputs("null", j->out);
}

void hm_json_bool(struct hm_json *j, const char *key, int val)
{
	json_sep(j, key);
	fputs(val ? "true" : "false", j->out);
}

void hm_json_null(struct hm_json *j, const char *key)
{
	json_sep(j, key);
	fputs("null", j->out);
}

void hm_json_hex(struct hm_json *j, const char *key, uint64_t val)
{
	json_sep(j, key);
	fprintf(j->out, "\"0x%llx\"", (unsigned long long)val);
}

void hm_json_finish(struct hm_json *j)
{
	fputc('\n', j->out);
	fflush(j->out);
}
