/* symbolize/debugfile.c: a debug file with compressed sections (objcopy
 * --compress-debug-sections, as Debian's -dbg and dbgsym packages ship them) is inflated
 * once into a copy that libelf and libdw read like the original's uncompressed sections. */
#include "code_util.h"

#include <elfutils/libdwfl.h>
#include <sys/mman.h>

#include "symbolize/debugfile.h"

static char zdebug[600], bids[600];

/* The bytes of section name in the ELF file on fd (inflated by libelf when compressed),
 * copied; NULL when there is no such section. */
static void *section_bytes(int fd, const char *name, size_t *size, uint64_t *flags)
{
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	size_t shstrndx;
	void *out = NULL;

	assert_non_null(e);
	assert_int_equal(elf_getshdrstrndx(e, &shstrndx), 0);
	for (Elf_Scn *s = NULL; (s = elf_nextscn(e, s));) {
		GElf_Shdr sh;
		Elf_Data *d;

		assert_non_null(gelf_getshdr(s, &sh));
		if (strcmp(elf_strptr(e, shstrndx, sh.sh_name), name))
			continue;
		*flags = sh.sh_flags;
		if ((sh.sh_flags & SHF_COMPRESSED) && elf_compress(s, 0, 0) < 0)
			fail_msg("%s: %s", name, elf_errmsg(-1));
		assert_non_null(d = elf_getdata(s, NULL));
		*size = d->d_size;
		out = malloc(d->d_size ? d->d_size : 1);
		memcpy(out, d->d_buf, d->d_size);
		break;
	}
	elf_end(e);
	return out;
}

static int open_ro(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	return fd;
}

static int setup(void **state)
{
	if (build_prog(state))
		return -1;
	snprintf(zdebug, sizeof(zdebug), "%s/prog.zdebug", P.dir);
	snprintf(bids, sizeof(bids), "%s/debug", P.dir);
	return run("objcopy --only-keep-debug --compress-debug-sections=zlib %s %s", P.bin,
		   zdebug);
}

/* Each named section of the ELF file on fd equals that of the file at plain, and none of
 * them is compressed. */
static void assert_sections_equal(int fd, const char *plain, const char *const *names, size_t nn)
{
	for (size_t i = 0; i < nn; i++) {
		int pfd = open_ro(plain);
		size_t n, m;
		uint64_t pf, f;
		void *want = section_bytes(pfd, names[i], &n, &pf);
		void *got = section_bytes(fd, names[i], &m, &f);

		assert_non_null(want);
		assert_non_null(got);
		assert_false(f & SHF_COMPRESSED);
		assert_int_equal(m, n);
		assert_memory_equal(got, want, n);
		free(want);
		free(got);
		close(pfd);
	}
}

/* Every .debug_* section of the copy equals the uncompressed build's, none is compressed,
 * and the build-id note is where its segment says. */
static void test_copy_has_the_uncompressed_bytes(void **state)
{
	static const char *const names[] = {".debug_info", ".debug_abbrev", ".debug_line",
					    ".debug_str", ".symtab", ".strtab"};
	int zfd = open_ro(zdebug), fd, any_compressed = 0;
	const void *id;
	size_t n;
	uint64_t zf;
	Elf *e;

	(void)state;
	for (size_t i = 0; i < 4; i++) {
		free(section_bytes(zfd, names[i], &n, &zf));
		any_compressed |= (zf & SHF_COMPRESSED) != 0;
	}
	assert_true(any_compressed);	/* else objcopy did not compress: nothing tested */
	fd = hm_debugfile_inflated(zfd);
	assert_int_not_equal(fd, zfd);
	assert_sections_equal(fd, P.bin, names, sizeof(names) / sizeof(*names));
	assert_non_null(e = elf_begin(fd, ELF_C_READ_MMAP, NULL));
	assert_int_equal(dwelf_elf_gnu_build_id(e, &id), (ssize_t)P.id_size);
	assert_memory_equal(id, P.id, P.id_size);
	elf_end(e);
	close(fd);
}

/* A 32-bit file's copy is written by libelf from buffers (the copy is written through a
 * mapping only where its headers are this machine's): its sections equal the
 * uncompressed file's too. */
static void test_copy_of_a_32_bit_file(void **state)
{
	static const char *const names[] = {".debug_info", ".debug_abbrev", ".debug_str",
					    ".symtab"};
	char obj[700], obj32[700], z32[700];
	int zfd, fd;

	(void)state;
	snprintf(obj, sizeof(obj), "%s/prog.o", P.dir);
	snprintf(obj32, sizeof(obj32), "%s/prog32.o", P.dir);
	snprintf(z32, sizeof(z32), "%s/prog32.zo", P.dir);
	assert_int_equal(run("gcc -g -O2 -c -o %s " SRC " && objcopy -O elf32-x86-64 %s %s && "
			     "objcopy --compress-debug-sections=zlib %s %s",
			     obj, obj, obj32, obj32, z32), 0);
	zfd = open_ro(z32);
	fd = hm_debugfile_inflated(zfd);
	assert_int_not_equal(fd, zfd);
	assert_sections_equal(fd, obj32, names, sizeof(names) / sizeof(*names));
	close(fd);
}

/* The second open of the same file gets the first's copy; a file with nothing compressed
 * is read as it is. */
static void test_inflated_once_and_plain_untouched(void **state)
{
	struct hm_debugfile_stats s0 = hm_debugfile_stats(), s1, s2;
	int a = hm_debugfile_inflated(open_ro(zdebug)), b, p, pfd;

	(void)state;
	s1 = hm_debugfile_stats();
	b = hm_debugfile_inflated(open_ro(zdebug));
	s2 = hm_debugfile_stats();
	assert_true(a >= 0 && b >= 0 && a != b);
	assert_int_equal(s2.copies, s1.copies);
	assert_int_equal(s2.reused, s1.reused + 1);
	assert_true(s1.copies + s1.reused == s0.copies + s0.reused + 1);
	pfd = open_ro(P.debug);	/* objcopy --only-keep-debug: not compressed */
	p = hm_debugfile_inflated(pfd);
	assert_int_equal(p, pfd);
	assert_int_equal(hm_debugfile_stats().copies, s2.copies);
	close(a);
	close(b);
	close(p);
}

/* libdw over the copy: the store's line, from a module whose debug file is found by its
 * build-id as dwfl's callbacks find it. */
static char *debuginfo_dir;

static int find_in_bids(Dwfl_Module *mod, void **ud, const char *modname, GElf_Addr base,
			const char *file, const char *link, GElf_Word crc, char **name)
{
	(void)ud, (void)modname, (void)base, (void)file, (void)link, (void)crc;
	return hm_debugfile_find(mod, bids, name);
}

static const Dwfl_Callbacks cbs = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = find_in_bids,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_dir,
};

/* A fresh file (a new inode) at the program's build-id path under bids: src copied, or
 * with keep_debug, objcopy --only-keep-debug of src. */
static void put_at_build_id(const char *src, int keep_debug)
{
	char hex[64] = "", *h = hex;

	for (size_t i = 1; i < P.id_size; i++)
		h += sprintf(h, "%02x", P.id[i]);
	assert_int_equal(run("mkdir -p %s/.build-id/%02x && rm -f %s/.build-id/%02x/%s.debug && "
			     "%s %s %s/.build-id/%02x/%s.debug", bids, P.id[0], bids, P.id[0], hex,
			     keep_debug ? "objcopy --only-keep-debug" : "cp", src, bids, P.id[0],
			     hex), 0);
}

/* The stripped program as a module of dwfl, whose debug file cbs finds under bids. */
static Dwfl_Module *stripped_module(Dwfl *dwfl)
{
	Dwfl_Module *mod;

	assert_non_null(dwfl);
	assert_non_null(mod = dwfl_report_offline(dwfl, "prog", P.stripped, -1));
	assert_int_equal(dwfl_report_end(dwfl, NULL, NULL), 0);
	return mod;
}

/* The line of vaddr in path, read by dwfl from the file itself. */
static int line_of(const char *path, uint64_t vaddr)
{
	Dwfl *dwfl = dwfl_begin(&cbs);
	Dwfl_Module *mod;
	Dwfl_Line *ln;
	Dwarf_Addr bias;
	int line = 0;

	assert_non_null(mod = dwfl_report_offline(dwfl, "plain", path, -1));
	assert_int_equal(dwfl_report_end(dwfl, NULL, NULL), 0);
	assert_non_null(dwfl_module_getdwarf(mod, &bias));
	assert_non_null(ln = dwfl_module_getsrc(mod, vaddr + bias));
	assert_non_null(dwfl_lineinfo(ln, NULL, &line, NULL, NULL, NULL));
	dwfl_end(dwfl);
	return line;
}

static void test_dwfl_finds_it_by_build_id_and_reads_lines(void **state)
{
	Dwfl *dwfl = dwfl_begin(&cbs);
	Dwfl_Module *mod;
	Dwfl_Line *ln;
	Dwarf_Addr bias;
	const char *dname = NULL;
	int line = 0;

	(void)state;
	put_at_build_id(zdebug, 0);
	mod = stripped_module(dwfl);
	assert_non_null(dwfl_module_getdwarf(mod, &bias));
	dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, &dname);
	assert_non_null(dname);
	assert_non_null(strstr(dname, "/.build-id/"));
	assert_non_null(ln = dwfl_module_getsrc(mod, P.sym + bias));
	assert_non_null(dwfl_lineinfo(ln, NULL, &line, NULL, NULL, NULL));
	assert_true(line > 0);
	assert_int_equal(line, line_of(P.bin, P.sym));
	dwfl_end(dwfl);
}

/* A file at the build-id path that is another build's is not taken. */
static void test_other_build_at_the_path_refused(void **state)
{
	char *name = NULL;
	Dwfl *dwfl = dwfl_begin(&cbs);
	Dwfl_Module *mod;

	(void)state;
	put_at_build_id(P.rebuilt, 1);
	mod = stripped_module(dwfl);
	assert_int_equal(hm_debugfile_find(mod, bids, &name), -1);
	assert_null(name);
	assert_int_equal(hm_debugfile_find(mod, "/nonexistent", &name), -1);
	dwfl_end(dwfl);
}

/* A recording's build-id table, inflated ahead on a thread of its own: the module's
 * opener then gets that copy, and an id with no file under the directory is passed over. */
static void test_prefetch_makes_the_copy_the_opener_gets(void **state)
{
	char *name = NULL;
	struct hm_perf_build_id ids[2] = {{.size = (uint8_t)P.id_size}, {.size = 20}};
	struct hm_debugfile_stats s0, s1, s2;
	Dwfl *dwfl = dwfl_begin(&cbs);
	Dwfl_Module *mod;
	int fd;

	(void)state;
	put_at_build_id(zdebug, 0);
	memcpy(ids[0].id, P.id, P.id_size);
	memset(ids[1].id, 0xcd, sizeof(ids[1].id));
	s0 = hm_debugfile_stats();
	hm_debugfile_prefetch_end(hm_debugfile_prefetch(bids, ids, 2));
	s1 = hm_debugfile_stats();
	assert_int_equal(s1.copies, s0.copies + 1);
	mod = stripped_module(dwfl);
	assert_true((fd = hm_debugfile_find(mod, bids, &name)) >= 0);
	s2 = hm_debugfile_stats();
	assert_int_equal(s2.copies, s1.copies);
	assert_int_equal(s2.reused, s1.reused + 1);
	assert_null(hm_debugfile_prefetch(bids, ids, 0));
	close(fd);
	free(name);
	dwfl_end(dwfl);
}

/* A recording's build-id table as the helper threads take it: the kernel's entries left
 * out where asked, then each debug file found once (two ids of one file, an id with no
 * file, an empty file: one, none, none), the largest first. */
static void test_find_all_each_file_once_largest_first(void **state)
{
	struct hm_perf_build_id t[6] = {{.size = (uint8_t)P.id_size, .misc = PERF_RECORD_MISC_USER},
					{.size = (uint8_t)P.id_size, .misc = PERF_RECORD_MISC_USER},
					{.size = (uint8_t)P.id_size, .misc = PERF_RECORD_MISC_KERNEL},
					{.size = 20, .misc = PERF_RECORD_MISC_USER},
					{.size = 1, .misc = PERF_RECORD_MISC_USER},
					{.misc = PERF_RECORD_MISC_USER}};
	struct hm_debugfile_id ids[6];
	struct hm_debugfile_found *f;
	struct stat small, large;
	uint8_t rid[20];
	size_t rn = elf_build_id(P.rebuilt, rid), n;
	char path[700], hex[64] = "", *h = hex;

	(void)state;
	put_at_build_id(zdebug, 0);	/* compressed: smaller than the rebuilt program */
	for (size_t i = 1; i < rn; i++)
		h += sprintf(h, "%02x", rid[i]);
	snprintf(path, sizeof(path), "%s/.build-id/%02x/%s.debug", bids, rid[0], hex);
	assert_int_equal(run("mkdir -p %s/.build-id/%02x && cp %s %s", bids, rid[0], P.rebuilt,
			     path), 0);
	for (int i = 0; i < 3; i++)
		memcpy(t[i].id, P.id, P.id_size);
	memset(t[3].id, 0xcd, sizeof(t[3].id));
	memcpy(t[5].id, rid, rn);
	t[5].size = (uint8_t)rn;
	assert_int_equal(hm_debugfile_ids(t, 6, 0, ids), 5);
	assert_int_equal(hm_debugfile_ids(t, 6, 1, ids), 4);
	assert_memory_equal(ids[3].id, rid, rn);
	assert_true(stat(zdebug, &small) == 0 && stat(P.rebuilt, &large) == 0);
	assert_true(small.st_size < large.st_size);
	f = hm_debugfile_find_all(ids, 4, bids, &n);
	assert_non_null(f);
	assert_int_equal(n, 2);
	assert_int_equal(f[0].st.st_size, large.st_size);
	assert_int_equal(f[1].st.st_size, small.st_size);
	assert_true(hm_debugfile_same(&f[0].st, &f[0].st));
	assert_false(hm_debugfile_same(&f[0].st, &f[1].st));
	for (size_t i = 0; i < n; i++)
		close(f[i].fd);
	free(f);
	assert_null(hm_debugfile_find_all(ids + 2, 1, bids, &n));	/* no such file */
	assert_int_equal(n, 0);
	assert_int_equal(run("rm %s && touch %s", path, path), 0);	/* empty */
	assert_null(hm_debugfile_find_all(ids + 3, 1, bids, &n));
	assert_int_equal(run("rm %s", path), 0);
}

/* The opener and the prefetch at once: whichever comes second waits for the first's copy. */
static void test_prefetch_and_opener_at_once_make_one_copy(void **state)
{
	char *name = NULL;
	struct hm_perf_build_id id = {.size = (uint8_t)P.id_size};
	struct hm_debugfile_prefetch *pf;
	struct hm_debugfile_stats s0, s1;
	Dwfl *dwfl = dwfl_begin(&cbs);
	Dwfl_Module *mod;
	int fd;

	(void)state;
	put_at_build_id(zdebug, 0);
	memcpy(id.id, P.id, P.id_size);
	mod = stripped_module(dwfl);
	s0 = hm_debugfile_stats();
	pf = hm_debugfile_prefetch(bids, &id, 1);
	assert_true((fd = hm_debugfile_find(mod, bids, &name)) >= 0);
	hm_debugfile_prefetch_end(pf);
	s1 = hm_debugfile_stats();
	assert_int_equal(s1.copies, s0.copies + 1);
	assert_int_equal(s1.reused, s0.reused + 1);
	close(fd);
	free(name);
	dwfl_end(dwfl);
}

/* The file offset of section name's bytes in path. */
static uint64_t section_offset(const char *path, const char *name)
{
	int fd = open_ro(path);
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	size_t shstrndx;
	uint64_t off = 0;

	assert_non_null(e);
	assert_int_equal(elf_getshdrstrndx(e, &shstrndx), 0);
	for (Elf_Scn *s = NULL; (s = elf_nextscn(e, s));) {
		GElf_Shdr sh;

		assert_non_null(gelf_getshdr(s, &sh));
		if (!strcmp(elf_strptr(e, shstrndx, sh.sh_name), name))
			off = sh.sh_offset;
	}
	elf_end(e);
	close(fd);
	assert_true(off > 0);
	return off;
}

/* A copy of zdebug with len bytes at off overwritten by bytes; its descriptor. */
static int damaged_copy(const char *name, uint64_t off, const void *bytes, size_t len)
{
	char path[700];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", P.dir, name);
	assert_int_equal(run("cp %s %s", zdebug, path), 0);
	assert_true((fd = open(path, O_RDWR | O_CLOEXEC)) >= 0);
	assert_int_equal(pwrite(fd, bytes, len, (off_t)off), (ssize_t)len);
	return fd;
}

/* Damage in a compressed section makes no copy: the file is handed back as it is, for
 * libdw to read and say what it finds; a header claiming a terabyte allocates nothing. */
static void test_damaged_sections_are_read_as_they_are(void **state)
{
	uint64_t info = section_offset(zdebug, ".debug_info");
	uint64_t huge = 1ull << 40;
	uint8_t junk[64];
	struct hm_debugfile_stats s0 = hm_debugfile_stats();
	int fd;

	(void)state;
	memset(junk, 0x5a, sizeof(junk));
	fd = damaged_copy("payload.debug", info + 24 + 40, junk, sizeof(junk));
	assert_int_equal(hm_debugfile_inflated(fd), fd);
	close(fd);
	fd = damaged_copy("size.debug", info + 8, &huge, sizeof(huge));	/* Elf64_Chdr.ch_size */
	assert_int_equal(hm_debugfile_inflated(fd), fd);
	close(fd);
	assert_int_equal(hm_debugfile_stats().copies, s0.copies);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_copy_has_the_uncompressed_bytes),
		cmocka_unit_test(test_copy_of_a_32_bit_file),
		cmocka_unit_test(test_inflated_once_and_plain_untouched),
		cmocka_unit_test(test_dwfl_finds_it_by_build_id_and_reads_lines),
		cmocka_unit_test(test_other_build_at_the_path_refused),
		cmocka_unit_test(test_prefetch_makes_the_copy_the_opener_gets),
		cmocka_unit_test(test_prefetch_and_opener_at_once_make_one_copy),
		cmocka_unit_test(test_find_all_each_file_once_largest_first),
		cmocka_unit_test(test_damaged_sections_are_read_as_they_are),
	};

	elf_version(EV_CURRENT);
	return cmocka_run_group_tests(tests, setup, remove_prog);
}
