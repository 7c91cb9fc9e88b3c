/* libFuzzer target for the instruction decoder (capstone underneath): any bytes must
 * decode to an instruction or -1, effective addresses must come out of any operand with
 * every register set, with some missing and with fs/gs bases unknown, and the backward
 * search a watchpoint sample needs must end. Built and run by `make fuzz`. */
#include <string.h>

#include "symbolize/decode.h"
#include "tests/fuzz/fuzz_util.h"

#define FUNC_START 0x401000ull

static volatile uint64_t sink;

/* Distinct register values so a wrong register choice would change the address. */
static void fill_regs(uint64_t regs[32])
{
	for (int i = 0; i < 32; i++)
		regs[i] = 0x1000ull * (uint64_t)(i + 1) + (uint64_t)i;
}

static void addresses(const struct hm_insn *in)
{
	uint64_t regs[32], ea, all = hm_decode_regs_mask();
	uint64_t half = all & 0x00ff00ffull;
	int seg;

	fill_regs(regs);
	for (uint32_t i = 0; i < in->nr_mem && i < 2; i++) {
		const struct hm_memop *op = &in->mem[i];

		sink += (uint64_t)op->access + op->size + hm_access_is_data(op->access);
		if (hm_decode_ea(in, op, all, regs, 0x7f0000000000ull, 0, &ea, &seg) == 0)
			sink += ea;
		if (hm_decode_ea(in, op, half, regs, 0, 0, &ea, &seg) == 0)
			sink += ea + (uint64_t)seg;
		if (hm_decode_ea(in, op, all, regs, 0, 0, &ea, NULL) == 0)
			sink += ea;
		sink += strlen(hm_decode_reg_name(op->base)) + strlen(hm_decode_reg_name(op->index));
	}
	sink += strnlen(in->text, sizeof(in->text)) + in->target + in->regs_written;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct hm_decoder *d;
	struct hm_insn in;
	struct hm_err err;
	uint64_t regs[32], v;
	size_t off;

	if (!d && hm_decode_open(&d, &err) < 0)
		return 0;
	/* Every instruction start a linear sweep finds, as the report decodes sampled ips. */
	for (off = 0; off < size && off < 4096;) {
		if (hm_decode_insn(d, data + off, size - off, FUNC_START + off, &in) < 0) {
			off++;
			continue;
		}
		addresses(&in);
		off += in.len ? in.len : 1;
	}
	if (size) {
		/* A watchpoint ip anywhere in the function, at its end and past it. */
		hm_decode_prev(d, data, size, FUNC_START, FUNC_START + data[0] % (size + 1), &in);
		hm_decode_prev(d, data, size, FUNC_START, FUNC_START + size, &in);
		hm_decode_prev(d, data, size, FUNC_START, FUNC_START + size + 16, &in);
		hm_decode_prev(d, data, size, FUNC_START, FUNC_START - 1, &in);
	}
	fill_regs(regs);
	hm_decode_reg(hm_decode_regs_mask(), regs, size ? data[0] % 40 - 4 : 0, &v);
	return 0;
}
