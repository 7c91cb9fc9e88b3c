/* Shared by the symbolize/code*.c unit tests: the scratch directory and the test program
 * (tests/data/code_prog.c built with gcc at test time) in P, ELF readers for its facts, and
 * hm_code open/map/lookup helpers. */
#ifndef HM_TEST_CODE_UTIL_H
#define HM_TEST_CODE_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <glob.h>
#include <sys/stat.h>

#include "symbolize/code.h"
#include "run_util.h"

#ifndef UNUSED
#define UNUSED __attribute__((unused))
#endif

#define SRC "tests/data/code_prog.c"
#define KALLSYMS "tests/data/kallsyms.txt"
#define BASE 0x555555554000ull	/* where the kernel puts a PIE without ASLR */

static struct {
	char dir[256];
	char bin[512], stripped[512], linked[512], debug[512], rebuilt[512];
	uint64_t sym, sym_size;			/* hm_store in the file */
	uint64_t text_off, text_vaddr, text_size;	/* the executable PT_LOAD */
	uint8_t id[20];
	size_t id_size;
	int line_scale, line_call, line_store;
} P;

static UNUSED const char *base_name(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;

	return s ? s + 1 : p;
}

static UNUSED int marker_line(const char *name)
{
	char line[512], tag[64];
	FILE *f = fopen(SRC, "r");
	int n = 0, found = 0;

	snprintf(tag, sizeof(tag), "/* LINE:%s */", name);
	while (f && fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, tag)) {
			found = n;
			break;
		}
	}
	if (f)
		fclose(f);
	return found;
}

static UNUSED Elf *elf_open(const char *path, int *fd)
{
	elf_version(EV_CURRENT);
	*fd = open(path, O_RDONLY);
	return *fd < 0 ? NULL : elf_begin(*fd, ELF_C_READ, NULL);
}

/* A symbol's address (and size) in the file's .symtab; 0 when absent. */
static UNUSED uint64_t elf_sym(const char *path, const char *name, uint64_t *size)
{
	int fd;
	Elf *elf = elf_open(path, &fd);
	Elf_Scn *scn = NULL;
	uint64_t addr = 0;

	while (elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;

			if (gelf_getsym(data, (int)i, &s) &&
			    strcmp(elf_strptr(elf, sh.sh_link, s.st_name), name) == 0) {
				addr = s.st_value;
				if (size)
					*size = s.st_size;
			}
		}
	}
	elf_end(elf);
	if (fd >= 0)
		close(fd);
	return addr;
}

/* The build-id; 0 when none. */
static UNUSED size_t elf_build_id(const char *path, uint8_t id[20])
{
	int fd;
	Elf *elf = elf_open(path, &fd);
	const void *p;
	ssize_t n = elf ? dwelf_elf_gnu_build_id(elf, &p) : -1;

	if (n > 0 && n <= 20)
		memcpy(id, p, (size_t)n);
	elf_end(elf);
	if (fd >= 0)
		close(fd);
	return n > 0 && n <= 20 ? (size_t)n : 0;
}

static UNUSED void hex_of(const uint8_t *id, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", id[i]);
}

/* hm_store, the executable segment and the build-id of the test program. */
static UNUSED int read_elf(const char *path)
{
	int fd;
	Elf *elf = elf_open(path, &fd);
	size_t nph = 0;

	P.sym = elf_sym(path, "hm_store", &P.sym_size);
	if (elf)
		elf_getphdrnum(elf, &nph);
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
			P.text_off = ph.p_offset;
			P.text_vaddr = ph.p_vaddr;
			P.text_size = ph.p_filesz;
		}
	}
	elf_end(elf);
	if (fd >= 0)
		close(fd);
	P.id_size = elf_build_id(path, P.id);
	return P.sym && P.text_size && P.id_size ? 0 : -1;
}

/* Group setup for tests that need only the scratch directory P.dir. */
static UNUSED int make_dir(void **state)
{
	const char *tmp = getenv("TMPDIR");

	(void)state;
	/* A login shell on Debian sets DEBUGINFOD_URLS; tests must not reach the network. */
	unsetenv("DEBUGINFOD_URLS");
	snprintf(P.dir, sizeof(P.dir), "%s/hm_code_XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
	return mkdtemp(P.dir) ? 0 : -1;
}

/* Group setup: P.dir, the test program built in it four ways, and its ELF facts. */
static UNUSED int build_prog(void **state)
{
	char cwd[512];

	if (make_dir(state) < 0 || !getcwd(cwd, sizeof(cwd)))
		return -1;
	snprintf(P.bin, sizeof(P.bin), "%s/prog", P.dir);
	snprintf(P.stripped, sizeof(P.stripped), "%s/prog.stripped", P.dir);
	snprintf(P.linked, sizeof(P.linked), "%s/prog.linked", P.dir);
	snprintf(P.debug, sizeof(P.debug), "%s/prog.debug", P.dir);
	snprintf(P.rebuilt, sizeof(P.rebuilt), "%s/prog.rebuilt", P.dir);
	if (run("gcc -O2 -g -o %s %s/" SRC, P.bin, cwd) ||
	    run("gcc -O1 -g -o %s %s/" SRC, P.rebuilt, cwd) ||
	    run("strip -o %s %s", P.stripped, P.bin) ||
	    run("objcopy --only-keep-debug %s %s", P.bin, P.debug) ||
	    run("cd %s && objcopy --strip-all --add-gnu-debuglink=prog.debug prog prog.linked",
		P.dir))
		return -1;
	P.line_scale = marker_line("scale");
	P.line_call = marker_line("call");
	P.line_store = marker_line("store");
	if (!P.line_scale || !P.line_call || !P.line_store)
		return -1;
	return read_elf(P.bin);
}

/* Group teardown: P.dir and everything in it. */
static UNUSED int remove_prog(void **state)
{
	(void)state;
	run("rm -rf %s", P.dir);
	return 0;
}

static UNUSED struct hm_code *open_code(const struct hm_code_opts *o)
{
	struct hm_code *c = NULL;
	struct hm_err err = {0};

	if (hm_code_open(o, &c, &err) < 0)
		fail_msg("hm_code_open: %s", err.msg);
	return c;
}

/* The executable segment of path at BASE, as the kernel maps a PIE. */
static UNUSED void map_prog(struct hm_code *c, uint32_t pid, const char *path,
			    const uint8_t *id, size_t id_size)
{
	uint64_t start = BASE + (P.text_vaddr & ~0xfffull);
	uint64_t end = BASE + ((P.text_vaddr + P.text_size + 0xfff) & ~0xfffull);

	assert_int_equal(hm_code_add_map(c, pid, start, end - start, P.text_off & ~0xfffull,
					 path, id, id_size), 0);
}

static UNUSED struct hm_code_loc lookup(struct hm_code *c, uint32_t pid, uint64_t ip,
					       int kernel)
{
	struct hm_code_loc loc;

	memset(&loc, 0x5a, sizeof(loc));
	assert_int_equal(hm_code_lookup(c, pid, ip, kernel, &loc), 0);
	return loc;
}

#endif
