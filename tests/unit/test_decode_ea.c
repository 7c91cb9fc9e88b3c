/* symbolize/decode*.c: effective addresses, the trap-after rule, whole gcc-built functions. */
#include "decode_util.h"

/* The dense perf regs array for mask, from values indexed by register number. */
static void pack_regs(uint64_t mask, const uint64_t *byreg, uint64_t *out)
{
	size_t n = 0;

	for (int r = 0; r < 64; r++)
		if (mask & (1ULL << r))
			out[n++] = byreg[r];
}

static void test_ea_base_index_scale_disp(void **state)
{
	uint64_t byreg[64] = { 0 }, regs[64], ea = 0, mask = hm_decode_regs_mask();
	struct hm_insn in;
	int needs = -1;

	byreg[HM_REG_SI] = 0x7f0000001000;
	byreg[HM_REG_CX] = 3;
	byreg[HM_REG_R9] = 0x55550000;
	byreg[HM_REG_R10] = 0x10;
	pack_regs(mask, byreg, regs);

	DECODE(&in, 0x8b, 0x44, 0x8e, 0x10);	/* mov eax, dword ptr [rsi + rcx*4 + 0x10] */
	assert_int_equal(hm_decode_ea(&in, &in.mem[0], mask, regs, 0, 0, &ea, &needs), 0);
	assert_int_equal(ea, 0x7f0000001000 + 3 * 4 + 0x10);
	assert_int_equal(needs, 0);

	DECODE(&in, 0x47, 0x8b, 0x44, 0x51, 0xfc);	/* mov r8d, dword ptr [r9 + r10*2 - 4] */
	assert_int_equal(hm_decode_ea(&in, &in.mem[0], mask, regs, 0, 0, &ea, NULL), 0);
	assert_int_equal(ea, 0x55550000 + 0x20 - 4);

	/* A sparse mask: only the two registers, packed in bit order. */
	mask = (1ULL << HM_REG_CX) | (1ULL << HM_REG_SI);
	pack_regs(mask, byreg, regs);
	DECODE(&in, 0x8b, 0x44, 0x8e, 0x10);
	assert_int_equal(hm_decode_ea(&in, &in.mem[0], mask, regs, 0, 0, &ea, NULL), 0);
	assert_int_equal(ea, 0x7f0000001000 + 3 * 4 + 0x10);
}

static void test_ea_missing_register_fails(void **state)
{
	uint64_t regs[1] = { 0x1000 }, ea = 0;
	struct hm_insn in;

	DECODE(&in, 0x8b, 0x44, 0x8e, 0x10);	/* mov eax, dword ptr [rsi + rcx*4 + 0x10] */
	assert_int_equal(hm_decode_ea(&in, &in.mem[0], 1ULL << HM_REG_SI, regs, 0, 0, &ea, NULL),
			 HM_DECODE_EA_NOREG);
	assert_int_equal(hm_decode_ea(&in, &in.mem[0], 1ULL << HM_REG_CX, regs, 0, 0, &ea, NULL),
			 HM_DECODE_EA_NOREG);
	assert_int_equal(hm_decode_reg(0, regs, HM_REG_AX, &ea), -1);
	assert_int_equal(hm_decode_reg(~0ULL, regs, 64, &ea), -1);
	assert_int_equal(hm_decode_reg(~0ULL, regs, HM_REG_NONE, &ea), -1);
}

static void test_ea_address_size_override_truncates(void **state)
{
	uint64_t regs[1] = { 0xffffffff00001000 }, ea = 0;
	struct hm_insn in;

	DECODE(&in, 0x67, 0x8b, 0x00);	/* mov eax, dword ptr [eax] */
	assert_true(in.addr32);
	expect_one(&in, HM_ACC_LOAD, HM_REG_AX, HM_REG_NONE, 1, 0, 4);
	assert_int_equal(hm_decode_ea(&in, &in.mem[0], 1ULL << HM_REG_AX, regs, 0, 0, &ea, NULL), 0);
	assert_int_equal(ea, 0x1000);
}

static void test_ea_fs_relative_with_and_without_base(void **state)
{
	const uint64_t fs_base = 0x7ffff7d8a740;
	uint64_t regs[1] = { 0x40 }, ea = 0;
	struct hm_insn in;
	int needs = -1;

	/* mov rax, qword ptr fs:[0x28]: the stack protector canary */
	DECODE(&in, 0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0x00, 0x00, 0x00);
	assert_int_equal(hm_decode_ea(&in, &in.mem[0], 0, NULL, fs_base, 0, &ea, &needs), 0);
	assert_int_equal(ea, fs_base + 0x28);
	assert_int_equal(needs, 0);
	assert_int_equal(hm_decode_ea(&in, &in.mem[0], 0, NULL, 0, 0, &ea, &needs), 0);
	assert_int_equal(ea, 0x28);
	assert_int_equal(needs, 1);
	/* The gs base does not stand in for fs. */
	assert_int_equal(hm_decode_ea(&in, &in.mem[0], 0, NULL, 0, 0x1000, &ea, &needs), 0);
	assert_int_equal(needs, 1);

	DECODE(&in, 0x64, 0x8b, 0x00);	/* mov eax, dword ptr fs:[rax] */
	assert_int_equal(hm_decode_ea(&in, &in.mem[0], 1ULL << HM_REG_AX, regs, fs_base, 0, &ea,
				      &needs), 0);
	assert_int_equal(ea, fs_base + 0x40);

	/* mov qword ptr gs:[0x10], rax */
	DECODE(&in, 0x65, 0x48, 0x89, 0x04, 0x25, 0x10, 0x00, 0x00, 0x00);
	assert_int_equal(hm_decode_ea(&in, &in.mem[0], 0, NULL, fs_base, 0xffff888000000000, &ea,
				      &needs), 0);
	assert_int_equal(ea, 0xffff888000000010);
	assert_int_equal(needs, 0);
}

static void test_ea_implicit_stack_slot(void **state)
{
	uint64_t byreg[64] = { 0 }, regs[64], ea = 0, mask = hm_decode_regs_mask();
	struct hm_insn in;

	byreg[HM_REG_SP] = 0x7ffe0000;
	pack_regs(mask, byreg, regs);
	DECODE(&in, 0x53);	/* push rbx */
	assert_int_equal(hm_decode_ea(&in, &in.mem[0], mask, regs, 0, 0, &ea, NULL), 0);
	assert_int_equal(ea, 0x7ffe0000 - 8);
	DECODE(&in, 0x8f, 0x44, 0x24, 0x08);	/* pop qword ptr [rsp + 8] */
	assert_int_equal(hm_decode_ea(&in, &in.mem[0], mask, regs, 0, 0, &ea, NULL), 0);
	assert_int_equal(ea, 0x7ffe0000 + 16);
}

static void test_regs_mask_covers_gprs_and_ip(void **state)
{
	uint64_t m = hm_decode_regs_mask();

	(void)state;
	assert_int_equal(m, 0xff01ffULL);
	/* the kernel rejects DS, ES, FS and GS in sample_regs_user on x86-64 */
	assert_int_equal(m & (0xfULL << 12), 0);
	for (int r = HM_REG_AX; r <= HM_REG_R15; r++)
		if (r < HM_REG_FLAGS || r >= HM_REG_R8)
			assert_true(m & (1ULL << r));
}

/* examples/bin/false_sharing (gcc 12 -O2, PIE) count_errors:
 *	for (i = 0; i < iterations; i++) { *e += 1; *b += i & 7; }
 * with e = &stats.errors (stats + 8), b = &stats.bytes (stats + 0x10), stats at 0x4060. */
static const uint8_t count_errors[] = {
	0x48, 0x8b, 0x35, 0xf9, 0x2d, 0x00, 0x00,    /* 1230: mov rsi,QWORD PTR [rip+0x2df9] # 4030 <iterations> */
	0x48, 0x85, 0xf6,                            /* 1237: test rsi,rsi */
	0x74, 0x36,                                  /* 123a: je 1272 <count_errors+0x42> */
	0x31, 0xc0,                                  /* 123c: xor eax,eax */
	0x66, 0x90,                                  /* 123e: xchg ax,ax */
	0x48, 0x8b, 0x15, 0x21, 0x2e, 0x00, 0x00,    /* 1240: mov rdx,QWORD PTR [rip+0x2e21] # 4068 <stats+0x8> */
	0x48, 0x83, 0xc2, 0x01,                      /* 1247: add rdx,0x1 */
	0x48, 0x89, 0x15, 0x16, 0x2e, 0x00, 0x00,    /* 124b: mov QWORD PTR [rip+0x2e16],rdx # 4068 <stats+0x8> */
	0x48, 0x89, 0xc2,                            /* 1252: mov rdx,rax */
	0x48, 0x8b, 0x0d, 0x14, 0x2e, 0x00, 0x00,    /* 1255: mov rcx,QWORD PTR [rip+0x2e14] # 4070 <stats+0x10> */
	0x48, 0x83, 0xc0, 0x01,                      /* 125c: add rax,0x1 */
	0x83, 0xe2, 0x07,                            /* 1260: and edx,0x7 */
	0x48, 0x01, 0xca,                            /* 1263: add rdx,rcx */
	0x48, 0x89, 0x15, 0x03, 0x2e, 0x00, 0x00,    /* 1266: mov QWORD PTR [rip+0x2e03],rdx # 4070 <stats+0x10> */
	0x48, 0x39, 0xf0,                            /* 126d: cmp rax,rsi */
	0x75, 0xce,                                  /* 1270: jne 1240 <count_errors+0x10> */
	0x31, 0xc0,                                  /* 1272: xor eax,eax */
	0xc3,                                        /* 1274: ret */
};

static void test_ea_rip_relative_points_at_global(void **state)
{
	const uint64_t base = 0x555555554000, start = base + 0x1230;
	const uint64_t want[] = { base + 0x4030, base + 0x4068, base + 0x4068, base + 0x4070,
				  base + 0x4070 };
	const enum hm_memacc acc[] = { HM_ACC_LOAD, HM_ACC_LOAD, HM_ACC_STORE, HM_ACC_LOAD,
				       HM_ACC_STORE };
	size_t off = 0, n = 0;
	struct hm_insn in;
	uint64_t ea;

	while (off < sizeof(count_errors)) {
		assert_int_equal(hm_decode_insn(*state, count_errors + off,
						sizeof(count_errors) - off, start + off, &in), 0);
		for (uint32_t i = 0; i < in.nr_mem; i++) {
			if (in.mem[i].implicit)
				continue;
			assert_true(n < 5);
			assert_int_equal(in.mem[i].base, HM_REG_RIP);
			assert_int_equal(in.mem[i].access, acc[n]);
			/* no registers needed: rip-relative uses the instruction's own address */
			assert_int_equal(hm_decode_ea(&in, &in.mem[i], 0, NULL, 0, 0, &ea, NULL), 0);
			assert_int_equal(ea, want[n]);
			n++;
		}
		off += in.len;
	}
	assert_int_equal(off, sizeof(count_errors));
	assert_int_equal(n, 5);
}

/* gcc 12 -O2 -fcf-protection=none, linked with ld -Ttext=0x4011d0:
 *	struct worker_stats { unsigned long ops, errors, bytes; unsigned flags; };
 *	void count_ops(struct worker_stats *s, unsigned long n)
 *	{
 *		volatile unsigned long *p = &s->ops, *b = &s->bytes;
 *		for (unsigned long i = 0; i < n; i++) { *p += 1; *b += i & 7; }
 *	}
 * A write watchpoint on s->ops traps with ip 0x4011ea, after the store at 0x4011e7. */
static const uint8_t count_ops[] = {
	0x48, 0x85, 0xf6,                            /* 4011d0: test rsi,rsi */
	0x74, 0x2f,                                  /* 4011d3: je 401204 <count_ops+0x34> */
	0x31, 0xc0,                                  /* 4011d5: xor eax,eax */
	0x66, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00, /* 4011d7: nop WORD PTR [rax+rax*1+0x0] */
	0x48, 0x8b, 0x17,                            /* 4011e0: mov rdx,QWORD PTR [rdi] */
	0x48, 0x83, 0xc2, 0x01,                      /* 4011e3: add rdx,0x1 */
	0x48, 0x89, 0x17,                            /* 4011e7: mov QWORD PTR [rdi],rdx */
	0x48, 0x89, 0xc2,                            /* 4011ea: mov rdx,rax */
	0x48, 0x8b, 0x4f, 0x10,                      /* 4011ed: mov rcx,QWORD PTR [rdi+0x10] */
	0x48, 0x83, 0xc0, 0x01,                      /* 4011f1: add rax,0x1 */
	0x83, 0xe2, 0x07,                            /* 4011f5: and edx,0x7 */
	0x48, 0x01, 0xca,                            /* 4011f8: add rdx,rcx */
	0x48, 0x89, 0x57, 0x10,                      /* 4011fb: mov QWORD PTR [rdi+0x10],rdx */
	0x48, 0x39, 0xc6,                            /* 4011ff: cmp rsi,rax */
	0x75, 0xdc,                                  /* 401202: jne 4011e0 <count_ops+0x10> */
	0xc3,                                        /* 401204: ret */
};
#define COUNT_OPS_START 0x4011d0ULL

static void test_prev_finds_store_before_trapped_ip(void **state)
{
	struct hm_insn in;

	assert_int_equal(hm_decode_prev(*state, count_ops, sizeof(count_ops), COUNT_OPS_START,
					0x4011ea, &in), 0);
	assert_int_equal(in.addr, 0x4011e7);
	assert_int_equal(in.len, 3);
	assert_string_equal(in.text, "mov qword ptr [rdi], rdx");
	expect_one(&in, HM_ACC_STORE, HM_REG_DI, HM_REG_NONE, 1, 0, 8);

	/* the store to s->bytes, trapped at the cmp after it */
	assert_int_equal(hm_decode_prev(*state, count_ops, sizeof(count_ops), COUNT_OPS_START,
					0x4011ff, &in), 0);
	assert_int_equal(in.addr, 0x4011fb);
	expect_one(&in, HM_ACC_STORE, HM_REG_DI, HM_REG_NONE, 1, 0x10, 8);

	/* the load of s->ops (a read watchpoint), trapped at the add after it */
	assert_int_equal(hm_decode_prev(*state, count_ops, sizeof(count_ops), COUNT_OPS_START,
					0x4011e3, &in), 0);
	assert_int_equal(in.addr, 0x4011e0);
	expect_one(&in, HM_ACC_LOAD, HM_REG_DI, HM_REG_NONE, 1, 0, 8);

	/* the last instruction: ip is the function's end */
	assert_int_equal(hm_decode_prev(*state, count_ops, sizeof(count_ops), COUNT_OPS_START,
					COUNT_OPS_START + sizeof(count_ops), &in), 0);
	assert_int_equal(in.addr, 0x401204);
	assert_true(in.is_ret);
}

static void test_prev_mid_instruction_ip_fails(void **state)
{
	struct hm_insn in;

	for (uint64_t ip = 0x4011e8; ip < 0x4011ea; ip++)
		assert_int_equal(hm_decode_prev(*state, count_ops, sizeof(count_ops),
						COUNT_OPS_START, ip, &in), -1);
	/* inside the 9-byte nop */
	assert_int_equal(hm_decode_prev(*state, count_ops, sizeof(count_ops), COUNT_OPS_START,
					0x4011dc, &in), -1);
}

static void test_prev_out_of_range_fails(void **state)
{
	struct hm_insn in;

	assert_int_equal(hm_decode_prev(*state, count_ops, sizeof(count_ops), COUNT_OPS_START,
					COUNT_OPS_START, &in), -1);
	assert_int_equal(hm_decode_prev(*state, count_ops, sizeof(count_ops), COUNT_OPS_START,
					COUNT_OPS_START - 1, &in), -1);
	assert_int_equal(hm_decode_prev(*state, count_ops, sizeof(count_ops), COUNT_OPS_START,
					COUNT_OPS_START + sizeof(count_ops) + 1, &in), -1);
}

static void test_prev_stops_at_undecodable_bytes(void **state)
{
	/* mov rdx, [rdi]; then data that is not code; the ip lies past it */
	static const uint8_t code[] = { 0x48, 0x8b, 0x17, 0x06, 0x06, 0x48, 0x89, 0x17, 0xc3 };
	struct hm_insn in;

	assert_int_equal(hm_decode_prev(*state, code, sizeof(code), ADDR, ADDR + 3, &in), 0);
	assert_int_equal(in.addr, ADDR);
	assert_int_equal(hm_decode_prev(*state, code, sizeof(code), ADDR, ADDR + 8, &in), -1);
	/* the walk runs without detail; decoding afterwards has it again */
	DECODE(&in, 0x48, 0x89, 0x47, 0x08);	/* mov qword ptr [rdi + 8], rax */
	expect_one(&in, HM_ACC_STORE, HM_REG_DI, HM_REG_NONE, 1, 8, 8);
}

/* gcc 12 -O2 -fno-pie -ftls-model=local-exec -fcf-protection=none, linked with
 * ld -Ttext=0x401100 (table at 0x402000, tls_hits at fs:-8):
 *	struct item { int key; short flags; char tag; long val; long pad[3]; };
 *	struct item table[64];
 *	__thread unsigned long tls_hits;
 *	long lookup(int key, struct item *out)
 *	{
 *		for (int i = 0; i < 64; i++)
 *			if (table[i].key == key) {
 *				tls_hits++;
 *				*out = table[i];
 *				return table[i].val;
 *			}
 *		return -1;
 *	}
 */
static const uint8_t lookup[] = {
	0xba, 0x00, 0x20, 0x40, 0x00,                /* 401100: mov edx,0x402000 */
	0x31, 0xc0,                                  /* 401105: xor eax,eax */
	0xeb, 0x13,                                  /* 401107: jmp 40111c <lookup+0x1c> */
	0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00,    /* 401109: nop DWORD PTR [rax+0x0] */
	0x83, 0xc0, 0x01,                            /* 401110: add eax,0x1 */
	0x48, 0x83, 0xc2, 0x28,                      /* 401113: add rdx,0x28 */
	0x83, 0xf8, 0x40,                            /* 401117: cmp eax,0x40 */
	0x74, 0x4c,                                  /* 40111a: je 401168 <lookup+0x68> */
	0x39, 0x3a,                                  /* 40111c: cmp DWORD PTR [rdx],edi */
	0x75, 0xf0,                                  /* 40111e: jne 401110 <lookup+0x10> */
	0x64, 0x48, 0x83, 0x04, 0x25, 0xf8, 0xff, 0xff, 0xff, 0x01, /* 401120: add QWORD PTR fs:0xfffffffffffffff8,0x1 */
	0x48, 0x98,                                  /* 40112a: cdqe */
	0x48, 0x8d, 0x04, 0x80,                      /* 40112c: lea rax,[rax+rax*4] */
	0x48, 0xc1, 0xe0, 0x03,                      /* 401130: shl rax,0x3 */
	0xf3, 0x0f, 0x6f, 0x80, 0x00, 0x20, 0x40, 0x00, /* 401134: movdqu xmm0,XMMWORD PTR [rax+0x402000] */
	0x48, 0x8d, 0x90, 0x00, 0x20, 0x40, 0x00,    /* 40113c: lea rdx,[rax+0x402000] */
	0x0f, 0x11, 0x06,                            /* 401143: movups XMMWORD PTR [rsi],xmm0 */
	0xf3, 0x0f, 0x6f, 0x88, 0x10, 0x20, 0x40, 0x00, /* 401146: movdqu xmm1,XMMWORD PTR [rax+0x402010] */
	0x0f, 0x11, 0x4e, 0x10,                      /* 40114e: movups XMMWORD PTR [rsi+0x10],xmm1 */
	0x48, 0x8b, 0x80, 0x20, 0x20, 0x40, 0x00,    /* 401152: mov rax,QWORD PTR [rax+0x402020] */
	0x48, 0x89, 0x46, 0x20,                      /* 401159: mov QWORD PTR [rsi+0x20],rax */
	0x48, 0x8b, 0x42, 0x08,                      /* 40115d: mov rax,QWORD PTR [rdx+0x8] */
	0xc3,                                        /* 401161: ret */
	0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00,          /* 401162: nop WORD PTR [rax+rax*1+0x0] */
	0x48, 0xc7, 0xc0, 0xff, 0xff, 0xff, 0xff,    /* 401168: mov rax,0xffffffffffffffff */
	0xc3,                                        /* 40116f: ret */
};
#define LOOKUP_START 0x401100ULL

struct want_mem {
	uint64_t addr;
	enum hm_memacc acc;
	int base, seg;
	int64_t disp;
	uint32_t size;
	uint8_t implicit;
};

static void test_real_function_decodes_every_access(void **state)
{
	static const struct want_mem want[] = {
		{ 0x40111c, HM_ACC_LOAD, HM_REG_DX, HM_SEG_NONE, 0, 4, 0 },	/* table[i].key */
		{ 0x401120, HM_ACC_RMW, HM_REG_NONE, HM_SEG_FS, -8, 8, 0 },	/* tls_hits++ */
		{ 0x401134, HM_ACC_LOAD, HM_REG_AX, HM_SEG_NONE, 0x402000, 16, 0 },
		{ 0x401143, HM_ACC_STORE, HM_REG_SI, HM_SEG_NONE, 0, 16, 0 },	/* movups */
		{ 0x401146, HM_ACC_LOAD, HM_REG_AX, HM_SEG_NONE, 0x402010, 16, 0 },
		{ 0x40114e, HM_ACC_STORE, HM_REG_SI, HM_SEG_NONE, 0x10, 16, 0 },
		{ 0x401152, HM_ACC_LOAD, HM_REG_AX, HM_SEG_NONE, 0x402020, 8, 0 },
		{ 0x401159, HM_ACC_STORE, HM_REG_SI, HM_SEG_NONE, 0x20, 8, 0 },
		{ 0x40115d, HM_ACC_LOAD, HM_REG_DX, HM_SEG_NONE, 8, 8, 0 },	/* .val */
		{ 0x401161, HM_ACC_LOAD, HM_REG_SP, HM_SEG_NONE, 0, 8, 1 },	/* ret */
		{ 0x40116f, HM_ACC_LOAD, HM_REG_SP, HM_SEG_NONE, 0, 8, 1 },	/* ret */
	};
	const uint64_t fs_base = 0x7ffff7d8a740;
	size_t off = 0, n = 0, insns = 0;
	struct hm_insn in;
	uint64_t ea;
	int needs;

	while (off < sizeof(lookup)) {
		assert_int_equal(hm_decode_insn(*state, lookup + off, sizeof(lookup) - off,
						LOOKUP_START + off, &in), 0);
		for (uint32_t i = 0; i < in.nr_mem; i++, n++) {
			const struct want_mem *w = &want[n];

			assert_true(n < sizeof(want) / sizeof(want[0]));
			assert_int_equal(in.addr, w->addr);
			assert_int_equal(in.mem[i].access, w->acc);
			assert_int_equal(in.mem[i].base, w->base);
			assert_int_equal(in.mem[i].index, HM_REG_NONE);
			assert_int_equal(in.mem[i].segment, w->seg);
			assert_int_equal(in.mem[i].disp, w->disp);
			assert_int_equal(in.mem[i].size, w->size);
			assert_int_equal(in.mem[i].implicit, w->implicit);
		}
		if (in.addr == 0x401120) {
			/* tls_hits sits just below the thread pointer */
			assert_int_equal(hm_decode_ea(&in, &in.mem[0], 0, NULL, fs_base, 0, &ea,
						      &needs), 0);
			assert_int_equal(ea, fs_base - 8);
			assert_int_equal(needs, 0);
			/* unknown thread pointer: the offset, for matching the TLS layout */
			assert_int_equal(hm_decode_ea(&in, &in.mem[0], 0, NULL, 0, 0, &ea, &needs),
					 0);
			assert_int_equal(ea, (uint64_t)-8);
			assert_int_equal(needs, 1);
		}
		if (in.addr == 0x401107) {
			assert_true(in.is_jump);
			assert_int_equal(in.target, 0x40111c);
		}
		off += in.len;
		insns++;
	}
	assert_int_equal(off, sizeof(lookup));
	assert_int_equal(insns, 26);
	assert_int_equal(n, sizeof(want) / sizeof(want[0]));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ea_base_index_scale_disp),
		cmocka_unit_test(test_ea_missing_register_fails),
		cmocka_unit_test(test_ea_address_size_override_truncates),
		cmocka_unit_test(test_ea_fs_relative_with_and_without_base),
		cmocka_unit_test(test_ea_implicit_stack_slot),
		cmocka_unit_test(test_regs_mask_covers_gprs_and_ip),
		cmocka_unit_test(test_ea_rip_relative_points_at_global),
		cmocka_unit_test(test_prev_finds_store_before_trapped_ip),
		cmocka_unit_test(test_prev_mid_instruction_ip_fails),
		cmocka_unit_test(test_prev_out_of_range_fails),
		cmocka_unit_test(test_prev_stops_at_undecodable_bytes),
		cmocka_unit_test(test_real_function_decodes_every_access),
	};

	return cmocka_run_group_tests(tests, open_decoder, close_decoder);
}
