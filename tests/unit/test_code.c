/* symbolize/code*.c: tests/data/code_prog.c is built with gcc -O2 -g at test time, mapped
 * as a PIE would be, and its addresses resolved; the kernel side uses the kallsyms fixture
 * tests/data/kallsyms.txt, this machine's /proc/kallsyms and, when installed, a -dbg
 * vmlinux. Lines are found by the source's LINE:name markers. */
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

static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static const char *base_name(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;

	return s ? s + 1 : p;
}

static int marker_line(const char *name)
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

static Elf *elf_open(const char *path, int *fd)
{
	elf_version(EV_CURRENT);
	*fd = open(path, O_RDONLY);
	return *fd < 0 ? NULL : elf_begin(*fd, ELF_C_READ, NULL);
}

/* A symbol's address (and size) in the file's .symtab; 0 when absent. */
static uint64_t elf_sym(const char *path, const char *name, uint64_t *size)
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
static size_t elf_build_id(const char *path, uint8_t id[20])
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

static void hex_of(const uint8_t *id, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", id[i]);
}

/* hm_store, the executable segment and the build-id of the test program. */
static int read_elf(const char *path)
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

static int build_prog(void **state)
{
	const char *tmp = getenv("TMPDIR");
	char cwd[512];

	(void)state;
	/* A login shell on Debian sets DEBUGINFOD_URLS; tests must not reach the network. */
	unsetenv("DEBUGINFOD_URLS");
	snprintf(P.dir, sizeof(P.dir), "%s/hm_code_XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
	if (!mkdtemp(P.dir) || !getcwd(cwd, sizeof(cwd)))
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

static int remove_prog(void **state)
{
	(void)state;
	run("rm -rf %s", P.dir);
	return 0;
}

static struct hm_code *open_code(const struct hm_code_opts *o)
{
	struct hm_code *c = NULL;
	struct hm_err err = {0};

	if (hm_code_open(o, &c, &err) < 0)
		fail_msg("hm_code_open: %s", err.msg);
	return c;
}

/* The executable segment of path at BASE, as the kernel maps a PIE. */
static void map_prog(struct hm_code *c, uint32_t pid, const char *path, const uint8_t *id,
		     size_t id_size)
{
	uint64_t start = BASE + (P.text_vaddr & ~0xfffull);
	uint64_t end = BASE + ((P.text_vaddr + P.text_size + 0xfff) & ~0xfffull);

	assert_int_equal(hm_code_add_map(c, pid, start, end - start, P.text_off & ~0xfffull,
					 path, id, id_size), 0);
}

static struct hm_code_loc lookup(struct hm_code *c, uint32_t pid, uint64_t ip, int kernel)
{
	struct hm_code_loc loc;

	memset(&loc, 0x5a, sizeof(loc));
	assert_int_equal(hm_code_lookup(c, pid, ip, kernel, &loc), 0);
	return loc;
}

static void test_ip_resolves_to_function_and_line(void **state)
{
	struct hm_code *c = open_code(NULL);
	struct hm_code_loc loc;
	int seen = 0;

	(void)state;
	map_prog(c, 100, P.bin, NULL, 0);
	loc = lookup(c, 100, BASE + P.sym, 0);
	assert_string_equal(loc.func, "hm_store");
	assert_int_equal(loc.func_start, BASE + P.sym);
	assert_int_equal(loc.func_size, P.sym_size);
	assert_int_equal(loc.offset, 0);
	assert_string_equal(loc.module, P.bin);
	assert_int_equal(loc.flags, 0);
	assert_null(loc.hint);
	assert_string_equal(base_name(loc.file), "code_prog.c");
	for (uint64_t off = 0; off < P.sym_size; off++) {
		loc = lookup(c, 100, BASE + P.sym + off, 0);
		assert_string_equal(loc.func, "hm_store");
		assert_int_equal(loc.offset, off);
		assert_int_equal(loc.func_start, BASE + P.sym);
		if (loc.line != P.line_store)
			continue;
		assert_string_equal(base_name(loc.file), "code_prog.c");
		assert_int_equal(loc.nr_inlines, 0);
		seen++;
	}
	assert_true(seen > 0);
	hm_code_close(c);
}

static void test_inlined_ip_has_call_chain(void **state)
{
	struct hm_code *c = open_code(NULL);
	int seen = 0;

	(void)state;
	map_prog(c, 100, P.bin, NULL, 0);
	for (uint64_t off = 0; off < P.sym_size; off++) {
		struct hm_code_loc loc = lookup(c, 100, BASE + P.sym + off, 0);

		if (loc.line != P.line_scale)
			continue;
		assert_string_equal(loc.func, "hm_store");
		assert_int_equal(loc.func_start, BASE + P.sym);
		assert_int_equal(loc.nr_inlines, 1);
		assert_string_equal(loc.inlines[0].func, "scale");
		assert_string_equal(base_name(loc.inlines[0].file), "code_prog.c");
		assert_int_equal(loc.inlines[0].line, P.line_call);
		seen++;
	}
	assert_true(seen > 0);
	hm_code_close(c);
}

static void test_same_ip_returns_cached_pointers(void **state)
{
	struct hm_code *c = open_code(NULL);
	struct hm_code_loc a, b;

	(void)state;
	map_prog(c, 100, P.bin, NULL, 0);
	map_prog(c, 200, P.bin, NULL, 0);	/* another process, same file */
	for (uint64_t off = 0; off < P.sym_size; off++) {
		a = lookup(c, 100, BASE + P.sym + off, 0);
		b = lookup(c, 100, BASE + P.sym + off, 0);
		assert_memory_equal(&a, &b, sizeof(a));
		b = lookup(c, 200, BASE + P.sym + off, 0);
		assert_ptr_equal(a.func, b.func);
		assert_ptr_equal(a.file, b.file);
		assert_ptr_equal(a.inlines, b.inlines);
	}
	hm_code_close(c);
}

/* The bytes objdump prints for the instruction at vaddr in path. */
static size_t objdump_insn(const char *path, uint64_t vaddr, uint8_t *out, size_t max)
{
	char cmd[1024], line[512], want[32];
	size_t n = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "objdump -d --start-address=0x%llx --stop-address=0x%llx %s",
		 (unsigned long long)vaddr, (unsigned long long)vaddr + 1, path);
	snprintf(want, sizeof(want), "%llx:\t", (unsigned long long)vaddr);
	if (!(f = popen(cmd, "r")))
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, want);
		unsigned v;
		int used;

		if (!p || n)
			continue;
		for (p += strlen(want); n < max && sscanf(p, "%2x%n", &v, &used) == 1 && used == 2;
		     p += used + (p[used] == ' '))
			out[n++] = (uint8_t)v;
	}
	pclose(f);
	return n;
}

static void test_read_returns_function_bytes(void **state)
{
	struct hm_code *c = open_code(NULL);
	uint8_t want[16], got[16];
	size_t n = objdump_insn(P.bin, P.sym, want, sizeof(want));

	(void)state;
	assert_true(n > 0);
	map_prog(c, 100, P.bin, NULL, 0);
	assert_int_equal(hm_code_read(c, 100, BASE + P.sym, 0, got, sizeof(got)), sizeof(got));
	assert_memory_equal(got, want, n);
	assert_int_equal(hm_code_read(c, 100, 0x1000, 0, got, sizeof(got)), 0);
	hm_code_close(c);
}

static void test_stripped_binary_flags_no_debuginfo(void **state)
{
	struct hm_code *c = open_code(NULL);
	struct hm_code_loc loc;

	(void)state;
	map_prog(c, 101, P.stripped, NULL, 0);
	loc = lookup(c, 101, BASE + P.sym + 1, 0);
	assert_null(loc.func);		/* hm_store is not exported: no .dynsym entry */
	assert_int_equal(loc.func_start, 0);
	assert_null(loc.file);
	assert_int_equal(loc.line, 0);
	assert_int_equal(loc.nr_inlines, 0);
	assert_true(loc.flags & HM_CODE_NO_DEBUGINFO);
	assert_false(loc.flags & HM_CODE_BUILDID_MISMATCH);
	assert_non_null(loc.hint);
	assert_non_null(strstr(loc.hint, "no debug info"));
	assert_non_null(strstr(loc.hint, "DEBUGINFOD_URLS"));
	assert_non_null(strstr(loc.hint, "/usr/lib/debug/.build-id/"));
	hm_code_close(c);
}

static void test_debuglink_finds_separate_debuginfo(void **state)
{
	struct hm_code *c = open_code(NULL);
	struct hm_code_loc loc;

	(void)state;
	map_prog(c, 102, P.linked, NULL, 0);
	loc = lookup(c, 102, BASE + P.sym, 0);
	assert_string_equal(loc.func, "hm_store");
	assert_int_equal(loc.func_start, BASE + P.sym);
	assert_string_equal(base_name(loc.file), "code_prog.c");
	assert_true(loc.line > 0);
	assert_int_equal(loc.flags, 0);
	hm_code_close(c);
}

static void test_buildid_mismatch_flagged_but_resolved(void **state)
{
	struct hm_code *c = open_code(NULL);
	uint8_t wrong[20];
	struct hm_code_loc loc;

	(void)state;
	memset(wrong, 0xab, sizeof(wrong));
	map_prog(c, 103, P.bin, wrong, sizeof(wrong));
	loc = lookup(c, 103, BASE + P.sym, 0);
	assert_string_equal(loc.func, "hm_store");
	assert_true(loc.line > 0);
	assert_true(loc.flags & HM_CODE_BUILDID_MISMATCH);
	assert_non_null(loc.hint);
	assert_non_null(strstr(loc.hint, "abababab"));
	assert_non_null(strstr(loc.hint, "record again"));

	map_prog(c, 104, P.bin, P.id, P.id_size);
	loc = lookup(c, 104, BASE + P.sym, 0);
	assert_int_equal(loc.flags, 0);
	assert_null(loc.hint);
	hm_code_close(c);
}

static void test_recorded_build_id_table_applies_to_maps(void **state)
{
	struct hm_code *c = open_code(NULL);
	uint8_t wrong[20];
	struct hm_code_loc loc;

	(void)state;
	memset(wrong, 0xcd, sizeof(wrong));
	map_prog(c, 105, P.bin, NULL, 0);	/* mapped before the table is read */
	assert_int_equal(hm_code_add_build_id(c, P.bin, wrong, sizeof(wrong)), 0);
	loc = lookup(c, 105, BASE + P.sym, 0);
	assert_true(loc.flags & HM_CODE_BUILDID_MISMATCH);
	map_prog(c, 106, P.bin, NULL, 0);
	loc = lookup(c, 106, BASE + P.sym, 0);
	assert_true(loc.flags & HM_CODE_BUILDID_MISMATCH);
	hm_code_close(c);
}

static void test_buildid_dir_supplies_recorded_binary(void **state)
{
	char cache[600];
	struct hm_code_opts o = {.buildid_dir = cache};
	struct hm_code *c;
	struct hm_code_loc loc;
	char hex[41];

	(void)state;
	hex_of(P.id, P.id_size, hex);
	snprintf(cache, sizeof(cache), "%s/cache", P.dir);
	assert_int_equal(run("mkdir -p %s/.build-id/%.2s/%s && cp %s %s/.build-id/%.2s/%s/elf",
			     cache, hex, hex + 2, P.bin, cache, hex, hex + 2), 0);
	c = open_code(&o);
	/* The recording saw prog's build-id at this path; the file there now is another
	 * build, and the cache holds the recorded one. */
	map_prog(c, 107, P.rebuilt, P.id, P.id_size);
	loc = lookup(c, 107, BASE + P.sym, 0);
	assert_string_equal(loc.func, "hm_store");
	assert_int_equal(loc.func_start, BASE + P.sym);
	assert_true(loc.line > 0);
	assert_int_equal(loc.flags, 0);
	assert_string_equal(loc.module, P.rebuilt);
	hm_code_close(c);
}

/* A debuginfod server is a tree of buildid/ID/{executable,debuginfo}; libdebuginfod
 * reads file:// URLs, so a directory stands in for one. */
static void test_debuginfod_fetches_by_build_id(void **state)
{
	char srv[600], url[700], cache[600], hex[41], rhex[41];
	struct hm_code_opts o = {.vmlinux = NULL, .kallsyms = KALLSYMS,
				 .kernel_release = "6.1.0-none"};
	uint8_t rid[20];
	size_t rn = elf_build_id(P.rebuilt, rid);
	uint64_t rsym = elf_sym(P.rebuilt, "hm_store", NULL);
	struct hm_code *c;
	struct hm_code_loc loc;

	(void)state;
	assert_true(rn > 0 && rsym);
	hex_of(P.id, P.id_size, hex);
	hex_of(rid, rn, rhex);
	snprintf(srv, sizeof(srv), "%s/debuginfod", P.dir);
	snprintf(cache, sizeof(cache), "%s/debuginfod-cache", P.dir);
	snprintf(url, sizeof(url), "file://%s", srv);
	assert_int_equal(run("mkdir -p %s/buildid/%s %s/buildid/%s && cp %s %s/buildid/%s/executable"
			     " && cp %s %s/buildid/%s/debuginfo && cp %s %s/buildid/%s/debuginfo",
			     srv, hex, srv, rhex, P.bin, srv, hex, P.debug, srv, hex, P.rebuilt,
			     srv, rhex), 0);
	setenv("DEBUGINFOD_URLS", url, 1);
	setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
	c = open_code(&o);
	/* The executable is gone from disk: fetched by its recorded build-id. */
	map_prog(c, 120, "/gone/bin/prog", P.id, P.id_size);
	loc = lookup(c, 120, BASE + P.sym, 0);
	assert_string_equal(loc.func, "hm_store");
	assert_int_equal(loc.func_start, BASE + P.sym);
	assert_true(loc.line > 0);
	assert_int_equal(loc.flags, 0);
	/* Stripped on disk: dwfl fetches the debug info itself. */
	map_prog(c, 121, P.stripped, NULL, 0);
	loc = lookup(c, 121, BASE + P.sym, 0);
	assert_true(loc.line > 0);
	assert_int_equal(loc.flags, 0);
	/* The kernel by the recorded build-id, with no vmlinux on disk (the rebuilt
	 * program stands in for one). */
	assert_int_equal(hm_code_add_build_id(c, "[kernel.kallsyms]", rid, rn), 0);
	loc = lookup(c, 0, rsym, 1);
	assert_string_equal(loc.func, "hm_store");
	assert_true(loc.line > 0);
	assert_false(loc.flags & HM_CODE_KALLSYMS_ONLY);
	hm_code_close(c);
	unsetenv("DEBUGINFOD_URLS");
	unsetenv("DEBUGINFOD_CACHE_PATH");
}

static void test_sysroot_prefixes_recorded_paths(void **state)
{
	struct hm_code_opts o = {.sysroot = P.dir};
	struct hm_code *c = open_code(&o);
	struct hm_code_loc loc;

	(void)state;
	map_prog(c, 108, "/prog", NULL, 0);
	loc = lookup(c, 108, BASE + P.sym, 0);
	assert_string_equal(loc.func, "hm_store");
	assert_string_equal(loc.module, "/prog");
	assert_true(loc.line > 0);
	hm_code_close(c);
}

static void test_missing_file_hint_names_the_fix(void **state)
{
	struct hm_code *c = open_code(NULL);
	struct hm_code_loc loc;

	(void)state;
	map_prog(c, 109, "/nonexistent/bin/app", P.id, P.id_size);
	loc = lookup(c, 109, BASE + P.sym, 0);
	assert_null(loc.func);
	assert_string_equal(loc.module, "/nonexistent/bin/app");
	assert_int_equal(loc.flags, HM_CODE_NO_FILE | HM_CODE_NO_DEBUGINFO);
	assert_non_null(strstr(loc.hint, "--sysroot"));
	assert_non_null(strstr(loc.hint, "DEBUGINFOD_URLS"));
	assert_int_equal(hm_code_read(c, 109, BASE + P.sym, 0, (uint8_t[4]){0}, 4), 0);
	hm_code_close(c);
}

static void test_vdso_and_anonymous_maps_have_no_file(void **state)
{
	struct hm_code *c = open_code(NULL);
	struct hm_code_loc loc;

	(void)state;
	assert_int_equal(hm_code_add_map(c, 110, 0x7fff0000, 0x2000, 0, "[vdso]", NULL, 0), 0);
	assert_int_equal(hm_code_add_map(c, 110, 0x7ff00000, 0x10000, 0, "//anon", NULL, 0), 0);
	loc = lookup(c, 110, 0x7fff0010, 0);
	assert_null(loc.func);
	assert_string_equal(loc.module, "[vdso]");
	assert_true(loc.flags & HM_CODE_NO_FILE);
	assert_non_null(loc.hint);
	loc = lookup(c, 110, 0x7ff00100, 0);
	assert_string_equal(loc.module, "//anon");
	assert_non_null(strstr(loc.hint, "JIT"));
	hm_code_close(c);
}

static void test_unmapped_ip_flagged(void **state)
{
	struct hm_code *c = open_code(NULL);
	struct hm_code_loc loc;

	(void)state;
	map_prog(c, 100, P.bin, NULL, 0);
	loc = lookup(c, 999, BASE + P.sym, 0);
	assert_int_equal(loc.flags, HM_CODE_UNMAPPED);
	assert_null(loc.func);
	assert_non_null(loc.hint);
	loc = lookup(c, 100, 0x1000, 0);
	assert_int_equal(loc.flags, HM_CODE_UNMAPPED);
	assert_int_equal(hm_code_add_map(c, 1, 0, 0, 0, "x", NULL, 0), -22);
	hm_code_close(c);
}

static void test_new_mapping_replaces_overlapped_part(void **state)
{
	struct hm_code *c = open_code(NULL);
	uint64_t start = BASE + (P.text_vaddr & ~0xfffull);
	struct hm_code_loc loc;

	(void)state;
	map_prog(c, 111, P.bin, NULL, 0);
	/* 16 bytes of the stripped copy over the start of the segment: the rest of the
	 * old mapping stays, with its file offset moved along. */
	assert_int_equal(hm_code_add_map(c, 111, start, 16, P.text_off & ~0xfffull,
					 P.stripped, NULL, 0), 0);
	loc = lookup(c, 111, start + 8, 0);
	assert_string_equal(loc.module, P.stripped);
	loc = lookup(c, 111, BASE + P.sym, 0);
	assert_string_equal(loc.func, "hm_store");
	assert_string_equal(loc.module, P.bin);
	assert_int_equal(loc.func_start, BASE + P.sym);
	/* A full replacement: the same range now holds the stripped copy. */
	map_prog(c, 111, P.stripped, NULL, 0);
	loc = lookup(c, 111, BASE + P.sym, 0);
	assert_null(loc.func);
	assert_true(loc.flags & HM_CODE_NO_DEBUGINFO);
	hm_code_close(c);
}

static __attribute__((noinline)) int self_marker(int x)
{
	return x * 3 + 1;
}

/* This process, as perf's synthesized mmap records would show it. */
static void map_self(struct hm_code *c)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[1024];

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off;
		char perm[8], path[512] = "";

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %511s", &start, &end, perm, &off,
			   path) < 4 || perm[2] != 'x' || path[0] != '/')
			continue;
		assert_int_equal(hm_code_add_map(c, (uint32_t)getpid(), start, end - start, off,
						 path, NULL, 0), 0);
	}
	fclose(f);
}

static void test_own_process_resolves_test_and_libc(void **state)
{
	struct hm_code *c = open_code(NULL);
	pid_t (*fn)(void) = getpid;
	int (*self)(int) = self_marker;
	struct hm_code_loc loc;

	(void)state;
	assert_int_equal(self(1), 4);
	map_self(c);
	loc = lookup(c, (uint32_t)getpid(), (uint64_t)(uintptr_t)self, 0);
	assert_string_equal(loc.func, "self_marker");
	assert_int_equal(loc.func_start, (uint64_t)(uintptr_t)self);
	assert_string_equal(base_name(loc.file), "test_code.c");

	loc = lookup(c, (uint32_t)getpid(), (uint64_t)(uintptr_t)fn, 0);
	assert_non_null(loc.func);
	assert_non_null(strstr(loc.func, "getpid"));
	assert_int_equal(loc.func_start, (uint64_t)(uintptr_t)fn);
	assert_non_null(strstr(loc.module, "libc"));
	/* libc's debug info comes from libc6-dbg through /usr/lib/debug/.build-id. */
	if (loc.flags & HM_CODE_NO_DEBUGINFO) {
		assert_non_null(strstr(loc.hint, "libc6-dbg"));
	} else {
		assert_non_null(loc.file);
		assert_true(loc.line > 0);
		assert_null(loc.hint);
	}
	hm_code_close(c);
}

static struct hm_code *open_kallsyms(const char *path)
{
	struct hm_code_opts o = {.vmlinux = "", .kallsyms = path, .kernel_release = "6.1.0-test"};

	return open_code(&o);
}

static void test_kallsyms_fixture_resolves_function_and_offset(void **state)
{
	struct hm_code *c = open_kallsyms(KALLSYMS);
	struct hm_code_loc loc;

	(void)state;
	loc = lookup(c, 0, 0xffffffff81001010ull, 1);
	assert_string_equal(loc.func, "do_one_initcall");
	assert_int_equal(loc.func_start, 0xffffffff81001000ull);
	assert_int_equal(loc.func_size, 0x200);
	assert_int_equal(loc.offset, 0x10);
	assert_string_equal(loc.module, "[kernel.kallsyms]");
	assert_null(loc.file);
	assert_int_equal(loc.flags, HM_CODE_KALLSYMS_ONLY);
	assert_non_null(strstr(loc.hint, "linux-image-6.1.0-test-dbg"));
	assert_non_null(strstr(loc.hint, "--vmlinux"));
	/* Three names at one address: the one that is not a section marker. */
	assert_string_equal(lookup(c, 0, 0xffffffff81000004ull, 1).func, "srso_alias_untrain_ret");
	assert_string_equal(lookup(c, 0, 0xffffffff81001310ull, 1).func, "arch_weak_hook");
	/* Past _etext: no function, even though init_task (data) follows. */
	loc = lookup(c, 0, 0xffffffff81001500ull, 1);
	assert_null(loc.func);
	assert_true(loc.flags & HM_CODE_UNMAPPED);

	loc = lookup(c, 0, 0xffffffffc0a01020ull, 1);
	assert_string_equal(loc.func, "xfs_iget_cache_hit");
	assert_int_equal(loc.offset, 0x20);
	assert_string_equal(loc.module, "xfs");
	assert_string_equal(lookup(c, 0, 0xffffffffc0a01404ull, 1).func, "xfs_iget");
	loc = lookup(c, 0, 0xffffffffc0b00008ull, 1);
	assert_string_equal(loc.module, "bpf");
	assert_int_equal(hm_code_read(c, 0, 0xffffffff81001010ull, 1, (uint8_t[4]){0}, 4), 0);
	hm_code_close(c);
}

static void test_kallsyms_moved_by_recorded_kernel_map(void **state)
{
	struct hm_code *c = open_kallsyms(KALLSYMS);
	const uint64_t shift = 0x10000000;
	struct hm_code_loc loc;

	(void)state;
	/* The recording's boot had _text 256 MiB higher than the kallsyms file's. */
	assert_int_equal(hm_code_add_map(c, (uint32_t)-1, 0xffffffff81000000ull + shift, 0x1400,
					 0xffffffff81000000ull + shift, "[kernel.kallsyms]_text",
					 NULL, 0), 0);
	assert_int_equal(hm_code_add_map(c, (uint32_t)-1, 0xffffffffc0c00000ull, 0x10000, 0,
					 "/lib/modules/6.1.0/kernel/fs/my-fs.ko", NULL, 0), 0);
	loc = lookup(c, 0, 0xffffffff81001010ull + shift, 1);
	assert_string_equal(loc.func, "do_one_initcall");
	assert_int_equal(loc.func_start, 0xffffffff81001000ull + shift);
	assert_int_equal(loc.offset, 0x10);
	/* A module the recording mapped but kallsyms does not list. */
	loc = lookup(c, 0, 0xffffffffc0c00100ull, 1);
	assert_null(loc.func);
	assert_string_equal(loc.module, "my_fs");
	assert_false(loc.flags & HM_CODE_UNMAPPED);
	hm_code_close(c);
}

static void test_kallsyms_zero_addresses_hint_kptr_restrict(void **state)
{
	char path[600];
	struct hm_code *c;
	struct hm_code_loc loc;

	(void)state;
	snprintf(path, sizeof(path), "%s/kallsyms.zero", P.dir);
	assert_int_equal(run("sed 's/^[0-9a-f]*/0000000000000000/' " KALLSYMS " > %s", path), 0);
	c = open_kallsyms(path);
	loc = lookup(c, 0, 0xffffffff81001010ull, 1);
	assert_null(loc.func);
	assert_true(loc.flags & HM_CODE_KALLSYMS_ONLY);
	assert_non_null(strstr(loc.hint, "kptr_restrict"));
	hm_code_close(c);
}

static void test_open_rejects_missing_or_non_elf_vmlinux(void **state)
{
	struct hm_code_opts o = {.vmlinux = "/nonexistent/vmlinux"};
	struct hm_code *c = (struct hm_code *)1;
	struct hm_err err = {0};

	(void)state;
	assert_int_equal(hm_code_open(&o, &c, &err), -1);
	assert_null(c);
	assert_non_null(strstr(err.msg, "/nonexistent/vmlinux"));
	o.vmlinux = SRC;
	assert_int_equal(hm_code_open(&o, &c, &err), -1);
	assert_non_null(strstr(err.msg, "not an ELF"));
	o.vmlinux = NULL;
	o.kallsyms = "/nonexistent/kallsyms";
	assert_int_equal(hm_code_open(&o, &c, &err), -1);
}

static uint64_t kallsyms_addr(const char *path, const char *name)
{
	FILE *f = fopen(path, "r");
	char line[512], n[256], t;
	unsigned long long a, found = 0;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &a, &t, n) == 3 && strcmp(n, name) == 0) {
			found = a;
			break;
		}
	if (f)
		fclose(f);
	return found;
}

static void test_real_kallsyms_resolves_do_sys_openat2(void **state)
{
	uint64_t addr = kallsyms_addr("/proc/kallsyms", "do_sys_openat2");
	struct hm_code *c;
	struct hm_code_loc loc;

	(void)state;
	if (!addr) {
		print_message("no do_sys_openat2 address in /proc/kallsyms (not root?)\n");
		skip();
	}
	c = open_code(NULL);
	loc = lookup(c, 0, addr, 1);
	assert_string_equal(loc.func, "do_sys_openat2");
	assert_int_equal(loc.func_start, addr);
	assert_int_equal(loc.offset, 0);
	loc = lookup(c, 0, addr + 4, 1);
	assert_string_equal(loc.func, "do_sys_openat2");
	assert_int_equal(loc.offset, 4);
	assert_string_equal(loc.module, "[kernel.kallsyms]");
	hm_code_close(c);
}

/* A Debian -dbg vmlinux with its System.map standing in for kallsyms; skipped when no
 * such package is installed. */
static void test_vmlinux_resolves_kernel_line(void **state)
{
	glob_t g;
	char map[600], moved[600];
	uint64_t addr, text;
	struct hm_code_opts o = {.kallsyms = map};
	struct hm_code *c;
	struct hm_code_loc loc;
	uint8_t buf[16];
	const uint64_t kaslr = 0x2a00000;

	(void)state;
	if (glob("/usr/lib/debug/boot/vmlinux-*", 0, NULL, &g) != 0) {
		print_message("no /usr/lib/debug/boot/vmlinux-*: install a linux-image-*-dbg\n");
		skip();
	}
	o.vmlinux = g.gl_pathv[0];
	snprintf(map, sizeof(map), "/usr/lib/debug/boot/System.map-%s",
		 g.gl_pathv[0] + strlen("/usr/lib/debug/boot/vmlinux-"));
	addr = kallsyms_addr(map, "do_sys_openat2");
	text = kallsyms_addr(map, "_text");
	if (!addr || !text) {
		globfree(&g);
		skip();
	}
	c = open_code(&o);
	loc = lookup(c, 0, addr + 1, 1);
	assert_string_equal(loc.func, "do_sys_openat2");
	assert_int_equal(loc.func_start, addr);
	assert_int_equal(loc.offset, 1);
	assert_non_null(loc.file);
	assert_non_null(strstr(loc.file, "fs/open.c"));
	assert_true(loc.line > 0);
	assert_string_equal(loc.module, "[kernel.kallsyms]");
	assert_false(loc.flags & HM_CODE_KALLSYMS_ONLY);
	assert_int_equal(hm_code_read(c, 0, addr, 1, buf, sizeof(buf)), sizeof(buf));
	hm_code_close(c);

	/* KASLR: this boot's kallsyms puts _text elsewhere; the vmlinux is moved along. */
	snprintf(moved, sizeof(moved), "%s/kallsyms.kaslr", P.dir);
	assert_int_equal(run("printf '%llx T _text\\n%llx t do_sys_openat2\\n' > %s",
			     (unsigned long long)(text + kaslr), (unsigned long long)(addr + kaslr),
			     moved), 0);
	o.kallsyms = moved;
	c = open_code(&o);
	loc = lookup(c, 0, addr + kaslr + 1, 1);
	assert_string_equal(loc.func, "do_sys_openat2");
	assert_int_equal(loc.func_start, addr + kaslr);
	assert_true(loc.line > 0);
	hm_code_close(c);
	globfree(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ip_resolves_to_function_and_line),
		cmocka_unit_test(test_inlined_ip_has_call_chain),
		cmocka_unit_test(test_same_ip_returns_cached_pointers),
		cmocka_unit_test(test_read_returns_function_bytes),
		cmocka_unit_test(test_stripped_binary_flags_no_debuginfo),
		cmocka_unit_test(test_debuglink_finds_separate_debuginfo),
		cmocka_unit_test(test_buildid_mismatch_flagged_but_resolved),
		cmocka_unit_test(test_recorded_build_id_table_applies_to_maps),
		cmocka_unit_test(test_buildid_dir_supplies_recorded_binary),
		cmocka_unit_test(test_debuginfod_fetches_by_build_id),
		cmocka_unit_test(test_sysroot_prefixes_recorded_paths),
		cmocka_unit_test(test_missing_file_hint_names_the_fix),
		cmocka_unit_test(test_vdso_and_anonymous_maps_have_no_file),
		cmocka_unit_test(test_unmapped_ip_flagged),
		cmocka_unit_test(test_new_mapping_replaces_overlapped_part),
		cmocka_unit_test(test_own_process_resolves_test_and_libc),
		cmocka_unit_test(test_kallsyms_fixture_resolves_function_and_offset),
		cmocka_unit_test(test_kallsyms_moved_by_recorded_kernel_map),
		cmocka_unit_test(test_kallsyms_zero_addresses_hint_kptr_restrict),
		cmocka_unit_test(test_open_rejects_missing_or_non_elf_vmlinux),
		cmocka_unit_test(test_real_kallsyms_resolves_do_sys_openat2),
		cmocka_unit_test(test_vmlinux_resolves_kernel_line),
	};

	return cmocka_run_group_tests(tests, build_prog, remove_prog);
}
