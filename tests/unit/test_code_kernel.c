/* symbolize/code*.c, kernel side: the kallsyms fixture, /proc/kallsyms and a -dbg vmlinux. */
#include <inttypes.h>
#include "core/buildid.h"
#include "code_util.h"

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

/* The named vmlinux is this test binary: its real build-id against a made-up one
 * recorded for [kernel.kallsyms]. */
static void test_vmlinux_of_other_build_refused_unless_forced(void **state)
{
	static const uint8_t other[20] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
	uint8_t self[HM_BUILD_ID_MAX];
	size_t n = hm_buildid_read("/proc/self/exe", self);
	struct hm_code_opts o = {.vmlinux = "/proc/self/exe", .kernel_release = "6.1.0-57-x"};
	const char *warning = "unset";
	struct hm_code *c;
	struct hm_err err = {0};

	(void)state;
	assert_true(n > 0);
	assert_int_equal(hm_code_open(&o, &c, &err), 0);
	assert_int_equal(hm_code_kernel_verify(c, &warning, &err), 0); /* nothing recorded */
	hm_code_add_build_id(c, "[kernel.kallsyms]", other, sizeof(other));
	assert_int_equal(hm_code_kernel_verify(c, &warning, &err), -1);
	assert_int_equal(err.code, HM_EXIT_INPUT);
	assert_non_null(strstr(err.msg, "0102030405060708090a"));
	assert_non_null(strstr(err.msg, "--force"));
	assert_non_null(strstr(err.msg, "vmlinux-6.1.0-57-x"));
	hm_code_add_build_id(c, "[kernel.kallsyms]", self, n);
	assert_int_equal(hm_code_kernel_verify(c, &warning, &err), 0);
	assert_null(warning);
	hm_code_close(c);

	o.force = 1;
	assert_int_equal(hm_code_open(&o, &c, &err), 0);
	hm_code_add_build_id(c, "[kernel.kallsyms]", other, sizeof(other));
	assert_int_equal(hm_code_kernel_verify(c, &warning, &err), 0);
	assert_non_null(warning);
	assert_non_null(strstr(warning, "--force"));
	hm_code_close(c);
}

/* kallsyms has no build-id: a given file is checked by the recorded kernel map's length
 * (_text.._etext, as perf and hitmap record write it) and by where the recorded modules
 * were loaded. The fixture's text is 0x1400 bytes; xfs lies at 0xffffffffc0a01000. */
static int kallsyms_verify(uint64_t text_len, uint64_t xfs_start, int force, const char **w,
			   struct hm_err *err)
{
	struct hm_code_opts o = {.vmlinux = "", .kallsyms = KALLSYMS,
				 .kernel_release = "6.1.0-test", .force = force};
	struct hm_code *c = open_code(&o);
	int rc;

	assert_int_equal(hm_code_add_map(c, (uint32_t)-1, 0xffffffff81000000ull, text_len,
					 0xffffffff81000000ull, "[kernel.kallsyms]_text", NULL, 0), 0);
	assert_int_equal(hm_code_add_map(c, (uint32_t)-1, xfs_start, 0x10000, 0,
					 "/lib/modules/6.1.0-test/kernel/fs/xfs/xfs.ko", NULL, 0), 0);
	rc = hm_code_kernel_verify(c, w, err);
	if (*w)
		*w = strstr(*w, "--force") ? "forced" : "other";
	hm_code_close(c);
	return rc;
}

static void test_kallsyms_of_other_build_or_boot_refused_unless_forced(void **state)
{
	const char *w = NULL;
	struct hm_err err = {0};

	(void)state;
	assert_int_equal(kallsyms_verify(0x1400, 0xffffffffc0a00000ull, 0, &w, &err), 0);
	assert_null(w);
	/* Old hitmap recordings: the kernel map ran to the end of the address space. */
	assert_int_equal(kallsyms_verify(~0ull - 0xffffffff81000000ull, 0xffffffffc0a00000ull, 0,
					 &w, &err), 0);
	assert_int_equal(kallsyms_verify(0x1800, 0xffffffffc0a00000ull, 0, &w, &err), -1);
	assert_int_equal(err.code, HM_EXIT_INPUT);
	assert_non_null(strstr(err.msg, "5120 bytes there but 6144 in the recording"));
	assert_non_null(strstr(err.msg, KALLSYMS));
	assert_int_equal(kallsyms_verify(0x1400, 0xffffffffc0f00000ull, 0, &w, &err), -1);
	assert_non_null(strstr(err.msg, "module xfs was recorded at 0xffffffffc0f00000"));
	assert_int_equal(kallsyms_verify(0x1800, 0xffffffffc0a00000ull, 1, &w, &err), 0);
	assert_string_equal(w, "forced");
}

/* The default, this machine's /proc/kallsyms, names nothing of a recording made on another
 * release: every kernel sample would get this kernel's names. */
static void test_default_kallsyms_not_used_for_other_release(void **state)
{
	struct hm_code_opts o = {.vmlinux = "", .kernel_release = "4.15.0-elsewhere"};
	struct hm_code *c = open_code(&o);
	struct hm_code_loc loc;

	(void)state;
	loc = lookup(c, 0, 0xffffffff81001010ull, 1);
	assert_null(loc.func);
	assert_true(loc.flags & HM_CODE_NO_KSYMS);
	assert_non_null(strstr(loc.hint, "recorded on kernel 4.15.0-elsewhere, not this machine's"));
	assert_non_null(strstr(loc.hint, "--kallsyms FILE"));
	hm_code_close(c);
}

/* A module through its own ELF file: tests/data/code_prog.c compiled to a relocatable
 * object stands in for the -dbg package's xfs.ko under SYSROOT/usr/lib/debug; the module
 * map puts its .text at the map's start, as the kernel's loader does. */
static void test_module_resolved_through_its_debug_file(void **state)
{
	static const uint8_t other[20] = {9, 9, 9};
	const char *file = "/lib/modules/6.1.0-test/kernel/fs/hmmod.ko";
	char ko[700], dir[600];
	struct hm_code_opts o = {.vmlinux = "", .kallsyms = KALLSYMS,
				 .kernel_release = "6.1.0-test", .sysroot = P.dir};
	uint64_t start = 0xffffffffc0400000ull, off, size;
	struct hm_code *c;
	struct hm_code_loc loc;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/usr/lib/debug/lib/modules/6.1.0-test/kernel/fs", P.dir);
	snprintf(ko, sizeof(ko), "%s/hmmod.ko", dir);
	assert_int_equal(run("mkdir -p %s && gcc -O2 -g -c -o %s " SRC, dir, ko), 0);
	off = elf_sym(ko, "hm_store", &size);	/* section-relative: hm_store is in .text */
	assert_true(size > 1);

	c = open_code(&o);
	assert_int_equal(hm_code_add_map(c, (uint32_t)-1, start, 0x10000, 0, file, NULL, 0), 0);
	loc = lookup(c, 0, start + off + 1, 1);
	assert_non_null(loc.func);
	assert_string_equal(loc.func, "hm_store");
	assert_int_equal(loc.func_start, start + off);
	assert_string_equal(loc.module, "hmmod");
	assert_non_null(loc.file);
	assert_string_equal(base_name(loc.file), "code_prog.c");
	assert_true(loc.line > 0);
	assert_false(loc.flags & HM_CODE_KALLSYMS_ONLY);
	hm_code_close(c);

	/* Recorded with another build-id: the file is not used, the module is still named. */
	c = open_code(&o);
	hm_code_add_build_id(c, file, other, sizeof(other));
	assert_int_equal(hm_code_add_map(c, (uint32_t)-1, start, 0x10000, 0, file, NULL, 0), 0);
	loc = lookup(c, 0, start + off + 1, 1);
	assert_true(loc.flags & HM_CODE_KALLSYMS_ONLY);
	assert_string_equal(loc.module, "hmmod");
	hm_code_close(c);
}

/* A module built elsewhere (the lab's patched xfs.ko) through perf's build-id cache
 * (--buildid-dir DIR, DIR/.build-id/xx/yyyy/elf as `perf buildid-cache -a` fills it):
 * taken only for the recorded build-id. Its code bytes are the file's .text, and an
 * instruction holding a relocated place (main's rip-relative `counters`, its call) is
 * reported relocated: the loader changed those bytes. */
static void test_module_through_buildid_cache(void **state)
{
	static const uint8_t other[20] = {9, 9, 9};
	const char *file = "/lib/modules/6.1.0-test/kernel/fs/hmmod.ko";
	char ko[700], cache[600], hex[41], rela[700];
	uint8_t id[20], buf[16];
	struct hm_code_opts o = {.vmlinux = "", .kallsyms = KALLSYMS,
				 .kernel_release = "6.1.0-test", .buildid_dir = cache};
	uint64_t start = 0xffffffffc0400000ull, off, moff, size, r = 0, bias;
	const char *path;
	size_t n;
	struct hm_code *c;
	struct hm_code_loc loc;
	FILE *f;

	(void)state;
	snprintf(cache, sizeof(cache), "%s/kcache", P.dir);
	snprintf(ko, sizeof(ko), "%s/built.ko", P.dir);
	snprintf(rela, sizeof(rela), "%s/built.rela", P.dir);
	/* main in .text (not .text.startup) for its relocations; ld -r keeps it relocatable */
	assert_int_equal(run("gcc -O2 -g -fno-reorder-functions -c -o %s.o " SRC " && ld -r "
			     "--build-id=sha1 -o %s %s.o && readelf -rW %s | awk '/^Relocation "
			     "section/ { t = ($3 ~ /^.[.]rela[.]text.$/) } t && /^0/ { print $1 }' "
			     "> %s", ko, ko, ko, ko, rela), 0);
	n = elf_build_id(ko, id);
	assert_int_equal(n, 20);
	hex_of(id, n, hex);
	assert_int_equal(run("mkdir -p %s/.build-id/%.2s/%s && cp %s %s/.build-id/%.2s/%s/elf",
			     cache, hex, hex + 2, ko, cache, hex, hex + 2), 0);
	off = elf_sym(ko, "hm_store", &size);
	moff = elf_sym(ko, "main", NULL);
	assert_non_null(f = fopen(rela, "r"));	/* readelf's first .rela.text place */
	assert_int_equal(fscanf(f, "%" SCNx64, &r), 1);
	fclose(f);
	assert_true(r > moff);

	c = open_code(&o);
	hm_code_add_build_id(c, file, id, n);
	assert_int_equal(hm_code_add_map(c, (uint32_t)-1, start, 0x10000, 0, file, NULL, 0), 0);
	loc = lookup(c, 0, start + off + 1, 1);
	assert_non_null(loc.func);
	assert_string_equal(loc.func, "hm_store");
	assert_true(loc.line > 0);
	assert_false(loc.flags & HM_CODE_KALLSYMS_ONLY);
	assert_int_equal(hm_code_read(c, 0, start + off, 1, buf, sizeof(buf)), sizeof(buf));
	assert_int_equal(hm_code_kernel_relocated(c, start + off, size), 0);
	/* the 4 bytes at r are relocated: an instruction covering r is, one ending before not */
	assert_int_equal(hm_code_kernel_relocated(c, start + r - 2, 4), HM_PATCH_RELOC);
	assert_int_equal(hm_code_kernel_relocated(c, start + r - 4, 4), 0);
	assert_int_equal(hm_code_kernel_module(c, start + off, &path, &bias), 0);
	assert_non_null(strstr(path, "/kcache/.build-id/"));
	assert_int_equal(hm_code_kernel_module(c, start - 1, &path, &bias), -1);
	hm_code_close(c);

	/* Another build-id recorded: the cached file is not taken, no bytes read from it. */
	c = open_code(&o);
	hm_code_add_build_id(c, file, other, sizeof(other));
	assert_int_equal(hm_code_add_map(c, (uint32_t)-1, start, 0x10000, 0, file, NULL, 0), 0);
	loc = lookup(c, 0, start + off + 1, 1);
	assert_true(loc.flags & HM_CODE_KALLSYMS_ONLY);
	assert_int_equal(hm_code_read(c, 0, start + off, 1, buf, sizeof(buf)), 0);
	hm_code_close(c);
}

/* .parainstructions as the kernel's (struct paravirt_patch_site: instr, type, len,
 * 16 bytes) in a program used as the vmlinux: ips inside the listed site are boot-patched
 * code, the bytes after it are not. */
static void test_paravirt_sites_from_parainstructions(void **state)
{
	char src[600], exe[600];
	struct hm_code_opts o = {.kallsyms = KALLSYMS, .kernel_release = "6.1.0-test"};
	struct hm_code *c;
	uint64_t fn;
	FILE *f;

	(void)state;
	snprintf(src, sizeof(src), "%s/pv.c", P.dir);
	snprintf(exe, sizeof(exe), "%s/pv", P.dir);
	assert_non_null(f = fopen(src, "w"));
	fputs("struct site { void *instr; unsigned char type, len; };\n"
	      "__attribute__((noinline)) void hm_pv_fn(void) { __asm__ volatile(\"nop\"); }\n"
	      "__attribute__((section(\".parainstructions\"), used))\n"
	      "static struct site s = { (void *)hm_pv_fn, 1, 6 };\n"
	      "int main(void) { hm_pv_fn(); return 0; }\n", f);
	fclose(f);
	assert_int_equal(run("gcc -O2 -g -no-pie -o %s %s", exe, src), 0);
	fn = elf_sym(exe, "hm_pv_fn", NULL);
	assert_true(fn != 0);
	o.vmlinux = exe;
	c = open_code(&o);
	assert_int_equal(hm_code_kernel_patched(c, fn), 1);
	assert_int_equal(hm_code_kernel_patched(c, fn + 5), 1);
	assert_int_equal(hm_code_kernel_patched(c, fn + 6), 0);
	assert_int_equal(hm_code_kernel_patched(c, fn - 1), 0);
	hm_code_close(c);
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
		cmocka_unit_test(test_kallsyms_fixture_resolves_function_and_offset),
		cmocka_unit_test(test_kallsyms_moved_by_recorded_kernel_map),
		cmocka_unit_test(test_kallsyms_zero_addresses_hint_kptr_restrict),
		cmocka_unit_test(test_open_rejects_missing_or_non_elf_vmlinux),
		cmocka_unit_test(test_vmlinux_of_other_build_refused_unless_forced),
		cmocka_unit_test(test_module_resolved_through_its_debug_file),
		cmocka_unit_test(test_module_through_buildid_cache),
		cmocka_unit_test(test_paravirt_sites_from_parainstructions),
		cmocka_unit_test(test_kallsyms_of_other_build_or_boot_refused_unless_forced),
		cmocka_unit_test(test_default_kallsyms_not_used_for_other_release),
		cmocka_unit_test(test_real_kallsyms_resolves_do_sys_openat2),
		cmocka_unit_test(test_vmlinux_resolves_kernel_line),
	};

	return cmocka_run_group_tests(tests, make_dir, remove_prog);
}
