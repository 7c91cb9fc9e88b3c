#include "core/ksections.h"

#include <string.h>

#define MAGIC_LEN 24

static size_t pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

size_t hm_ksect_encode(const struct hm_ksect *v, size_t n, uint8_t *buf, size_t cap)
{
	size_t off = MAGIC_LEN + 8;

	if (!n || n > UINT32_MAX || cap < off)
		return 0;
	memset(buf, 0, off);
	memcpy(buf, HM_KSECT_MAGIC, sizeof(HM_KSECT_MAGIC));
	put64(buf + MAGIC_LEN, n);	/* u32 count, u32 0 */
	for (size_t i = 0; i < n; i++) {
		size_t len = strnlen(v[i].name, HM_KSECT_NAME_MAX - 1), need = 8 + pad8(len + 1);

		if (cap - off < need)
			return 0;
		put64(buf + off, v[i].addr);
		memset(buf + off + 8, 0, need - 8);
		memcpy(buf + off + 8, v[i].name, len);
		off += need;
	}
	return off;
}

size_t hm_ksect_decode(const uint8_t *p, size_t len, struct hm_ksect *out, size_t max)
{
	size_t off = MAGIC_LEN + 8, n = 0, count;

	if (!p || len < off || memcmp(p, HM_KSECT_MAGIC, sizeof(HM_KSECT_MAGIC)) != 0)
		return 0;
	count = (size_t)(get64(p + MAGIC_LEN) & 0xffffffffu);
	while (n < count && n < max && len - off > 8) {
		const char *name = (const char *)p + off + 8;
		size_t l = strnlen(name, len - off - 8);

		if (l == len - off - 8 || l >= HM_KSECT_NAME_MAX)
			break;	/* unterminated, or longer than any section name we keep */
		out[n].addr = get64(p + off);
		memcpy(out[n].name, name, l + 1);
		n++;
		off += 8 + pad8(l + 1);
		if (off > len)
			break;
	}
	return n;
}
