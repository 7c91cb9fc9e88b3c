/* symbolize/data*.c, typeinfer.c: tests/data/data_prog.c is built with gcc -O2 -g (and -O0)
 * at test time and mapped as the kernel maps a PIE; its instructions are decoded from the file
 * and given synthetic register values, as a timer sample would carry them. Globals, statics,
 * function-statics, stack structs and __thread variables must come out as their exact field;
 * builds without DWARF, mappings and stats too. Heap typing is in test_data_heap.c. */
#include "data_util.h"

static void test_global_array_of_structs_field_named(void **state)
{
	struct hm_data *d = open_data(P.bin);
	struct hm_insn in = find_insn("global_update", HM_REG_DX, 8, HM_SEG_NONE);
	uint64_t items = BASE + sym("items")->addr;
	struct regs r = regs_of(2, HM_REG_DX, items, HM_REG_AX, (uint64_t)3 * 32);
	struct hm_data_obj o = resolve_insn(d, &in, &r, 0);

	(void)state;
	assert_int_equal(o.method, HM_M_GLOBAL);
	assert_string_equal(o.object, "items");
	assert_string_equal(o.field, "items[3].count");
	assert_int_equal(o.base, items);
	assert_int_equal(o.offset, 3 * 32 + 8);
	assert_string_equal(o.module, P.bin);
	assert_non_null(o.type);
	assert_int_equal(o.type->size, 16 * 32);
	assert_null(o.hint);

	o = resolve_addr(d, items + 5 * 32 + 16);	/* a PMU sample: address only */
	assert_int_equal(o.method, HM_M_GLOBAL);
	assert_string_equal(o.field, "items[5].weight");
	hm_data_close(d);
}

static void test_static_nested_struct_field_named(void **state)
{
	struct hm_data *d = open_data(P.bin);
	uint64_t table = BASE + sym("table")->addr;
	struct hm_data_obj o = resolve_addr(d, table + 2 * 48 + 8 + 16);

	(void)state;
	assert_int_equal(o.method, HM_M_GLOBAL);
	assert_string_equal(o.object, "table");
	assert_string_equal(o.field, "table[2].it.weight");
	assert_int_equal(o.base, table);
	o = resolve_addr(d, table + 5 * 48 + 40);
	assert_string_equal(o.field, "table[5].hits");
	o = resolve_addr(d, table + 4);	/* padding after slot.id */
	assert_int_equal(o.method, HM_M_GLOBAL);
	assert_non_null(strstr(o.field, "table[0].id"));
	hm_data_close(d);
}

static void test_function_static_named_from_dwarf(void **state)
{
	struct hm_data *d = open_data(P.bin);
	/* `calls++`: the only rip-relative read-modify-write; its symbol is calls.0 */
	struct hm_insn in = find_insn_w("global_update",
					(struct want){HM_REG_RIP, 0, HM_SEG_NONE, HM_ACC_RMW, 1});
	struct hm_data_obj o = resolve_insn(d, &in, NULL, 0);

	(void)state;
	assert_int_equal(o.method, HM_M_GLOBAL);
	assert_string_equal(o.object, "calls");
	assert_string_equal(o.field, "calls");
	assert_int_equal(o.offset, 0);
	assert_non_null(o.type);
	assert_int_equal(o.type->size, 8);
	hm_data_close(d);
}

static void test_rip_relative_store_computed_from_insn(void **state)
{
	struct hm_data *d = open_data(P.bin);
	struct hm_insn in = find_insn_w("global_first",
					(struct want){HM_REG_RIP, 0, HM_SEG_NONE, HM_ACC_STORE, 1});
	struct hm_data_obj o = resolve_insn(d, &in, NULL, 0);	/* no address, no registers */

	(void)state;
	assert_int_equal(o.method, HM_M_GLOBAL);
	assert_string_equal(o.field, "items[2].weight");
	assert_int_equal(o.base, BASE + sym("items")->addr);
	assert_int_equal(o.offset, 2 * 32 + 16);
	hm_data_close(d);
}

static void test_stack_struct_field_named(void **state)
{
	struct hm_data *d = open_data(P.bin);
	/* fb is at CFA - 64 = rsp - 56 in this leaf function: b[2] at rsp - 32. */
	struct hm_insn in = find_insn("stack_work", HM_REG_SP, -0x20, HM_SEG_NONE);
	struct regs r = regs_of(2, HM_REG_SP, SP, HM_REG_DI, (uint64_t)5);
	struct hm_data_obj o = resolve_insn(d, &in, &r, 0);

	(void)state;
	assert_int_equal(o.method, HM_M_STACK);
	assert_string_equal(o.object, "struct frame_buf (stack of stack_work)");
	assert_string_equal(o.field, "fb.b[2]");
	assert_int_equal(o.base, SP - 0x38);
	assert_int_equal(o.offset, 24);
	assert_string_equal(o.module, P.bin);

	in = find_insn("stack_work", HM_REG_SP, -0x10, HM_SEG_NONE);
	o = resolve_insn(d, &in, &r, 0);
	assert_string_equal(o.field, "fb.tag");

	/* A stack address with no variable at it: unknown, but said to be the stack. */
	o = resolve_insn(d, &in, &r, SP + 0x400);
	assert_int_equal(o.method, HM_M_UNKNOWN);
	assert_string_equal(o.module, "[stack]");
	hm_data_close(d);
}

static void test_tls_counter_named_from_fs_offset(void **state)
{
	struct hm_data *d = open_data(P.bin);
	struct hm_insn in = find_insn("tls_update", HM_REG_NONE, -8, HM_SEG_FS);
	struct hm_data_obj o = resolve_insn(d, &in, NULL, 0);

	(void)state;
	assert_int_equal(o.method, HM_M_TLS);
	assert_string_equal(o.object, "tls_counter");
	assert_string_equal(o.field, "tls_counter");
	assert_int_equal(o.base, 0);	/* no thread pointer, no address */
	assert_int_equal(o.offset, 0);

	in = find_insn("tls_update", HM_REG_NONE, -0x20, HM_SEG_FS);
	o = resolve_insn(d, &in, NULL, 0x7ffff7d8a728ull);	/* with the real address */
	assert_int_equal(o.method, HM_M_TLS);
	assert_string_equal(o.object, "tls_item");
	assert_string_equal(o.field, "tls_item.count");
	assert_int_equal(o.offset, 8);
	assert_int_equal(o.base, 0x7ffff7d8a720ull);
	hm_data_close(d);
}

static void test_symtab_only_names_symbol_without_field(void **state)
{
	struct hm_data *d = open_data(P.nodebug);
	uint64_t items = BASE + sym("items")->addr;
	struct hm_insn in = find_insn("heap_one", HM_REG_DI, 0x18, HM_SEG_NONE);
	struct regs r = regs_of(2, HM_REG_DI, HEAP + 0x40, HM_REG_SP, SP);
	struct hm_data_obj o = resolve_addr(d, items + 3 * 32 + 8);

	(void)state;
	assert_int_equal(o.method, HM_M_GLOBAL);
	assert_string_equal(o.object, "items");
	assert_string_equal(o.field, "items");
	assert_int_equal(o.offset, 3 * 32 + 8);
	assert_null(o.type);
	assert_string_equal(o.module, P.nodebug);
	assert_non_null(o.hint);
	assert_non_null(strstr(o.hint, "debug"));

	o = resolve_insn(d, &in, &r, 0);	/* heap: needs DWARF */
	assert_int_equal(o.method, HM_M_UNKNOWN);
	assert_string_equal(o.module, "[heap]");
	assert_non_null(o.hint);

	in = find_insn("tls_update", HM_REG_NONE, -0x20, HM_SEG_FS);
	o = resolve_insn(d, &in, NULL, 0);
	assert_int_equal(o.method, HM_M_TLS);
	assert_string_equal(o.field, "tls_item");
	assert_int_equal(o.offset, 8);

	in = find_insn("stack_work", HM_REG_SP, -0x20, HM_SEG_NONE);
	o = resolve_insn(d, &in, &r, 0);
	assert_int_equal(o.method, HM_M_UNKNOWN);
	assert_string_equal(o.module, "[stack]");
	hm_data_close(d);
}

static void test_stripped_binary_unknown_with_module_and_hint(void **state)
{
	struct hm_data *d = open_data(P.stripped);
	uint64_t items = BASE + sym("items")->addr;
	struct hm_insn in = find_insn("heap_one", HM_REG_DI, 0x18, HM_SEG_NONE);
	struct regs r = regs_of(2, HM_REG_DI, HEAP + 0x40, HM_REG_SP, SP);
	struct hm_data_obj o = resolve_addr(d, items + 8);

	(void)state;
	assert_int_equal(o.method, HM_M_UNKNOWN);
	assert_string_equal(o.module, P.stripped);
	assert_null(o.field);
	assert_non_null(o.hint);
	o = resolve_insn(d, &in, &r, 0);
	assert_int_equal(o.method, HM_M_UNKNOWN);
	in = find_insn("tls_update", HM_REG_NONE, -8, HM_SEG_FS);
	o = resolve_insn(d, &in, NULL, 0);
	assert_int_equal(o.method, HM_M_UNKNOWN);
	in = find_insn("stack_work", HM_REG_SP, -0x20, HM_SEG_NONE);
	o = resolve_insn(d, &in, &r, 0);
	assert_int_equal(o.method, HM_M_UNKNOWN);
	hm_data_close(d);
}

static void test_debuglink_debug_file_used(void **state)
{
	struct hm_data *d = open_data(P.linked);
	uint64_t items = BASE + sym("items")->addr;
	struct hm_insn in = find_insn("heap_one", HM_REG_DI, 0x18, HM_SEG_NONE);
	struct regs r = regs_of(1, HM_REG_DI, HEAP);
	struct hm_data_obj o = resolve_addr(d, items + 3 * 32 + 8);

	(void)state;
	assert_int_equal(o.method, HM_M_GLOBAL);
	assert_string_equal(o.field, "items[3].count");
	assert_string_equal(o.module, P.linked);
	o = resolve_insn(d, &in, &r, 0);
	assert_int_equal(o.method, HM_M_HEAP);
	assert_string_equal(o.field, "item.flags");
	hm_data_close(d);
}

static void test_unmapped_and_missing_addresses(void **state)
{
	struct hm_data *d = open_data(P.bin);
	struct hm_data_query q = {.pid = PID, .ip = 0x1234};
	struct hm_data_obj o;

	(void)state;
	o = resolve_addr(d, 0x4000);	/* in no mapping */
	assert_int_equal(o.method, HM_M_UNKNOWN);
	assert_null(o.module);
	assert_null(o.field);
	o = resolve_addr(d, HEAP + 16);	/* heap, but nothing says what is there */
	assert_int_equal(o.method, HM_M_UNKNOWN);
	assert_string_equal(o.module, "[heap]");
	assert_int_equal(hm_data_resolve(d, &q, &o), 0);	/* no address at all */
	assert_int_equal(o.method, HM_M_NOADDR);
	q.pid = 999;	/* a process with no mappings */
	q.addr = BASE + sym("items")->addr;
	assert_int_equal(hm_data_resolve(d, &q, &o), 0);
	assert_int_equal(o.method, HM_M_UNKNOWN);
	assert_int_equal(hm_data_resolve(d, NULL, &o), -1);
	assert_int_equal(hm_data_add_map(d, PID, 0x1000, 0, 0, "x"), -1);
	hm_data_close(d);
}

static void test_new_mapping_replaces_what_it_overlaps(void **state)
{
	struct hm_data *d = open_data(P.bin);
	uint64_t items = BASE + sym("items")->addr;
	struct hm_data_obj o;

	(void)state;
	/* Another process maps the same file elsewhere: its own load bias. */
	for (size_t i = 0; i < B->nr_loads; i++) {
		const GElf_Phdr *ph = &B->loads[i];
		uint64_t start = 0x7f0000000000ull + (ph->p_vaddr & ~0xfffull);
		uint64_t end = 0x7f0000000000ull + ((ph->p_vaddr + ph->p_memsz + 0xfff) & ~0xfffull);

		assert_int_equal(hm_data_add_map(d, PID + 1, start, end - start,
						 ph->p_offset & ~0xfffull, P.bin), 0);
	}
	{
		struct hm_data_query q = {.pid = PID + 1,
					  .addr = 0x7f0000000000ull + sym("items")->addr + 32};

		assert_int_equal(hm_data_resolve(d, &q, &o), 0);
		assert_string_equal(o.field, "items[1].key");
		assert_int_equal(o.base, 0x7f0000000000ull + sym("items")->addr);
	}
	/* munmap + anonymous mmap over the whole image: the file is gone from there. */
	assert_int_equal(hm_data_add_map(d, PID, BASE, 0x100000, 0, "//anon"), 0);
	o = resolve_addr(d, items + 8);
	assert_int_equal(o.method, HM_M_UNKNOWN);
	assert_string_equal(o.module, "//anon");
	hm_data_close(d);
}

static void test_same_address_returns_same_strings(void **state)
{
	struct hm_data *d = open_data(P.bin);
	uint64_t items = BASE + sym("items")->addr;
	struct hm_data_obj a = resolve_addr(d, items + 3 * 32 + 8);
	struct hm_data_obj b = resolve_addr(d, items + 3 * 32 + 8);

	(void)state;
	assert_ptr_equal(a.field, b.field);
	assert_ptr_equal(a.object, b.object);
	assert_ptr_equal(a.type, b.type);
	b = resolve_addr(d, items + 4 * 32 + 8);
	assert_ptr_equal(a.object, b.object);
	assert_string_equal(b.field, "items[4].count");
	hm_data_close(d);
}

static void test_stats_count_methods_and_unresolved_ips(void **state)
{
	struct hm_data *d = open_data(P.bin);
	struct hm_insn in = find_insn("heap_one", HM_REG_DI, 0x18, HM_SEG_NONE);
	struct hm_insn tls = find_insn("tls_update", HM_REG_NONE, -8, HM_SEG_FS);
	struct regs r = regs_of(1, HM_REG_DI, HEAP);
	struct hm_data_stats st;
	struct hm_data_query q = {.pid = PID, .ip = BASE + sym("heap_one")->addr, .addr = 0x4000};
	struct hm_data_obj o;

	(void)state;
	resolve_addr(d, BASE + sym("items")->addr);
	resolve_insn(d, &in, &r, 0);
	resolve_insn(d, &in, &r, 0);
	resolve_insn(d, &tls, NULL, 0);
	for (int i = 0; i < 3; i++)
		hm_data_resolve(d, &q, &o);	/* unmapped address, from heap_one */
	hm_data_stats(d, 10, &st);
	assert_int_equal(st.total, 7);
	assert_int_equal(st.by_method[HM_M_GLOBAL], 1);
	assert_int_equal(st.by_method[HM_M_HEAP], 2);
	assert_int_equal(st.by_method[HM_M_TLS], 1);
	assert_int_equal(st.by_method[HM_M_UNKNOWN], 3);
	assert_int_equal(st.nr_top, 1);
	assert_int_equal(st.top[0].ip, q.ip);
	assert_int_equal(st.top[0].count, 3);
	assert_int_equal(st.top[0].method, HM_M_UNKNOWN);
	assert_string_equal(st.top[0].module, P.bin);
	assert_string_equal(hm_data_method_name(HM_M_HEAP), "heap");
	hm_data_stats(d, 0, &st);
	assert_int_equal(st.nr_top, 0);
	hm_data_close(d);
}

static void test_O0_frame_pointer_build_resolves_frame_and_heap(void **state)
{
	struct hm_data *d;
	struct hm_insn in;
	struct hm_data_obj o;
	struct regs r = regs_of(4, HM_REG_AX, (uint64_t)2, HM_REG_SP, SP, HM_REG_BP, SP + 0x50,
				HM_REG_DI, HEAP);
	const char *want[] = {" n ", " fb.a ", " fb.b[2] ", " fb.tag ", " i "};
	char seen[1024] = " ";
	const struct sym *s;
	uint8_t code[512];
	size_t n, off = 0;
	FILE *f;

	(void)state;
	B = &P.o0;
	d = open_data(P.o0.path);
	/* heap_one at -O0 reloads `it` from its frame slot before each access */
	in = find_insn_w("heap_one", (struct want){HM_REG_AX, 0x18, HM_SEG_NONE, HM_ACC_STORE, 0});
	r.v[0] = HEAP + 0x40;	/* rax */
	o = resolve_insn(d, &in, &r, 0);
	assert_int_equal(o.method, HM_M_HEAP);
	assert_string_equal(o.field, "item.flags");
	assert_int_equal(o.base, HEAP + 0x40);
	r.v[0] = 2;

	/* every rbp-based access of stack_work is a named local (CFA = rbp + 16) */
	s = sym("stack_work");
	f = fopen(B->path, "rb");
	assert_non_null(f);
	for (size_t i = 0; i < B->nr_loads; i++)
		if ((B->loads[i].p_flags & PF_X) && s->addr >= B->loads[i].p_vaddr &&
		    s->addr < B->loads[i].p_vaddr + B->loads[i].p_filesz)
			fseek(f, (long)(s->addr - B->loads[i].p_vaddr + B->loads[i].p_offset), SEEK_SET);
	n = fread(code, 1, s->size < sizeof(code) ? s->size : sizeof(code), f);
	fclose(f);
	while (off < n && hm_decode_insn(P.dec, code + off, n - off, BASE + s->addr + off, &in) == 0) {
		off += in.len;
		if (!in.nr_mem || in.mem[0].base != HM_REG_BP || in.mem[0].implicit)
			continue;
		o = resolve_insn(d, &in, &r, 0);
		assert_int_equal(o.method, HM_M_STACK);
		if (strlen(seen) + strlen(o.field) + 2 < sizeof(seen))
			strcat(strcat(seen, o.field), " ");
	}
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(seen, want[i]))
			fail_msg("%s not among%s", want[i], seen);
	hm_data_close(d);
	B = &P.o2;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_global_array_of_structs_field_named),
		cmocka_unit_test(test_static_nested_struct_field_named),
		cmocka_unit_test(test_function_static_named_from_dwarf),
		cmocka_unit_test(test_rip_relative_store_computed_from_insn),
		cmocka_unit_test(test_stack_struct_field_named),
		cmocka_unit_test(test_tls_counter_named_from_fs_offset),
		cmocka_unit_test(test_symtab_only_names_symbol_without_field),
		cmocka_unit_test(test_stripped_binary_unknown_with_module_and_hint),
		cmocka_unit_test(test_debuglink_debug_file_used),
		cmocka_unit_test(test_unmapped_and_missing_addresses),
		cmocka_unit_test(test_new_mapping_replaces_what_it_overlaps),
		cmocka_unit_test(test_same_address_returns_same_strings),
		cmocka_unit_test(test_stats_count_methods_and_unresolved_ips),
		cmocka_unit_test(test_O0_frame_pointer_build_resolves_frame_and_heap),
	};

	return cmocka_run_group_tests(tests, build_prog, remove_prog);
}
