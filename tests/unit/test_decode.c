/* symbolize/decode*.c: operands, access kinds and capstone 4 quirks, one instruction at a
 * time (effective addresses and hm_decode_prev are in test_decode_ea.c). Instruction bytes
 * were assembled with GNU as (Intel syntax) and read back with objdump -d, so nothing is
 * compiled at test time. */
#include "decode_util.h"

static void test_store_to_struct_field_decoded(void **state)
{
	struct hm_insn in;

	DECODE(&in, 0x48, 0x89, 0x47, 0x08);	/* mov qword ptr [rdi + 8], rax */
	assert_string_equal(in.text, "mov qword ptr [rdi + 8], rax");
	expect_one(&in, HM_ACC_STORE, HM_REG_DI, HM_REG_NONE, 1, 8, 8);
	assert_false(in.lock);
	assert_false(in.string);
	assert_false(in.is_call || in.is_ret || in.is_jump);

	DECODE(&in, 0x66, 0x89, 0x07);	/* mov word ptr [rdi], ax */
	expect_one(&in, HM_ACC_STORE, HM_REG_DI, HM_REG_NONE, 1, 0, 2);
	DECODE(&in, 0x48, 0xc7, 0x07, 0xff, 0xff, 0xff, 0xff);	/* mov qword ptr [rdi], -1 */
	expect_one(&in, HM_ACC_STORE, HM_REG_DI, HM_REG_NONE, 1, 0, 8);
	DECODE(&in, 0x0f, 0x94, 0x07);	/* sete byte ptr [rdi] */
	expect_one(&in, HM_ACC_STORE, HM_REG_DI, HM_REG_NONE, 1, 0, 1);
}

static void test_load_with_base_index_scale_decoded(void **state)
{
	struct hm_insn in;

	DECODE(&in, 0x8b, 0x44, 0x8e, 0x10);	/* mov eax, dword ptr [rsi + rcx*4 + 0x10] */
	expect_one(&in, HM_ACC_LOAD, HM_REG_SI, HM_REG_CX, 4, 0x10, 4);
	assert_int_equal(in.regs_written, 1u << HM_REG_AX);

	DECODE(&in, 0x88, 0x0c, 0x07);	/* mov byte ptr [rdi + rax], cl */
	expect_one(&in, HM_ACC_STORE, HM_REG_DI, HM_REG_AX, 1, 0, 1);

	/* mov rax, qword ptr [rbx*8 + 0x601040]: no base */
	DECODE(&in, 0x48, 0x8b, 0x04, 0xdd, 0x40, 0x10, 0x60, 0x00);
	expect_one(&in, HM_ACC_LOAD, HM_REG_NONE, HM_REG_BX, 8, 0x601040, 8);

	DECODE(&in, 0x48, 0x8b, 0x44, 0x24, 0x10);	/* mov rax, qword ptr [rsp + 0x10] */
	expect_one(&in, HM_ACC_LOAD, HM_REG_SP, HM_REG_NONE, 1, 0x10, 8);
}

static void test_extended_registers_use_perf_numbering(void **state)
{
	struct hm_insn in;

	DECODE(&in, 0x47, 0x8b, 0x44, 0x51, 0xfc);	/* mov r8d, dword ptr [r9 + r10*2 - 4] */
	expect_one(&in, HM_ACC_LOAD, HM_REG_R9, HM_REG_R10, 2, -4, 4);
	assert_int_equal(HM_REG_R9, 17);
	assert_int_equal(HM_REG_R10, 18);
	assert_int_equal(in.regs_written, 1u << HM_REG_R8);

	DECODE(&in, 0x4a, 0x8b, 0x44, 0xed, 0x00);	/* mov rax, qword ptr [rbp + r13*8] */
	expect_one(&in, HM_ACC_LOAD, HM_REG_BP, HM_REG_R13, 8, 0, 8);
	DECODE(&in, 0x49, 0x8b, 0x45, 0x00);	/* mov rax, qword ptr [r13] */
	expect_one(&in, HM_ACC_LOAD, HM_REG_R13, HM_REG_NONE, 1, 0, 8);
	DECODE(&in, 0x4b, 0x8b, 0x04, 0x24);	/* mov rax, qword ptr [r12 + r12] */
	expect_one(&in, HM_ACC_LOAD, HM_REG_R12, HM_REG_R12, 1, 0, 8);
	assert_string_equal(hm_decode_reg_name(HM_REG_R12), "r12");
	assert_string_equal(hm_decode_reg_name(HM_REG_RIP), "rip");
	assert_string_equal(hm_decode_reg_name(12), "?");	/* DS: never a base */
}

static void test_read_modify_write_decoded(void **state)
{
	struct hm_insn in;

	DECODE(&in, 0x83, 0x03, 0x01);	/* add dword ptr [rbx], 1 */
	expect_one(&in, HM_ACC_RMW, HM_REG_BX, HM_REG_NONE, 1, 0, 4);
	DECODE(&in, 0x03, 0x03);	/* add eax, dword ptr [rbx] */
	expect_one(&in, HM_ACC_LOAD, HM_REG_BX, HM_REG_NONE, 1, 0, 4);
	DECODE(&in, 0x49, 0xff, 0x44, 0x24, 0x20);	/* inc qword ptr [r12 + 0x20] */
	expect_one(&in, HM_ACC_RMW, HM_REG_R12, HM_REG_NONE, 1, 0x20, 8);
	DECODE(&in, 0xfe, 0x0f);	/* dec byte ptr [rdi] */
	expect_one(&in, HM_ACC_RMW, HM_REG_DI, HM_REG_NONE, 1, 0, 1);
	DECODE(&in, 0x0f, 0xab, 0x07);	/* bts dword ptr [rdi], eax */
	expect_one(&in, HM_ACC_RMW, HM_REG_DI, HM_REG_NONE, 1, 0, 4);
	assert_false(in.lock);
}

static void test_lock_prefix_marks_atomic(void **state)
{
	struct hm_insn in;

	DECODE(&in, 0xf0, 0x01, 0x07);	/* lock add dword ptr [rdi], eax */
	expect_one(&in, HM_ACC_RMW, HM_REG_DI, HM_REG_NONE, 1, 0, 4);
	assert_true(in.lock);
	DECODE(&in, 0xf0, 0x0f, 0xc1, 0x47, 0x04);	/* lock xadd dword ptr [rdi + 4], eax */
	expect_one(&in, HM_ACC_RMW, HM_REG_DI, HM_REG_NONE, 1, 4, 4);
	assert_true(in.lock);
	assert_true(in.regs_written & (1u << HM_REG_AX));
	DECODE(&in, 0xf2, 0xf0, 0x01, 0x07);	/* xacquire lock add dword ptr [rdi], eax */
	assert_true(in.lock);
	DECODE(&in, 0xf0, 0x0f, 0xba, 0x2f, 0x03);	/* lock bts dword ptr [rdi], 3 */
	expect_one(&in, HM_ACC_RMW, HM_REG_DI, HM_REG_NONE, 1, 0, 4);
	assert_true(in.lock);
	DECODE(&in, 0x64, 0x66, 0xf0, 0x01, 0x07);	/* lock add word ptr fs:[rdi], ax */
	assert_true(in.lock);
	assert_int_equal(in.mem[0].segment, HM_SEG_FS);
	assert_int_equal(in.mem[0].size, 2);
	DECODE(&in, 0xf3, 0x89, 0x07);	/* xrelease mov dword ptr [rdi], eax: not locked */
	assert_false(in.lock);
}

static void test_cmpxchg_is_rmw_despite_capstone(void **state)
{
	struct hm_insn in;

	/* capstone 4.0.2 reports these operands read-only */
	DECODE(&in, 0x48, 0x0f, 0xb1, 0x37);	/* cmpxchg qword ptr [rdi], rsi */
	expect_one(&in, HM_ACC_RMW, HM_REG_DI, HM_REG_NONE, 1, 0, 8);
	assert_false(in.lock);
	assert_true(in.regs_written & (1u << HM_REG_AX));
	DECODE(&in, 0xf0, 0x48, 0x0f, 0xb1, 0x37);	/* lock cmpxchg qword ptr [rdi], rsi */
	expect_one(&in, HM_ACC_RMW, HM_REG_DI, HM_REG_NONE, 1, 0, 8);
	assert_true(in.lock);
	DECODE(&in, 0xf0, 0x48, 0x0f, 0xc7, 0x0f);	/* lock cmpxchg16b xmmword ptr [rdi] */
	expect_one(&in, HM_ACC_RMW, HM_REG_DI, HM_REG_NONE, 1, 0, 16);
	assert_true(in.lock);
	DECODE(&in, 0x0f, 0xc7, 0x0f);	/* cmpxchg8b qword ptr [rdi] */
	expect_one(&in, HM_ACC_RMW, HM_REG_DI, HM_REG_NONE, 1, 0, 8);
}

static void test_xchg_with_memory_is_implicitly_locked(void **state)
{
	struct hm_insn in;

	DECODE(&in, 0x48, 0x87, 0x07);	/* xchg qword ptr [rdi], rax (no lock prefix) */
	expect_one(&in, HM_ACC_RMW, HM_REG_DI, HM_REG_NONE, 1, 0, 8);
	assert_true(in.lock);
	assert_true(in.regs_written & (1u << HM_REG_AX));
	DECODE(&in, 0x87, 0x07);	/* xchg dword ptr [rdi], eax */
	assert_true(in.lock);
	DECODE(&in, 0x87, 0xc0);	/* xchg eax, eax: registers only */
	assert_int_equal(in.nr_mem, 0);
	assert_false(in.lock);
}

static void test_push_pop_stack_slots_are_implicit(void **state)
{
	struct hm_insn in;

	DECODE(&in, 0x53);	/* push rbx */
	assert_int_equal(in.nr_mem, 1);
	expect_mem(&in.mem[0], HM_ACC_STORE, HM_REG_SP, HM_REG_NONE, 1, -8, 8);
	assert_true(in.mem[0].implicit);
	assert_int_equal(in.regs_written, 1u << HM_REG_SP);

	DECODE(&in, 0x5b);	/* pop rbx */
	assert_int_equal(in.nr_mem, 1);
	expect_mem(&in.mem[0], HM_ACC_LOAD, HM_REG_SP, HM_REG_NONE, 1, 0, 8);
	assert_true(in.mem[0].implicit);

	DECODE(&in, 0xff, 0x37);	/* push qword ptr [rdi] */
	assert_int_equal(in.nr_mem, 2);
	expect_mem(&in.mem[0], HM_ACC_LOAD, HM_REG_DI, HM_REG_NONE, 1, 0, 8);
	assert_false(in.mem[0].implicit);
	expect_mem(&in.mem[1], HM_ACC_STORE, HM_REG_SP, HM_REG_NONE, 1, -8, 8);
	assert_true(in.mem[1].implicit);

	/* pop qword ptr [rsp + 8]: the destination is computed after rsp += 8 */
	DECODE(&in, 0x8f, 0x44, 0x24, 0x08);
	expect_mem(&in.mem[0], HM_ACC_STORE, HM_REG_SP, HM_REG_NONE, 1, 16, 8);
	expect_mem(&in.mem[1], HM_ACC_LOAD, HM_REG_SP, HM_REG_NONE, 1, 0, 8);

	DECODE(&in, 0x66, 0xff, 0x37);	/* push word ptr [rdi] */
	expect_mem(&in.mem[0], HM_ACC_LOAD, HM_REG_DI, HM_REG_NONE, 1, 0, 2);
	expect_mem(&in.mem[1], HM_ACC_STORE, HM_REG_SP, HM_REG_NONE, 1, -2, 2);

	DECODE(&in, 0xc9);	/* leave: pop rbp after rsp = rbp */
	expect_mem(&in.mem[0], HM_ACC_LOAD, HM_REG_BP, HM_REG_NONE, 1, 0, 8);
	assert_true(in.mem[0].implicit);
}

static void test_sse_avx_loads_and_stores_sized(void **state)
{
	struct hm_insn in;

	DECODE(&in, 0xf3, 0x0f, 0x6f, 0x06);	/* movdqu xmm0, xmmword ptr [rsi] */
	expect_one(&in, HM_ACC_LOAD, HM_REG_SI, HM_REG_NONE, 1, 0, 16);
	DECODE(&in, 0xf3, 0x0f, 0x7f, 0x07);	/* movdqu xmmword ptr [rdi], xmm0 */
	expect_one(&in, HM_ACC_STORE, HM_REG_DI, HM_REG_NONE, 1, 0, 16);
	DECODE(&in, 0xc5, 0xfd, 0x6f, 0x46, 0x20);	/* vmovdqa ymm0, ymmword ptr [rsi + 0x20] */
	expect_one(&in, HM_ACC_LOAD, HM_REG_SI, HM_REG_NONE, 1, 0x20, 32);
	DECODE(&in, 0xc5, 0xfd, 0x7f, 0x0f);	/* vmovdqa ymmword ptr [rdi], ymm1 */
	expect_one(&in, HM_ACC_STORE, HM_REG_DI, HM_REG_NONE, 1, 0, 32);
	DECODE(&in, 0x62, 0xf1, 0xfe, 0x48, 0x6f, 0x06);	/* vmovdqu64 zmm0, zmmword ptr [rsi] */
	expect_one(&in, HM_ACC_LOAD, HM_REG_SI, HM_REG_NONE, 1, 0, 64);
	DECODE(&in, 0x62, 0xf1, 0xfe, 0x48, 0x7f, 0x07);	/* vmovdqu64 zmmword ptr [rdi], zmm0 */
	expect_one(&in, HM_ACC_STORE, HM_REG_DI, HM_REG_NONE, 1, 0, 64);
	DECODE(&in, 0xf2, 0x0f, 0x11, 0x07);	/* movsd qword ptr [rdi], xmm0 */
	expect_one(&in, HM_ACC_STORE, HM_REG_DI, HM_REG_NONE, 1, 0, 8);
	DECODE(&in, 0xf3, 0x0f, 0x10, 0x07);	/* movss xmm0, dword ptr [rdi] */
	expect_one(&in, HM_ACC_LOAD, HM_REG_DI, HM_REG_NONE, 1, 0, 4);
	DECODE(&in, 0xc4, 0xe2, 0x7d, 0x18, 0x07);	/* vbroadcastss ymm0, dword ptr [rdi] */
	expect_one(&in, HM_ACC_LOAD, HM_REG_DI, HM_REG_NONE, 1, 0, 4);
	DECODE(&in, 0xc5, 0xf4, 0x58, 0x07);	/* vaddps ymm0, ymm1, ymmword ptr [rdi] */
	expect_one(&in, HM_ACC_LOAD, HM_REG_DI, HM_REG_NONE, 1, 0, 32);
	/* vaddps zmm0, zmm1, dword ptr [rdi]{1to16}: one element is read */
	DECODE(&in, 0x62, 0xf1, 0x74, 0x58, 0x58, 0x07);
	expect_one(&in, HM_ACC_LOAD, HM_REG_DI, HM_REG_NONE, 1, 0, 4);
}

static void test_capstone_store_quirks_corrected(void **state)
{
	struct hm_insn in;

	/* capstone 4.0.2 marks every one of these memory destinations read-only */
	DECODE(&in, 0x0f, 0x11, 0x07);	/* movups xmmword ptr [rdi], xmm0 */
	expect_one(&in, HM_ACC_STORE, HM_REG_DI, HM_REG_NONE, 1, 0, 16);
	DECODE(&in, 0x66, 0x0f, 0x7f, 0x07);	/* movdqa xmmword ptr [rdi], xmm0 */
	expect_one(&in, HM_ACC_STORE, HM_REG_DI, HM_REG_NONE, 1, 0, 16);
	DECODE(&in, 0x66, 0x0f, 0xd6, 0x07);	/* movq qword ptr [rdi], xmm0 */
	expect_one(&in, HM_ACC_STORE, HM_REG_DI, HM_REG_NONE, 1, 0, 8);
	DECODE(&in, 0x0f, 0x17, 0x07);	/* movhps qword ptr [rdi], xmm0 */
	expect_one(&in, HM_ACC_STORE, HM_REG_DI, HM_REG_NONE, 1, 0, 8);
	DECODE(&in, 0x48, 0x0f, 0xc3, 0x07);	/* movnti qword ptr [rdi], rax */
	expect_one(&in, HM_ACC_STORE, HM_REG_DI, HM_REG_NONE, 1, 0, 8);
	DECODE(&in, 0x66, 0x0f, 0xe7, 0x07);	/* movntdq xmmword ptr [rdi], xmm0 */
	expect_one(&in, HM_ACC_STORE, HM_REG_DI, HM_REG_NONE, 1, 0, 16);
	DECODE(&in, 0x66, 0x0f, 0x3a, 0x16, 0x07, 0x01);	/* pextrd dword ptr [rdi], xmm0, 1 */
	expect_one(&in, HM_ACC_STORE, HM_REG_DI, HM_REG_NONE, 1, 0, 4);
	DECODE(&in, 0x48, 0x0f, 0x38, 0xf1, 0x07);	/* movbe qword ptr [rdi], rax */
	expect_one(&in, HM_ACC_STORE, HM_REG_DI, HM_REG_NONE, 1, 0, 8);
	DECODE(&in, 0xc5, 0xf8, 0x11, 0x07);	/* vmovups xmmword ptr [rdi], xmm0 */
	expect_one(&in, HM_ACC_STORE, HM_REG_DI, HM_REG_NONE, 1, 0, 16);
	/* vextracti128 xmmword ptr [rdi], ymm0, 1 */
	DECODE(&in, 0xc4, 0xe3, 0x7d, 0x39, 0x07, 0x01);
	expect_one(&in, HM_ACC_STORE, HM_REG_DI, HM_REG_NONE, 1, 0, 16);
	/* vmaskmovps ymmword ptr [rdi], ymm1, ymm0 */
	DECODE(&in, 0xc4, 0xe2, 0x75, 0x2e, 0x07);
	expect_one(&in, HM_ACC_STORE, HM_REG_DI, HM_REG_NONE, 1, 0, 32);
	/* vmovdqu32 zmmword ptr [rdi] {k1}, zmm0 */
	DECODE(&in, 0x62, 0xf1, 0x7e, 0x49, 0x7f, 0x07);
	expect_one(&in, HM_ACC_STORE, HM_REG_DI, HM_REG_NONE, 1, 0, 64);
	DECODE(&in, 0xc5, 0xf8, 0x91, 0x0f);	/* kmovw word ptr [rdi], k1 */
	expect_one(&in, HM_ACC_STORE, HM_REG_DI, HM_REG_NONE, 1, 0, 2);
	DECODE(&in, 0xdd, 0x1f);	/* fstp qword ptr [rdi] */
	expect_one(&in, HM_ACC_STORE, HM_REG_DI, HM_REG_NONE, 1, 0, 8);
	DECODE(&in, 0xdd, 0x17);	/* fst qword ptr [rdi] */
	expect_one(&in, HM_ACC_STORE, HM_REG_DI, HM_REG_NONE, 1, 0, 8);
	DECODE(&in, 0xdb, 0x1f);	/* fistp dword ptr [rdi] */
	expect_one(&in, HM_ACC_STORE, HM_REG_DI, HM_REG_NONE, 1, 0, 4);
	DECODE(&in, 0xd9, 0x3f);	/* fnstcw word ptr [rdi] */
	expect_one(&in, HM_ACC_STORE, HM_REG_DI, HM_REG_NONE, 1, 0, 2);
	DECODE(&in, 0x0f, 0xae, 0x1f);	/* stmxcsr dword ptr [rdi] */
	expect_one(&in, HM_ACC_STORE, HM_REG_DI, HM_REG_NONE, 1, 0, 4);
	DECODE(&in, 0x0f, 0xae, 0x07);	/* fxsave [rdi]: 512 bytes, capstone says 8 */
	expect_one(&in, HM_ACC_STORE, HM_REG_DI, HM_REG_NONE, 1, 0, 512);

	/* and these the other way round */
	DECODE(&in, 0xdd, 0x27);	/* frstor [rdi]: capstone says write */
	expect_one(&in, HM_ACC_LOAD, HM_REG_DI, HM_REG_NONE, 1, 0, 108);
	DECODE(&in, 0x48, 0xd3, 0x0f);	/* ror qword ptr [rdi], cl: capstone says read */
	expect_one(&in, HM_ACC_RMW, HM_REG_DI, HM_REG_NONE, 1, 0, 8);
	DECODE(&in, 0x48, 0xc1, 0x07, 0x03);	/* rol qword ptr [rdi], 3 */
	expect_one(&in, HM_ACC_RMW, HM_REG_DI, HM_REG_NONE, 1, 0, 8);
	DECODE(&in, 0x0f, 0xae, 0x27);	/* xsave [rdi]: size depends on XCR0 */
	expect_one(&in, HM_ACC_STORE, HM_REG_DI, HM_REG_NONE, 1, 0, 0);
}

static void test_movzx_movsx_use_source_size(void **state)
{
	struct hm_insn in;

	DECODE(&in, 0x0f, 0xb6, 0x07);	/* movzx eax, byte ptr [rdi] */
	expect_one(&in, HM_ACC_LOAD, HM_REG_DI, HM_REG_NONE, 1, 0, 1);
	DECODE(&in, 0x0f, 0xb7, 0x07);	/* movzx eax, word ptr [rdi] */
	expect_one(&in, HM_ACC_LOAD, HM_REG_DI, HM_REG_NONE, 1, 0, 2);
	DECODE(&in, 0x48, 0x0f, 0xbf, 0x07);	/* movsx rax, word ptr [rdi] */
	expect_one(&in, HM_ACC_LOAD, HM_REG_DI, HM_REG_NONE, 1, 0, 2);
	DECODE(&in, 0x0f, 0xbe, 0x07);	/* movsx eax, byte ptr [rdi] */
	expect_one(&in, HM_ACC_LOAD, HM_REG_DI, HM_REG_NONE, 1, 0, 1);
	DECODE(&in, 0x48, 0x63, 0x07);	/* movsxd rax, dword ptr [rdi] */
	expect_one(&in, HM_ACC_LOAD, HM_REG_DI, HM_REG_NONE, 1, 0, 4);
}

static void test_cmp_test_bt_are_loads(void **state)
{
	struct hm_insn in;

	DECODE(&in, 0x83, 0x3f, 0x05);	/* cmp dword ptr [rdi], 5 */
	expect_one(&in, HM_ACC_LOAD, HM_REG_DI, HM_REG_NONE, 1, 0, 4);
	DECODE(&in, 0xf6, 0x07, 0x01);	/* test byte ptr [rdi], 1 (capstone 4: read-write) */
	expect_one(&in, HM_ACC_LOAD, HM_REG_DI, HM_REG_NONE, 1, 0, 1);
	DECODE(&in, 0x0f, 0xa3, 0x07);	/* bt dword ptr [rdi], eax */
	expect_one(&in, HM_ACC_LOAD, HM_REG_DI, HM_REG_NONE, 1, 0, 4);
	DECODE(&in, 0x39, 0x3a);	/* cmp dword ptr [rdx], edi */
	expect_one(&in, HM_ACC_LOAD, HM_REG_DX, HM_REG_NONE, 1, 0, 4);
}

static void test_lea_is_not_an_access(void **state)
{
	struct hm_insn in;

	DECODE(&in, 0x48, 0x8d, 0x44, 0xf7, 0x08);	/* lea rax, [rdi + rsi*8 + 8] */
	assert_int_equal(in.nr_mem, 0);
	assert_int_equal(in.regs_written, 1u << HM_REG_AX);
	DECODE(&in, 0x48, 0x8d, 0x0d, 0x4b, 0x2e, 0x00, 0x00);	/* lea rcx, [rip + 0x2e4b] */
	assert_int_equal(in.nr_mem, 0);
}

static void test_nop_with_memory_operand_is_not_an_access(void **state)
{
	struct hm_insn in;

	DECODE(&in, 0x0f, 0x1f, 0x04, 0x00);	/* nop dword ptr [rax + rax] */
	assert_int_equal(in.nr_mem, 0);
	DECODE(&in, 0x2e, 0x66, 0x0f, 0x1f, 0x04, 0x00);	/* nop word ptr cs:[rax + rax] */
	assert_int_equal(in.nr_mem, 0);
	/* nop word ptr [rax + rax + 0] */
	DECODE(&in, 0x66, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00);
	assert_int_equal(in.nr_mem, 0);
}

static void test_prefetch_and_flush_flagged_not_data(void **state)
{
	struct hm_insn in;

	DECODE(&in, 0x0f, 0x18, 0x0f);	/* prefetcht0 byte ptr [rdi] */
	expect_one(&in, HM_ACC_PREFETCH, HM_REG_DI, HM_REG_NONE, 1, 0, 1);
	assert_false(hm_access_is_data(in.mem[0].access));
	DECODE(&in, 0x0f, 0x18, 0x07);	/* prefetchnta byte ptr [rdi] */
	assert_int_equal(in.mem[0].access, HM_ACC_PREFETCH);
	DECODE(&in, 0x0f, 0x0d, 0x0f);	/* prefetchw byte ptr [rdi] */
	assert_int_equal(in.mem[0].access, HM_ACC_PREFETCH);
	DECODE(&in, 0x0f, 0xae, 0x3f);	/* clflush byte ptr [rdi] */
	expect_one(&in, HM_ACC_FLUSH, HM_REG_DI, HM_REG_NONE, 1, 0, 1);
	DECODE(&in, 0x66, 0x0f, 0xae, 0x37);	/* clwb byte ptr [rdi] */
	assert_int_equal(in.mem[0].access, HM_ACC_FLUSH);
	assert_true(hm_access_is_data(HM_ACC_RMW));
}

static void test_rep_movs_loads_rsi_stores_rdi(void **state)
{
	struct hm_insn in;

	DECODE(&in, 0xf3, 0x48, 0xa5);	/* rep movsq qword ptr [rdi], qword ptr [rsi] */
	assert_true(in.string);
	assert_true(in.rep);
	assert_int_equal(in.nr_mem, 2);
	expect_mem(&in.mem[0], HM_ACC_STORE, HM_REG_DI, HM_REG_NONE, 1, 0, 8);
	expect_mem(&in.mem[1], HM_ACC_LOAD, HM_REG_SI, HM_REG_NONE, 1, 0, 8);
	assert_true(in.regs_written & (1u << HM_REG_CX));

	DECODE(&in, 0xf3, 0xa4);	/* rep movsb */
	expect_mem(&in.mem[0], HM_ACC_STORE, HM_REG_DI, HM_REG_NONE, 1, 0, 1);
	expect_mem(&in.mem[1], HM_ACC_LOAD, HM_REG_SI, HM_REG_NONE, 1, 0, 1);

	DECODE(&in, 0xf3, 0x48, 0xab);	/* rep stosq qword ptr [rdi], rax */
	assert_true(in.string && in.rep);
	expect_one(&in, HM_ACC_STORE, HM_REG_DI, HM_REG_NONE, 1, 0, 8);

	DECODE(&in, 0xf3, 0xa6);	/* repe cmpsb: both sides read */
	assert_true(in.rep);
	expect_mem(&in.mem[0], HM_ACC_LOAD, HM_REG_SI, HM_REG_NONE, 1, 0, 1);
	expect_mem(&in.mem[1], HM_ACC_LOAD, HM_REG_DI, HM_REG_NONE, 1, 0, 1);

	DECODE(&in, 0xf2, 0xae);	/* repne scasb al, byte ptr [rdi] */
	assert_true(in.rep);
	expect_one(&in, HM_ACC_LOAD, HM_REG_DI, HM_REG_NONE, 1, 0, 1);

	DECODE(&in, 0x6c);	/* insb byte ptr [rdi], dx (capstone 4: read) */
	assert_true(in.string);
	expect_one(&in, HM_ACC_STORE, HM_REG_DI, HM_REG_NONE, 1, 0, 1);

	DECODE(&in, 0x48, 0xad);	/* lodsq: a string instruction without rep */
	assert_true(in.string);
	assert_false(in.rep);
	expect_one(&in, HM_ACC_LOAD, HM_REG_SI, HM_REG_NONE, 1, 0, 8);
}

static void test_string_movsd_not_confused_with_sse_movsd(void **state)
{
	struct hm_insn in;

	/* capstone gives both the same instruction id */
	DECODE(&in, 0xa5);	/* movsd dword ptr [rdi], dword ptr [rsi] */
	assert_true(in.string);
	assert_int_equal(in.nr_mem, 2);
	assert_int_equal(in.mem[0].size, 4);
	DECODE(&in, 0xf2, 0x0f, 0x10, 0x07);	/* movsd xmm0, qword ptr [rdi] */
	assert_false(in.string);
	assert_false(in.rep);
	expect_one(&in, HM_ACC_LOAD, HM_REG_DI, HM_REG_NONE, 1, 0, 8);
}

static void test_segment_overrides_decoded(void **state)
{
	struct hm_insn in;

	/* mov rax, qword ptr fs:[0x28] */
	DECODE(&in, 0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0x00, 0x00, 0x00);
	assert_int_equal(in.nr_mem, 1);
	expect_mem(&in.mem[0], HM_ACC_LOAD, HM_REG_NONE, HM_REG_NONE, 1, 0x28, 8);
	assert_int_equal(in.mem[0].segment, HM_SEG_FS);
	/* mov qword ptr gs:[0x10], rax */
	DECODE(&in, 0x65, 0x48, 0x89, 0x04, 0x25, 0x10, 0x00, 0x00, 0x00);
	expect_mem(&in.mem[0], HM_ACC_STORE, HM_REG_NONE, HM_REG_NONE, 1, 0x10, 8);
	assert_int_equal(in.mem[0].segment, HM_SEG_GS);
	DECODE(&in, 0x64, 0x8b, 0x00);	/* mov eax, dword ptr fs:[rax] */
	expect_mem(&in.mem[0], HM_ACC_LOAD, HM_REG_AX, HM_REG_NONE, 1, 0, 4);
	assert_int_equal(in.mem[0].segment, HM_SEG_FS);
}

static void test_gather_scatter_have_no_single_address(void **state)
{
	struct hm_insn in;
	uint64_t regs[1] = { 0x1000 }, ea = 0;

	/* vpgatherdd xmm0, dword ptr [rdi + xmm1*4], xmm2 */
	DECODE(&in, 0xc4, 0xe2, 0x69, 0x90, 0x04, 0x8f);
	assert_int_equal(in.nr_mem, 1);
	assert_true(in.mem[0].vsib);
	assert_int_equal(in.mem[0].index, HM_REG_NONE);
	assert_int_equal(in.mem[0].access, HM_ACC_LOAD);
	assert_int_equal(hm_decode_ea(&in, &in.mem[0], 1ULL << HM_REG_DI, regs, 0, 0, &ea, NULL),
			 HM_DECODE_EA_VSIB);
	/* vpscatterdd dword ptr [rdi + zmm1*4] {k1}, zmm0: capstone 4 names rcx as index */
	DECODE(&in, 0x62, 0xf2, 0x7d, 0x49, 0xa0, 0x04, 0x8f);
	assert_true(in.mem[0].vsib);
	assert_int_equal(in.mem[0].index, HM_REG_NONE);
	assert_int_equal(in.mem[0].access, HM_ACC_STORE);
}

static void test_branches_classified(void **state)
{
	struct hm_insn in;

	DECODE(&in, 0xe8, 0x10, 0x00, 0x00, 0x00);	/* call 0x401015 */
	assert_true(in.is_call);
	assert_int_equal(in.target, ADDR + 5 + 0x10);
	expect_mem(&in.mem[0], HM_ACC_STORE, HM_REG_SP, HM_REG_NONE, 1, -8, 8);
	assert_true(in.mem[0].implicit);
	DECODE(&in, 0xc3);	/* ret */
	assert_true(in.is_ret);
	expect_mem(&in.mem[0], HM_ACC_LOAD, HM_REG_SP, HM_REG_NONE, 1, 0, 8);
	DECODE(&in, 0x75, 0xdc);	/* jne 0x400fde */
	assert_true(in.is_jump);
	assert_int_equal(in.target, ADDR + 2 - 0x24);
	assert_int_equal(in.nr_mem, 0);
	DECODE(&in, 0xff, 0x50, 0x08);	/* call qword ptr [rax + 8]: loads the pointer */
	assert_true(in.is_call);
	assert_int_equal(in.target, 0);
	assert_int_equal(in.nr_mem, 2);
	expect_mem(&in.mem[0], HM_ACC_LOAD, HM_REG_AX, HM_REG_NONE, 1, 8, 8);
	assert_true(in.mem[1].implicit);
	DECODE(&in, 0xff, 0x25, 0x00, 0x20, 0x00, 0x00);	/* jmp qword ptr [rip + 0x2000] */
	assert_true(in.is_jump);
	expect_one(&in, HM_ACC_LOAD, HM_REG_RIP, HM_REG_NONE, 1, 0x2000, 8);
}

static void test_mov_reg_reg_source_reported(void **state)
{
	struct hm_insn in;

	DECODE(&in, 0x48, 0x89, 0xf8);	/* mov rax, rdi */
	assert_int_equal(in.mov_src, HM_REG_DI);
	assert_int_equal(in.regs_written, 1u << HM_REG_AX);
	assert_int_equal(in.nr_mem, 0);
	DECODE(&in, 0x89, 0xf8);	/* mov eax, edi: not a pointer copy */
	assert_int_equal(in.mov_src, HM_REG_NONE);
	DECODE(&in, 0x48, 0x8b, 0x17);	/* mov rdx, qword ptr [rdi] */
	assert_int_equal(in.mov_src, HM_REG_NONE);
	assert_int_equal(in.regs_written, 1u << HM_REG_DX);
}

static void test_invalid_or_truncated_bytes_rejected(void **state)
{
	static const uint8_t push_es[] = { 0x06 };	/* invalid in 64-bit mode */
	static const uint8_t cut[] = { 0x48, 0x89, 0x47 };	/* mov [rdi + 8], rax less disp */
	struct hm_insn in;

	assert_int_equal(hm_decode_insn(*state, push_es, sizeof(push_es), ADDR, &in), -1);
	assert_int_equal(hm_decode_insn(*state, cut, sizeof(cut), ADDR, &in), -1);
	assert_int_equal(hm_decode_insn(*state, cut, 0, ADDR, &in), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_store_to_struct_field_decoded),
		cmocka_unit_test(test_load_with_base_index_scale_decoded),
		cmocka_unit_test(test_extended_registers_use_perf_numbering),
		cmocka_unit_test(test_read_modify_write_decoded),
		cmocka_unit_test(test_lock_prefix_marks_atomic),
		cmocka_unit_test(test_cmpxchg_is_rmw_despite_capstone),
		cmocka_unit_test(test_xchg_with_memory_is_implicitly_locked),
		cmocka_unit_test(test_push_pop_stack_slots_are_implicit),
		cmocka_unit_test(test_sse_avx_loads_and_stores_sized),
		cmocka_unit_test(test_capstone_store_quirks_corrected),
		cmocka_unit_test(test_movzx_movsx_use_source_size),
		cmocka_unit_test(test_cmp_test_bt_are_loads),
		cmocka_unit_test(test_lea_is_not_an_access),
		cmocka_unit_test(test_nop_with_memory_operand_is_not_an_access),
		cmocka_unit_test(test_prefetch_and_flush_flagged_not_data),
		cmocka_unit_test(test_rep_movs_loads_rsi_stores_rdi),
		cmocka_unit_test(test_string_movsd_not_confused_with_sse_movsd),
		cmocka_unit_test(test_segment_overrides_decoded),
		cmocka_unit_test(test_gather_scatter_have_no_single_address),
		cmocka_unit_test(test_branches_classified),
		cmocka_unit_test(test_mov_reg_reg_source_reported),
		cmocka_unit_test(test_invalid_or_truncated_bytes_rejected),
	};

	return cmocka_run_group_tests(tests, open_decoder, close_decoder);
}
