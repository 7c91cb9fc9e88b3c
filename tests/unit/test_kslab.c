/* core/kslab.c: hitmap's kernel slab section, encoded and decoded, and carried in
 * perf.data as feature bit 250 (tests/e2e/perfdata.sh: real perf reads such files). The
 * damaged-section cases run on a real snapshot of synthesized memory in test_slab.c. */
#include "tests/unit/perfdata_util.h"

/* Every field survives encode and decode; a name is cut to HM_KSLAB_NAME - 1. */
static void test_encode_decode_keeps_every_field(void **state)
{
	struct hm_kslab_cache c[2] = {
		{0xffff888000001000ull, 192, 184, 0, 0, "dentry"},
		{0xffff888000002000ull, 1024, 1000, 64, 1, "ext4_inode_cache"}};
	struct hm_kslab_run r[3] = {{0xffff888000200000ull, 2, 0},
				    {0xffff888000202000ull, 1, 1},
				    {0xffff888000400000ull, 8, 1}};
	struct hm_kslab k = {0xffff888000000000ull, 0xffffc90000000000ull, 2, 3, c, r}, back;
	struct hm_err err = {0};
	size_t len;
	uint8_t *bytes = hm_kslab_encode(&k, &len);

	(void)state;
	assert_int_equal(hm_kslab_decode(bytes, len, "x.data", &back, &err), 0);
	assert_int_equal(back.page_offset, k.page_offset);
	assert_int_equal(back.direct_end, k.direct_end);
	assert_int_equal(back.nr_caches, 2);
	assert_int_equal(back.nr_runs, 3);
	assert_memory_equal(back.caches, c, sizeof(c));
	assert_memory_equal(back.runs, r, sizeof(r));
	hm_kslab_free(&back);
	free(bytes);
}

/* A file of one COMM record (one with no data reads as unfinished, without features)
 * and ft's features, opened again for reading. */
static struct hm_perfdata *write_read(const char *path, const struct hm_perf_features *ft)
{
	struct hm_perf_attr attrs[2];
	struct hm_perfdata_writer *w;
	struct hm_perfdata *pd;
	struct hm_perf_event ev = {.type = PERF_RECORD_COMM};
	struct hm_err err = {0};

	make_attrs(attrs);
	ev.comm = (struct hm_perf_comm){7, 7, "w"};
	assert_int_equal(hm_perfdata_create(path, attrs, 2, 0, &w, &err), 0);
	assert_int_equal(hm_perfdata_write(w, &ev, &err), 0);
	assert_int_equal(hm_perfdata_finish(w, ft, &err), 0);
	hm_perfdata_writer_close(w);
	assert_int_equal(hm_perfdata_open(path, &pd, &err), 0);
	return pd;
}

/* The slab section comes back byte for byte; a file without one reads none. */
static void test_kslab_feature_roundtrip(void **state)
{
	struct hm_perf_features ft;
	struct hm_perf_build_id bid;
	struct hm_perfdata *pd;
	const struct hm_perf_features *back;
	char path[] = "/tmp/hm_kslab_XXXXXX";
	int fd = mkstemp(path);
	size_t len;
	uint8_t *bytes = small_kslab(&len);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	make_features(&ft, &bid);
	ft.kslab = bytes;
	ft.kslab_len = len;
	pd = write_read(path, &ft);
	back = hm_perfdata_features(pd);
	assert_int_equal(back->kslab_len, len);
	assert_memory_equal(back->kslab, bytes, len);
	assert_string_equal(back->hostname, ft.hostname);	/* the features before it too */
	hm_perfdata_close(pd);
	ft.kslab = NULL;
	pd = write_read(path, &ft);
	assert_null(hm_perfdata_features(pd)->kslab);
	hm_perfdata_close(pd);
	unlink(path);
	free(bytes);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_encode_decode_keeps_every_field),
		cmocka_unit_test(test_kslab_feature_roundtrip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
