/* symbolize/code*.c, user space: tests/data/code_prog.c is built with gcc -O2 -g at test
 * time, mapped as a PIE would be, and its addresses resolved; so is this process. Lines are
 * found by the source's LINE:name markers. The kernel side is in test_code_kernel.c. */
#include "code_util.h"

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
		/* field by field: the struct has padding that a copy need not keep */
		assert_ptr_equal(a.func, b.func);
		assert_int_equal(a.func_start, b.func_start);
		assert_int_equal(a.func_size, b.func_size);
		assert_int_equal(a.offset, b.offset);
		assert_ptr_equal(a.file, b.file);
		assert_int_equal(a.line, b.line);
		assert_int_equal(a.column, b.column);
		assert_ptr_equal(a.module, b.module);
		assert_int_equal(a.nr_inlines, b.nr_inlines);
		assert_ptr_equal(a.inlines, b.inlines);
		assert_int_equal(a.flags, b.flags);
		assert_ptr_equal(a.hint, b.hint);
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
	/* The data symbolizer reads the same file (hm_data_set_files). */
	snprintf(cache + strlen(cache), sizeof(cache) - strlen(cache), "/.build-id/%.2s/%s/elf",
		 hex, hex + 2);
	assert_string_equal(hm_code_file(c, P.rebuilt), cache);
	assert_null(hm_code_file(c, "/never/mapped"));
	/* Replaced after the code side matched it (a rebuild): never handed on as the
	 * recorded file. */
	assert_int_equal(run("cp %s %s.new && mv %s.new %s", P.rebuilt, cache, cache, cache), 0);
	assert_null(hm_code_file(c, P.rebuilt));
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
	/* UNREADABLE: the report counts such samples and names the file (resolve/load.c) */
	assert_int_equal(loc.flags, HM_CODE_NO_FILE | HM_CODE_NO_DEBUGINFO | HM_CODE_UNREADABLE);
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
	};

	return cmocka_run_group_tests(tests, build_prog, remove_prog);
}
