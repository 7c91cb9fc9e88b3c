/* symbolize/data_btf.c and typeinfer.c's walk without DWARF. tests/data/data_prog.c is
 * built with gcc -O2 -g, given BTF (pahole -J) and stripped of its DWARF; its heap
 * accesses must be named as the DWARF build names them, from the parameter types of
 * BTF FUNC_PROTOs at function entry. The SysV argument registers are checked on
 * hand-made prototypes. When a Debian -dbg vmlinux is installed, kernel functions are
 * typed through its DWARF and through its .BTF alone, and a kernel sample goes through
 * the report's resolver (skipped otherwise). */
#include "btftype_util.h"

/* ---- SysV x86-64: which register holds parameter i at entry ---- */

static struct hm_type T_long = {.kind = HM_T_BASE, .name = "long int", .size = 8};
static struct hm_type T_int = {.kind = HM_T_BASE, .name = "int", .size = 4};
static struct hm_type T_double = {.kind = HM_T_BASE, .name = "double", .size = 8};
static struct hm_type T_i128 = {.kind = HM_T_BASE, .name = "__int128", .size = 16};
static struct hm_type T_ptr = {.kind = HM_T_PTR, .size = 8, .ref = &T_long};
static struct hm_member M_two[] = {{.name = "a", .type = &T_long, .bit_offset = 0},
				   {.name = "b", .type = &T_long, .bit_offset = 64}};
static struct hm_type T_two = {.kind = HM_T_STRUCT, .name = "two", .size = 16, .loaded = 1,
			       .nr_members = 2, .members = M_two};
static struct hm_member M_mixed[] = {{.name = "a", .type = &T_long, .bit_offset = 0},
				     {.name = "d", .type = &T_double, .bit_offset = 64}};
static struct hm_type T_mixed = {.kind = HM_T_STRUCT, .name = "mixed", .size = 16,
				 .loaded = 1, .nr_members = 2, .members = M_mixed};
static struct hm_type T_big = {.kind = HM_T_STRUCT, .name = "big", .size = 24, .loaded = 1};

static struct hm_type proto(const struct hm_type *ret, const struct hm_type **params,
			    uint32_t n)
{
	return (struct hm_type){.kind = HM_T_FUNC, .ref = ret, .nr_params = n, .params = params};
}

static void test_param_regs_follow_sysv(void **state)
{
	const struct hm_type *plain[] = {&T_ptr, &T_int, &T_ptr, &T_long, &T_ptr, &T_ptr, &T_ptr};
	const struct hm_type *fp[] = {&T_double, &T_ptr, &T_double, &T_ptr};
	const struct hm_type *big[] = {&T_big, &T_ptr};
	const struct hm_type *pair[] = {&T_two, &T_ptr, &T_i128, &T_ptr};
	const struct hm_type *full[] = {&T_long, &T_long, &T_long, &T_long, &T_long, &T_two, &T_ptr};
	const struct hm_type *mixed[] = {&T_ptr, &T_mixed, &T_ptr};
	struct hm_type f;

	(void)state;
	f = proto(&T_long, plain, 7);
	assert_int_equal(hm_ti_param_reg(&f, 0), HM_REG_DI);
	assert_int_equal(hm_ti_param_reg(&f, 1), HM_REG_SI);
	assert_int_equal(hm_ti_param_reg(&f, 2), HM_REG_DX);
	assert_int_equal(hm_ti_param_reg(&f, 3), HM_REG_CX);
	assert_int_equal(hm_ti_param_reg(&f, 4), HM_REG_R8);
	assert_int_equal(hm_ti_param_reg(&f, 5), HM_REG_R9);
	assert_int_equal(hm_ti_param_reg(&f, 6), HM_REG_NONE);	/* on the stack */
	assert_int_equal(hm_ti_param_reg(&f, 7), HM_REG_NONE);	/* no such parameter */
	f = proto(NULL, fp, 4);	/* doubles travel in xmm registers */
	assert_int_equal(hm_ti_param_reg(&f, 0), HM_REG_NONE);
	assert_int_equal(hm_ti_param_reg(&f, 1), HM_REG_DI);
	assert_int_equal(hm_ti_param_reg(&f, 3), HM_REG_SI);
	f = proto(NULL, big, 2);	/* a 24-byte struct is copied to the stack */
	assert_int_equal(hm_ti_param_reg(&f, 0), HM_REG_NONE);
	assert_int_equal(hm_ti_param_reg(&f, 1), HM_REG_DI);
	f = proto(&T_big, big + 1, 1);	/* returning it: its address comes in rdi */
	assert_int_equal(hm_ti_param_reg(&f, 0), HM_REG_SI);
	f = proto(NULL, pair, 4);	/* 16 integer bytes take two registers */
	assert_int_equal(hm_ti_param_reg(&f, 0), HM_REG_NONE);
	assert_int_equal(hm_ti_param_reg(&f, 1), HM_REG_DX);
	assert_int_equal(hm_ti_param_reg(&f, 2), HM_REG_NONE);
	assert_int_equal(hm_ti_param_reg(&f, 3), HM_REG_R9);
	f = proto(NULL, full, 7);	/* two registers needed, one left: all on the stack */
	assert_int_equal(hm_ti_param_reg(&f, 5), HM_REG_NONE);
	assert_int_equal(hm_ti_param_reg(&f, 6), HM_REG_R9);
	f = proto(NULL, mixed, 3);	/* an INTEGER+SSE struct: later ones are not guessed */
	assert_int_equal(hm_ti_param_reg(&f, 0), HM_REG_DI);
	assert_int_equal(hm_ti_param_reg(&f, 2), HM_REG_NONE);
	assert_int_equal(hm_ti_param_reg(NULL, 0), HM_REG_NONE);
	assert_int_equal(hm_ti_param_reg(&T_ptr, 0), HM_REG_NONE);
}

/* ---- A user program with BTF and no DWARF ---- */

static void test_btf_param_types_heap_object(void **state)
{
	struct hm_data *d = open_data(P.btf);
	struct hm_insn in = find_access(P.btf, BASE, "heap_one", HM_REG_DI, 0x18, 0);
	struct hm_data_obj o = resolve(d, &in, 0, 1, HM_REG_DI, HEAP + 0x40);
	struct hm_data_stats st;

	(void)state;
	assert_int_equal(o.method, HM_M_HEAP);
	assert_string_equal(o.object, "struct item");
	assert_string_equal(o.field, "item.flags");
	assert_int_equal(o.base, HEAP + 0x40);
	assert_int_equal(o.offset, 0x18);
	assert_string_equal(o.module, P.btf);
	assert_non_null(o.type);
	assert_int_equal(o.type->size, 32);
	hm_data_stats(d, 4, &st);
	assert_int_equal(st.btf, 1);
	assert_int_equal(st.by_method[HM_M_HEAP], 1);
	hm_data_close(d);
}

/* Each access as the DWARF build names it; without DWARF the walk must reach the
 * function's entry and the BTF parameter there. */
static void test_btf_walk_names_as_dwarf_does(void **state)
{
	static const struct {
		const char *func;
		int reg;
		int64_t disp;
		int acc;
		const char *field;
	} cases[] = {
		{"heap_update", HM_REG_DI, 8, HM_ACC_RMW, "item.count"},	/* loop */
		{"heap_update", HM_REG_DI, 0, HM_ACC_LOAD, "item.key"},
		{"heap_moved", HM_REG_AX, 8, 0, "item.count"},		/* copy */
		{"heap_chain", HM_REG_AX, 8, HM_ACC_RMW, "item.count"},	/* h->cur-> */
		{"heap_chain", HM_REG_DI, 8, HM_ACC_LOAD, "holder.cur"},
		{"heap_inlined", HM_REG_AX, 0x18, HM_ACC_RMW, "item.flags"},	/* p->left-> */
		{"heap_inlined", HM_REG_DI, 0x10, HM_ACC_LOAD, "pair.right"},
	};
	struct hm_data *dw = open_data(P.dwarf), *bt = open_data(P.btf);
	struct hm_data_stats st;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct hm_insn in = find_access(P.dwarf, BASE, cases[i].func, cases[i].reg,
						cases[i].disp, cases[i].acc);
		struct hm_data_obj a = resolve(dw, &in, 0, 2, cases[i].reg, HEAP + 0x100,
					       HM_REG_DI, HEAP + 0x800);
		struct hm_data_obj b = resolve(bt, &in, 0, 2, cases[i].reg, HEAP + 0x100,
					       HM_REG_DI, HEAP + 0x800);

		if (a.method != HM_M_HEAP || b.method != HM_M_HEAP || !a.field || !b.field ||
		    strcmp(a.field, cases[i].field) || strcmp(b.field, cases[i].field))
			fail_msg("%s %lld(%s): DWARF %s, BTF %s, want %s", cases[i].func,
				 (long long)cases[i].disp, hm_decode_reg_name(cases[i].reg),
				 a.method == HM_M_HEAP ? a.field : "(not heap)",
				 b.method == HM_M_HEAP ? b.field : "(not heap)", cases[i].field);
		assert_int_equal(a.offset, b.offset);
		assert_int_equal(a.base, b.base);
	}
	hm_data_stats(bt, 4, &st);
	assert_int_equal(st.btf, sizeof(cases) / sizeof(cases[0]));
	hm_data_stats(dw, 4, &st);
	assert_int_equal(st.btf, 0);
	hm_data_close(dw);
	hm_data_close(bt);
}

/* Loops without DWARF, in the shape of the kernel's filemap_read (data_prog.c's
 * loop_shapes, by hand): it->flags through r13 at the top of a loop whose body reuses r13
 * and puts the pointer back before the jump back; it->count through r15 in an inner loop
 * entered by a jump. The walk must follow the jumps back and in and reach the BTF
 * parameter (each access at an address of its own: no other access named it first). */
static void test_btf_walk_through_loops(void **state)
{
	static const struct {
		int reg;
		int64_t disp;
		const char *field;
	} cases[] = {{HM_REG_R13, 0x18, "item.flags"}, {HM_REG_R15, 8, "item.count"}};
	struct hm_data *bt = open_data(P.btf);
	struct hm_data_stats st;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t obj = HEAP + 0x10000 * (i + 1);
		struct hm_insn in = find_access(P.btf, BASE, "loop_shapes", cases[i].reg,
						cases[i].disp, HM_ACC_LOAD);
		struct hm_data_obj b = resolve(bt, &in, 0, 1, cases[i].reg, obj);

		assert_int_equal(b.method, HM_M_HEAP);
		assert_non_null(b.field);
		assert_string_equal(b.field, cases[i].field);
		assert_int_equal(b.base, obj);
	}
	hm_data_stats(bt, 4, &st);
	assert_int_equal(st.btf, 2);
	hm_data_close(bt);
}

/* A join is approximate only where a path into it may bring the register at another
 * value: typed exactly, the object is kept (an untyped access inside it is named from it,
 * symbolize/data_enclose.c); approximately, it is not (join_shapes, by hand). */
static void test_btf_exact_across_clean_joins(void **state)
{
	struct hm_data *bt = open_data(P.btf);
	struct hm_insn a = find_access(P.btf, BASE, "join_shapes", HM_REG_BX, 0x18, HM_ACC_LOAD),
		       b = find_access(P.btf, BASE, "join_shapes", HM_REG_BX, 0x8, HM_ACC_LOAD);
	uint64_t one = HEAP + 0x40000, two = HEAP + 0x50000;
	struct hm_data_obj x = resolve(bt, &a, 0, 1, HM_REG_BX, one), in;

	(void)state;
	assert_int_equal(x.method, HM_M_HEAP);
	assert_string_equal(x.field, "item.flags");
	in = (struct hm_data_obj){.method = HM_M_UNKNOWN};
	assert_int_equal(hm_data_enclose(bt, PID, 0, one + 0x10, &in), 1);
	assert_int_equal(in.base, one);
	assert_string_equal(in.field, "item.weight");
	x = resolve(bt, &b, 0, 1, HM_REG_BX, two);
	assert_int_equal(x.method, HM_M_HEAP);
	assert_string_equal(x.field, "item.count");
	in = (struct hm_data_obj){.method = HM_M_UNKNOWN};
	assert_int_equal(hm_data_enclose(bt, PID, 0, two + 0x10, &in), 0);
	hm_data_close(bt);
}

static void test_no_dwarf_no_btf_types_nothing(void **state)
{
	struct hm_data *d = open_data(P.nobtf);
	struct hm_insn in = find_access(P.nobtf, BASE, "heap_one", HM_REG_DI, 0x18, 0);
	struct hm_data_obj o = resolve(d, &in, 0, 1, HM_REG_DI, HEAP + 0x40);

	(void)state;
	assert_int_equal(o.method, HM_M_UNKNOWN);
	assert_string_equal(o.module, "[heap]");
	assert_null(o.field);
	assert_non_null(o.hint);
	assert_non_null(strstr(o.hint, "debug"));
	hm_data_close(d);
}

/* ---- The kernel ---- */

static void test_kernel_without_vmlinux_says_why(void **state)
{
	struct hm_data *d = open_data(P.dwarf);
	struct hm_data_kernel k = {.why = "kernel code bytes unavailable: pass --vmlinux"};
	struct hm_insn in = find_access(P.dwarf, BASE, "heap_one", HM_REG_DI, 0x18, 0);
	struct hm_data_obj o;
	struct hm_data_stats st;

	(void)state;
	assert_int_equal(hm_data_set_kernel(d, &k), -1);
	in.addr = 0xffffffff81000000ull;
	o = resolve(d, &in, 1, 1, HM_REG_DI, KHEAP);
	assert_int_equal(o.method, HM_M_UNKNOWN);
	assert_string_equal(o.module, "[kernel.kallsyms]");
	assert_string_equal(o.hint, k.why);
	hm_data_stats(d, 4, &st);
	assert_string_equal(st.kernel_hint, k.why);
	assert_int_equal(hm_data_set_kernel(d, &k), -1);	/* once only */
	hm_data_close(d);
}

/* Accesses of two small kernel functions through their pointer parameters, at link
 * addresses (bias 0), against vmlinux (with DWARF, or stripped to its .BTF). */
static void check_kernel(const char *vmlinux, int btf)
{
	struct hm_data *d = NULL;
	struct hm_err err = {0};
	struct hm_data_kernel k = {.vmlinux = vmlinux};
	struct hm_insn in;
	struct hm_data_obj o;
	struct hm_data_stats st;
	uint64_t size;

	assert_int_equal(hm_data_open(&d, &err), 0);
	assert_int_equal(hm_data_set_kernel(d, &k), 0);
	/* generic_permission(idmap or userns, struct inode *inode, int mask): inode->i_sb,
	 * through a copy of rsi made after the __fentry__ call. */
	in = find_access(vmlinux, 0, "generic_permission", HM_REG_BX, 0x28, HM_ACC_LOAD);
	o = resolve(d, &in, 1, 2, HM_REG_BX, KHEAP, HM_REG_SI, KHEAP);
	assert_int_equal(o.method, HM_M_HEAP);
	assert_string_equal(o.object, "struct inode");
	assert_string_equal(o.field, "inode.i_sb");
	assert_int_equal(o.base, KHEAP);
	assert_string_equal(o.module, vmlinux);
	/* mutex_is_locked(struct mutex *lock): atomic_long_read(&lock->owner). DWARF
	 * names the inlined atomic_long_read's parameter, which lives in rdi too. */
	in = find_access(vmlinux, 0, "mutex_is_locked", HM_REG_DI, 0, HM_ACC_LOAD);
	o = resolve(d, &in, 1, 1, HM_REG_DI, KHEAP);
	assert_int_equal(o.method, HM_M_HEAP);
	assert_int_equal(o.offset, 0);
	assert_string_equal(o.field, btf ? "mutex.owner.counter" : "atomic64_t.counter");
	/* getppid's current: a per-cpu variable read at %gs:its address (zero-based
	 * per-cpu data in these kernels), typed by DWARF or by BTF's per-cpu VARs. */
	in = find_seg_access(vmlinux, 0, "__x64_sys_getppid", HM_SEG_GS, HM_REG_NONE,
			     (int64_t)elf_sym(vmlinux, "current_task", STT_OBJECT, &size), 0);
	o = resolve(d, &in, 1, 0);
	assert_int_equal(o.method, HM_M_GLOBAL);
	assert_string_equal(o.object, "current_task");
	assert_string_equal(o.field, "current_task");
	assert_int_equal(o.offset, 0);
	assert_non_null(o.type);
	assert_int_equal(o.type->kind, HM_T_PTR);
	hm_data_stats(d, 4, &st);
	assert_int_equal(st.btf, btf ? 2 : 0);
	assert_null(st.kernel_hint);
	hm_data_close(d);
}

/* The vmlinux stripped of DWARF, keeping .BTF and .symtab (made once, 2 s, 80 MB). */
static const char *vmlinux_btf(void)
{
	static char path[600];

	if (!P.vmlinux[strlen("/usr/lib/debug/boot/")] || access(P.vmlinux, R_OK) != 0)
		return NULL;
	if (!path[0]) {
		snprintf(path, sizeof(path), "%s/vmlinux.btf", P.dir);
		if (run("objcopy --strip-debug %s %s", P.vmlinux, path))
			fail_msg("objcopy --strip-debug %s failed", P.vmlinux);
	}
	return path;
}

static void test_kernel_typed_through_vmlinux_dwarf_and_btf(void **state)
{
	const char *btf = vmlinux_btf();

	(void)state;
	if (!btf)
		skip();	/* no Debian -dbg vmlinux here: nothing to test against */
	check_kernel(P.vmlinux, 0);
	check_kernel(btf, 1);
}

/* A vmlinux without DWARF or .BTF (renamed away): per-cpu globals by symbol, untyped, and
 * the hint says why; with the kernel's raw BTF beside it (as /sys/kernel/btf/vmlinux),
 * typed again. */
static void test_kernel_raw_btf_when_vmlinux_has_none(void **state)
{
	const char *btf = vmlinux_btf();
	char bare[600], raw[600];
	struct hm_data *d = NULL;
	struct hm_err err = {0};
	struct hm_data_kernel k = {0};
	struct hm_data_stats st;
	struct hm_data_obj o;
	struct hm_insn gs, in;
	uint64_t size;

	(void)state;
	if (!btf)
		skip();
	snprintf(bare, sizeof(bare), "%s/vmlinux.bare", P.dir);
	snprintf(raw, sizeof(raw), "%s/vmlinux.rawbtf", P.dir);
	if (run("objcopy --rename-section .BTF=.BTF.hidden %s %s && "
		"objcopy -O binary --only-section=.BTF %s %s", btf, bare, btf, raw))
		fail_msg("objcopy failed on %s", btf);
	gs = find_seg_access(bare, 0, "__x64_sys_getppid", HM_SEG_GS, HM_REG_NONE,
			     (int64_t)elf_sym(bare, "current_task", STT_OBJECT, &size), 0);
	in = find_access(bare, 0, "generic_permission", HM_REG_BX, 0x28, HM_ACC_LOAD);

	k.vmlinux = bare;
	assert_int_equal(hm_data_open(&d, &err), 0);
	assert_int_equal(hm_data_set_kernel(d, &k), -1);
	o = resolve(d, &gs, 1, 0);
	assert_int_equal(o.method, HM_M_GLOBAL);
	assert_string_equal(o.object, "current_task");
	assert_null(o.type);
	o = resolve(d, &in, 1, 2, HM_REG_BX, KHEAP, HM_REG_SI, KHEAP);
	assert_int_equal(o.method, HM_M_UNKNOWN);
	assert_non_null(strstr(o.hint, "neither DWARF nor .BTF"));
	hm_data_stats(d, 4, &st);
	assert_non_null(st.kernel_hint);
	assert_non_null(strstr(st.kernel_hint, "--vmlinux"));
	hm_data_close(d);

	k.btf = raw;
	assert_int_equal(hm_data_open(&d, &err), 0);
	assert_int_equal(hm_data_set_kernel(d, &k), 0);
	o = resolve(d, &in, 1, 2, HM_REG_BX, KHEAP, HM_REG_SI, KHEAP);
	assert_int_equal(o.method, HM_M_HEAP);
	assert_string_equal(o.field, "inode.i_sb");
	o = resolve(d, &gs, 1, 0);
	assert_non_null(o.type);
	hm_data_stats(d, 4, &st);
	assert_null(st.kernel_hint);
	assert_int_equal(st.btf, 1);
	hm_data_close(d);
	unlink(bare);
	unlink(raw);
}

/* A kernel timer sample through the report's pipeline: KASLR from the recorded _text,
 * code bytes from --vmlinux, the interrupted registers, data typed through .BTF. */
static void test_kernel_sample_resolved_through_btf(void **state)
{
	const char *btf = vmlinux_btf();
	const uint64_t kaslr = 0x2e000000;
	struct hm_resolve_opts ro = {.vmlinux = btf, .osrelease = "not-this-kernel"};
	struct hm_perf_attr attr = {.attr = {.type = PERF_TYPE_SOFTWARE}};
	struct hm_perf_event ev = {.type = PERF_RECORD_MMAP};
	struct hm_resolver *r = NULL;
	struct hm_err err = {0};
	struct hm_access a;
	struct hm_insn in;
	uint64_t regs[24] = {0}, mask = hm_decode_regs_mask(), size, text;

	(void)state;
	if (!btf)
		skip();
	text = elf_sym(btf, "_text", STT_NOTYPE, &size);
	if (!text)
		text = 0xffffffff81000000ull;
	in = find_access(btf, kaslr, "generic_permission", HM_REG_BX, 0x28, HM_ACC_LOAD);
	assert_int_equal(hm_resolver_open(&ro, &r, &err), 0);
	ev.mmap = (struct hm_perf_mmap){.pid = (uint32_t)-1, .start = text + kaslr, .len = 1 << 24,
					.pgoff = text + kaslr, .filename = "[kernel.kallsyms]_text"};
	hm_resolver_track(r, &ev);
	memset(&ev, 0, sizeof(ev));
	ev.type = PERF_RECORD_SAMPLE;
	ev.misc = PERF_RECORD_MISC_KERNEL;
	ev.attr = &attr;
	ev.sample.ip = in.addr;
	ev.sample.pid = ev.sample.tid = PID;
	regs[__builtin_popcountll(mask & ((1ull << HM_REG_BX) - 1))] = KHEAP;
	regs[__builtin_popcountll(mask & ((1ull << HM_REG_SI) - 1))] = KHEAP;
	ev.sample.regs_intr = (struct hm_perf_regs){PERF_SAMPLE_REGS_ABI_64, mask,
						    (uint32_t)__builtin_popcountll(mask), regs};
	hm_resolver_sample(r, &ev, &a);
	assert_true(a.s.kernel);
	assert_string_equal(a.func, "generic_permission");
	assert_int_equal(a.s.addr, KHEAP + 0x28);
	assert_int_equal(a.method, HM_M_HEAP);
	assert_string_equal(a.object, "struct inode");
	assert_string_equal(a.field, "inode.i_sb");
	assert_int_equal(hm_resolver_stats(r)->kernel, 1);
	assert_int_equal(hm_resolver_stats(r)->kernel_named, 1);
	hm_resolver_close(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_param_regs_follow_sysv),
		cmocka_unit_test(test_btf_param_types_heap_object),
		cmocka_unit_test(test_btf_walk_names_as_dwarf_does),
		cmocka_unit_test(test_btf_walk_through_loops),
		cmocka_unit_test(test_btf_exact_across_clean_joins),
		cmocka_unit_test(test_no_dwarf_no_btf_types_nothing),
		cmocka_unit_test(test_kernel_without_vmlinux_says_why),
		cmocka_unit_test(test_kernel_typed_through_vmlinux_dwarf_and_btf),
		cmocka_unit_test(test_kernel_raw_btf_when_vmlinux_has_none),
		cmocka_unit_test(test_kernel_sample_resolved_through_btf),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
