/* Shared by test_kcore*.c: data_prog.c's .text in fake kcore files, its kallsyms and raw BTF. */
#ifndef HM_TEST_KCORE_UTIL_H
#define HM_TEST_KCORE_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include "symbolize/code.h"
#include "symbolize/decode.h"
#include "run_util.h"

#ifndef UNUSED
#define UNUSED __attribute__((unused))
#endif

#define SRC "tests/data/data_prog.c"
#define KTEXT 0xffffffff81000000ull	/* the kernel's _text without KASLR */
#define KPAD 0x1000ull			/* the program's .text starts this far after it */
#define SEG_A 0x10000ull		/* segment A: [KTEXT, KTEXT + SEG_A) */
#define SEG_B 0x1000ull			/* segment B follows A in memory, not in the file */
#define KGAP 0xffffffff82000000ull	/* no segment here */
#define KNOBYTES 0xffffffff83000000ull	/* a segment with p_filesz 0 */
#define KHEAP 0xffff888012345000ull	/* a kernel direct-map address */
#define PID 100

struct seg {
	uint64_t vaddr, filesz, memsz;
	const uint8_t *bytes;
};

static struct {
	char dir[256], prog[512], rawbtf[512], kcore[512], ksyms[512];
	uint64_t text_addr, text_size;	/* the program's .text */
	uint8_t *text;
	uint8_t segb[SEG_B];
	struct hm_decoder *dec;
} P;

/* ---- Writing core files ---- */

enum { BAD_NONE, BAD_PHOFF, BAD_SEGOFF, BAD_WRAP, BAD_EXEC, BAD_CLASS32, BAD_NOPH,
       BAD_NOTE };

/* An ELF64 ET_CORE file: a PT_NOTE (as kcore starts; with a VMCOREINFO note of text
 * info when given), then one PT_LOAD per segment, each segment's bytes page-aligned
 * after the headers, in reverse order so that neighbours in memory are not neighbours
 * in the file. */
static UNUSED void write_core_info(const char *path, const struct seg *segs, size_t n,
				   int bad, const char *info)
{
	Elf64_Ehdr eh = {0};
	Elf64_Phdr ph[8] = {{0}};
	uint64_t off = 0x1000;
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_true(n < 8);
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = bad == BAD_EXEC ? ET_EXEC : ET_CORE;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_ehsize = sizeof(eh);
	eh.e_phoff = bad == BAD_PHOFF ? 1u << 20 : sizeof(eh);
	eh.e_phentsize = sizeof(Elf64_Phdr);
	eh.e_phnum = bad == BAD_NOPH ? 0 : (Elf64_Half)(n + 1);
	ph[0].p_type = PT_NOTE;
	for (size_t i = n; i > 0; i--) {
		Elf64_Phdr *p = &ph[i];

		*p = (Elf64_Phdr){.p_type = PT_LOAD, .p_flags = PF_R | PF_W | PF_X,
				  .p_offset = off, .p_vaddr = segs[i - 1].vaddr,
				  .p_filesz = segs[i - 1].filesz, .p_memsz = segs[i - 1].memsz,
				  .p_align = 0x1000};
		off += (segs[i - 1].filesz + 0xfff) & ~0xfffull;
	}
	for (size_t i = 1; i <= n; i++) {
		const struct seg *s = &segs[i - 1];

		if (!s->filesz)
			continue;
		assert_int_equal(fseek(f, (long)ph[i].p_offset, SEEK_SET), 0);
		assert_int_equal(fwrite(s->bytes, 1, s->filesz, f), s->filesz);
	}
	if (info) {
		uint32_t nh[3] = {bad == BAD_NOTE ? 0xfffffff0 : 11, (uint32_t)strlen(info), 0};
		char name[12] = "VMCOREINFO";

		assert_int_equal(fseek(f, (long)off, SEEK_SET), 0);
		fwrite(nh, sizeof(nh), 1, f);
		fwrite(name, sizeof(name), 1, f);
		fwrite(info, 1, nh[1], f);
		ph[0].p_offset = off;
		ph[0].p_filesz = sizeof(nh) + sizeof(name) + nh[1];
	}
	/* The headers last, damaged after the bytes are in place. */
	if (bad == BAD_SEGOFF)
		ph[n].p_offset = off + 0x10000;
	if (bad == BAD_WRAP)
		ph[n].p_filesz = UINT64_MAX - 0x10;
	assert_int_equal(fseek(f, 0, SEEK_SET), 0);
	assert_int_equal(fwrite(&eh, sizeof(eh), 1, f), 1);
	assert_int_equal(fwrite(ph, sizeof(ph[0]), n + 1, f), n + 1);
	assert_int_equal(fclose(f), 0);
	if (bad == BAD_CLASS32)	/* the header claims 32 bits */
		assert_int_equal(run("printf '\\001' | dd of=%s bs=1 seek=4 conv=notrunc "
				     "status=none", path), 0);
}

static UNUSED void write_core(const char *path, const struct seg *segs, size_t n, int bad)
{
	write_core_info(path, segs, n, bad, NULL);
}

/* ---- The program: its .text, its functions, its BTF ---- */

static UNUSED Elf *elf_open(const char *path, int *fd)
{
	elf_version(EV_CURRENT);
	*fd = open(path, O_RDONLY);
	return *fd >= 0 ? elf_begin(*fd, ELF_C_READ_MMAP, NULL) : NULL;
}

static UNUSED Elf_Scn *section(Elf *elf, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	const char *n;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, sh) && (n = elf_strptr(elf, shstrndx, sh->sh_name)) &&
		    !strcmp(n, name))
			return scn;
	return NULL;
}

/* kallsyms of the program's .text placed at KTEXT + KPAD, plus _text and _etext; with
 * odd set, heap_one has an alias that kallsyms prefers (a_heap_one_alias, as identical
 * code folding makes them) and heap_moved belongs to a module. */
static UNUSED void write_kallsyms(const char *path, int odd)
{
	int fd;
	Elf *elf = elf_open(P.prog, &fd);
	Elf_Scn *scn;
	GElf_Shdr sh;
	Elf_Data *data;
	FILE *f = fopen(path, "w");

	assert_non_null(elf);
	assert_non_null(f);
	assert_non_null(scn = section(elf, ".symtab", &sh));
	assert_non_null(data = elf_getdata(scn, NULL));
	fprintf(f, "%016llx T _text\n", KTEXT);
	for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
		GElf_Sym s;
		const char *name;
		unsigned long long at;

		if (!gelf_getsym(data, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
		    s.st_value < P.text_addr || s.st_value >= P.text_addr + P.text_size ||
		    !(name = elf_strptr(elf, sh.sh_link, s.st_name)) || !*name)
			continue;
		at = s.st_value - P.text_addr + KTEXT + KPAD;
		fprintf(f, "%016llx %c %s%s\n", at,
			GELF_ST_BIND(s.st_info) == STB_GLOBAL ? 'T' : 't', name,
			odd && !strcmp(name, "heap_moved") ? "\t[fakemod]" : "");
		if (odd && !strcmp(name, "heap_one"))
			fprintf(f, "%016llx T a_heap_one_alias\n", at);
	}
	fprintf(f, "%016llx T _etext\n", KTEXT + KPAD + P.text_size);
	fclose(f);
	elf_end(elf);
	close(fd);
}

static UNUSED uint64_t sym_addr(const char *path, const char *want, uint64_t *size)
{
	int fd;
	Elf *elf = elf_open(path, &fd);
	Elf_Scn *scn;
	GElf_Shdr sh;
	Elf_Data *data;
	uint64_t addr = 0;

	assert_non_null(elf);
	assert_non_null(scn = section(elf, ".symtab", &sh));
	assert_non_null(data = elf_getdata(scn, NULL));
	for (size_t i = 0; i < sh.sh_size / sh.sh_entsize && !addr; i++) {
		GElf_Sym s;
		const char *name;

		if (gelf_getsym(data, (int)i, &s) && (GELF_ST_TYPE(s.st_info) == STT_FUNC ||
						      GELF_ST_TYPE(s.st_info) == STT_OBJECT) &&
		    (name = elf_strptr(elf, sh.sh_link, s.st_name)) && !strcmp(name, want)) {
			addr = s.st_value;
			*size = s.st_size;
		}
	}
	elf_end(elf);
	close(fd);
	return addr;
}

/* This machine has no /proc/kcore, so the tests write core files: data_prog.c is built
 * with gcc -O2 -g, its .text is placed at a kernel address as kcore would show it (P.kcore:
 * segments A, B and one without bytes), and kallsyms lists its functions there (P.ksyms).
 * With report, pahole -J also gives its BTF, dumped raw as /sys/kernel/btf/vmlinux holds
 * it (P.rawbtf), and the decoder is opened (P.dec). */
static UNUSED int kcore_setup(int report)
{
	const char *tmp = getenv("TMPDIR");
	struct hm_err err = {0};
	struct seg segs[3];
	char cwd[512];
	GElf_Shdr sh;
	Elf_Scn *scn;
	Elf_Data *data;
	Elf *elf;
	int fd;

	unsetenv("DEBUGINFOD_URLS");	/* tests must not reach the network */
	snprintf(P.dir, sizeof(P.dir), "%s/hm_kcore_XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
	if (!mkdtemp(P.dir) || !getcwd(cwd, sizeof(cwd)))
		return -1;
	snprintf(P.prog, sizeof(P.prog), "%s/prog", P.dir);
	snprintf(P.rawbtf, sizeof(P.rawbtf), "%s/prog.rawbtf", P.dir);
	snprintf(P.kcore, sizeof(P.kcore), "%s/kcore", P.dir);
	snprintf(P.ksyms, sizeof(P.ksyms), "%s/kallsyms", P.dir);
	if (run("gcc -O2 -g -o %s %s/" SRC, P.prog, cwd))
		return -1;
	/* pahole comes with dwarves (make deps). Its .BTF is not SHF_ALLOC, so objcopy -O
	 * binary would write nothing: --dump-section. */
	if (report && (run("cp %s %s.btf && pahole -J %s.btf >/dev/null && "
			   "objcopy --dump-section .BTF=%s %s.btf", P.prog, P.prog, P.prog,
			   P.rawbtf, P.prog) ||
		       run("test -s %s", P.rawbtf)))
		return -1;
	if (!(elf = elf_open(P.prog, &fd)) || !(scn = section(elf, ".text", &sh)) ||
	    !(data = elf_getdata(scn, NULL)) || sh.sh_size + KPAD > SEG_A)
		return -1;
	P.text_addr = sh.sh_addr;
	P.text_size = sh.sh_size;
	P.text = malloc(SEG_A);
	memset(P.text, 0xcc, SEG_A);	/* int3 around the program's code */
	memcpy(P.text + KPAD, data->d_buf, sh.sh_size);
	elf_end(elf);
	close(fd);
	for (size_t i = 0; i < SEG_B; i++)
		P.segb[i] = (uint8_t)(i * 7 + 1);
	segs[0] = (struct seg){KTEXT, SEG_A, SEG_A, P.text};
	segs[1] = (struct seg){KTEXT + SEG_A, SEG_B, SEG_B, P.segb};
	segs[2] = (struct seg){KNOBYTES, 0, 0x1000, NULL};
	write_core(P.kcore, segs, 3, BAD_NONE);
	write_kallsyms(P.ksyms, 0);
	return report ? hm_decode_open(&P.dec, &err) : 0;
}

/* Group setup: the core file and kallsyms alone. */
static UNUSED int kcore_setup_code(void **state)
{
	(void)state;
	return kcore_setup(0);
}

/* Group setup: the core file, kallsyms, raw BTF and the decoder. */
static UNUSED int kcore_setup_report(void **state)
{
	(void)state;
	return kcore_setup(1);
}

static UNUSED int kcore_teardown(void **state)
{
	(void)state;
	hm_decode_close(P.dec);
	free(P.text);
	run("rm -rf %s", P.dir);
	return 0;
}

static UNUSED struct hm_code *open_code(const char *kcore, const char *kallsyms)
{
	struct hm_code_opts o = {.vmlinux = "", .kallsyms = kallsyms, .kcore = kcore,
				 .kernel_release = "6.1.0-test"};
	struct hm_code *c = NULL;
	struct hm_err err = {0};

	if (hm_code_open(&o, &c, &err) != 0)
		fail_msg("hm_code_open: %s", err.msg);
	return c;
}

#endif
