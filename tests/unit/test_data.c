/* symbolize/data*.c, typeinfer.c: tests/data/data_prog.c is built with gcc -O2 -g at test
 * time and mapped as the kernel maps a PIE; its instructions are decoded from the file and
 * given synthetic register values, as a timer sample would carry them. Each kind of
 * object (global array of structs, static, function-static, heap array through a
 * parameter, stack struct, __thread variables) must come out as its exact field. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include "symbolize/data.h"
#include "symbolize/decode.h"
#include "run_util.h"

#define SRC "tests/data/data_prog.c"
#define BASE 0x555555554000ull	/* where the kernel puts a PIE without ASLR */
#define HEAP 0x10000000ull	/* [heap] */
#define STACK_LO 0x7ffffffde000ull
#define STACK_HI 0x7ffffffff000ull
#define SP 0x7fffffffe000ull	/* sampled rsp */
#define PID 100

struct sym {
	const char *name;
	uint64_t addr, size;
};

/* One build of the program: where its functions and variables are, its segments. */
struct bin {
	char path[512];
	struct sym syms[16];
	GElf_Phdr loads[8];
	size_t nr_loads;
};

static struct {
	char dir[256];
	char bin[512], nodebug[512], stripped[512], linked[512];
	struct bin o2, o0;	/* -O2 -g (and its stripped copies), -O0 -g */
	struct hm_decoder *dec;
} P;

static struct bin *B = &P.o2;	/* the build the helpers below look into */

static const char *const SYMS[] = {"items", "table", "heap_update", "heap_one", "heap_moved",
				   "heap_chain", "heap_spilled", "heap_inlined", "global_update", "global_first",
				   "stack_work", "tls_update", NULL};

static const struct sym *sym(const char *name)
{
	for (size_t i = 0; SYMS[i]; i++)
		if (!strcmp(B->syms[i].name, name))
			return &B->syms[i];
	fail_msg("no symbol %s", name);
	return NULL;
}

static int read_elf(struct bin *b)
{
	int fd = open(b->path, O_RDONLY);
	Elf *elf;
	Elf_Scn *scn = NULL;
	size_t nph;

	elf_version(EV_CURRENT);
	if (fd < 0 || !(elf = elf_begin(fd, ELF_C_READ, NULL)))
		return -1;
	for (size_t i = 0; SYMS[i]; i++)
		b->syms[i].name = SYMS[i];
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *n;

			if (!gelf_getsym(data, (int)i, &s) || !(n = elf_strptr(elf, sh.sh_link, s.st_name)))
				continue;
			for (size_t j = 0; SYMS[j]; j++)
				if (!strcmp(n, SYMS[j])) {
					b->syms[j].addr = s.st_value;
					b->syms[j].size = s.st_size;
				}
		}
	}
	elf_getphdrnum(elf, &nph);
	for (size_t i = 0; i < nph && b->nr_loads < 8; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
			b->loads[b->nr_loads++] = ph;
	}
	elf_end(elf);
	close(fd);
	for (size_t i = 0; SYMS[i]; i++)
		if (!b->syms[i].addr)
			return -1;
	return b->nr_loads ? 0 : -1;
}

static int build_prog(void **state)
{
	const char *tmp = getenv("TMPDIR");
	char cwd[512];
	struct hm_err err = {0};

	(void)state;
	unsetenv("DEBUGINFOD_URLS");	/* tests must not reach the network */
	snprintf(P.dir, sizeof(P.dir), "%s/hm_data_XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
	if (!mkdtemp(P.dir) || !getcwd(cwd, sizeof(cwd)))
		return -1;
	snprintf(P.bin, sizeof(P.bin), "%s/prog", P.dir);
	snprintf(P.nodebug, sizeof(P.nodebug), "%s/prog.nodebug", P.dir);
	snprintf(P.stripped, sizeof(P.stripped), "%s/prog.stripped", P.dir);
	snprintf(P.linked, sizeof(P.linked), "%s/prog.linked", P.dir);
	snprintf(P.o2.path, sizeof(P.o2.path), "%s", P.bin);
	snprintf(P.o0.path, sizeof(P.o0.path), "%s/prog.O0", P.dir);
	if (run("gcc -O2 -g -o %s %s/" SRC, P.bin, cwd) ||
	    run("gcc -O0 -g -o %s %s/" SRC, P.o0.path, cwd) ||
	    run("strip --strip-debug -o %s %s", P.nodebug, P.bin) ||
	    run("strip -o %s %s", P.stripped, P.bin) ||
	    run("cd %s && objcopy --only-keep-debug prog prog.debug && objcopy --strip-all "
		"--add-gnu-debuglink=prog.debug prog prog.linked", P.dir))
		return -1;
	if (hm_decode_open(&P.dec, &err) != 0)
		return -1;
	return read_elf(&P.o0) || read_elf(&P.o2) ? -1 : 0;
}

static int remove_prog(void **state)
{
	(void)state;
	hm_decode_close(P.dec);
	run("rm -rf %s", P.dir);
	return 0;
}

/* The segments of path at BASE as the kernel maps them: the file-backed pages, then
 * the rest of .bss in anonymous memory; a heap and a stack. */
static void map_prog(struct hm_data *d, uint32_t pid, const char *path)
{
	for (size_t i = 0; i < B->nr_loads; i++) {
		const GElf_Phdr *ph = &B->loads[i];
		uint64_t start = BASE + (ph->p_vaddr & ~0xfffull);
		uint64_t fend = BASE + ((ph->p_vaddr + ph->p_filesz + 0xfff) & ~0xfffull);
		uint64_t mend = BASE + ((ph->p_vaddr + ph->p_memsz + 0xfff) & ~0xfffull);

		assert_int_equal(hm_data_add_map(d, pid, start, fend - start,
						 ph->p_offset & ~0xfffull, path), 0);
		if (mend > fend)
			assert_int_equal(hm_data_add_map(d, pid, fend, mend - fend, 0, "//anon"), 0);
	}
	assert_int_equal(hm_data_add_map(d, pid, HEAP, 1 << 20, 0, "[heap]"), 0);
	assert_int_equal(hm_data_add_map(d, pid, STACK_LO, STACK_HI - STACK_LO, 0, "[stack]"), 0);
}

static struct hm_data *open_data(const char *path)
{
	struct hm_data *d = NULL;
	struct hm_err err = {0};

	if (hm_data_open(&d, &err) != 0)
		fail_msg("hm_data_open: %s", err.msg);
	map_prog(d, PID, path);
	return d;
}

/* What to look for in a function: a memory operand disp(base) on segment, of access
 * acc (0: any); disp is ignored for rip-relative operands when any_disp. */
struct want {
	int base;
	int64_t disp;
	int segment, acc, any_disp;
};

static struct hm_insn find_insn_w(const char *func, struct want w)
{
	const struct sym *s = sym(func);
	uint8_t code[256];
	FILE *f = fopen(B->path, "rb");
	size_t n, off = 0;
	struct hm_insn in;

	assert_non_null(f);
	/* file offset = vaddr - p_vaddr + p_offset of the executable segment */
	for (size_t i = 0; i < B->nr_loads; i++)
		if ((B->loads[i].p_flags & PF_X) && s->addr >= B->loads[i].p_vaddr &&
		    s->addr < B->loads[i].p_vaddr + B->loads[i].p_filesz)
			fseek(f, (long)(s->addr - B->loads[i].p_vaddr + B->loads[i].p_offset), SEEK_SET);
	n = fread(code, 1, s->size < sizeof(code) ? s->size : sizeof(code), f);
	fclose(f);
	while (off < n && hm_decode_insn(P.dec, code + off, n - off, BASE + s->addr + off, &in) == 0) {
		for (uint32_t i = 0; i < in.nr_mem; i++) {
			const struct hm_memop *m = &in.mem[i];

			if (m->base == w.base && (w.any_disp || m->disp == w.disp) &&
			    m->segment == w.segment && !m->implicit &&
			    (!w.acc || (int)m->access == w.acc)) {
				in.mem[0] = *m;
				return in;
			}
		}
		off += in.len;
	}
	fail_msg("%s: no access to %lld(%s)", func, (long long)w.disp, hm_decode_reg_name(w.base));
	return in;
}

static struct hm_insn find_insn(const char *func, int base, int64_t disp, int segment)
{
	return find_insn_w(func, (struct want){base, disp, segment, 0, 0});
}

/* Sampled registers in perf's dense layout: every GPR and ip, zero unless set. */
struct regs {
	uint64_t mask, v[24];
};

static struct regs regs_of(int nr, ...)
{
	struct regs r = {.mask = hm_decode_regs_mask()};
	va_list ap;

	va_start(ap, nr);
	for (int i = 0; i < nr; i++) {
		int reg = va_arg(ap, int);
		uint64_t val = va_arg(ap, uint64_t);

		r.v[__builtin_popcountll(r.mask & ((1ull << reg) - 1))] = val;
	}
	va_end(ap);
	return r;
}

static struct hm_data_obj resolve_insn(struct hm_data *d, const struct hm_insn *in,
				       const struct regs *r, uint64_t addr)
{
	struct hm_data_query q = {
		.pid = PID, .tid = PID, .addr = addr, .ip = in->addr, .insn = in, .op = &in->mem[0],
		.regs_mask = r ? r->mask : 0, .regs = r ? r->v : NULL,
	};
	struct hm_data_obj o;

	memset(&o, 0x5a, sizeof(o));
	assert_int_equal(hm_data_resolve(d, &q, &o), 0);
	return o;
}

static struct hm_data_obj resolve_addr(struct hm_data *d, uint64_t addr)
{
	struct hm_data_query q = {.pid = PID, .tid = PID, .addr = addr};
	struct hm_data_obj o;

	assert_int_equal(hm_data_resolve(d, &q, &o), 0);
	return o;
}

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
		cmocka_unit_test(test_heap_param_field_named),
		cmocka_unit_test(test_heap_array_pointer_followed_across_loop),
		cmocka_unit_test(test_heap_register_copy_followed),
		cmocka_unit_test(test_heap_pointer_member_load_followed),
		cmocka_unit_test(test_heap_pointer_reloaded_from_frame),
		cmocka_unit_test(test_heap_inlined_parameter_typed),
		cmocka_unit_test(test_stack_struct_field_named),
		cmocka_unit_test(test_tls_counter_named_from_fs_offset),
		cmocka_unit_test(test_instruction_decoded_from_mapped_file),
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
