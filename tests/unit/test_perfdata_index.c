/* core/perfdata_index.c: hitmap's record index (HM_PERF_FEAT_HITMAP_INDEX). The writer
 * lists every record but samples and FINISHED_ROUND, plus the samples of the events it is
 * told; the reader gives the list only when it describes the file's own data section;
 * resolve/maps.c's maps pass reads the listed records alone, and the whole file when a
 * listed record is not one. */
#include "tests/unit/perfdata_util.h"
#include "resolve/load.h"
#include "resolve/maps.h"

#define CLOCK_ID 11
#define MALLOC_ID 22
#define ROUNDS 40000
#define ST (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME)

static const uint64_t clock_id[] = {CLOCK_ID}, malloc_id[] = {MALLOC_ID};

static struct hm_perfdata_writer *create(const char *path)
{
	struct hm_perf_attr a[2];
	struct hm_perfdata_writer *w;
	struct hm_err err = {0};

	memset(a, 0, sizeof(a));
	for (int i = 0; i < 2; i++) {
		a[i].attr.size = sizeof(a[i].attr);
		a[i].attr.sample_type = ST;
		a[i].attr.sample_id_all = 1;
	}
	a[0].attr.type = PERF_TYPE_SOFTWARE;
	a[0].attr.config = PERF_COUNT_SW_CPU_CLOCK;
	a[0].ids = clock_id;
	a[0].name = "cpu-clock";
	a[1].attr.type = PERF_TYPE_TRACEPOINT;
	a[1].ids = malloc_id;
	a[1].name = "hitmap:malloc";
	a[0].nr_ids = a[1].nr_ids = 1;
	if (hm_perfdata_create(path, a, 2, 0, &w, &err) < 0)
		fail_msg("create: %s", err.msg);
	return w;
}

static void put(struct hm_perfdata_writer *w, struct hm_perf_event *ev)
{
	struct hm_err err = {0};

	if (hm_perfdata_write(w, ev, &err) < 0)
		fail_msg("write: %s", err.msg);
}

static void put_mmap(struct hm_perfdata_writer *w, uint64_t start, const char *file, uint64_t t)
{
	struct hm_perf_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = PERF_RECORD_MMAP2;
	ev.mmap = (struct hm_perf_mmap){.pid = 7, .tid = 7, .start = start, .len = 0x1000,
					.prot = 5, .filename = file};
	ev.sid = (struct hm_perf_sample_id){.pid = 7, .tid = 7, .time = t};
	put(w, &ev);
}

/* A malloc probe's sample as the kernel writes it: the id first. */
static void put_raw_malloc(struct hm_perfdata_writer *w, uint64_t ip, uint64_t t)
{
	uint64_t rec[5] = {0, MALLOC_ID, ip, 7 | (uint64_t)7 << 32, t};
	struct perf_event_header h = {PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, sizeof(rec)};
	struct hm_err err = {0};

	memcpy(rec, &h, sizeof(h));
	if (hm_perfdata_write_raw(w, rec, sizeof(rec), &err) < 0)
		fail_msg("write_raw: %s", err.msg);
}

static void put_round(struct hm_perfdata_writer *w)
{
	struct perf_event_header h = {HM_PERF_RECORD_FINISHED_ROUND, 0, sizeof(h)};
	struct hm_err err = {0};

	if (hm_perfdata_write_raw(w, &h, sizeof(h), &err) < 0)
		fail_msg("write_raw: %s", err.msg);
}

/* COMM and a map, then ROUNDS cpu-clock samples with a malloc sample every 1000 (raw),
 * rounds every 5000, and a second map last of all. */
static void write_recording(const char *path, int indexed)
{
	struct hm_perfdata_writer *w = create(path);
	static const uint8_t of[2] = {0, 1};
	struct hm_perf_event ev;
	struct hm_err err = {0};

	if (indexed)
		hm_perfdata_index_samples(w, of);
	memset(&ev, 0, sizeof(ev));
	ev.type = PERF_RECORD_COMM;
	ev.comm = (struct hm_perf_comm){7, 7, "worker"};
	ev.sid = (struct hm_perf_sample_id){.pid = 7, .tid = 7, .time = 1};
	put(w, &ev);
	put_mmap(w, 0x400000, "/bin/first", 2);
	for (uint64_t i = 0; i < ROUNDS; i++) {
		memset(&ev, 0, sizeof(ev));
		ev.type = PERF_RECORD_SAMPLE;
		ev.misc = PERF_RECORD_MISC_USER;
		ev.attr = hm_perfdata_writer_attr(w, 0);
		ev.sample = (struct hm_perf_sample){.ip = 0x400100 + i, .pid = 7, .tid = 7,
						    .time = 10 + i};
		put(w, &ev);
		if (i % 1000 == 500)
			put_raw_malloc(w, 0x7f0000 + i, 10 + i);
		if (i % 5000 == 4999)
			put_round(w);
	}
	put_mmap(w, 0x500000, "/bin/second", 5);	/* time before the samples' */
	if (hm_perfdata_finish(w, NULL, &err) < 0)
		fail_msg("finish: %s", err.msg);
	hm_perfdata_writer_close(w);
}

static struct hm_perfdata *open_or_fail(const char *path)
{
	struct hm_perfdata *pd;
	struct hm_err err = {0};

	if (hm_perfdata_open(path, &pd, &err) < 0)
		fail_msg("open: %s", err.msg);
	return pd;
}

static void test_index_lists_what_a_maps_reader_reads(void **state)
{
	char *path = tmp_path("index");
	struct hm_perfdata *pd, *at;
	struct hm_perf_event ev, ev2;
	struct hm_err err = {0};
	const uint64_t *off;
	uint64_t nr, want[256], n = 0;
	int rc;

	(void)state;
	write_recording(path, 1);
	pd = open_or_fail(path);
	assert_int_equal(hm_perfdata_index(pd, &off, &nr), 1);
	assert_int_equal(hm_perfdata_index_pays(pd), 1);	/* 43 reads in 1.6 MB */
	assert_int_equal(hm_perfdata_index_lists(pd, 0), 0);
	assert_int_equal(hm_perfdata_index_lists(pd, 1), 1);
	while ((rc = hm_perfdata_next(pd, &ev, &err)) > 0)
		if (ev.type != PERF_RECORD_SAMPLE || ev.attr->index == 1) {
			assert_true(n < 256);
			want[n++] = ev.offset;
		}
	assert_int_equal(rc, 0);
	assert_int_equal(n, 3 + ROUNDS / 1000);	/* COMM, two maps, the mallocs */
	assert_int_equal(nr, n);
	assert_memory_equal(off, want, n * sizeof(*want));
	/* each listed record read alone is the one the whole read gave */
	hm_perfdata_close(pd);	/* and its index with it */
	at = open_or_fail(path);
	assert_int_equal(hm_perfdata_index(at, &off, &nr), 1);
	hm_perfdata_want_samples(at, NULL, NULL);
	pd = open_or_fail(path);
	for (uint64_t i = 0; i < nr; i++) {
		do
			assert_int_equal(hm_perfdata_next(pd, &ev, &err), 1);
		while (ev.offset != off[i]);
		assert_int_equal(hm_perfdata_next_at(at, off[i], &ev2, &err), 1);
		assert_int_equal(ev2.type, ev.type);
		assert_int_equal(ev2.offset, off[i]);
		assert_int_equal(ev2.size, ev.size);
		if (ev.type == PERF_RECORD_SAMPLE)
			assert_int_equal(ev2.sample.ip, ev.sample.ip);
		if (ev.type == PERF_RECORD_MMAP2)
			assert_string_equal(ev2.mmap.filename, ev.mmap.filename);
	}
	hm_perfdata_close(at);
	hm_perfdata_close(pd);
	unlink(path);
	free(path);
}

static void test_no_index_unless_asked_before_the_first_record(void **state)
{
	char *path = tmp_path("noindex");
	static const uint8_t of[2] = {0, 1};
	struct hm_perfdata_writer *w;
	struct hm_perfdata *pd;
	struct hm_err err = {0};
	const uint64_t *off;
	uint64_t nr;

	(void)state;
	write_recording(path, 0);
	pd = open_or_fail(path);
	assert_int_equal(hm_perfdata_index(pd, &off, &nr), 0);
	assert_null(off);
	assert_int_equal(hm_perfdata_index_lists(pd, 1), 0);
	hm_perfdata_close(pd);
	/* asked after a record went out: the index could not list it */
	w = create(path);
	put_mmap(w, 0x400000, "/bin/first", 2);
	hm_perfdata_index_samples(w, of);
	put_mmap(w, 0x500000, "/bin/second", 3);
	assert_int_equal(hm_perfdata_finish(w, NULL, &err), 0);
	hm_perfdata_writer_close(w);
	pd = open_or_fail(path);
	assert_int_equal(hm_perfdata_index(pd, &off, &nr), 0);
	hm_perfdata_close(pd);
	/* a raw sample whose id no event has: its event cannot be told, so no index */
	w = create(path);
	hm_perfdata_index_samples(w, of);
	{
		uint64_t rec[5] = {0, 99, 0x400000, 7, 1};
		struct perf_event_header h = {PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER,
					      sizeof(rec)};

		memcpy(rec, &h, sizeof(h));
		assert_int_equal(hm_perfdata_write_raw(w, rec, sizeof(rec), &err), 0);
	}
	assert_int_equal(hm_perfdata_finish(w, NULL, &err), 0);
	hm_perfdata_writer_close(w);
	pd = open_or_fail(path);
	assert_int_equal(hm_perfdata_index(pd, &off, &nr), 0);
	hm_perfdata_close(pd);
	unlink(path);
	free(path);
}

/* The index section in a file's bytes: its offsets, count and data size fields. */
struct index_at {
	size_t data_size, nr, off;
};

static struct index_at find_index(const uint8_t *b, size_t len)
{
	const uint8_t *m = memmem(b, len, "hitmap.index/1", 15);
	struct index_at x;

	assert_non_null(m);
	x.data_size = (size_t)(m - b) + 24;
	x.nr = (size_t)(m - b) + 32 + 8 + 8;	/* two events' flags, padded to 8 */
	x.off = x.nr + 8;
	return x;
}

static int index_of_bytes(const char *path, const uint8_t *b, size_t len)
{
	struct hm_perfdata *pd;
	const uint64_t *off;
	uint64_t nr;
	int rc;

	write_bytes(path, b, len);
	pd = open_or_fail(path);
	rc = hm_perfdata_index(pd, &off, &nr);
	hm_perfdata_close(pd);
	return rc;
}

static void test_index_of_another_data_section_is_ignored(void **state)
{
	char *path = tmp_path("stale");
	uint8_t *b;
	size_t len;
	struct index_at x;
	uint64_t v, w;

	(void)state;
	write_recording(path, 1);
	b = read_bytes(path, &len);
	x = find_index(b, len);
	assert_int_equal(index_of_bytes(path, b, len), 1);
	memcpy(&v, b + x.data_size, 8);	/* a tool that rewrote the data section */
	w = v - 8;
	memcpy(b + x.data_size, &w, 8);
	assert_int_equal(index_of_bytes(path, b, len), 0);
	memcpy(b + x.data_size, &v, 8);
	memcpy(&v, b + x.off, 8);	/* offsets out of order */
	memcpy(&w, b + x.off + 8, 8);
	memcpy(b + x.off, &w, 8);
	memcpy(b + x.off + 8, &v, 8);
	assert_int_equal(index_of_bytes(path, b, len), 0);
	unlink(path);
	free(path);
	free(b);
}

/* A file of a few KB: every listed record needs a read of its own, as much as the file
 * itself, so the index is kept (perfgrow carries it) but the maps pass reads the file. */
static void test_small_file_index_is_kept_but_not_used(void **state)
{
	char *path = tmp_path("small");
	static const uint8_t of[2] = {0, 1};
	struct hm_perfdata_writer *w = create(path);
	struct hm_perfdata *pd;
	struct hm_perf_event ev;
	struct hm_err err = {0};
	const uint64_t *off;
	uint64_t nr;

	(void)state;
	hm_perfdata_index_samples(w, of);
	put_mmap(w, 0x400000, "/bin/first", 2);
	for (uint64_t i = 0; i < 100; i++) {
		memset(&ev, 0, sizeof(ev));
		ev.type = PERF_RECORD_SAMPLE;
		ev.attr = hm_perfdata_writer_attr(w, 0);
		ev.sample = (struct hm_perf_sample){.ip = 0x400100 + i, .pid = 7, .tid = 7,
						    .time = 10 + i};
		put(w, &ev);
	}
	put_mmap(w, 0x500000, "/bin/second", 3);
	assert_int_equal(hm_perfdata_finish(w, NULL, &err), 0);
	hm_perfdata_writer_close(w);
	pd = open_or_fail(path);
	assert_int_equal(hm_perfdata_index(pd, &off, &nr), 1);
	assert_int_equal(nr, 2);
	assert_int_equal(hm_perfdata_index_pays(pd), 0);
	hm_perfdata_close(pd);
	unlink(path);
	free(path);
}

static void count_map(const struct hm_perf_event *ev, void *arg)
{
	(void)ev;
	(*(int *)arg)++;
}

static int maps_of(const char *path)
{
	struct hm_err err = {0};
	int n = 0;

	assert_int_equal(hm_recording_maps(path, count_map, &n, &err), 0);
	return n;
}

static void test_maps_pass_reads_the_index_and_the_file_when_it_is_wrong(void **state)
{
	char *path = tmp_path("mapspass"), *plain = tmp_path("plain");
	struct hm_perfdata *pd;
	struct hm_perf_event ev;
	struct hm_err err = {0};
	uint8_t *b;
	size_t len;
	struct index_at x;
	uint64_t nr, malloc_at, clock_at;

	(void)state;
	write_recording(path, 1);
	write_recording(plain, 0);
	assert_int_equal(maps_of(plain), 2);
	assert_int_equal(maps_of(path), 2);
	b = read_bytes(path, &len);
	x = find_index(b, len);
	/* an index that leaves out the second map: the pass reads only what it lists */
	memcpy(&nr, b + x.nr, 8);
	nr--;
	memcpy(b + x.nr, &nr, 8);
	write_bytes(path, b, len);
	assert_int_equal(maps_of(path), 1);
	/* and names a cpu-clock sample, which it does not list: the whole file is read */
	memcpy(&malloc_at, b + x.off + 3 * 8, 8);	/* after COMM, map: the first malloc */
	clock_at = malloc_at + 40;			/* the sample after it */
	memcpy(b + x.off + 3 * 8, &clock_at, 8);
	write_bytes(path, b, len);
	pd = open_or_fail(path);
	hm_perfdata_want_samples(pd, NULL, NULL);
	assert_int_equal(hm_perfdata_next_at(pd, malloc_at, &ev, &err), 1);
	assert_int_equal(ev.attr->index, 1);
	hm_perfdata_close(pd);
	pd = open_or_fail(path);
	hm_perfdata_want_no_samples(pd);
	assert_true(hm_perfdata_next_at(pd, clock_at, &ev, &err) < 0);
	assert_non_null(strstr(err.msg, "record index"));
	hm_perfdata_close(pd);
	assert_int_equal(maps_of(path), 2);
	unlink(path);
	unlink(plain);
	free(path);
	free(plain);
	free(b);
}

/* Allocation probes with the registers alloc.c reads: malloc's size (di), its result (ax). */
#define RET_ID 33
#define REGS ((1ull << 0) | (1ull << 5))	/* ax, di */

static const uint64_t ret_id[] = {RET_ID};

static void put_raw_probe(struct hm_perfdata_writer *w, uint64_t id, uint64_t t, uint64_t ax,
			  uint64_t di)
{
	uint64_t rec[8] = {0, id, 0x7f0000, 7 | (uint64_t)7 << 32, t,
			   PERF_SAMPLE_REGS_ABI_64, ax, di};
	struct perf_event_header h = {PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, sizeof(rec)};
	struct hm_err err = {0};

	memcpy(rec, &h, sizeof(h));
	if (hm_perfdata_write_raw(w, rec, sizeof(rec), &err) < 0)
		fail_msg("write_raw: %s", err.msg);
}

/* A map, then ROUNDS cpu-clock samples with a malloc and its return every 1000. */
static void write_alloc_recording(const char *path, int indexed)
{
	static const uint8_t of[3] = {0, 1, 1};
	struct hm_perf_attr a[3];
	struct hm_perfdata_writer *w;
	struct hm_perf_event ev;
	struct hm_err err = {0};

	memset(a, 0, sizeof(a));
	for (int i = 0; i < 3; i++) {
		a[i].attr.size = sizeof(a[i].attr);
		a[i].attr.sample_type = ST | (i ? PERF_SAMPLE_REGS_USER : 0);
		a[i].attr.sample_regs_user = i ? REGS : 0;
		a[i].attr.sample_id_all = 1;
		a[i].nr_ids = 1;
		a[i].attr.type = i ? PERF_TYPE_TRACEPOINT : PERF_TYPE_SOFTWARE;
	}
	a[0].ids = clock_id;
	a[0].name = "cpu-clock";
	a[1].ids = malloc_id;
	a[1].name = "hitmap:malloc";
	a[2].ids = ret_id;
	a[2].name = "hitmap:malloc_ret";
	if (hm_perfdata_create(path, a, 3, 0, &w, &err) < 0)
		fail_msg("create: %s", err.msg);
	if (indexed)
		hm_perfdata_index_samples(w, of);
	put_mmap(w, 0x400000, "/bin/first", 2);
	for (uint64_t i = 0; i < ROUNDS; i++) {
		memset(&ev, 0, sizeof(ev));
		ev.type = PERF_RECORD_SAMPLE;
		ev.attr = hm_perfdata_writer_attr(w, 0);
		ev.sample = (struct hm_perf_sample){.ip = 0x400100 + i, .pid = 7, .tid = 7,
						    .time = 10 + 2 * i};
		put(w, &ev);
		if (i % 1000 == 500) {
			put_raw_probe(w, MALLOC_ID, 11 + 2 * i, 0, 64);
			put_raw_probe(w, RET_ID, 11 + 2 * i, 0x10000000 + i * 128, 0);
		}
	}
	if (hm_perfdata_finish(w, NULL, &err) < 0)
		fail_msg("finish: %s", err.msg);
	hm_perfdata_writer_close(w);
}

/* The pass's maps and allocations, as resolve/load.c takes them. */
static size_t allocs_of(const char *path, uint64_t *bases, size_t max)
{
	struct hm_alloc_map *alloc = NULL;
	const struct hm_alloc_obj *objs;
	struct hm_err err = {0};
	size_t n;
	int maps = 0;

	assert_int_equal(hm_maps_pass(path, count_map, &maps, &alloc, &err), 0);
	assert_int_equal(maps, 1);
	assert_non_null(alloc);
	n = hm_alloc_map_count(alloc, &objs);
	assert_true(n <= max);
	for (size_t i = 0; i < n; i++)
		bases[i] = objs[i].base;
	hm_alloc_map_free(alloc);
	return n;
}

/* An index found wrong half-way: the pass reads the whole file again, with an allocation
 * map started anew, and the caller gets that one (it once got the one dropped). */
static void test_maps_pass_allocations_after_a_wrong_index(void **state)
{
	char *path = tmp_path("allocidx"), *plain = tmp_path("allocplain");
	uint64_t want[64], got[64], ret_at;
	uint8_t *b;
	size_t len, n;
	struct index_at x;

	(void)state;
	write_alloc_recording(plain, 0);
	write_alloc_recording(path, 1);
	n = allocs_of(plain, want, 64);
	assert_int_equal(n, ROUNDS / 1000);
	assert_int_equal(allocs_of(path, got, 64), n);	/* through the index */
	assert_memory_equal(got, want, n * sizeof(*got));
	b = read_bytes(path, &len);
	x = find_index(b, len);
	/* entries: the map, then each malloc and its return; the first return's entry now
	 * names the cpu-clock sample after it, which the index does not list */
	memcpy(&ret_at, b + x.off + 2 * 8, 8);
	ret_at += 64;
	memcpy(b + x.off + 2 * 8, &ret_at, 8);
	write_bytes(path, b, len);
	assert_int_equal(allocs_of(path, got, 64), n);
	assert_memory_equal(got, want, n * sizeof(*got));
	unlink(path);
	unlink(plain);
	free(path);
	free(plain);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_index_lists_what_a_maps_reader_reads),
		cmocka_unit_test(test_no_index_unless_asked_before_the_first_record),
		cmocka_unit_test(test_index_of_another_data_section_is_ignored),
		cmocka_unit_test(test_small_file_index_is_kept_but_not_used),
		cmocka_unit_test(test_maps_pass_reads_the_index_and_the_file_when_it_is_wrong),
		cmocka_unit_test(test_maps_pass_allocations_after_a_wrong_index),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
