#include "resolve/watched.h"

#include <stdlib.h>
#include <string.h>

#include "core/oom.h"

int hm_watched_is_mark(const struct hm_perf_attr *attr)
{
	return attr && attr->attr.type == PERF_TYPE_SOFTWARE &&
	       attr->attr.config == PERF_COUNT_SW_DUMMY;
}

void hm_watched_mark(struct hm_watched *w, uint64_t time, uint64_t addr, uint32_t len)
{
	if (!addr) {
		for (size_t i = w->nr; i > 0 && !w->s[i - 1].end; i--)
			w->s[i - 1].end = time;
		return;
	}
	if (w->nr == w->cap && !(w->s = realloc(w->s, (w->cap = w->cap ? w->cap * 2 : 64) *
							   sizeof(*w->s))))
		hm_oom();
	w->s[w->nr++] = (struct hm_wslice){time, 0, addr, len};
}

void hm_watched_free(struct hm_watched *w)
{
	free(w->s);
	memset(w, 0, sizeof(*w));
}

static int covers(const struct hm_wslice *s, uint64_t addr, uint32_t len)
{
	return s->addr < addr + (len ? len : 1) && addr < s->addr + s->len;
}

uint64_t hm_watched_both(const struct hm_watched *w, uint64_t a, uint32_t alen, uint64_t b,
			 uint32_t blen, uint64_t *span)
{
	uint64_t both = 0, first = UINT64_MAX, last = 0;

	for (size_t i = 0; i < w->nr; i++) {
		const struct hm_wslice *s = &w->s[i];

		if (s->start < first)
			first = s->start;
		if (s->end > last)
			last = s->end;
		if (!s->end || !covers(s, a, alen))
			continue;
		/* the other side in the same slice: marks of one slice share its end */
		for (size_t j = 0; j < w->nr; j++)
			if (w->s[j].end == s->end && covers(&w->s[j], b, blen)) {
				both += s->end - s->start;
				break;
			}
	}
	*span = last > first ? last - first : 0;
	return both;
}
