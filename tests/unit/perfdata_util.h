/* Shared by the perf.data unit tests: temporary files, a recording that uses every record
 * type and sample field, and a small file builder for hand-made (damaged) records. */
#ifndef HM_TEST_PERFDATA_UTIL_H
#define HM_TEST_PERFDATA_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/kslab.h"
#include "core/perfdata.h"

#define UNUSED __attribute__((unused))

/* Every sample_type bit the reader decodes, in one event. */
#define FULL_SAMPLE_TYPE                                                                     \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |       \
	 PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |        \
	 PERF_SAMPLE_PERIOD | PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW |     \
	 PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER |          \
	 PERF_SAMPLE_WEIGHT_STRUCT | PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_TRANSACTION |         \
	 PERF_SAMPLE_REGS_INTR | PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_CGROUP |                 \
	 PERF_SAMPLE_DATA_PAGE_SIZE | PERF_SAMPLE_CODE_PAGE_SIZE | PERF_SAMPLE_AUX)
#define FULL_READ_FORMAT                                                                     \
	(PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_LOST |                              \
	 PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING)

static const uint64_t full_ids[] = {101, 102};
static const uint64_t clock_ids[] = {201};
static const uint64_t regs_user_vals[8] = {1, 2, 3, 4, 5, 6, 7, 8};
static const uint64_t regs_intr_vals[2] = {0xa, 0xb};
static const uint64_t chain_vals[3] = {0xffffffff81000000ull, 0x401000, 0x401100};
static const uint64_t read_vals[6] = {11, 101, 0, 22, 102, 1};	/* {value, id, lost} × 2 */
static const uint64_t branch_vals[6] = {0x401000, 0x402000, 0, 0x403000, 0x404000, 0};
static const char raw_vals[12] = "raw-payload";
static const uint64_t stack_vals[2] = {0x1111, 0x2222};
static const uint64_t aux_vals[1] = {0xa0a0};

static UNUSED char *tmp_path(const char *tag)
{
	static unsigned seq;
	const char *dir = getenv("TMPDIR");
	char *p = malloc(512);

	snprintf(p, 512, "%s/hm-perfdata-%d-%u-%s.data", dir && *dir ? dir : "/tmp",
		 (int)getpid(), seq++, tag);
	return p;
}

static UNUSED void write_bytes(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, n, f), n);
	fclose(f);
}

static UNUSED uint8_t *read_bytes(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	uint8_t *p;
	long len;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	p = malloc((size_t)len + 1);
	assert_int_equal(fread(p, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	*n = (size_t)len;
	return p;
}

/* attrs[0]: every sample field; attrs[1]: a cpu-clock-like event. Both put the id first
 * (IDENTIFIER) so samples route by id, and both have sample_id_all trailers. */
static UNUSED void make_attrs(struct hm_perf_attr attrs[2])
{
	memset(attrs, 0, 2 * sizeof(*attrs));
	attrs[0].attr.type = PERF_TYPE_RAW;
	attrs[0].attr.config = 0x1cd;
	attrs[0].attr.sample_type = FULL_SAMPLE_TYPE;
	attrs[0].attr.read_format = FULL_READ_FORMAT;
	attrs[0].attr.branch_sample_type = PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_HW_INDEX;
	attrs[0].attr.sample_regs_user = 0x0f0f;
	attrs[0].attr.sample_regs_intr = 0x3;
	attrs[0].attr.sample_stack_user = 16;
	attrs[0].attr.sample_id_all = 1;
	attrs[0].attr.precise_ip = 2;
	attrs[0].ids = full_ids;
	attrs[0].nr_ids = 2;
	attrs[0].name = "cpu/mem-loads/pp";
	attrs[1].attr.type = PERF_TYPE_SOFTWARE;
	attrs[1].attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attrs[1].attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
				    PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
				    PERF_SAMPLE_WEIGHT | PERF_SAMPLE_ADDR;
	attrs[1].attr.sample_id_all = 1;
	attrs[1].ids = clock_ids;
	attrs[1].nr_ids = 1;
}

static UNUSED void fill_full_sample(struct hm_perf_event *ev, const struct hm_perf_attr *a)
{
	struct hm_perf_sample *s = &ev->sample;

	memset(ev, 0, sizeof(*ev));
	ev->type = PERF_RECORD_SAMPLE;
	ev->misc = PERF_RECORD_MISC_USER;
	ev->attr = a;
	s->ip = 0x401234;
	s->pid = 42;
	s->tid = 43;
	s->time = 1000;
	s->addr = 0x7ffd0040;
	s->id = 102;
	s->stream_id = 7;
	s->cpu = 3;
	s->period = 10007;
	s->read.nr = 2;
	s->read.time_enabled = 50;
	s->read.time_running = 40;
	s->read.values = read_vals;
	s->nr_callchain = 3;
	s->callchain = chain_vals;
	s->raw_size = sizeof(raw_vals);
	s->raw = raw_vals;
	s->nr_branch = 2;
	s->branch_hw_idx = 5;
	s->branch = (const void *)branch_vals;
	s->regs_user = (struct hm_perf_regs){PERF_SAMPLE_REGS_ABI_64, 0, 0, regs_user_vals};
	s->regs_intr = (struct hm_perf_regs){PERF_SAMPLE_REGS_ABI_64, 0, 0, regs_intr_vals};
	s->stack_size = sizeof(stack_vals);
	s->stack = stack_vals;
	s->stack_dyn_size = 12;
	s->weight = hm_perf_weight_struct(300, 7, 9);
	s->data_src = 0x68100142;	/* load, L1 hit */
	s->transaction = 0x21;
	s->phys_addr = 0x12345000;
	s->cgroup = 77;
	s->data_page_size = 4096;
	s->code_page_size = 2 << 20;
	s->aux_size = sizeof(aux_vals);
	s->aux = aux_vals;
}

static UNUSED void write_or_fail(struct hm_perfdata_writer *w, const struct hm_perf_event *ev)
{
	struct hm_err err = {0};

	if (hm_perfdata_write(w, ev, &err) < 0)
		fail_msg("write: %s", err.msg);
}

/* One of each record type after the attrs; samples of both events. */
static UNUSED void write_all_records(struct hm_perfdata_writer *w)
{
	const struct hm_perf_attr *a0 = hm_perfdata_writer_attr(w, 0);
	const struct hm_perf_attr *a1 = hm_perfdata_writer_attr(w, 1);
	struct hm_perf_event ev;
	struct hm_perf_sample_id sid = {42, 43, 3, 900, 0, 7};

	memset(&ev, 0, sizeof(ev));
	ev.type = PERF_RECORD_COMM;
	ev.misc = PERF_RECORD_MISC_COMM_EXEC;
	ev.attr = a0;
	ev.sid = sid;
	ev.comm = (struct hm_perf_comm){42, 43, "worker"};
	write_or_fail(w, &ev);
	memset(&ev, 0, sizeof(ev));
	ev.type = PERF_RECORD_MMAP;
	ev.attr = a0;
	ev.sid = sid;
	ev.mmap.pid = 42;
	ev.mmap.tid = 42;
	ev.mmap.start = 0x400000;
	ev.mmap.len = 0x1000;
	ev.mmap.pgoff = 0;
	ev.mmap.filename = "/usr/bin/worker";
	write_or_fail(w, &ev);
	ev.type = PERF_RECORD_MMAP2;
	ev.mmap.maj = 8;
	ev.mmap.min = 1;
	ev.mmap.ino = 1234;
	ev.mmap.ino_generation = 5;
	ev.mmap.prot = 5;
	ev.mmap.flags = 2;
	ev.mmap.filename = "/lib/libc.so.6";
	write_or_fail(w, &ev);
	ev.mmap.build_id_size = 20;
	memcpy(ev.mmap.build_id, "0123456789abcdefghij", 20);
	ev.mmap.filename = "/lib/libm.so.6";
	write_or_fail(w, &ev);
	memset(&ev, 0, sizeof(ev));
	ev.type = PERF_RECORD_FORK;
	ev.attr = a1;
	ev.sid = sid;
	ev.sid.id = 201;
	ev.task = (struct hm_perf_task){44, 42, 45, 43, 1100};
	write_or_fail(w, &ev);
	fill_full_sample(&ev, a0);
	write_or_fail(w, &ev);
	memset(&ev, 0, sizeof(ev));
	ev.type = PERF_RECORD_SAMPLE;
	ev.misc = PERF_RECORD_MISC_KERNEL;
	ev.attr = a1;
	ev.sample = (struct hm_perf_sample){.ip = 0xffffffff81001000ull, .pid = 44, .tid = 45,
					    .time = 1200, .cpu = 1, .period = 250000, .weight = 9,
					    .addr = 0xdead0};
	write_or_fail(w, &ev);
	memset(&ev, 0, sizeof(ev));
	ev.type = PERF_RECORD_LOST;
	ev.attr = a0;
	ev.sid = sid;
	ev.lost = (struct hm_perf_lost){0, 17};
	write_or_fail(w, &ev);
	ev.type = PERF_RECORD_LOST_SAMPLES;
	ev.lost = (struct hm_perf_lost){0, 4};
	write_or_fail(w, &ev);
	memset(&ev, 0, sizeof(ev));
	ev.type = PERF_RECORD_EXIT;
	ev.attr = a1;
	ev.sid = sid;
	ev.sid.id = 201;
	ev.task = (struct hm_perf_task){44, 42, 45, 43, 1300};
	write_or_fail(w, &ev);
}

#define NR_ALL_RECORDS 10	/* what write_all_records writes, all returned by the reader */

static const char *const demo_cmdline[] = {"hitmap", "record", "--", "./worker"};

static UNUSED void make_features(struct hm_perf_features *ft, struct hm_perf_build_id *bid)
{
	memset(ft, 0, sizeof(*ft));
	memset(bid, 0, sizeof(*bid));
	bid->pid = -1;
	bid->misc = PERF_RECORD_MISC_USER;
	bid->size = 20;
	memcpy(bid->id, "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12"
			"\x13\x14", 20);
	bid->filename = "/usr/bin/worker";
	ft->hostname = "testhost";
	ft->osrelease = "6.1.0-test";
	ft->version = "hitmap-test";
	ft->arch = "x86_64";
	ft->cpudesc = "Test CPU @ 1.00GHz";
	ft->cpuid = "GenuineIntel,6,85,4";
	ft->nr_cpus_avail = 8;
	ft->nr_cpus_online = 4;
	ft->total_mem = 123456;
	ft->nr_cmdline = 4;
	ft->cmdline = (const char **)demo_cmdline;
	ft->nr_build_ids = 1;
	ft->build_ids = bid;
}

/* Writes the full recording to path; flags as for hm_perfdata_create. */
static UNUSED void write_full_file(const char *path, int flags)
{
	struct hm_perf_attr attrs[2];
	struct hm_perf_features ft;
	struct hm_perf_build_id bid;
	struct hm_perfdata_writer *w;
	struct hm_err err = {0};

	make_attrs(attrs);
	make_features(&ft, &bid);
	if (hm_perfdata_create(path, attrs, 2, flags, &w, &err) < 0)
		fail_msg("create: %s", err.msg);
	write_all_records(w);
	if (hm_perfdata_finish(w, &ft, &err) < 0)
		fail_msg("finish: %s", err.msg);
	hm_perfdata_writer_close(w);
}

/* Reads every event; returns the count, or -1 with err filled. */
static UNUSED int read_all(const char *path, struct hm_err *err, struct hm_perfdata **keep)
{
	struct hm_perfdata *pd;
	struct hm_perf_event ev;
	int n = 0, rc;

	if (hm_perfdata_open(path, &pd, err) < 0)
		return -1;
	while ((rc = hm_perfdata_next(pd, &ev, err)) > 0)
		n++;
	if (keep && rc == 0)
		*keep = pd;
	else
		hm_perfdata_close(pd);
	return rc < 0 ? -1 : n;
}

/* A minimal file-mode recording around hand-made data records: header, one attr with ids
 * {1}, data; no features. Returns the buffer (caller frees) and its length. */
static UNUSED uint8_t *build_file(const struct perf_event_attr *attr, const void *data,
				  size_t data_len, size_t *out_len)
{
	const uint64_t asz = sizeof(struct perf_event_attr);
	size_t ids_off = 104, attrs_off = ids_off + 8, data_off = attrs_off + asz + 16;
	size_t len = data_off + data_len;
	uint8_t *p = calloc(1, len);
	uint64_t hdr[13] = {0x32454c4946524550ull, 104, asz + 16, attrs_off, asz + 16,
			    data_off, data_len};
	uint64_t id = 1, ids_sec[2] = {ids_off, 8};
	struct perf_event_attr a = *attr;

	a.size = (uint32_t)asz;
	memcpy(p, hdr, sizeof(hdr));
	memcpy(p + ids_off, &id, 8);
	memcpy(p + attrs_off, &a, asz);
	memcpy(p + attrs_off + asz, ids_sec, 16);
	memcpy(p + data_off, data, data_len);
	*out_len = len;
	return p;
}

/* Appends a record header and body to buf at *at. */
static UNUSED void put_rec(uint8_t *buf, size_t *at, uint32_t type, uint16_t misc,
			   const void *body, size_t body_len)
{
	struct perf_event_header h = {type, misc, (uint16_t)(8 + body_len)};

	memcpy(buf + *at, &h, 8);
	memcpy(buf + *at + 8, body, body_len);
	*at += 8 + body_len;
}

/* A slab section of one cache and one slab (core/kslab.h). */
static UNUSED uint8_t *small_kslab(size_t *len)
{
	struct hm_kslab_cache c = {0xffff888000001000ull, 192, 192, 0, 0, "dentry"};
	struct hm_kslab_run r = {0xffff888000200000ull, 2, 0};
	struct hm_kslab k = {0xffff888000000000ull, 0xffffc90000000000ull, 1, 1, &c, &r};

	return hm_kslab_encode(&k, len);
}

/* bytes written into a pipe by a child and opened as stdin is; *rfd to close and *child
 * to wait for after. */
static UNUSED struct hm_perfdata *open_piped(const uint8_t *bytes, size_t len, int *rfd, pid_t *child)
{
	struct hm_perfdata *pd;
	struct hm_err err = {0};
	int fds[2];

	assert_int_equal(pipe(fds), 0);
	*child = fork();
	assert_true(*child >= 0);
	if (*child == 0) {
		close(fds[0]);
		_exit(write(fds[1], bytes, len) == (ssize_t)len ? 0 : 1);
	}
	close(fds[1]);
	if (hm_perfdata_open_fd(fds[0], "stdin", &pd, &err) < 0)
		fail_msg("open: %s", err.msg);
	*rfd = fds[0];
	return pd;
}

#endif
