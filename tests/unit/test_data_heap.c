/* symbolize/data*.c, typeinfer.c: heap objects in data_prog.c typed through pointer parameters. */
#include "data_util.h"

static void test_heap_param_field_named(void **state)
{
	struct hm_data *d = open_data(P.bin);
	struct hm_insn in = find_insn("heap_one", HM_REG_DI, 0x18, HM_SEG_NONE);
	struct regs r = regs_of(1, HM_REG_DI, HEAP + 0x40);
	struct hm_data_obj o = resolve_insn(d, &in, &r, 0);

	(void)state;
	assert_int_equal(o.method, HM_M_HEAP);
	assert_string_equal(o.object, "struct item");
	assert_string_equal(o.field, "item.flags");
	assert_int_equal(o.base, HEAP + 0x40);
	assert_int_equal(o.offset, 0x18);
	assert_string_equal(o.module, P.bin);
	assert_non_null(o.type);
	assert_string_equal(o.type->name, "item");

	in = find_insn("heap_one", HM_REG_DI, 0x10, HM_SEG_NONE);
	o = resolve_insn(d, &in, &r, 0);
	assert_string_equal(o.field, "item.weight");

	/* A PMU sample: the address, no registers; the displacement names the field. */
	in = find_insn("heap_one", HM_REG_DI, 0x18, HM_SEG_NONE);
	o = resolve_insn(d, &in, NULL, HEAP + 0x98);
	assert_int_equal(o.method, HM_M_HEAP);
	assert_string_equal(o.field, "item.flags");
	assert_int_equal(o.base, HEAP + 0x80);
	hm_data_close(d);
}

static void test_heap_array_pointer_followed_across_loop(void **state)
{
	struct hm_data *d = open_data(P.bin);
	struct hm_insn in = find_insn_w("heap_update",
					(struct want){HM_REG_DI, 8, HM_SEG_NONE, HM_ACC_RMW, 0});
	struct regs r = regs_of(2, HM_REG_DI, HEAP + 3 * 32, HM_REG_SI, (uint64_t)8);
	struct hm_data_obj o = resolve_insn(d, &in, &r, 0);

	(void)state;
	assert_int_equal(o.method, HM_M_HEAP);
	assert_string_equal(o.object, "struct item");
	assert_string_equal(o.field, "item.count");
	assert_int_equal(o.base, HEAP + 3 * 32);
	assert_int_equal(o.offset, 8);

	in = find_insn_w("heap_update", (struct want){HM_REG_DI, 0, HM_SEG_NONE, HM_ACC_LOAD, 0});
	o = resolve_insn(d, &in, &r, 0);
	assert_int_equal(o.method, HM_M_HEAP);
	assert_string_equal(o.field, "item.key");
	hm_data_close(d);
}

static void test_heap_register_copy_followed(void **state)
{
	struct hm_data *d = open_data(P.bin);
	struct hm_insn in = find_insn("heap_moved", HM_REG_AX, 8, HM_SEG_NONE);
	struct regs r = regs_of(2, HM_REG_AX, HEAP + 0x20, HM_REG_DI, HEAP + 0x20);
	struct hm_data_obj o = resolve_insn(d, &in, &r, 0);

	(void)state;
	assert_int_equal(o.method, HM_M_HEAP);
	assert_string_equal(o.field, "item.count");
	assert_int_equal(o.base, HEAP + 0x20);
	hm_data_close(d);
}

static void test_heap_pointer_member_load_followed(void **state)
{
	struct hm_data *d = open_data(P.bin);
	struct hm_insn in = find_insn_w("heap_chain",
					(struct want){HM_REG_AX, 8, HM_SEG_NONE, HM_ACC_RMW, 0});
	struct regs r = regs_of(2, HM_REG_AX, HEAP + 0x100, HM_REG_DI, HEAP + 0x800);
	struct hm_data_obj o = resolve_insn(d, &in, &r, 0);

	(void)state;
	assert_int_equal(o.method, HM_M_HEAP);
	assert_string_equal(o.object, "struct item");
	assert_string_equal(o.field, "item.count");
	assert_int_equal(o.base, HEAP + 0x100);

	/* The load itself reads holder.cur through the parameter. */
	in = find_insn_w("heap_chain", (struct want){HM_REG_DI, 8, HM_SEG_NONE, HM_ACC_LOAD, 0});
	o = resolve_insn(d, &in, &r, 0);
	assert_string_equal(o.object, "struct holder");
	assert_string_equal(o.field, "holder.cur");
	hm_data_close(d);
}

static void test_heap_pointer_reloaded_from_frame(void **state)
{
	struct hm_data *d = open_data(P.bin);
	struct hm_insn in = find_insn("heap_spilled", HM_REG_AX, 0x18, HM_SEG_NONE);
	struct regs r = regs_of(3, HM_REG_AX, HEAP + 0x40, HM_REG_DI, HEAP + 0x40, HM_REG_SP, SP);
	struct hm_data_obj o = resolve_insn(d, &in, &r, 0);

	(void)state;
	assert_int_equal(o.method, HM_M_HEAP);
	assert_string_equal(o.field, "item.flags");
	assert_int_equal(o.base, HEAP + 0x40);
	hm_data_close(d);
}

static void test_heap_inlined_parameter_typed(void **state)
{
	struct hm_data *d = open_data(P.bin);
	struct hm_insn in = find_insn_w("heap_inlined",
					(struct want){HM_REG_AX, 0x18, HM_SEG_NONE, HM_ACC_RMW, 0});
	struct regs r = regs_of(3, HM_REG_AX, HEAP + 0x20, HM_REG_DI, HEAP + 0x800,
				HM_REG_SI, (uint64_t)3);
	struct hm_data_obj o = resolve_insn(d, &in, &r, 0);

	(void)state;
	assert_int_equal(o.method, HM_M_HEAP);
	assert_string_equal(o.field, "item.flags");
	assert_int_equal(o.base, HEAP + 0x20);
	/* p->right, read through the outer function's parameter */
	in = find_insn_w("heap_inlined", (struct want){HM_REG_DI, 0x10, HM_SEG_NONE, HM_ACC_LOAD, 0});
	o = resolve_insn(d, &in, &r, 0);
	assert_string_equal(o.object, "struct pair");
	assert_string_equal(o.field, "pair.right");
	hm_data_close(d);
}

static void test_instruction_decoded_from_mapped_file(void **state)
{
	struct hm_data *d = open_data(P.bin);
	struct hm_insn in = find_insn("heap_one", HM_REG_DI, 0x18, HM_SEG_NONE);
	struct regs r = regs_of(1, HM_REG_DI, HEAP + 0x40);
	struct hm_data_query q = {.pid = PID, .ip = in.addr, .regs_mask = r.mask, .regs = r.v};
	struct hm_data_obj o;

	(void)state;
	assert_int_equal(hm_data_resolve(d, &q, &o), 0);
	assert_int_equal(o.method, HM_M_HEAP);
	assert_string_equal(o.field, "item.flags");
	hm_data_close(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_heap_param_field_named),
		cmocka_unit_test(test_heap_array_pointer_followed_across_loop),
		cmocka_unit_test(test_heap_register_copy_followed),
		cmocka_unit_test(test_heap_pointer_member_load_followed),
		cmocka_unit_test(test_heap_pointer_reloaded_from_frame),
		cmocka_unit_test(test_heap_inlined_parameter_typed),
		cmocka_unit_test(test_instruction_decoded_from_mapped_file),
	};

	return cmocka_run_group_tests(tests, build_prog_o2, remove_prog);
}
