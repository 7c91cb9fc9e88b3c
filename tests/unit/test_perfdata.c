/* perf.data reader and writer: round trips of every record type and sample field, file and
 * pipe mode, features, names, unfinished files. Damaged input: test_perfdata_damage.c.
 * With "--write FILE [finished|unfinished|unsynced|pipe]" it writes a small recording for
 * tests/e2e/perfdata.sh to hand to perf script. */
#include <sys/wait.h>

#include "core/perfdata_int.h"
#include "tests/unit/perfdata_util.h"

static void check_full_sample(const struct hm_perf_event *ev)
{
	const struct hm_perf_sample *s = &ev->sample;

	assert_int_equal(ev->type, PERF_RECORD_SAMPLE);
	assert_int_equal(ev->misc, PERF_RECORD_MISC_USER);
	assert_int_equal(ev->attr->index, 0);
	assert_int_equal(s->ip, 0x401234);
	assert_int_equal(s->pid, 42);
	assert_int_equal(s->tid, 43);
	assert_int_equal(s->time, 1000);
	assert_int_equal(s->addr, 0x7ffd0040);
	assert_int_equal(s->id, 102);
	assert_int_equal(s->stream_id, 7);
	assert_int_equal(s->cpu, 3);
	assert_int_equal(s->period, 10007);
	assert_int_equal(s->read.nr, 2);
	assert_int_equal(s->read.time_enabled, 50);
	assert_int_equal(s->read.time_running, 40);
	assert_memory_equal(s->read.values, read_vals, sizeof(read_vals));
	assert_int_equal(s->nr_callchain, 3);
	assert_memory_equal(s->callchain, chain_vals, sizeof(chain_vals));
	assert_int_equal(s->raw_size, sizeof(raw_vals));
	assert_memory_equal(s->raw, raw_vals, sizeof(raw_vals));
	assert_int_equal(s->nr_branch, 2);
	assert_int_equal(s->branch_hw_idx, 5);
	assert_memory_equal(s->branch, branch_vals, sizeof(branch_vals));
	assert_int_equal(s->regs_user.abi, PERF_SAMPLE_REGS_ABI_64);
	assert_int_equal(s->regs_user.mask, 0x0f0f);
	assert_int_equal(s->regs_user.nr, 8);
	assert_memory_equal(s->regs_user.regs, regs_user_vals, sizeof(regs_user_vals));
	assert_int_equal(s->regs_intr.nr, 2);
	assert_memory_equal(s->regs_intr.regs, regs_intr_vals, sizeof(regs_intr_vals));
	assert_int_equal(s->stack_size, sizeof(stack_vals));
	assert_memory_equal(s->stack, stack_vals, sizeof(stack_vals));
	assert_int_equal(s->stack_dyn_size, 12);
	assert_int_equal(s->weight_var1, 300);
	assert_int_equal(s->weight_var2, 7);
	assert_int_equal(s->weight_var3, 9);
	assert_int_equal(hm_perf_sample_weight(ev), 300);
	assert_int_equal(s->data_src, 0x68100142);
	assert_int_equal(s->transaction, 0x21);
	assert_int_equal(s->phys_addr, 0x12345000);
	assert_int_equal(s->cgroup, 77);
	assert_int_equal(s->data_page_size, 4096);
	assert_int_equal(s->code_page_size, 2 << 20);
	assert_int_equal(s->aux_size, sizeof(aux_vals));
	assert_memory_equal(s->aux, aux_vals, sizeof(aux_vals));
}

static void check_sid(const struct hm_perf_event *ev, uint64_t id, uint32_t attr)
{
	assert_true(ev->has_sid);
	assert_non_null(ev->attr);
	assert_int_equal(ev->attr->index, attr);
	assert_int_equal(ev->sid.pid, 42);
	assert_int_equal(ev->sid.tid, 43);
	assert_int_equal(ev->sid.time, 900);
	assert_int_equal(ev->sid.id, id);
	if (attr == 0)	/* the cpu-clock event has no STREAM_ID */
		assert_int_equal(ev->sid.stream_id, 7);
	assert_int_equal(ev->sid.cpu, 3);
}

static void check_mmaps(const struct hm_perf_event *ev, int nth)
{
	const struct hm_perf_mmap *m = &ev->mmap;

	assert_int_equal(m->pid, 42);
	assert_int_equal(m->start, 0x400000);
	assert_int_equal(m->len, 0x1000);
	check_sid(ev, 101, 0);
	if (nth == 0) {
		assert_int_equal(ev->type, PERF_RECORD_MMAP);
		assert_string_equal(m->filename, "/usr/bin/worker");
	} else if (nth == 1) {
		assert_int_equal(ev->type, PERF_RECORD_MMAP2);
		assert_int_equal(m->maj, 8);
		assert_int_equal(m->min, 1);
		assert_int_equal(m->ino, 1234);
		assert_int_equal(m->ino_generation, 5);
		assert_int_equal(m->prot, 5);
		assert_int_equal(m->flags, 2);
		assert_int_equal(m->build_id_size, 0);
		assert_string_equal(m->filename, "/lib/libc.so.6");
	} else {
		assert_true(ev->misc & PERF_RECORD_MISC_MMAP_BUILD_ID);
		assert_int_equal(m->build_id_size, 20);
		assert_memory_equal(m->build_id, "0123456789abcdefghij", 20);
		assert_int_equal(m->prot, 5);
		assert_string_equal(m->filename, "/lib/libm.so.6");
	}
}

/* Checks the events of write_all_records() in order. */
static void check_all_records(struct hm_perfdata *pd)
{
	struct hm_perf_event ev;
	struct hm_err err = {0};

	assert_int_equal(hm_perfdata_next(pd, &ev, &err), 1);
	assert_int_equal(ev.type, PERF_RECORD_COMM);
	assert_true(ev.misc & PERF_RECORD_MISC_COMM_EXEC);
	assert_string_equal(ev.comm.comm, "worker");
	assert_int_equal(ev.comm.tid, 43);
	check_sid(&ev, 101, 0);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(hm_perfdata_next(pd, &ev, &err), 1);
		check_mmaps(&ev, i);
	}
	assert_int_equal(hm_perfdata_next(pd, &ev, &err), 1);
	assert_int_equal(ev.type, PERF_RECORD_FORK);
	assert_int_equal(ev.task.pid, 44);
	assert_int_equal(ev.task.ppid, 42);
	assert_int_equal(ev.task.tid, 45);
	assert_int_equal(ev.task.ptid, 43);
	assert_int_equal(ev.task.time, 1100);
	check_sid(&ev, 201, 1);
	assert_int_equal(hm_perfdata_next(pd, &ev, &err), 1);
	check_full_sample(&ev);
	assert_int_equal(hm_perfdata_next(pd, &ev, &err), 1);
	assert_int_equal(ev.attr->index, 1);
	assert_int_equal(ev.misc, PERF_RECORD_MISC_KERNEL);
	assert_int_equal(ev.sample.id, 201);	/* the writer filled in the event's id */
	assert_int_equal(ev.sample.ip, 0xffffffff81001000ull);
	assert_int_equal(ev.sample.addr, 0xdead0);
	assert_int_equal(ev.sample.weight, 9);
	assert_int_equal(ev.sample.period, 250000);
	assert_int_equal(ev.sample.cpu, 1);
	assert_int_equal(hm_perfdata_next(pd, &ev, &err), 1);
	assert_int_equal(ev.type, PERF_RECORD_LOST);
	assert_int_equal(ev.lost.id, 101);
	assert_int_equal(ev.lost.lost, 17);
	assert_int_equal(hm_perfdata_next(pd, &ev, &err), 1);
	assert_int_equal(ev.type, PERF_RECORD_LOST_SAMPLES);
	assert_int_equal(ev.lost.lost, 4);
	assert_int_equal(hm_perfdata_next(pd, &ev, &err), 1);
	assert_int_equal(ev.type, PERF_RECORD_EXIT);
	assert_int_equal(ev.task.time, 1300);
	assert_int_equal(hm_perfdata_next(pd, &ev, &err), 0);
	assert_int_equal(hm_perfdata_stats(pd)->lost, 17);
	assert_int_equal(hm_perfdata_stats(pd)->lost_samples, 4);
	assert_int_equal(hm_perfdata_stats(pd)->records[PERF_RECORD_SAMPLE], 2);
}

static void check_attrs(struct hm_perfdata *pd)
{
	const struct hm_perf_attr *a0, *a1;

	assert_int_equal(hm_perfdata_nr_attrs(pd), 2);
	a0 = hm_perfdata_attr(pd, 0);
	a1 = hm_perfdata_attr(pd, 1);
	assert_int_equal(a0->attr.sample_type, FULL_SAMPLE_TYPE);
	assert_int_equal(a0->attr.read_format, FULL_READ_FORMAT);
	assert_int_equal(a0->attr.sample_regs_user, 0x0f0f);
	assert_int_equal(a0->attr.precise_ip, 2);
	assert_true(a0->attr.sample_id_all);
	assert_int_equal(a0->nr_ids, 2);
	assert_int_equal(a0->ids[1], 102);
	assert_string_equal(a0->name, "cpu/mem-loads/pp");
	assert_string_equal(a1->name, "cpu-clock");	/* no name given: perf's default */
	assert_null(hm_perfdata_attr(pd, 2));
}

static void check_features(struct hm_perfdata *pd)
{
	const struct hm_perf_features *ft = hm_perfdata_features(pd);

	assert_string_equal(ft->hostname, "testhost");
	assert_string_equal(ft->osrelease, "6.1.0-test");
	assert_string_equal(ft->version, "hitmap-test");
	assert_string_equal(ft->arch, "x86_64");
	assert_string_equal(ft->cpudesc, "Test CPU @ 1.00GHz");
	assert_string_equal(ft->cpuid, "GenuineIntel,6,85,4");
	assert_int_equal(ft->nr_cpus_avail, 8);
	assert_int_equal(ft->nr_cpus_online, 4);
	assert_int_equal(ft->total_mem, 123456);
	assert_int_equal(ft->nr_cmdline, 4);
	assert_string_equal(ft->cmdline[3], "./worker");
	assert_int_equal(ft->nr_build_ids, 1);
	assert_int_equal(ft->build_ids[0].pid, -1);
	assert_int_equal(ft->build_ids[0].size, 20);
	assert_int_equal(ft->build_ids[0].id[19], 0x14);
	assert_int_equal(ft->build_ids[0].misc & PERF_RECORD_MISC_CPUMODE_MASK,
			 PERF_RECORD_MISC_USER);
	assert_string_equal(ft->build_ids[0].filename, "/usr/bin/worker");
	assert_true(ft->present & (1ull << HM_PERF_FEAT_EVENT_DESC));
}

static void test_roundtrip_file_every_record_and_field(void **state)
{
	char *path = tmp_path("full");
	struct hm_perfdata *pd;
	struct hm_err err = {0};

	(void)state;
	write_full_file(path, 0);
	if (hm_perfdata_open(path, &pd, &err) < 0)
		fail_msg("open: %s", err.msg);
	assert_false(hm_perfdata_is_pipe(pd));
	check_attrs(pd);
	check_features(pd);
	check_all_records(pd);
	assert_null(hm_perfdata_warning(pd));
	hm_perfdata_close(pd);
	unlink(path);
	free(path);
}

static void test_roundtrip_pipe_mode_file(void **state)
{
	char *path = tmp_path("pipe");
	struct hm_perfdata *pd;
	struct hm_err err = {0};

	(void)state;
	write_full_file(path, HM_PERFDATA_PIPE);
	if (hm_perfdata_open(path, &pd, &err) < 0)
		fail_msg("open: %s", err.msg);
	assert_true(hm_perfdata_is_pipe(pd));
	check_attrs(pd);	/* HEADER_ATTR and the EVENT_DESC feature come first */
	check_all_records(pd);
	check_features(pd);	/* the other features come at the end */
	hm_perfdata_close(pd);
	unlink(path);
	free(path);
}

/* A child writes the stream into a pipe in small pieces; the reader must reassemble it. */
static void test_pipe_mode_through_a_pipe(void **state)
{
	char *path = tmp_path("pipe2");
	struct hm_perfdata *pd;
	struct hm_err err = {0};
	size_t len;
	uint8_t *bytes;
	int fds[2];
	pid_t child;

	(void)state;
	write_full_file(path, HM_PERFDATA_PIPE);
	bytes = read_bytes(path, &len);
	assert_int_equal(pipe(fds), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		close(fds[0]);
		for (size_t off = 0; off < len; off += 37)
			if (write(fds[1], bytes + off, len - off < 37 ? len - off : 37) < 0)
				_exit(1);
		_exit(0);
	}
	close(fds[1]);
	if (hm_perfdata_open_fd(fds[0], "pipe", &pd, &err) < 0)
		fail_msg("open: %s", err.msg);
	check_attrs(pd);
	check_all_records(pd);
	check_features(pd);
	hm_perfdata_close(pd);
	close(fds[0]);
	waitpid(child, NULL, 0);
	unlink(path);
	free(path);
	free(bytes);
}

/* perf accepts `-i -` with a file-mode file on stdin; the reader keeps it in memory. */
static void test_file_mode_through_a_pipe(void **state)
{
	char *path = tmp_path("filepipe");
	struct hm_perfdata *pd;
	size_t len;
	uint8_t *bytes;
	int fds[2];
	pid_t child;

	(void)state;
	write_full_file(path, 0);
	bytes = read_bytes(path, &len);
	pd = open_piped(bytes, len, &fds[0], &child);
	assert_false(hm_perfdata_is_pipe(pd));
	check_features(pd);
	check_all_records(pd);
	hm_perfdata_close(pd);
	close(fds[0]);
	waitpid(child, NULL, 0);
	unlink(path);
	free(path);
	free(bytes);
}

static struct hm_perfdata_writer *start_unfinished(const char *path, int n_synced)
{
	struct hm_perf_attr attrs[2];
	struct hm_perfdata_writer *w;
	struct hm_err err = {0};
	struct hm_perf_event ev;

	make_attrs(attrs);
	if (hm_perfdata_create(path, attrs, 2, 0, &w, &err) < 0)
		fail_msg("create: %s", err.msg);
	fill_full_sample(&ev, hm_perfdata_writer_attr(w, 0));
	for (int i = 0; i < n_synced; i++)
		write_or_fail(w, &ev);
	assert_int_equal(hm_perfdata_sync(w, &err), 0);
	return w;
}

/* Killed after a sync: the header covers what was synced; later records are not counted. */
static void test_sync_leaves_readable_prefix(void **state)
{
	char *path = tmp_path("sync");
	struct hm_perfdata_writer *w = start_unfinished(path, 3);
	struct hm_perf_event ev;
	struct hm_err err = {0};

	(void)state;
	fill_full_sample(&ev, hm_perfdata_writer_attr(w, 1));
	write_or_fail(w, &ev);
	hm_perfdata_writer_close(w);	/* buffered, never synced: lost like a kill */
	assert_int_equal(read_all(path, &err, NULL), 3);
	unlink(path);
	free(path);
}

/* Killed before any sync: data size 0; read to EOF, the cut last record ignored, warned. */
static void test_data_size_zero_reads_to_end_with_warning(void **state)
{
	char *path = tmp_path("zero");
	struct hm_perf_attr attrs[2];
	struct hm_perfdata_writer *w;
	struct hm_perfdata *pd = NULL;
	struct hm_perf_event ev;
	struct hm_err err = {0};
	uint8_t *bytes;
	size_t len;

	(void)state;
	make_attrs(attrs);
	assert_int_equal(hm_perfdata_create(path, attrs, 2, 0, &w, &err), 0);
	fill_full_sample(&ev, hm_perfdata_writer_attr(w, 0));
	for (int i = 0; i < 5; i++)
		write_or_fail(w, &ev);
	hm_perfdata_writer_close(w);
	/* What a kill leaves: the records flushed, the header still saying 0. */
	bytes = read_bytes(path, &len);
	assert_int_equal(len, 104 + 24 + 2 * (sizeof(struct perf_event_attr) + 16));
	free(bytes);
	w = start_unfinished(path, 5);
	hm_perfdata_writer_close(w);
	bytes = read_bytes(path, &len);
	memset(bytes + 48, 0, 8);	/* data size back to 0 */
	write_bytes(path, bytes, len - 3);	/* and the last record cut */
	assert_int_equal(read_all(path, &err, &pd), 4);
	assert_non_null(hm_perfdata_warning(pd));
	assert_non_null(strstr(hm_perfdata_warning(pd), "data size is 0"));
	assert_non_null(strstr(hm_perfdata_warning(pd), "cut off"));
	hm_perfdata_close(pd);
	unlink(path);
	free(path);
	free(bytes);
}

/* Without any sync call, every 64 KiB flush records the size: a kill loses only the buffer. */
static void test_flushes_keep_header_current(void **state)
{
	char *path = tmp_path("flush");
	struct hm_perf_attr attrs[2];
	struct hm_perfdata_writer *w;
	struct hm_perf_event ev;
	struct hm_err err = {0};
	int n;

	(void)state;
	make_attrs(attrs);
	assert_int_equal(hm_perfdata_create(path, attrs, 2, 0, &w, &err), 0);
	fill_full_sample(&ev, hm_perfdata_writer_attr(w, 0));
	for (int i = 0; i < 2000; i++)
		write_or_fail(w, &ev);
	hm_perfdata_writer_close(w);
	n = read_all(path, &err, NULL);
	assert_true(n > 1500 && n < 2000);
	unlink(path);
	free(path);
}

/* The recorder copies kernel records from ring buffers as they are. */
static void test_write_raw_appends_kernel_records(void **state)
{
	char *path = tmp_path("raw");
	struct hm_perf_attr attrs[2];
	struct hm_perfdata_writer *w;
	struct hm_perfdata *pd;
	struct hm_perf_event ev;
	struct hm_err err = {0};
	uint64_t rec[9] = {0, 201, 0x401000, 5 | 6ull << 32, 777, 0xbeef0, 2, 1000, 33};
	struct perf_event_header h = {PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, sizeof(rec)};

	(void)state;
	memcpy(rec, &h, sizeof(h));
	make_attrs(attrs);
	assert_int_equal(hm_perfdata_create(path, attrs, 2, 0, &w, &err), 0);
	assert_int_equal(hm_perfdata_write_raw(w, rec, sizeof(rec), &err), 0);
	assert_true(hm_perfdata_write_raw(w, rec, sizeof(rec) - 8, &err) < 0);
	assert_non_null(strstr(err.msg, "raw record says 72 bytes"));
	assert_int_equal(hm_perfdata_finish(w, NULL, &err), 0);
	hm_perfdata_writer_close(w);
	assert_int_equal(hm_perfdata_open(path, &pd, &err), 0);
	assert_int_equal(hm_perfdata_next(pd, &ev, &err), 1);
	assert_int_equal(ev.attr->index, 1);
	assert_int_equal(ev.sample.ip, 0x401000);
	assert_int_equal(ev.sample.tid, 6);
	assert_int_equal(ev.sample.addr, 0xbeef0);
	assert_int_equal(ev.sample.weight, 33);
	assert_int_equal(hm_perfdata_next(pd, &ev, &err), 0);
	hm_perfdata_close(pd);
	unlink(path);
	free(path);
}

static void test_to_sample_fills_hm_sample(void **state)
{
	struct hm_perf_attr attrs[2];
	struct hm_perf_event ev;
	struct hm_sample s;

	(void)state;
	make_attrs(attrs);
	fill_full_sample(&ev, &attrs[0]);
	hm_perfdata_to_sample(&ev, HM_SRC_PMU, &s);
	assert_int_equal(s.ip, 0x401234);
	assert_int_equal(s.addr, 0x7ffd0040);
	assert_int_equal(s.phys, 0x12345000);
	assert_int_equal(s.tid, 43);
	assert_int_equal(s.cpu, 3);
	assert_int_equal(s.weight, 300);	/* WEIGHT_STRUCT: var1 */
	assert_int_equal(s.op, HM_OP_LOAD);
	assert_int_equal(s.source, HM_SRC_PMU);
	assert_int_equal(s.kernel, 0);
	ev.sample.data_src = 0x5080144;		/* store, L1 hit */
	ev.misc = PERF_RECORD_MISC_KERNEL;
	hm_perfdata_to_sample(&ev, HM_SRC_TIMER, &s);
	assert_int_equal(s.op, HM_OP_STORE);
	assert_int_equal(s.kernel, 1);
	assert_int_equal(s.source, HM_SRC_TIMER);
	ev.attr = &attrs[1];	/* no DATA_SRC: op unknown; plain WEIGHT */
	ev.sample.weight = 1ull << 40;
	hm_perfdata_to_sample(&ev, HM_SRC_PMU, &s);
	assert_int_equal(s.op, HM_OP_UNKNOWN);
	assert_int_equal(s.weight, UINT32_MAX);
	attrs[1].attr.sample_type &= ~(uint64_t)PERF_SAMPLE_WEIGHT;	/* no weight: period */
	hm_perfdata_to_sample(&ev, HM_SRC_PMU, &s);
	assert_int_equal(s.weight, 10007);
}

/* Fields the attr does not record read as zero, whatever the struct held (core/zero.h). */
static void test_decode_zeroes_every_field_not_recorded(void **state)
{
	struct hm_perf_attr pa = {.attr.sample_type = PERF_SAMPLE_IP};
	struct hm_perf_sample s, want;
	uint64_t rec[2] = {PERF_RECORD_SAMPLE | (uint64_t)PERF_RECORD_MISC_USER << 32 |
			   (uint64_t)16 << 48, 0x401234};	/* header (type, misc, size), ip */

	(void)state;
	memset(&s, 0xab, sizeof(s));
	memset(&want, 0, sizeof(want));
	want.ip = 0x401234;
	assert_int_equal(hm_pd_decode_sample(&pa, (const uint8_t *)rec, sizeof(rec), &s), 0);
	assert_memory_equal(&s, &want, sizeof(s));
}

static void test_default_event_names_follow_perf(void **state)
{
	struct perf_event_attr a;
	char buf[64];

	(void)state;
	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_CPU_CYCLES;
	hm_perf_attr_default_name(&a, buf, sizeof(buf));
	assert_string_equal(buf, "cycles");
	a.exclude_kernel = a.exclude_hv = 1;
	hm_perf_attr_default_name(&a, buf, sizeof(buf));
	assert_string_equal(buf, "cycles:u");
	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_BREAKPOINT;
	a.bp_addr = 0x404040;
	a.bp_type = 3;
	hm_perf_attr_default_name(&a, buf, sizeof(buf));
	assert_string_equal(buf, "mem:0x404040:rw");
	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_RAW;
	a.config = 0x1cd;
	a.precise_ip = 2;
	hm_perf_attr_default_name(&a, buf, sizeof(buf));
	assert_string_equal(buf, "r1cd:pp");
}

/* What a writer killed after flushing records but before its first sync leaves. */
static int zero_data_size(const char *path)
{
	size_t len;
	uint8_t *bytes = read_bytes(path, &len);

	memset(bytes + 48, 0, 8);
	write_bytes(path, bytes, len);
	free(bytes);
	return 0;
}

/* tests/e2e/perfdata.sh: a recording perf script must read (one cpu-clock-like event with
 * addresses, plus a second event routed by id). */
static int write_for_perf(const char *path, const char *mode)
{
	struct hm_perf_attr attrs[2];
	struct hm_perf_features ft;
	struct hm_perf_build_id bid;
	struct hm_perfdata_writer *w;
	struct hm_err err = {0};
	struct hm_perf_event ev;

	make_attrs(attrs);
	make_features(&ft, &bid);
	if (!strcmp(mode, "kslab"))	/* hitmap's own feature bit, far past perf's */
		ft.kslab = small_kslab(&ft.kslab_len);
	attrs[0] = attrs[1];
	attrs[0].ids = full_ids;
	attrs[0].nr_ids = 2;
	attrs[0].attr.sample_type |= PERF_SAMPLE_DATA_SRC;
	attrs[1].attr.sample_type |= PERF_SAMPLE_DATA_SRC;
	attrs[1].attr.config = PERF_COUNT_SW_TASK_CLOCK;
	if (hm_perfdata_create(path, attrs, 2, strcmp(mode, "pipe") ? 0 : HM_PERFDATA_PIPE, &w,
			       &err) < 0)
		goto fail;
	memset(&ev, 0, sizeof(ev));
	ev.type = PERF_RECORD_COMM;
	ev.comm = (struct hm_perf_comm){4242, 4242, "hmworker"};
	ev.sid = (struct hm_perf_sample_id){.pid = 4242, .tid = 4242, .time = 1};
	if (hm_perfdata_write(w, &ev, &err) < 0)
		goto fail;
	for (int i = 0; i < 100; i++) {
		memset(&ev, 0, sizeof(ev));
		ev.type = PERF_RECORD_SAMPLE;
		ev.misc = PERF_RECORD_MISC_USER;
		ev.attr = hm_perfdata_writer_attr(w, (uint32_t)(i % 3 == 2));
		ev.sample = (struct hm_perf_sample){
			.ip = 0x401000 + (uint64_t)i * 4, .pid = 4242, .tid = 4242 + (uint32_t)(i % 2),
			.time = 1000000 + (uint64_t)i * 1000, .cpu = (uint32_t)(i % 4),
			.addr = 0x7f0000001000 + (uint64_t)i * 64, .period = 250000, .weight = 30,
			.data_src = 0x68100142};
		if (hm_perfdata_write(w, &ev, &err) < 0)
			goto fail;
		if (i == 59 && !strcmp(mode, "unfinished") && hm_perfdata_sync(w, &err) < 0)
			goto fail;
	}
	if (!strcmp(mode, "unsynced") && hm_perfdata_sync(w, &err) < 0)
		goto fail;
	if (strcmp(mode, "unfinished") && strcmp(mode, "unsynced") &&
	    hm_perfdata_finish(w, &ft, &err) < 0)
		goto fail;
	hm_perfdata_writer_close(w);
	free((void *)ft.kslab);
	if (!strcmp(mode, "unsynced"))
		return zero_data_size(path);
	return 0;
fail:
	fprintf(stderr, "test_perfdata --write: %s\n", err.msg);
	return 2;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip_file_every_record_and_field),
		cmocka_unit_test(test_roundtrip_pipe_mode_file),
		cmocka_unit_test(test_pipe_mode_through_a_pipe),
		cmocka_unit_test(test_file_mode_through_a_pipe),
		cmocka_unit_test(test_sync_leaves_readable_prefix),
		cmocka_unit_test(test_data_size_zero_reads_to_end_with_warning),
		cmocka_unit_test(test_flushes_keep_header_current),
		cmocka_unit_test(test_write_raw_appends_kernel_records),
		cmocka_unit_test(test_to_sample_fills_hm_sample),
		cmocka_unit_test(test_default_event_names_follow_perf),
		cmocka_unit_test(test_decode_zeroes_every_field_not_recorded),
	};

	if (argc >= 3 && !strcmp(argv[1], "--write"))
		return write_for_perf(argv[2], argc >= 4 ? argv[3] : "finished");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
