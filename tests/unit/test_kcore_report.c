/* symbolize/data_kcore.c, resolve/resolve.c: kernel samples typed through kcore, kallsyms, raw BTF. */
#include <dirent.h>

#include "resolve/resolve.h"
#include "symbolize/data.h"
#include "kcore_util.h"

/* ---- Kernel samples through the report's resolver ---- */

/* The instruction of func (the program's, placed at base + its address) accessing
 * disp(reg), of access acc (0: any). */
static struct hm_insn find_access(uint64_t base, const char *func, int reg, int64_t disp,
				  int acc)
{
	uint64_t size = 0, at = sym_addr(P.prog, func, &size);
	const uint8_t *code = P.text + KPAD + (at - P.text_addr);
	struct hm_insn in;

	for (size_t off = 0; off < size && hm_decode_insn(P.dec, code + off, size - off,
							  base + at + off, &in) == 0;
	     off += in.len)
		for (uint32_t i = 0; i < in.nr_mem; i++)
			if (in.mem[i].base == reg && in.mem[i].disp == disp &&
			    !in.mem[i].implicit && (!acc || (int)in.mem[i].access == acc))
				return in;
	fail_msg("%s: no access to %lld(%s)", func, (long long)disp, hm_decode_reg_name(reg));
	return in;
}

static struct hm_resolver *open_resolver(const char *btf, const char *kallsyms,
					 uint64_t recorded_text)
{
	struct hm_resolve_opts ro = {.kcore = P.kcore, .kallsyms = kallsyms, .kernel_btf = btf,
				     .osrelease = "not-this-kernel"};
	struct hm_perf_event ev = {.type = PERF_RECORD_MMAP};
	struct hm_resolver *r = NULL;
	struct hm_err err = {0};

	if (hm_resolver_open(&ro, &r, &err) != 0)
		fail_msg("hm_resolver_open: %s", err.msg);
	ev.mmap = (struct hm_perf_mmap){.pid = (uint32_t)-1, .start = recorded_text,
					.len = 1 << 24, .pgoff = recorded_text,
					.filename = "[kernel.kallsyms]_text"};
	hm_resolver_track(r, &ev);
	return r;
}

/* Where a timer sample of the access in lands, and is charged to it: the next instruction
 * (docs/decode.md, Skid). */
#define AFTER(in) ((in).addr + (in).len)

/* A kernel timer sample at ip with the interrupted registers reg = val, rdi = rdi. */
static void sample(struct hm_resolver *r, uint64_t ip, int reg, uint64_t val, uint64_t rdi,
		   struct hm_access *a)
{
	struct hm_perf_attr attr = {.attr = {.type = PERF_TYPE_SOFTWARE}};
	struct hm_perf_event ev = {.type = PERF_RECORD_SAMPLE, .misc = PERF_RECORD_MISC_KERNEL};
	uint64_t regs[24] = {0}, mask = hm_decode_regs_mask();

	ev.attr = &attr;
	ev.sample.ip = ip;
	ev.sample.pid = ev.sample.tid = PID;
	regs[__builtin_popcountll(mask & ((1ull << HM_REG_DI) - 1))] = rdi;
	regs[__builtin_popcountll(mask & ((1ull << reg) - 1))] = val;
	ev.sample.regs_intr = (struct hm_perf_regs){PERF_SAMPLE_REGS_ABI_64, mask,
						    (uint32_t)__builtin_popcountll(mask), regs};
	hm_resolver_sample(r, &ev, a);
}

/* The accesses test_btftype.c names through an ELF file's .BTF, named here from the
 * kcore's bytes, kallsyms' extents and raw BTF; kallsyms from another boot (kaslr). */
static void check_heap_through_kcore(uint64_t kaslr)
{
	static const struct {
		const char *func;
		int reg;
		int64_t disp;
		int acc;
		const char *field;
	} cases[] = {
		{"heap_one", HM_REG_DI, 0x18, 0, "item.flags"},
		{"heap_update", HM_REG_DI, 8, HM_ACC_RMW, "item.count"},	/* loop */
		{"heap_moved", HM_REG_AX, 8, 0, "item.count"},		/* copy */
		{"heap_chain", HM_REG_AX, 8, HM_ACC_RMW, "item.count"},	/* h->cur-> */
		{"heap_chain", HM_REG_DI, 8, HM_ACC_LOAD, "holder.cur"},
		{"heap_inlined", HM_REG_AX, 0x18, HM_ACC_RMW, "item.flags"},	/* p->left-> */
		{"heap_inlined", HM_REG_DI, 0x10, HM_ACC_LOAD, "pair.right"},
	};
	struct hm_resolver *r;
	const struct hm_resolve_stats *rs;
	struct hm_data_stats ds;
	const uint64_t base = KTEXT + KPAD - P.text_addr + kaslr;
	const size_t n = sizeof(cases) / sizeof(cases[0]);

	r = open_resolver(P.rawbtf, P.ksyms, KTEXT + kaslr);
	for (size_t i = 0; i < n; i++) {
		struct hm_insn in = find_access(base, cases[i].func, cases[i].reg, cases[i].disp,
						cases[i].acc);
		struct hm_access a;

		sample(r, AFTER(in), cases[i].reg, KHEAP + 0x100, KHEAP + 0x800, &a);
		assert_true(a.s.kernel);
		assert_string_equal(a.func, cases[i].func);
		assert_int_equal(a.s.addr, KHEAP + 0x100 + (uint64_t)cases[i].disp);
		if (a.method != HM_M_HEAP || !a.field || strcmp(a.field, cases[i].field))
			fail_msg("%s %lld(%s): got %s, want %s", cases[i].func,
				 (long long)cases[i].disp, hm_decode_reg_name(cases[i].reg),
				 a.field ? a.field : "(none)", cases[i].field);
		assert_non_null(a.object);
	}
	rs = hm_resolver_stats(r);
	assert_int_equal(rs->kernel, n);
	assert_int_equal(rs->kernel_no_code, 0);
	assert_int_equal(rs->kernel_named, n);
	hm_data_stats(hm_resolver_data(r), 4, &ds);
	assert_int_equal(ds.btf, n);
	assert_null(ds.kernel_hint);
	hm_resolver_close(r);
}

static void test_kernel_heap_typed_through_kcore_and_btf(void **state)
{
	(void)state;
	check_heap_through_kcore(0);
	check_heap_through_kcore(0x2e000000);	/* recorded on another boot than kallsyms */
}

/* Code bytes but no types: the address is still computed, and the hint says why. */
static void test_kcore_without_btf_says_why(void **state)
{
	char missing[600];
	struct hm_resolver *r;
	struct hm_insn in = find_access(KTEXT + KPAD - P.text_addr, "heap_one", HM_REG_DI, 0x18, 0);
	struct hm_data_stats ds;
	struct hm_access a;

	(void)state;
	snprintf(missing, sizeof(missing), "%s/no.btf", P.dir);
	r = open_resolver(missing, P.ksyms, KTEXT);
	sample(r, AFTER(in), HM_REG_DI, KHEAP, KHEAP, &a);
	assert_string_equal(a.func, "heap_one");
	assert_int_equal(a.s.addr, KHEAP + 0x18);
	assert_int_equal(a.method, HM_M_UNKNOWN);
	assert_int_equal(hm_resolver_stats(r)->kernel_no_code, 0);
	hm_data_stats(hm_resolver_data(r), 4, &ds);
	assert_non_null(ds.kernel_hint);
	assert_non_null(strstr(ds.kernel_hint, P.kcore));
	assert_non_null(strstr(ds.kernel_hint, "no kernel types"));
	assert_non_null(strstr(ds.kernel_hint, "--vmlinux"));
	hm_resolver_close(r);
}

/* The store of global_first (items[2].weight = 0.5, rip-relative; its load of 0.5 reads
 * .rodata) as a kernel sample, resolved by r (which owns the access's strings). */
static struct hm_access global_first_sample(struct hm_resolver *r)
{
	uint64_t size = 0, at = sym_addr(P.prog, "global_first", &size);
	const uint8_t *code = P.text + KPAD + (at - P.text_addr);
	const uint64_t base = KTEXT + KPAD - P.text_addr;
	struct hm_insn in;
	struct hm_access a;
	size_t off = 0;

	for (; off < size && hm_decode_insn(P.dec, code + off, size - off, base + at + off,
					    &in) == 0; off += in.len)
		if (in.nr_mem && in.mem[0].base == HM_REG_RIP && in.mem[0].access == HM_ACC_STORE)
			break;
	assert_true(off < size);
	sample(r, AFTER(in), HM_REG_DI, 0, 0, &a);
	return a;
}

/* Without a vmlinux, kallsyms' data symbols name the kernel's globals (tk_core in the
 * lab's guest), untyped: name + offset, each symbol ending at the next. */
static void test_kernel_global_named_by_kallsyms_symbol(void **state)
{
	char path[600];
	uint64_t sz, items = sym_addr(P.prog, "items", &sz), table = sym_addr(P.prog, "table", &sz);
	const uint64_t base = KTEXT + KPAD - P.text_addr;
	struct hm_resolver *r = open_resolver(P.rawbtf, P.ksyms, KTEXT);
	struct hm_access a = global_first_sample(r);
	FILE *f;

	(void)state;
	assert_int_not_equal(a.method, HM_M_GLOBAL);	/* no data symbols: not named */
	hm_resolver_close(r);
	snprintf(path, sizeof(path), "%s/kallsyms.data", P.dir);
	assert_int_equal(run("cp %s %s", P.ksyms, path), 0);
	assert_non_null(f = fopen(path, "a"));
	assert_true(items && table);
	fprintf(f, "%016llx D items\n%016llx d table\n", (unsigned long long)(items + base),
		(unsigned long long)(table + base));
	fclose(f);
	r = open_resolver(P.rawbtf, path, KTEXT);
	a = global_first_sample(r);
	assert_int_equal(a.method, HM_M_GLOBAL);
	assert_string_equal(a.object, "items");
	assert_non_null(a.field);
	assert_int_equal(strncmp(a.field, "items", 5), 0);
	assert_int_equal(a.s.addr, items + base + 2 * 32 + 16);	/* items[2].weight */
	assert_int_equal(a.obj_base, items + base);
	hm_resolver_close(r);
}

/* Frame slots without DWARF (symbolize/data_kstack.c), in hand-written functions:
 * spill_shapes stores its struct item * parameter at rsp + 8 and loads it back after a
 * call (a `struct item *` local); local_by_ref passes &count at rsp + 8 as take_count's
 * `long *`, then reads count back (a `long int` local). */
static void test_kernel_frame_slots_typed(void **state)
{
	static const struct {
		const char *func, *object;
	} cases[] = {{"spill_shapes", "struct item * (stack of spill_shapes)"},
		     {"local_by_ref", "long int (stack of local_by_ref)"}};
	const uint64_t base = KTEXT + KPAD - P.text_addr, sp = 0xffffc90000a13d00ull;
	struct hm_resolver *r = open_resolver(P.rawbtf, P.ksyms, KTEXT);
	struct hm_data_stats ds;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct hm_insn in = find_access(base, cases[i].func, HM_REG_SP, 8, HM_ACC_LOAD);
		struct hm_access a;

		sample(r, AFTER(in), HM_REG_SP, sp, 0, &a);
		assert_int_equal(a.s.addr, sp + 8);
		assert_int_equal(a.method, HM_M_STACK);
		assert_string_equal(a.object, cases[i].object);
		assert_int_equal(a.obj_base, sp + 8);
	}
	hm_data_stats(hm_resolver_data(r), 4, &ds);
	assert_int_equal(ds.kernel_stack_args, 2);
	hm_resolver_close(r);
}

/* One code under two names, BTF knowing only one: the frame takes the name BTF knows.
 * A module's function is not typed through the kernel image's BTF. */
static void test_kernel_aliases_and_modules(void **state)
{
	const uint64_t base = KTEXT + KPAD - P.text_addr;
	struct hm_insn one = find_access(base, "heap_one", HM_REG_DI, 0x18, 0);
	struct hm_insn moved = find_access(base, "heap_moved", HM_REG_AX, 8, 0);
	char odd[600];
	struct hm_code *c;
	struct hm_code_loc loc;
	struct hm_resolver *r;
	struct hm_access a;
	const char *const *names;
	uint64_t size;

	(void)state;
	snprintf(odd, sizeof(odd), "%s/kallsyms.odd", P.dir);
	write_kallsyms(odd, 1);
	c = open_code(P.kcore, odd);
	assert_int_equal(hm_code_lookup(c, 0, one.addr, 1, &loc), 0);
	assert_string_equal(loc.func, "a_heap_one_alias");
	assert_int_equal(loc.func_start, base + sym_addr(P.prog, "heap_one", &size));
	assert_int_equal(hm_code_kernel_names(c, loc.func_start, &names), 2);
	assert_string_equal(names[0], "a_heap_one_alias");
	assert_string_equal(names[1], "heap_one");
	assert_int_equal(hm_code_kernel_names(c, loc.func_start + 1, &names), 0);
	assert_int_equal(hm_code_lookup(c, 0, moved.addr, 1, &loc), 0);
	assert_int_equal(hm_code_kernel_names(c, loc.func_start, &names), 1);
	assert_string_equal(names[0], "heap_moved");
	hm_code_close(c);

	r = open_resolver(P.rawbtf, odd, KTEXT);
	sample(r, AFTER(one), HM_REG_DI, KHEAP, KHEAP, &a);
	assert_string_equal(a.func, "a_heap_one_alias");
	assert_int_equal(a.method, HM_M_HEAP);
	assert_string_equal(a.field, "item.flags");
	sample(r, AFTER(moved), HM_REG_AX, KHEAP + 0x1000, KHEAP, &a);
	assert_string_equal(a.func, "heap_moved");
	assert_int_equal(a.s.addr, KHEAP + 0x1008);	/* decoded from the module's bytes */
	assert_int_equal(a.method, HM_M_UNKNOWN);
	/* inside the item heap_one typed: named from it, as any untyped kernel access */
	sample(r, AFTER(moved), HM_REG_AX, KHEAP, KHEAP, &a);
	assert_int_equal(a.method, HM_M_HEAP);
	assert_string_equal(a.field, "item.count");
	hm_resolver_close(r);
}

/* ---- A real kernel: Debian's -dbg vmlinux cut down to a kcore (optional) ---- */

/* This machine's -dbg package, else the kernel lab's (build-lab, make lab). */
static int find_vmlinux(char *vmlinux, char *map, size_t size)
{
	static const char *const dirs[] = {"/usr/lib/debug/boot", "build-lab/root/usr/lib/debug/boot"};

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		DIR *dir = opendir(dirs[i]);
		struct dirent *e;
		char best[256] = "";

		while (dir && (e = readdir(dir)))
			if (!strncmp(e->d_name, "vmlinux-", 8) && strcmp(e->d_name, best) > 0)
				snprintf(best, sizeof(best), "%s", e->d_name);
		if (dir)
			closedir(dir);
		if (!best[0])
			continue;
		snprintf(vmlinux, size, "%s/%s", dirs[i], best);
		snprintf(map, size, "%s/System.map-%s", dirs[i], best + 8);
		if (!access(vmlinux, R_OK) && !access(map, R_OK))
			return 0;
	}
	return -1;
}

/* Decodes the instruction at *off of the vmlinux function fn (size bytes, in core
 * segment s, run at fn + kaslr) into in and steps *off past it; 0 at the end. */
static int fn_insn(const struct seg *s, uint64_t fn, uint64_t size, uint64_t kaslr,
		   uint64_t *off, struct hm_insn *in)
{
	if (!fn || *off >= size)
		return 0;
	assert_int_equal(hm_decode_insn(P.dec, s->bytes + (fn - s->vaddr) + *off, size - *off,
					fn + kaslr + *off, in), 0);
	*off += in->len;
	return 1;
}

#define KSP 0xffffc90000a13d00ull	/* rsp of the kernel samples below */

/* Samples the first instruction of the vmlinux function func that accesses [rsp + disp]
 * (acc: the access, 0 any; bytes: its size, 0 any; after_call: only right after a
 * call, sampled at its own address, which is a call's return address and charged to
 * it; else at the next instruction, as a timer sample lands), with rsp = KSP. */
static struct hm_access rsp_access(struct hm_resolver *r, const char *vmlinux,
				   const struct seg *s, uint64_t kaslr, const char *func,
				   int64_t disp, int acc, uint32_t bytes, int after_call)
{
	uint64_t size = 0, fn = sym_addr(vmlinux, func, &size);
	struct hm_access a = {0};
	struct hm_insn in;
	int prev_call = 0;

	for (uint64_t off = 0; fn_insn(s, fn, size, kaslr, &off, &in); prev_call = in.is_call) {
		if (in.nr_mem != 1 || in.mem[0].base != HM_REG_SP || in.mem[0].disp != disp ||
		    (acc && (int)in.mem[0].access != acc) || (bytes && in.mem[0].size != bytes) ||
		    (after_call && !prev_call))
			continue;
		sample(r, after_call ? in.addr : AFTER(in), HM_REG_SP, KSP, 0, &a);
		break;
	}
	if (!a.func)
		fail_msg("%s: no access to [rsp + %lld] of %u bytes%s", func, (long long)disp,
			 bytes, after_call ? " after a call" : "");
	assert_int_equal(a.s.addr, KSP + (uint64_t)disp);
	return a;
}

/* Locals of the sampled frame without DWARF (symbolize/data_kstack.c), against facts of
 * this vmlinux (objdump, pahole, its DWARF):
 * - tomoyo_path_number_perm: `struct tomoyo_request_info r` lives at rsp + 0x10, its
 *   address passed in rdi to tomoyo_init_request_info; `cmp byte ptr [rsp + 0x5c]` reads
 *   r's byte 0x4c.
 * - ext4_mark_iloc_dirty(handle_t *handle, struct inode *inode, ...) spills inode to
 *   [rsp + 8] before a call and loads it back after; further on the slot holds an int
 *   (movl $0x0, then a 4-byte load), then inode again.
 * - __kmem_cache_alloc_node passes &object (its `void *object` at [rsp + 8]) as
 *   memcg_slab_post_alloc_hook's `void **p`, then loads object right after the call. */
static void check_frame_locals(struct hm_resolver *r, const char *vmlinux, const struct seg *s,
			       uint64_t kaslr)
{
	struct hm_access a = rsp_access(r, vmlinux, s, kaslr, "tomoyo_path_number_perm", 0x5c,
					0, 0, 0);

	assert_int_equal(a.method, HM_M_STACK);
	assert_string_equal(a.object, "struct tomoyo_request_info (stack of tomoyo_path_number_perm)");
	assert_int_equal(a.obj_base, KSP + 0x10);
	assert_int_equal(a.field_off, 0x4c);
	a = rsp_access(r, vmlinux, s, kaslr, "ext4_mark_iloc_dirty", 8, HM_ACC_LOAD, 8, 0);
	assert_int_equal(a.method, HM_M_STACK);
	assert_string_equal(a.object, "struct inode * (stack of ext4_mark_iloc_dirty)");
	assert_int_equal(a.obj_base, KSP + 8);
	a = rsp_access(r, vmlinux, s, kaslr, "ext4_mark_iloc_dirty", 8, HM_ACC_LOAD, 4, 0);
	assert_true(!a.object || !strstr(a.object, "struct inode *"));	/* the int */
	a = rsp_access(r, vmlinux, s, kaslr, "__kmem_cache_alloc_node", 8, HM_ACC_LOAD, 0, 1);
	assert_int_equal(a.method, HM_M_STACK);
	assert_string_equal(a.object, "void * (stack of __kmem_cache_alloc_node)");
	assert_int_equal(a.obj_base, KSP + 8);
}

/* The vmlinux's .text at its link address in a core file, its System.map as kallsyms
 * (the boot of the core), its .BTF raw; a sample recorded at a KASLR offset. */
static void test_debian_vmlinux_as_kcore(void **state)
{
	const uint64_t kaslr = 0x2e000000;
	char vmlinux[512], map[512], text[600], core[600], btf[600];
	struct hm_resolve_opts ro = {.vmlinux = "", .kallsyms = map, .kernel_btf = btf,
				     .kcore = core, .osrelease = "not-this-kernel"};
	struct hm_perf_event ev = {.type = PERF_RECORD_MMAP};
	struct hm_resolver *r = NULL;
	struct hm_err err = {0};
	struct hm_access a = {0};
	struct seg s = {0};
	uint64_t gp, size;
	GElf_Shdr sh;
	Elf *elf;
	int fd;
	FILE *f;

	(void)state;
	if (find_vmlinux(vmlinux, map, sizeof(vmlinux)) != 0)
		skip();	/* no Debian -dbg vmlinux here */
	snprintf(text, sizeof(text), "%s/vmlinux.text", P.dir);
	snprintf(core, sizeof(core), "%s/vmlinux.kcore", P.dir);
	snprintf(btf, sizeof(btf), "%s/vmlinux.rawbtf", P.dir);
	assert_non_null(elf = elf_open(vmlinux, &fd));
	assert_non_null(section(elf, ".text", &sh));
	elf_end(elf);
	close(fd);
	assert_int_equal(run("objcopy -O binary --only-section=.text %s %s && "
			     "objcopy -O binary --only-section=.BTF %s %s",
			     vmlinux, text, vmlinux, btf), 0);
	s = (struct seg){sh.sh_addr, sh.sh_size, sh.sh_size, NULL};
	assert_non_null(f = fopen(text, "rb"));
	assert_non_null(s.bytes = malloc(sh.sh_size));
	assert_int_equal(fread((void *)s.bytes, 1, sh.sh_size, f), sh.sh_size);
	fclose(f);
	write_core(core, &s, 1, BAD_NONE);

	gp = sym_addr(vmlinux, "generic_permission", &size);
	assert_true(gp >= sh.sh_addr && gp + size <= sh.sh_addr + sh.sh_size);
	assert_int_equal(hm_resolver_open(&ro, &r, &err), 0);
	ev.mmap = (struct hm_perf_mmap){.pid = (uint32_t)-1, .start = 0xffffffff81000000ull + kaslr,
					.len = 1 << 24, .pgoff = 0xffffffff81000000ull + kaslr,
					.filename = "[kernel.kallsyms]_text"};
	hm_resolver_track(r, &ev);
	/* generic_permission(idmap, struct inode *inode, int mask): inode->i_sb through rbx,
	 * a copy of rsi made after the __fentry__ call. */
	for (uint64_t off = 0; off < size;) {
		struct hm_insn in;

		assert_int_equal(hm_decode_insn(P.dec, s.bytes + (gp - sh.sh_addr) + off,
						size - off, gp + kaslr + off, &in), 0);
		off += in.len;
		if (in.nr_mem != 1 || in.mem[0].base != HM_REG_BX || in.mem[0].disp != 0x28)
			continue;
		sample(r, AFTER(in), HM_REG_BX, KHEAP, KHEAP, &a);
		break;
	}
	assert_string_equal(a.func, "generic_permission");
	assert_int_equal(a.s.addr, KHEAP + 0x28);
	assert_int_equal(a.method, HM_M_HEAP);
	assert_string_equal(a.object, "struct inode");
	assert_string_equal(a.field, "inode.i_sb");
	assert_int_equal(hm_resolver_stats(r)->kernel_named, 1);
	check_frame_locals(r, vmlinux, &s, kaslr);
	hm_resolver_close(r);
	free((void *)s.bytes);
	unlink(text);
	unlink(core);
	unlink(btf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kernel_heap_typed_through_kcore_and_btf),
		cmocka_unit_test(test_kcore_without_btf_says_why),
		cmocka_unit_test(test_kernel_aliases_and_modules),
		cmocka_unit_test(test_kernel_global_named_by_kallsyms_symbol),
		cmocka_unit_test(test_kernel_frame_slots_typed),
		cmocka_unit_test(test_debian_vmlinux_as_kcore),
	};

	return cmocka_run_group_tests(tests, kcore_setup_report, kcore_teardown);
}
