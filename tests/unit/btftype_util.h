/* For test_btftype.c: data_prog.c built with DWARF, BTF or neither in P; map, find, resolve. */
#ifndef HM_TEST_BTFTYPE_UTIL_H
#define HM_TEST_BTFTYPE_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <dirent.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include "resolve/resolve.h"
#include "symbolize/data.h"
#include "symbolize/decode.h"
#include "symbolize/typeinfer.h"
#include "run_util.h"

#ifndef UNUSED
#define UNUSED __attribute__((unused))
#endif

#define SRC "tests/data/data_prog.c"
#define BASE 0x555555554000ull	/* where the kernel puts a PIE without ASLR */
#define HEAP 0x10000000ull
#define PID 100
#define KHEAP 0xffff888012345000ull	/* a kernel direct-map address */

struct bin {
	char path[512];
	GElf_Phdr loads[8];
	size_t nr_loads;
};

static struct {
	char dir[256], dwarf[512], btf[512], nobtf[512], vmlinux[512];
	struct bin b;
	struct hm_decoder *dec;
} P;

/* Address and size of symbol name of type (STT_FUNC, STT_OBJECT) in an ELF file's
 * .symtab; 0 when absent. */
static UNUSED uint64_t elf_sym(const char *path, const char *name, int type, uint64_t *size)
{
	int fd = open(path, O_RDONLY);
	Elf *elf;
	Elf_Scn *scn = NULL;
	uint64_t addr = 0;

	elf_version(EV_CURRENT);
	if (fd < 0 || !(elf = elf_begin(fd, ELF_C_READ_MMAP, NULL)))
		return 0;
	while ((scn = elf_nextscn(elf, scn)) && !addr) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB ||
		    !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *n;

			if (gelf_getsym(data, (int)i, &s) && GELF_ST_TYPE(s.st_info) == type &&
			    (n = elf_strptr(elf, sh.sh_link, s.st_name)) && !strcmp(n, name)) {
				addr = s.st_value;
				*size = s.st_size;
				break;
			}
		}
	}
	elf_end(elf);
	close(fd);
	return addr;
}

static UNUSED int read_loads(struct bin *b)
{
	int fd = open(b->path, O_RDONLY);
	Elf *elf;
	size_t nph = 0;

	elf_version(EV_CURRENT);
	if (fd < 0 || !(elf = elf_begin(fd, ELF_C_READ, NULL)))
		return -1;
	elf_getphdrnum(elf, &nph);
	for (size_t i = 0; i < nph && b->nr_loads < 8; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
			b->loads[b->nr_loads++] = ph;
	}
	elf_end(elf);
	close(fd);
	return b->nr_loads ? 0 : -1;
}

/* The newest Debian -dbg vmlinux, if any: an optional input, never required. */
static UNUSED void find_vmlinux(void)
{
	DIR *dir = opendir("/usr/lib/debug/boot");
	struct dirent *e;

	while (dir && (e = readdir(dir)))
		if (!strncmp(e->d_name, "vmlinux-", 8) &&
		    strcmp(e->d_name, P.vmlinux + strlen("/usr/lib/debug/boot/")) > 0)
			snprintf(P.vmlinux, sizeof(P.vmlinux), "/usr/lib/debug/boot/%s", e->d_name);
	if (dir)
		closedir(dir);
}

static UNUSED int setup(void **state)
{
	const char *tmp = getenv("TMPDIR");
	char cwd[512];
	struct hm_err err = {0};

	(void)state;
	unsetenv("DEBUGINFOD_URLS");	/* tests must not reach the network */
	snprintf(P.dir, sizeof(P.dir), "%s/hm_btf_XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
	snprintf(P.vmlinux, sizeof(P.vmlinux), "/usr/lib/debug/boot/");
	if (!mkdtemp(P.dir) || !getcwd(cwd, sizeof(cwd)))
		return -1;
	snprintf(P.dwarf, sizeof(P.dwarf), "%s/prog", P.dir);
	snprintf(P.btf, sizeof(P.btf), "%s/prog.btf", P.dir);
	snprintf(P.nobtf, sizeof(P.nobtf), "%s/prog.nobtf", P.dir);
	snprintf(P.b.path, sizeof(P.b.path), "%s", P.dwarf);
	/* pahole comes with dwarves (make deps); objcopy keeps .BTF, drops .debug_*. */
	if (run("gcc -O2 -g -o %s %s/" SRC, P.dwarf, cwd) ||
	    run("cp %s %s.tmp && pahole -J %s.tmp >/dev/null && objcopy --strip-debug %s.tmp %s",
		P.dwarf, P.btf, P.btf, P.btf, P.btf) ||
	    run("objcopy --strip-debug %s %s", P.dwarf, P.nobtf) ||
	    run("readelf -S %s | grep -q '\\.BTF' && ! readelf -S %s | grep -q debug_info",
		P.btf, P.btf))
		return -1;
	if (hm_decode_open(&P.dec, &err) != 0)
		return -1;
	find_vmlinux();
	return read_loads(&P.b);
}

static UNUSED int teardown(void **state)
{
	(void)state;
	hm_decode_close(P.dec);
	run("rm -rf %s", P.dir);
	return 0;
}

static UNUSED struct hm_data *open_data(const char *path)
{
	struct hm_data *d = NULL;
	struct hm_err err = {0};

	if (hm_data_open(&d, &err) != 0)
		fail_msg("hm_data_open: %s", err.msg);
	for (size_t i = 0; i < P.b.nr_loads; i++) {
		const GElf_Phdr *ph = &P.b.loads[i];
		uint64_t start = BASE + (ph->p_vaddr & ~0xfffull);
		uint64_t end = BASE + ((ph->p_vaddr + ph->p_memsz + 0xfff) & ~0xfffull);

		assert_int_equal(hm_data_add_map(d, PID, start, end - start,
						 ph->p_offset & ~0xfffull, path), 0);
	}
	assert_int_equal(hm_data_add_map(d, PID, HEAP, 1 << 20, 0, "[heap]"), 0);
	return d;
}

/* The first instruction of func (in file, at runtime address base + its address) with
 * a memory operand seg:disp(reg) of access acc (0: any). */
static UNUSED struct hm_insn find_seg_access(const char *file, uint64_t base, const char *func,
					     int seg, int reg, int64_t disp, int acc)
{
	uint64_t size = 0, at = elf_sym(file, func, STT_FUNC, &size);
	uint8_t code[512];
	FILE *f = fopen(file, "rb");
	size_t n = 0, off = 0;
	struct hm_insn in;
	struct bin b = {.nr_loads = 0};

	assert_non_null(f);
	assert_true(at != 0);
	snprintf(b.path, sizeof(b.path), "%s", file);
	assert_int_equal(read_loads(&b), 0);
	for (size_t i = 0; i < b.nr_loads; i++)
		if (at >= b.loads[i].p_vaddr && at - b.loads[i].p_vaddr < b.loads[i].p_filesz)
			fseek(f, (long)(at - b.loads[i].p_vaddr + b.loads[i].p_offset), SEEK_SET);
	n = fread(code, 1, size < sizeof(code) ? size : sizeof(code), f);
	fclose(f);
	while (off < n && hm_decode_insn(P.dec, code + off, n - off, base + at + off, &in) == 0) {
		for (uint32_t i = 0; i < in.nr_mem; i++) {
			const struct hm_memop *m = &in.mem[i];

			if (m->base == reg && m->disp == disp && !m->implicit &&
			    (int)m->segment == seg && (!acc || (int)m->access == acc)) {
				in.mem[0] = *m;
				return in;
			}
		}
		off += in.len;
	}
	fail_msg("%s: no access to %lld(%s)", func, (long long)disp, hm_decode_reg_name(reg));
	return in;
}

static UNUSED struct hm_insn find_access(const char *file, uint64_t base, const char *func,
					 int reg, int64_t disp, int acc)
{
	return find_seg_access(file, base, func, HM_SEG_NONE, reg, disp, acc);
}

static UNUSED struct hm_data_obj resolve(struct hm_data *d, const struct hm_insn *in,
					 int kernel, int nregs, ...)
{
	struct hm_data_query q = {
		.pid = PID, .tid = PID, .ip = in->addr, .insn = in, .op = &in->mem[0],
		.regs_mask = hm_decode_regs_mask(), .kernel = (uint8_t)kernel,
	};
	uint64_t regs[24] = {0};
	struct hm_data_obj o;
	va_list ap;

	va_start(ap, nregs);
	for (int i = 0; i < nregs; i++) {
		int reg = va_arg(ap, int);
		uint64_t val = va_arg(ap, uint64_t);

		regs[__builtin_popcountll(q.regs_mask & ((1ull << reg) - 1))] = val;
	}
	va_end(ap);
	q.regs = regs;
	memset(&o, 0x5a, sizeof(o));
	assert_int_equal(hm_data_resolve(d, &q, &o), 0);
	return o;
}

#endif
