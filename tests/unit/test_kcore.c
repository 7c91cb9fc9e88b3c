/* symbolize/code_kcore.c and data_kcore.c: kernel code bytes from an ELF core file of
 * kernel memory (/proc/kcore), function extents from kallsyms, types from raw BTF. This
 * machine has no /proc/kcore, so the test writes core files: tests/data/data_prog.c is
 * built with gcc -O2 -g, its .text is placed at a kernel address as kcore would show it,
 * kallsyms lists its functions there, and pahole -J gives its BTF (dumped raw, as
 * /sys/kernel/btf/vmlinux holds it); kernel samples
 * then go through the report's resolver. Malformed cores must give one-line errors.
 * When a Debian -dbg vmlinux is installed, its .text, System.map and .BTF make a fake
 * kcore of a real kernel (skipped otherwise). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include "analyzer/resolve.h"
#include "symbolize/code.h"
#include "symbolize/data.h"
#include "symbolize/decode.h"
#include "run_util.h"

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
static void write_core_info(const char *path, const struct seg *segs, size_t n, int bad,
			    const char *info)
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

static void write_core(const char *path, const struct seg *segs, size_t n, int bad)
{
	write_core_info(path, segs, n, bad, NULL);
}

/* ---- The program: its .text, its functions, its BTF ---- */

static Elf *elf_open(const char *path, int *fd)
{
	elf_version(EV_CURRENT);
	*fd = open(path, O_RDONLY);
	return *fd >= 0 ? elf_begin(*fd, ELF_C_READ_MMAP, NULL) : NULL;
}

static Elf_Scn *section(Elf *elf, const char *name, GElf_Shdr *sh)
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
static void write_kallsyms(const char *path, int odd)
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

static uint64_t sym_addr(const char *path, const char *want, uint64_t *size)
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

		if (gelf_getsym(data, (int)i, &s) && GELF_ST_TYPE(s.st_info) == STT_FUNC &&
		    (name = elf_strptr(elf, sh.sh_link, s.st_name)) && !strcmp(name, want)) {
			addr = s.st_value;
			*size = s.st_size;
		}
	}
	elf_end(elf);
	close(fd);
	return addr;
}

static int setup(void **state)
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

	(void)state;
	unsetenv("DEBUGINFOD_URLS");	/* tests must not reach the network */
	snprintf(P.dir, sizeof(P.dir), "%s/hm_kcore_XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
	if (!mkdtemp(P.dir) || !getcwd(cwd, sizeof(cwd)))
		return -1;
	snprintf(P.prog, sizeof(P.prog), "%s/prog", P.dir);
	snprintf(P.rawbtf, sizeof(P.rawbtf), "%s/prog.rawbtf", P.dir);
	snprintf(P.kcore, sizeof(P.kcore), "%s/kcore", P.dir);
	snprintf(P.ksyms, sizeof(P.ksyms), "%s/kallsyms", P.dir);
	/* pahole comes with dwarves (make deps). Its .BTF is not SHF_ALLOC, so objcopy -O
	 * binary would write nothing: --dump-section. */
	if (run("gcc -O2 -g -o %s %s/" SRC, P.prog, cwd) ||
	    run("cp %s %s.btf && pahole -J %s.btf >/dev/null && "
		"objcopy --dump-section .BTF=%s %s.btf", P.prog, P.prog, P.prog, P.rawbtf,
		P.prog) ||
	    run("test -s %s", P.rawbtf))
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
	return hm_decode_open(&P.dec, &err);
}

static int teardown(void **state)
{
	(void)state;
	hm_decode_close(P.dec);
	free(P.text);
	run("rm -rf %s", P.dir);
	return 0;
}

static struct hm_code *open_code(const char *kcore, const char *kallsyms)
{
	struct hm_code_opts o = {.vmlinux = "", .kallsyms = kallsyms, .kcore = kcore,
				 .kernel_release = "6.1.0-test"};
	struct hm_code *c = NULL;
	struct hm_err err = {0};

	if (hm_code_open(&o, &c, &err) != 0)
		fail_msg("hm_code_open: %s", err.msg);
	return c;
}

/* ---- Reading code bytes ---- */

static void test_kcore_reads_code_bytes_exactly(void **state)
{
	struct hm_code *c = open_code(P.kcore, P.ksyms);
	struct hm_code_kernel img;
	uint8_t *buf = malloc(SEG_A);
	uint8_t small[32];

	(void)state;
	assert_int_equal(hm_code_kernel_image(c, &img), 0);
	assert_string_equal(img.kcore, P.kcore);
	assert_null(img.vmlinux);
	assert_null(img.why);
	/* The program's whole .text, where kallsyms says its functions are. */
	assert_int_equal(hm_code_read(c, 0, KTEXT + KPAD, 1, buf, P.text_size), P.text_size);
	assert_memory_equal(buf, P.text + KPAD, P.text_size);
	assert_int_equal(hm_code_read(c, 0, KTEXT, 1, buf, SEG_A), SEG_A);
	assert_memory_equal(buf, P.text, SEG_A);
	assert_int_equal(hm_code_read(c, 0, KTEXT + SEG_A, 1, small, sizeof(small)), sizeof(small));
	assert_memory_equal(small, P.segb, sizeof(small));
	free(buf);
	hm_code_close(c);
}

static void test_kcore_reads_stop_at_segment_ends(void **state)
{
	struct hm_code *c = open_code(P.kcore, P.ksyms);
	uint8_t buf[64];

	(void)state;
	/* A ends where B starts in memory, but B is elsewhere in the file: the read stops. */
	memset(buf, 0, sizeof(buf));
	assert_int_equal(hm_code_read(c, 0, KTEXT + SEG_A - 5, 1, buf, sizeof(buf)), 5);
	assert_memory_equal(buf, P.text + SEG_A - 5, 5);
	assert_int_equal(hm_code_read(c, 0, KTEXT + SEG_A + SEG_B - 3, 1, buf, 16), 3);
	assert_memory_equal(buf, P.segb + SEG_B - 3, 3);
	/* Outside every segment, in one without file bytes, at the top of memory. */
	assert_int_equal(hm_code_read(c, 0, KTEXT - 1, 1, buf, 16), 0);
	assert_int_equal(hm_code_read(c, 0, KTEXT + SEG_A + SEG_B, 1, buf, 16), 0);
	assert_int_equal(hm_code_read(c, 0, KGAP, 1, buf, 16), 0);
	assert_int_equal(hm_code_read(c, 0, KNOBYTES + 8, 1, buf, 16), 0);
	assert_int_equal(hm_code_read(c, 0, UINT64_MAX - 2, 1, buf, 16), 0);
	assert_int_equal(hm_code_read(c, 0, KTEXT, 1, buf, 0), 0);
	/* User space is not the kernel's core. */
	assert_int_equal(hm_code_read(c, PID, KTEXT + KPAD, 0, buf, 16), 0);
	hm_code_close(c);
}

/* kallsyms of a later boot: the recorded addresses move by the _text difference, and
 * the core, taken with that kallsyms, is read at the moved address. */
static void test_kcore_follows_kallsyms_boot(void **state)
{
	const uint64_t kaslr = 0x3e00000;
	struct hm_code *c = open_code(P.kcore, P.ksyms);
	uint64_t size, at = sym_addr(P.prog, "heap_one", &size) - P.text_addr + KPAD;
	struct hm_code_loc loc;
	uint8_t buf[16];

	(void)state;
	assert_int_equal(hm_code_add_map(c, (uint32_t)-1, KTEXT + kaslr, 1 << 24, KTEXT + kaslr,
					 "[kernel.kallsyms]_text", NULL, 0), 0);
	assert_int_equal(hm_code_lookup(c, 0, KTEXT + kaslr + at + 1, 1, &loc), 0);
	assert_string_equal(loc.func, "heap_one");
	assert_int_equal(loc.func_start, KTEXT + kaslr + at);
	assert_true(loc.func_size >= size);	/* to the next symbol: padding too */
	assert_true(loc.flags & HM_CODE_KALLSYMS_ONLY);
	assert_int_equal(hm_code_read(c, 0, KTEXT + kaslr + at, 1, buf, sizeof(buf)), sizeof(buf));
	assert_memory_equal(buf, P.text + at, sizeof(buf));
	hm_code_close(c);
}

/* ---- Malformed core files: a one-line error naming the file ---- */

static void expect_open_error(const char *path, const char *cause)
{
	struct hm_code_opts o = {.vmlinux = "", .kallsyms = P.ksyms, .kcore = path};
	struct hm_code *c = (struct hm_code *)&o;
	struct hm_err err = {0};

	if (hm_code_open(&o, &c, &err) != -1)
		fail_msg("%s: opened as a core file (want '%s')", path, cause);
	assert_null(c);
	if (!strstr(err.msg, path) || !strstr(err.msg, cause) || strchr(err.msg, '\n'))
		fail_msg("%s: want one line naming it and '%s', got '%s'", path, cause, err.msg);
	assert_non_null(strstr(err.msg, "--vmlinux"));
}

static void test_malformed_cores_give_one_line_errors(void **state)
{
	const struct seg one = {KTEXT, SEG_A, SEG_A, P.text};
	const struct seg none = {KNOBYTES, 0, 0x1000, NULL};
	char path[600];

	(void)state;
	snprintf(path, sizeof(path), "%s/bad", P.dir);
	write_core(path, &one, 1, BAD_PHOFF);
	expect_open_error(path, "program headers");
	write_core(path, &one, 1, BAD_SEGOFF);
	expect_open_error(path, "past the end of the file");
	write_core(path, &one, 1, BAD_WRAP);
	expect_open_error(path, "past the end of the file");
	write_core(path, &one, 1, BAD_NOPH);
	expect_open_error(path, "no readable program headers");
	write_core(path, &none, 1, BAD_NONE);	/* only a PT_LOAD without bytes */
	expect_open_error(path, "no PT_LOAD segment");
	write_core(path, &one, 0, BAD_NONE);	/* only the PT_NOTE */
	expect_open_error(path, "no PT_LOAD segment");
	write_core(path, &one, 1, BAD_EXEC);
	expect_open_error(path, "not an ELF core file");
	write_core(path, &one, 1, BAD_CLASS32);
	expect_open_error(path, "64-bit");
	/* Truncated inside the program headers, inside the ELF header, empty. */
	write_core(path, &one, 1, BAD_NONE);
	assert_int_equal(truncate(path, sizeof(Elf64_Ehdr) + 20), 0);
	expect_open_error(path, "program headers");
	assert_int_equal(truncate(path, 20), 0);
	expect_open_error(path, "not");
	assert_int_equal(truncate(path, 0), 0);
	expect_open_error(path, "not an ELF file");
	expect_open_error(SRC, "not an ELF file");
	expect_open_error(P.dir, "not a regular file");
	snprintf(path, sizeof(path), "%s/missing", P.dir);
	expect_open_error(path, "No such file");
}

/* A core file's VMCOREINFO names its kernel: another release than the recording's is
 * refused when the report starts, another build-id when the kernel is first needed. */
static void test_kcore_vmcoreinfo_must_match_recording(void **state)
{
	static const char info[] = "OSRELEASE=6.1.0-other\nPAGESIZE=4096\n"
				   "BUILD-ID=00112233445566778899aabbccddeeff00112233\n";
	const uint8_t id[20] = {0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99,
				0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x00, 0x11, 0x22, 0x33};
	const struct seg one = {KTEXT, SEG_A, SEG_A, P.text};
	struct hm_code_opts o = {.vmlinux = "", .kallsyms = P.ksyms,
				 .kernel_release = "6.1.0-test"};
	struct hm_code_kernel img;
	struct hm_code *c = NULL;
	struct hm_err err = {0};
	char path[600];
	uint8_t other[20];

	(void)state;
	snprintf(path, sizeof(path), "%s/kcore.info", P.dir);
	write_core_info(path, &one, 1, BAD_NONE, info);
	o.kcore = path;
	assert_int_equal(hm_code_open(&o, &c, &err), -1);
	assert_non_null(strstr(err.msg, path));
	assert_non_null(strstr(err.msg, "6.1.0-other"));
	assert_non_null(strstr(err.msg, "6.1.0-test"));
	assert_null(strchr(err.msg, '\n'));

	o.kernel_release = "6.1.0-other";
	assert_int_equal(hm_code_open(&o, &c, &err), 0);
	hm_code_add_build_id(c, "[kernel.kallsyms]", id, sizeof(id));
	assert_int_equal(hm_code_kernel_image(c, &img), 0);
	assert_string_equal(img.kcore, path);
	hm_code_close(c);

	memcpy(other, id, sizeof(other));
	other[0] = 0xff;
	assert_int_equal(hm_code_open(&o, &c, &err), 0);
	hm_code_add_build_id(c, "[kernel.kallsyms]", other, sizeof(other));
	assert_int_equal(hm_code_kernel_image(c, &img), -1);
	assert_non_null(strstr(img.why, "is of another build"));
	assert_non_null(strstr(img.why, "00112233445566778899aabbccddeeff00112233"));
	hm_code_close(c);

	/* A damaged note only loses the check. */
	write_core_info(path, &one, 1, BAD_NOTE, info);
	o.kernel_release = "6.1.0-test";
	assert_int_equal(hm_code_open(&o, &c, &err), 0);
	assert_int_equal(hm_code_kernel_image(c, &img), 0);
	hm_code_close(c);
}

/* ---- Without --kcore: /proc/kcore only for the running kernel ---- */

static const char *why_without(const char *release, const char *kcore, int bogus_id)
{
	static char why[1024];
	struct hm_code_opts o = {.vmlinux = "", .kernel_release = release, .kcore = kcore};
	struct hm_code *c = NULL;
	struct hm_code_kernel img;
	struct hm_err err = {0};
	const uint8_t id[20] = {0xde, 0xad};

	assert_int_equal(hm_code_open(&o, &c, &err), 0);
	if (bogus_id)
		hm_code_add_build_id(c, "[kernel.kallsyms]", id, sizeof(id));
	if (hm_code_kernel_image(c, &img) == 0) {
		assert_non_null(img.kcore);
		assert_null(img.why);
		snprintf(why, sizeof(why), "kcore %s", img.kcore);
	} else {
		assert_null(img.kcore);
		assert_non_null(img.why);
		assert_null(strchr(img.why, '\n'));
		assert_non_null(strstr(img.why, "--vmlinux"));
		snprintf(why, sizeof(why), "%s", img.why);
	}
	hm_code_close(c);
	return why;
}

static void test_live_kcore_only_for_running_kernel(void **state)
{
	const char *why = why_without(NULL, NULL, 0);
	uint8_t notes[4], magic[4] = {0};
	int fd;

	(void)state;
	/* The running kernel: /proc/kcore is used if this process may read it (a container
	 * may mask it with /dev/null). */
	fd = open("/proc/kcore", O_RDONLY);
	if (fd >= 0 && read(fd, magic, 4) == 4 && !memcmp(magic, ELFMAG, 4))
		assert_string_equal(why, "kcore /proc/kcore");
	else if (fd < 0 && errno != ENOENT)
		assert_non_null(strstr(why, "run as root"));
	else
		assert_non_null(strstr(why, "no /proc/kcore"));
	if (fd >= 0)
		close(fd);
	assert_non_null(strstr(why_without("6.1.0-test", NULL, 0), "is of the running kernel"));
	assert_non_null(strstr(why_without(NULL, "", 0), "--kcore ''"));
	fd = open("/sys/kernel/notes", O_RDONLY);
	if (fd >= 0 && read(fd, notes, sizeof(notes)) == sizeof(notes))
		assert_non_null(strstr(why_without(NULL, NULL, 1), "is of another build"));
	if (fd >= 0)
		close(fd);
}

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

		sample(r, in.addr, cases[i].reg, KHEAP + 0x100, KHEAP + 0x800, &a);
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
	sample(r, in.addr, HM_REG_DI, KHEAP, KHEAP, &a);
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
	sample(r, one.addr, HM_REG_DI, KHEAP, KHEAP, &a);
	assert_string_equal(a.func, "a_heap_one_alias");
	assert_int_equal(a.method, HM_M_HEAP);
	assert_string_equal(a.field, "item.flags");
	sample(r, moved.addr, HM_REG_AX, KHEAP, KHEAP, &a);
	assert_string_equal(a.func, "heap_moved");
	assert_int_equal(a.s.addr, KHEAP + 8);	/* decoded from the module's bytes */
	assert_int_equal(a.method, HM_M_UNKNOWN);
	hm_resolver_close(r);
}

/* ---- A real kernel: Debian's -dbg vmlinux cut down to a kcore (optional) ---- */

static int find_vmlinux(char *vmlinux, char *map, size_t size)
{
	DIR *dir = opendir("/usr/lib/debug/boot");
	struct dirent *e;
	char best[256] = "";

	while (dir && (e = readdir(dir)))
		if (!strncmp(e->d_name, "vmlinux-", 8) && strcmp(e->d_name, best) > 0)
			snprintf(best, sizeof(best), "%s", e->d_name);
	if (dir)
		closedir(dir);
	if (!best[0])
		return -1;
	snprintf(vmlinux, size, "/usr/lib/debug/boot/%s", best);
	snprintf(map, size, "/usr/lib/debug/boot/System.map-%s", best + 8);
	return access(vmlinux, R_OK) || access(map, R_OK) ? -1 : 0;
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
		sample(r, in.addr, HM_REG_BX, KHEAP, KHEAP, &a);
		break;
	}
	assert_string_equal(a.func, "generic_permission");
	assert_int_equal(a.s.addr, KHEAP + 0x28);
	assert_int_equal(a.method, HM_M_HEAP);
	assert_string_equal(a.object, "struct inode");
	assert_string_equal(a.field, "inode.i_sb");
	assert_int_equal(hm_resolver_stats(r)->kernel_named, 1);
	hm_resolver_close(r);
	free((void *)s.bytes);
	unlink(text);
	unlink(core);
	unlink(btf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kcore_reads_code_bytes_exactly),
		cmocka_unit_test(test_kcore_reads_stop_at_segment_ends),
		cmocka_unit_test(test_kcore_follows_kallsyms_boot),
		cmocka_unit_test(test_malformed_cores_give_one_line_errors),
		cmocka_unit_test(test_kcore_vmcoreinfo_must_match_recording),
		cmocka_unit_test(test_live_kcore_only_for_running_kernel),
		cmocka_unit_test(test_kernel_heap_typed_through_kcore_and_btf),
		cmocka_unit_test(test_kcore_without_btf_says_why),
		cmocka_unit_test(test_kernel_aliases_and_modules),
		cmocka_unit_test(test_debian_vmlinux_as_kcore),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
