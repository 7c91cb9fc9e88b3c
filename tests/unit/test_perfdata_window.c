/* core/perfdata_read.c: a mapped file's records read through its 1 MB pread window
 * (win_get), checked against the same bytes read from a pipe. */
#include <sys/wait.h>
#include "tests/unit/perfdata_util.h"

/* A mapped file's records are read through a 1 MB window (perfdata_read.c, win_get):
 * records of every size straddle its edges, and the events must be those a pipe gives,
 * in order, with samples skipped by header alone when none is wanted. */
#define WIN_RECS 6000

static uint8_t *window_file(size_t *len)
{
	struct perf_event_attr attr = {.type = PERF_TYPE_SOFTWARE, .sample_type = PERF_SAMPLE_IP};
	uint8_t *data = calloc(WIN_RECS, 8 + 8 + 2048), *file;
	size_t at = 0;

	assert_non_null(data);
	for (uint32_t i = 0; i < WIN_RECS; i++) {
		uint8_t body[8 + 2048] = {0};
		size_t n = 8 + 8 * ((i * 37u) % 256 + 1);

		if (i % 3 == 2) {	/* a sample: its ip */
			uint64_t ip = 0x400000 + i;

			put_rec(data, &at, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, &ip, 8);
			continue;
		}
		memcpy(body, &i, 4);
		memcpy(body + 4, &i, 4);
		memset(body + 8, 'a' + (int)(i % 26), n - 9);	/* to the record's last byte */
		put_rec(data, &at, PERF_RECORD_COMM, 0, body, n);
	}
	file = build_file(&attr, data, at, len);
	free(data);
	return file;
}

/* Reads pd to the end: each COMM must be the next one window_file wrote, each sample
 * (unless skipped) the next sample. Returns the events read. */
static int check_window_events(struct hm_perfdata *pd, int samples)
{
	struct hm_perf_event ev;
	struct hm_err err = {0};
	uint32_t next = 0;
	int n = 0, rc;

	while ((rc = hm_perfdata_next(pd, &ev, &err)) > 0) {
		char want[2048];

		while (next % 3 == 2 && !samples)
			next++;
		if (next % 3 == 2) {
			assert_int_equal(ev.type, PERF_RECORD_SAMPLE);
			assert_int_equal(ev.sample.ip, 0x400000 + next);
		} else {
			size_t len = 8 * ((next * 37u) % 256 + 1) - 1;

			assert_int_equal(ev.type, PERF_RECORD_COMM);
			assert_int_equal(ev.comm.pid, next);
			assert_int_equal(strlen(ev.comm.comm), len);
			memset(want, 'a' + (int)(next % 26), len);
			want[len] = '\0';
			assert_string_equal(ev.comm.comm, want);
		}
		next++;
		n++;
	}
	assert_int_equal(rc, 0);
	return n;
}

static void test_window_reads_match_a_pipe(void **state)
{
	char *path = tmp_path("window");
	struct hm_perfdata *pd;
	struct hm_err err = {0};
	size_t len;
	uint8_t *bytes = window_file(&len);
	int fds[2];
	pid_t child;

	(void)state;
	assert_true(len > 3u << 20);	/* three window edges at least */
	write_bytes(path, bytes, len);
	if (hm_perfdata_open(path, &pd, &err) < 0)
		fail_msg("open: %s", err.msg);
	assert_int_equal(check_window_events(pd, 1), WIN_RECS);
	hm_perfdata_close(pd);
	if (hm_perfdata_open(path, &pd, &err) < 0)
		fail_msg("open: %s", err.msg);
	hm_perfdata_want_no_samples(pd);
	assert_int_equal(check_window_events(pd, 0), WIN_RECS - WIN_RECS / 3);
	assert_int_equal(hm_perfdata_stats(pd)->skipped, WIN_RECS / 3);
	hm_perfdata_close(pd);
	pd = open_piped(bytes, len, &fds[0], &child);	/* the same bytes, as a pipe reads them */
	assert_int_equal(check_window_events(pd, 1), WIN_RECS);
	hm_perfdata_close(pd);
	close(fds[0]);
	waitpid(child, NULL, 0);
	unlink(path);
	free(path);
	free(bytes);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_window_reads_match_a_pipe),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
