/* symbolize/code_kcore.c: code bytes read from kcore files; damaged cores give one-line errors. */
#include <errno.h>

#include "kcore_util.h"

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

	/* The note's text need not end in a newline or a NUL: a build-id that ends the
	 * segment is still read whole, and nothing past it is (the fuzzer found sscanf
	 * reading on). 76 bytes, so the note has no padding after its last digit. */
	static const char tail[] = "OSRELEASE=6.1.0-other\nAB=1\n"
				   "BUILD-ID=00112233445566778899aabbccddeeff00112233";
	assert_int_equal(strlen(tail) % 4, 0);
	write_core_info(path, &one, 1, BAD_NONE, tail);
	assert_int_equal(hm_code_open(&o, &c, &err), 0);
	hm_code_add_build_id(c, "[kernel.kallsyms]", other, sizeof(other));
	assert_int_equal(hm_code_kernel_image(c, &img), -1);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kcore_reads_code_bytes_exactly),
		cmocka_unit_test(test_kcore_reads_stop_at_segment_ends),
		cmocka_unit_test(test_kcore_follows_kallsyms_boot),
		cmocka_unit_test(test_malformed_cores_give_one_line_errors),
		cmocka_unit_test(test_kcore_vmcoreinfo_must_match_recording),
		cmocka_unit_test(test_live_kcore_only_for_running_kernel),
	};

	return cmocka_run_group_tests(tests, kcore_setup_code, kcore_teardown);
}
