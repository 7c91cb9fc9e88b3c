/* perf.data reader on damaged input: every prefix of a recording, corrupt sizes and offsets,
 * unknown records, random byte flips. Each must give a one-line error naming the file (exit
 * code 2) or a clean short read; ASan runs of this binary catch any overread. */
#include <sys/wait.h>

#include "core/file.h"
#include "tests/unit/perfdata_util.h"

static void expect_error(const char *path, const char *needle)
{
	struct hm_err err = {0};
	int n = read_all(path, &err, NULL);

	if (n >= 0)
		fail_msg("%s: read %d events, expected an error with '%s'", path, n, needle);
	assert_int_equal(err.code, HM_EXIT_INPUT);
	assert_non_null(strstr(err.msg, path));
	assert_null(strchr(err.msg, '\n'));
	if (needle && !strstr(err.msg, needle))
		fail_msg("message '%s' lacks '%s'", err.msg, needle);
}

static void test_every_prefix_of_a_file_is_an_error(void **state)
{
	char *path = tmp_path("full"), *cut = tmp_path("cut");
	struct hm_err err = {0};
	size_t len;
	uint8_t *bytes;

	(void)state;
	write_full_file(path, 0);
	bytes = read_bytes(path, &len);
	assert_int_equal(read_all(path, &err, NULL), NR_ALL_RECORDS);
	/* Features come last in file mode, so every shorter file lacks something. */
	for (size_t l = 0; l < len; l++) {
		write_bytes(cut, bytes, l);
		expect_error(cut, NULL);
	}
	unlink(path);
	unlink(cut);
	free(path);
	free(cut);
	free(bytes);
}

static void test_every_prefix_of_a_pipe_stream_errors_or_stops_clean(void **state)
{
	char *path = tmp_path("pipe"), *cut = tmp_path("pcut");
	struct hm_err err = {0};
	size_t len;
	uint8_t *bytes;
	int clean = 0;

	(void)state;
	write_full_file(path, HM_PERFDATA_PIPE);
	bytes = read_bytes(path, &len);
	for (size_t l = 0; l <= len; l++) {
		int n;

		write_bytes(cut, bytes, l);
		memset(&err, 0, sizeof(err));
		n = read_all(cut, &err, NULL);
		if (n < 0) {
			assert_int_equal(err.code, HM_EXIT_INPUT);
			assert_non_null(strstr(err.msg, cut));
		} else {
			assert_true(n <= NR_ALL_RECORDS);
			clean++;
		}
	}
	assert_true(clean >= NR_ALL_RECORDS);	/* at least one cut per record boundary */
	unlink(path);
	unlink(cut);
	free(path);
	free(cut);
	free(bytes);
}

static void test_truncated_header_rejected(void **state)
{
	char *path = tmp_path("hdr");
	size_t len;
	uint8_t *bytes;

	(void)state;
	write_full_file(path, 0);
	bytes = read_bytes(path, &len);
	write_bytes(path, bytes, 50);
	expect_error(path, "truncated at byte 50 (the file header ends at byte 104");
	write_bytes(path, bytes, 10);
	expect_error(path, "truncated at byte 10 (a perf.data header needs 16 bytes)");
	write_bytes(path, bytes, len - 40);	/* inside the features */
	expect_error(path, "past the end of the file");
	unlink(path);
	free(path);
	free(bytes);
}

static void test_truncated_data_section_rejected(void **state)
{
	char *path = tmp_path("data");
	size_t len;
	uint8_t *bytes;
	uint64_t data_off;
	char want[128];

	(void)state;
	write_full_file(path, 0);
	bytes = read_bytes(path, &len);
	memcpy(&data_off, bytes + 40, 8);
	write_bytes(path, bytes, data_off + 20);
	snprintf(want, sizeof(want), "truncated at byte %llu (the data section ends at byte",
		 (unsigned long long)data_off + 20);
	expect_error(path, want);
	unlink(path);
	free(path);
	free(bytes);
}

static void test_empty_and_foreign_files_rejected(void **state)
{
	char *path = tmp_path("foreign");
	uint8_t swapped[16] = {'2', 'E', 'L', 'I', 'F', 'R', 'E', 'P', 0, 0, 0, 0, 0, 0, 0, 16};

	(void)state;
	write_bytes(path, "", 0);
	expect_error(path, "empty file");
	write_bytes(path, "this is not a perf.data file at all", 35);
	expect_error(path, "not a perf.data file");
	write_bytes(path, swapped, sizeof(swapped));
	expect_error(path, "byte order");
	write_bytes(path, "PERFILE2\x68\0\0\0\0\0\0\0", 16);
	expect_error(path, "truncated at byte 16");
	unlink(path);
	free(path);
}

static struct perf_event_attr simple_attr(void)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR;
	return a;
}

/* A valid sample of simple_attr(). */
static void put_sample(uint8_t *buf, size_t *at, uint64_t ip)
{
	uint64_t body[4] = {ip, 7 | (uint64_t)8 << 32, 1000, 0x1000};

	put_rec(buf, at, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, body, sizeof(body));
}

static void write_crafted(const char *path, const struct perf_event_attr *a, const void *data,
			  size_t len)
{
	size_t flen;
	uint8_t *file = build_file(a, data, len, &flen);

	write_bytes(path, file, flen);
	free(file);
}

static void test_record_size_below_header_rejected(void **state)
{
	char *path = tmp_path("small");
	struct perf_event_attr a = simple_attr();
	uint8_t data[64] = {0};
	size_t at = 0;
	struct perf_event_header bad = {PERF_RECORD_SAMPLE, 0, 4};

	(void)state;
	put_sample(data, &at, 0x401000);
	memcpy(data + at, &bad, 8);
	write_crafted(path, &a, data, at + 8);
	expect_error(path, "corrupt record (size below its 8-byte header)");
	unlink(path);
	free(path);
}

static void test_record_past_data_section_rejected(void **state)
{
	char *path = tmp_path("past");
	struct perf_event_attr a = simple_attr();
	uint8_t data[64] = {0};
	size_t at = 0;
	struct perf_event_header big = {PERF_RECORD_SAMPLE, 0, 4000};

	(void)state;
	put_sample(data, &at, 0x401000);
	memcpy(data + at, &big, 8);
	write_crafted(path, &a, data, at + 8);
	expect_error(path, "needs 4000 bytes");
	unlink(path);
	free(path);
}

static void test_unknown_record_types_skipped(void **state)
{
	char *path = tmp_path("unknown");
	struct perf_event_attr a = simple_attr();
	uint8_t data[256] = {0}, junk[24] = {1, 2, 3};
	size_t at = 0;
	struct hm_perfdata *pd = NULL;
	struct hm_err err = {0};

	(void)state;
	put_rec(data, &at, 200, 0, junk, sizeof(junk));
	put_rec(data, &at, PERF_RECORD_SWITCH_CPU_WIDE, 0, junk, 16);
	put_rec(data, &at, HM_PERF_RECORD_FINISHED_ROUND, 0, junk, 0);
	put_rec(data, &at, 63, 0, junk, 5);	/* odd size: the next record is unaligned */
	put_sample(data, &at, 0x401000);
	write_crafted(path, &a, data, at);
	assert_int_equal(read_all(path, &err, &pd), 1);
	assert_int_equal(hm_perfdata_stats(pd)->skipped, 4);
	assert_int_equal(hm_perfdata_stats(pd)->records[PERF_RECORD_SWITCH_CPU_WIDE], 1);
	hm_perfdata_close(pd);
	unlink(path);
	free(path);
}

static void test_auxtrace_payload_skipped(void **state)
{
	char *path = tmp_path("aux");
	struct perf_event_attr a = simple_attr();
	uint8_t data[256] = {0};
	uint64_t aux[5] = {16, 0, 0, 0, 0};	/* size, offset, reference, idx/tid, cpu */
	size_t at = 0;
	struct hm_err err = {0};

	(void)state;
	put_rec(data, &at, HM_PERF_RECORD_AUXTRACE, 0, aux, sizeof(aux));
	memset(data + at, 0xff, 16);	/* the payload: would read as garbage records */
	at += 16;
	put_sample(data, &at, 0x401000);
	write_crafted(path, &a, data, at);
	assert_int_equal(read_all(path, &err, NULL), 1);
	aux[0] = 1 << 20;	/* a payload longer than the data section */
	at = 0;
	put_rec(data, &at, HM_PERF_RECORD_AUXTRACE, 0, aux, sizeof(aux));
	write_crafted(path, &a, data, at);
	expect_error(path, NULL);
	unlink(path);
	free(path);
}

static void test_sample_shorter_than_its_fields_rejected(void **state)
{
	char *path = tmp_path("short");
	struct perf_event_attr a = simple_attr();
	uint64_t body[2] = {0x401000, 7};
	uint8_t data[64];
	size_t at = 0;

	(void)state;
	put_rec(data, &at, PERF_RECORD_SAMPLE, 0, body, sizeof(body));
	write_crafted(path, &a, data, at);
	expect_error(path, "corrupt sample record (24 bytes, shorter than its fields)");
	unlink(path);
	free(path);
}

/* A record with more fields than its attr's sample_type (the attr of another build, or
 * a damaged one): decoding it field by field gave CPU 3916171008 and "590 cpus". */
static void test_sample_longer_than_its_fields_rejected(void **state)
{
	char *path = tmp_path("long");
	struct perf_event_attr a = simple_attr();
	uint64_t body[5] = {0x401000, 7 | (uint64_t)8 << 32, 1000, 0x1000, 3};
	uint8_t data[128];
	size_t at = 0;

	(void)state;
	put_sample(data, &at, 0x401000);
	put_rec(data, &at, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, body, sizeof(body));
	write_crafted(path, &a, data, at);
	expect_error(path, "corrupt sample record (48 bytes, longer than the fields of event");
	unlink(path);
	free(path);
}

static void test_array_counts_past_record_rejected(void **state)
{
	char *path = tmp_path("counts");
	struct perf_event_attr a = simple_attr();
	uint64_t chain[3] = {UINT64_MAX / 4, 1, 2}, raw[2] = {5, 0};
	uint8_t data[64];
	size_t at = 0;

	(void)state;
	a.sample_type = PERF_SAMPLE_CALLCHAIN;
	put_rec(data, &at, PERF_RECORD_SAMPLE, 0, chain, sizeof(chain));
	write_crafted(path, &a, data, at);
	expect_error(path, "corrupt sample record");
	a.sample_type = PERF_SAMPLE_RAW;	/* 4 + 5 bytes: breaks the 8-byte alignment */
	at = 0;
	put_rec(data, &at, PERF_RECORD_SAMPLE, 0, raw, sizeof(raw));
	write_crafted(path, &a, data, at);
	expect_error(path, "corrupt sample record");
	a.sample_type = PERF_SAMPLE_REGS_USER;
	a.sample_regs_user = ~0ull;	/* 64 registers announced, none present */
	raw[0] = PERF_SAMPLE_REGS_ABI_64;
	at = 0;
	put_rec(data, &at, PERF_RECORD_SAMPLE, 0, raw, 8);
	write_crafted(path, &a, data, at);
	expect_error(path, "corrupt sample record");
	unlink(path);
	free(path);
}

static void test_unterminated_string_rejected(void **state)
{
	char *path = tmp_path("str");
	struct perf_event_attr a = simple_attr();
	uint8_t body[16] = {1, 0, 0, 0, 1, 0, 0, 0, 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'};
	uint8_t data[64];
	size_t at = 0;

	(void)state;
	put_rec(data, &at, PERF_RECORD_COMM, 0, body, sizeof(body));
	write_crafted(path, &a, data, at);
	expect_error(path, "corrupt comm record");
	unlink(path);
	free(path);
}

static void test_compressed_record_rejected(void **state)
{
	char *path = tmp_path("zstd");
	struct perf_event_attr a = simple_attr();
	uint8_t data[64], blob[8] = {0};
	size_t at = 0;

	(void)state;
	put_rec(data, &at, HM_PERF_RECORD_COMPRESSED, 0, blob, sizeof(blob));
	write_crafted(path, &a, data, at);
	expect_error(path, "compressed (perf record -z)");
	unlink(path);
	free(path);
}

static void test_attr_section_corruption_rejected(void **state)
{
	char *path = tmp_path("attrs");
	struct perf_event_attr a = simple_attr();
	uint8_t data[64], *file;
	size_t at = 0, flen;
	uint64_t v;

	(void)state;
	put_sample(data, &at, 0x401000);
	file = build_file(&a, data, at, &flen);
	v = 1 << 20;
	memcpy(file + 24, &v, 8);	/* attrs offset past EOF */
	write_bytes(path, file, flen);
	expect_error(path, "the attrs section ends at byte");
	free(file);
	file = build_file(&a, data, at, &flen);
	v = 40;
	memcpy(file + 16, &v, 8);	/* attr entries smaller than perf's first ABI */
	write_bytes(path, file, flen);
	expect_error(path, "attr entry size");
	free(file);
	file = build_file(&a, data, at, &flen);
	v = 1 << 20;
	memcpy(file + 112 + sizeof(struct perf_event_attr), &v, 8);	/* ids offset */
	write_bytes(path, file, flen);
	expect_error(path, "id list ends at byte");
	free(file);
	unlink(path);
	free(path);
}

/* perf 2.6.x headers stop before the feature bitmap; attr size 0 means perf's first ABI. */
static void test_old_header_and_abi0_attr_read(void **state)
{
	char *path = tmp_path("old");
	struct perf_event_attr a = simple_attr();
	uint8_t data[64], *file;
	size_t at = 0, flen;
	uint64_t v = 72;
	uint32_t zero = 0;
	struct hm_err err = {0};

	(void)state;
	put_sample(data, &at, 0x401000);
	file = build_file(&a, data, at, &flen);
	memcpy(file + 8, &v, 8);
	memcpy(file + 112 + 4, &zero, 4);
	write_bytes(path, file, flen);
	assert_int_equal(read_all(path, &err, NULL), 1);
	free(file);
	unlink(path);
	free(path);
}

static void test_unknown_sample_id_skipped(void **state)
{
	char *path = tmp_path("unkid");
	struct hm_perf_attr attrs[2];
	struct hm_perfdata_writer *w;
	struct hm_perfdata *pd = NULL;
	struct hm_perf_event ev;
	struct hm_err err = {0};

	(void)state;
	make_attrs(attrs);
	assert_int_equal(hm_perfdata_create(path, attrs, 2, 0, &w, &err), 0);
	fill_full_sample(&ev, hm_perfdata_writer_attr(w, 0));
	write_or_fail(w, &ev);
	ev.sample.id = 999;
	write_or_fail(w, &ev);
	assert_int_equal(hm_perfdata_finish(w, NULL, &err), 0);
	hm_perfdata_writer_close(w);
	assert_int_equal(read_all(path, &err, &pd), 1);
	assert_int_equal(hm_perfdata_stats(pd)->unknown_id, 1);
	hm_perfdata_close(pd);
	unlink(path);
	free(path);
}

static void test_mismatched_id_positions_rejected(void **state)
{
	char *path = tmp_path("idpos");
	struct hm_perf_attr attrs[2];
	struct hm_perfdata_writer *w;
	struct hm_err err = {0};

	(void)state;
	make_attrs(attrs);
	attrs[1].attr.sample_type &= ~(uint64_t)PERF_SAMPLE_IDENTIFIER;
	attrs[1].attr.sample_type |= PERF_SAMPLE_ID;
	assert_int_equal(hm_perfdata_create(path, attrs, 2, 0, &w, &err), 0);
	assert_int_equal(hm_perfdata_finish(w, NULL, &err), 0);
	hm_perfdata_writer_close(w);
	expect_error(path, "same position");
	unlink(path);
	free(path);
}

/* Deterministic byte flips all over a recording: errors are fine, crashes and overreads not. */
/* A file that shrinks after open (the reader maps it): the first read of a page past the
 * new end raised SIGBUS (exit 135, no word). With the guard cli/main.c installs, the
 * process ends with one line naming the file, and exit 2. Runs in a child. */
static void test_file_shrunk_while_read_names_it(void **state)
{
	char *path = tmp_path("shrink"), *errp = tmp_path("shrink-err");
	struct hm_perf_attr attrs[2];
	struct hm_perfdata_writer *w;
	struct hm_perf_event ev;
	struct hm_err err = {0};
	int status;
	pid_t pid;
	size_t n;
	uint8_t *msg;

	(void)state;
	make_attrs(attrs);
	assert_int_equal(hm_perfdata_create(path, attrs, 2, 0, &w, &err), 0);
	fill_full_sample(&ev, hm_perfdata_writer_attr(w, 0));
	for (int i = 0; i < 4000; i++)
		write_or_fail(w, &ev);
	assert_int_equal(hm_perfdata_finish(w, NULL, &err), 0);
	hm_perfdata_writer_close(w);
	if ((pid = fork()) == 0) {
		struct hm_perfdata *pd;

		if (!freopen(errp, "w", stderr) || hm_file_guard_sigbus() ||
		    hm_perfdata_open(path, &pd, &err))
			_exit(99);
		if (truncate(path, 8192))
			_exit(98);
		while (hm_perfdata_next(pd, &ev, &err) > 0)
			;
		_exit(97);	/* the data past 8192 bytes cannot have been read */
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), HM_EXIT_INPUT);
	msg = read_bytes(errp, &n);
	msg[n] = 0;
	assert_non_null(strstr((char *)msg, path));
	assert_non_null(strstr((char *)msg, "the file shrank while it was being read"));
	assert_int_equal(strchr((char *)msg, '\n') - (char *)msg, (long)n - 1);
	free(msg);
	unlink(path);
	unlink(errp);
	free(path);
	free(errp);
}

static void test_random_corruption_never_crashes(void **state)
{
	char *path = tmp_path("flip"), *bad = tmp_path("flipped");
	size_t len;
	uint8_t *bytes, *copy;
	uint64_t x = 0x9e3779b97f4a7c15ull;
	int errors = 0;

	(void)state;
	for (int mode = 0; mode < 2; mode++) {
		write_full_file(path, mode ? HM_PERFDATA_PIPE : 0);
		bytes = read_bytes(path, &len);
		copy = malloc(len);
		for (int round = 0; round < 1500; round++) {
			struct hm_err err = {0};

			memcpy(copy, bytes, len);
			for (int k = 0; k < 1 + round % 4; k++) {
				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				copy[x % len] ^= (uint8_t)(x >> 32) | 1;
			}
			write_bytes(bad, copy, len);
			if (read_all(bad, &err, NULL) < 0) {
				assert_true(err.code == HM_EXIT_INPUT || err.code == HM_EXIT_ENV);
				errors++;
			}
		}
		free(bytes);
		free(copy);
	}
	assert_true(errors > 0);
	unlink(path);
	unlink(bad);
	free(path);
	free(bad);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_prefix_of_a_file_is_an_error),
		cmocka_unit_test(test_every_prefix_of_a_pipe_stream_errors_or_stops_clean),
		cmocka_unit_test(test_truncated_header_rejected),
		cmocka_unit_test(test_truncated_data_section_rejected),
		cmocka_unit_test(test_empty_and_foreign_files_rejected),
		cmocka_unit_test(test_record_size_below_header_rejected),
		cmocka_unit_test(test_record_past_data_section_rejected),
		cmocka_unit_test(test_unknown_record_types_skipped),
		cmocka_unit_test(test_auxtrace_payload_skipped),
		cmocka_unit_test(test_sample_shorter_than_its_fields_rejected),
		cmocka_unit_test(test_sample_longer_than_its_fields_rejected),
		cmocka_unit_test(test_array_counts_past_record_rejected),
		cmocka_unit_test(test_unterminated_string_rejected),
		cmocka_unit_test(test_compressed_record_rejected),
		cmocka_unit_test(test_attr_section_corruption_rejected),
		cmocka_unit_test(test_old_header_and_abi0_attr_read),
		cmocka_unit_test(test_unknown_sample_id_skipped),
		cmocka_unit_test(test_mismatched_id_positions_rejected),
		cmocka_unit_test(test_file_shrunk_while_read_names_it),
		cmocka_unit_test(test_random_corruption_never_crashes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
