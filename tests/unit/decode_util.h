/* Shared by the decoder unit tests: one capstone decoder per group, the DECODE macro that
 * decodes one instruction's bytes at ADDR, and checks on its memory operands. */
#ifndef HM_TEST_DECODE_UTIL_H
#define HM_TEST_DECODE_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "symbolize/decode.h"

#ifndef UNUSED
#define UNUSED __attribute__((unused))
#endif

#define ADDR 0x401000ULL

static UNUSED int open_decoder(void **state)
{
	struct hm_decoder *d;
	struct hm_err err = { 0 };

	if (hm_decode_open(&d, &err) < 0) {
		print_error("%s\n", err.msg);
		return -1;
	}
	*state = d;
	return 0;
}

static UNUSED int close_decoder(void **state)
{
	hm_decode_close(*state);
	return 0;
}

static UNUSED void decode_bytes(void **state, const uint8_t *b, size_t n,
				struct hm_insn *in)
{
	assert_int_equal(hm_decode_insn(*state, b, n, ADDR, in), 0);
	assert_int_equal(in->addr, ADDR);
	assert_int_equal(in->len, n);
}

/* Decodes the bytes given as arguments; the whole buffer must be one instruction. */
#define DECODE(in, ...)                                                                    \
	do {                                                                               \
		static const uint8_t b_[] = { __VA_ARGS__ };                               \
		decode_bytes(state, b_, sizeof(b_), (in));                                 \
	} while (0)

static UNUSED void expect_mem(const struct hm_memop *m, enum hm_memacc acc, int base,
			      int index, int scale, int64_t disp, uint32_t size)
{
	assert_int_equal(m->access, acc);
	assert_int_equal(m->base, base);
	assert_int_equal(m->index, index);
	assert_int_equal(m->scale, scale);
	assert_int_equal(m->disp, disp);
	assert_int_equal(m->size, size);
}

/* One memory operand, no segment, not implicit. */
static UNUSED void expect_one(const struct hm_insn *in, enum hm_memacc acc, int base,
			      int index, int scale, int64_t disp, uint32_t size)
{
	assert_int_equal(in->nr_mem, 1);
	expect_mem(&in->mem[0], acc, base, index, scale, disp, size);
	assert_int_equal(in->mem[0].segment, HM_SEG_NONE);
	assert_false(in->mem[0].implicit);
	assert_false(in->mem[0].vsib);
}

#endif
