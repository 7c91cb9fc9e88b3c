#include "resolve/spill.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WORDS (sizeof(struct hm_access) / 8)
#define BUF (1u << 20)
#define MAX_REC (4 + sizeof(struct hm_access))
#define SLOT_SHIFT 24		/* the mask's top byte: the slot the words differ from */
#define SLOTS 8

_Static_assert(sizeof(struct hm_access) % 8 == 0 && WORDS <= SLOT_SHIFT,
	       "an access is stored as at most 24 words under the mask's low 24 bits");

struct hm_spill {
	FILE *fp;
	uint8_t *buf;
	size_t len, at;		/* bytes in buf; read: the next to decode */
	uint64_t prev[SLOTS][WORDS];	/* the access before of each slot's threads */
	int failed, reading;	/* reading: buf holds what was read */
};

struct hm_spill *hm_spill_open(void)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	struct hm_spill *s;
	int fd;

	snprintf(path, sizeof(path), "%s/hitmap-whatif-XXXXXX", dir && *dir ? dir : "/tmp");
	if ((fd = mkstemp(path)) < 0)
		return NULL;
	unlink(path);
	if (!(s = calloc(1, sizeof(*s))) || !(s->buf = malloc(BUF)) ||
	    !(s->fp = fdopen(fd, "w+b"))) {
		if (s)
			free(s->buf);
		free(s);
		close(fd);
		return NULL;
	}
	return s;
}

static int drain(struct hm_spill *s)
{
	if (s->len && !s->failed && fwrite(s->buf, 1, s->len, s->fp) != s->len)
		s->failed = 1;
	s->len = 0;
	return s->failed ? -1 : 0;
}

/* Threads' accesses come interleaved in time order, each thread's much like its last:
 * an access is stored against the last of its thread's slot, not the last of all (the
 * two threads of a false-sharing recording took 85 bytes an access that way, 40 so). */
static uint32_t slot_of(uint32_t tid)
{
	return (uint32_t)(((uint64_t)tid * 0x9e3779b97f4a7c15ull) >> 61);
}

int hm_spill_write(struct hm_spill *s, const struct hm_access *acc, size_t n)
{
	if (s->reading)
		return -1;	/* written once, then read */
	for (size_t i = 0; i < n; i++) {
		uint64_t w[WORDS], *prev;
		uint32_t slot = slot_of(acc[i].s.tid), mask = slot << SLOT_SHIFT;
		uint8_t *p;

		if (BUF - s->len < MAX_REC && drain(s))
			return -1;
		memcpy(w, &acc[i], sizeof(w));
		prev = s->prev[slot];
		p = s->buf + s->len + 4;
		for (size_t k = 0; k < WORDS; k++) {
			if (w[k] == prev[k])
				continue;
			mask |= 1u << k;
			memcpy(p, &w[k], 8);
			p += 8;
			prev[k] = w[k];
		}
		memcpy(s->buf + s->len, &mask, 4);
		s->len = (size_t)(p - s->buf);
	}
	return s->failed ? -1 : 0;
}

int hm_spill_rewind(struct hm_spill *s)
{
	if (!s->reading && (drain(s) || fflush(s->fp)))
		return -1;
	s->reading = 1;
	rewind(s->fp);
	memset(s->prev, 0, sizeof(s->prev));
	s->len = s->at = 0;
	return 0;
}

/* Keeps at least one whole record in buf from at, unless the file ends first. */
static void refill(struct hm_spill *s)
{
	memmove(s->buf, s->buf + s->at, s->len - s->at);
	s->len -= s->at;
	s->at = 0;
	s->len += fread(s->buf + s->len, 1, BUF - s->len, s->fp);
}

size_t hm_spill_read(struct hm_spill *s, struct hm_access *out, size_t max)
{
	size_t n = 0;

	while (n < max) {
		uint32_t mask;
		uint64_t *prev;
		const uint8_t *p;

		if (s->len - s->at < MAX_REC)
			refill(s);	/* a whole record in buf, unless the file ends */
		if (s->len - s->at < 4)
			break;	/* the end */
		memcpy(&mask, s->buf + s->at, 4);
		prev = s->prev[(mask >> SLOT_SHIFT) % SLOTS];
		mask &= (1u << SLOT_SHIFT) - 1;
		/* sized only near the end (a cut record cannot be: the file is ours) */
		if (s->len - s->at < MAX_REC &&
		    s->len - s->at < 4 + 8 * (size_t)__builtin_popcount(mask))
			break;
		p = s->buf + s->at + 4;
		for (; mask; mask &= mask - 1, p += 8)
			memcpy(&prev[__builtin_ctz(mask)], p, 8);
		memcpy(&out[n++], prev, sizeof(*out));
		s->at = (size_t)(p - s->buf);
	}
	return n;
}

void hm_spill_close(struct hm_spill *s)
{
	if (!s)
		return;
	fclose(s->fp);
	free(s->buf);
	free(s);
}
