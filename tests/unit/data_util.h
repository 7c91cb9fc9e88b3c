/* Shared by test_data*.c: data_prog.c built in P, mapped as a PIE; find accesses, resolve them. */
#ifndef HM_TEST_DATA_UTIL_H
#define HM_TEST_DATA_UTIL_H

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

#ifndef UNUSED
#define UNUSED __attribute__((unused))
#endif

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

static UNUSED const struct sym *sym(const char *name)
{
	for (size_t i = 0; SYMS[i]; i++)
		if (!strcmp(B->syms[i].name, name))
			return &B->syms[i];
	fail_msg("no symbol %s", name);
	return NULL;
}

static UNUSED int read_elf(struct bin *b)
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

/* Builds P.bin (-O2 -g) and, when all, its -O0, stripped and debuglink variants; opens the
 * decoder and reads the ELF facts of what it built. */
static UNUSED int build_progs(int all)
{
	const char *tmp = getenv("TMPDIR");
	char cwd[512];
	struct hm_err err = {0};

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
	if (run("gcc -O2 -g -o %s %s/" SRC, P.bin, cwd))
		return -1;
	if (all && (run("gcc -O0 -g -o %s %s/" SRC, P.o0.path, cwd) ||
		    run("strip --strip-debug -o %s %s", P.nodebug, P.bin) ||
		    run("strip -o %s %s", P.stripped, P.bin) ||
		    run("cd %s && objcopy --only-keep-debug prog prog.debug && objcopy --strip-all "
			"--add-gnu-debuglink=prog.debug prog prog.linked", P.dir)))
		return -1;
	if (hm_decode_open(&P.dec, &err) != 0)
		return -1;
	return (all && read_elf(&P.o0)) || read_elf(&P.o2) ? -1 : 0;
}

/* Group setup: every build of the program. */
static UNUSED int build_prog(void **state)
{
	(void)state;
	return build_progs(1);
}

/* Group setup: the -O2 -g build alone (P.bin, P.o2). */
static UNUSED int build_prog_o2(void **state)
{
	(void)state;
	return build_progs(0);
}

static UNUSED int remove_prog(void **state)
{
	(void)state;
	hm_decode_close(P.dec);
	run("rm -rf %s", P.dir);
	return 0;
}

/* The segments of path at BASE as the kernel maps them: the file-backed pages, then
 * the rest of .bss in anonymous memory; a heap and a stack. */
static UNUSED void map_prog(struct hm_data *d, uint32_t pid, const char *path)
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

static UNUSED struct hm_data *open_data(const char *path)
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

static UNUSED struct hm_insn find_insn_w(const char *func, struct want w)
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

static UNUSED struct hm_insn find_insn(const char *func, int base, int64_t disp, int segment)
{
	return find_insn_w(func, (struct want){base, disp, segment, 0, 0});
}

/* Sampled registers in perf's dense layout: every GPR and ip, zero unless set. */
struct regs {
	uint64_t mask, v[24];
};

static UNUSED struct regs regs_of(int nr, ...)
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

static UNUSED struct hm_data_obj resolve_insn(struct hm_data *d, const struct hm_insn *in,
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

static UNUSED struct hm_data_obj resolve_addr(struct hm_data *d, uint64_t addr)
{
	struct hm_data_query q = {.pid = PID, .tid = PID, .addr = addr};
	struct hm_data_obj o;

	assert_int_equal(hm_data_resolve(d, &q, &o), 0);
	return o;
}

#endif
