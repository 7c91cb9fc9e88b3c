/* memgen OUT BINARY N LINES: a synthesized recording of N PMU-like samples (IP, TID,
 * TIME, ADDR, CPU, PERIOD) spread over LINES distinct cache lines, for bench/mem.sh: what
 * report, compare and whatif hold per distinct line. perfgrow repeats a real recording,
 * whose addresses repeat too; this varies them.
 *
 * BINARY (the committed tests/data/rec/bin/false_sharing) is mapped at the PIE base with
 * one MMAP per PT_LOAD, after an exec COMM, and its build-id is in the BUILD_ID table, so
 * compare can tell which build the run is. Sample i is on line i % LINES, from one of two
 * threads (on CPU 0 or 1), each line's visits alternating between them: line 0 is the global `stats` (its two threads' counters, one store
 * each: a false-sharing line with a type, which whatif can replay), the others are
 * heap-like addresses no object covers, at offset 0 or 8 of their line. The ips are the
 * two workers' stores (objdump -d of the committed binary: count_ops 0x1263, count_errors
 * 0x128b). Data our own tool synthesizes: for memory figures, not for verdicts. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buildid.h"
#include "core/perfdata.h"

#define BASE 0x555555554000ull
#define HEAP 0x7f1200000000ull
#define PID 4242
#define IP_OPS 0x1263		/* count_ops: mov %rax,(%rcx) on stats.ops */
#define IP_ERRORS 0x128b	/* count_errors: mov %rdx,stats.errors(%rip) */
#define STATS 0x4080		/* the global struct worker_stats stats */
#define PERIOD_NS 250000	/* 4 kHz */

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || end == s || *end || *s == '-' ? -1 : 0;
}

static int write_maps(struct hm_perfdata_writer *w, const char *bin, struct hm_err *err)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	struct hm_perf_event ev;
	int fd = open(bin, O_RDONLY), rc = 0;

	if (fd < 0 || pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG))
		return hm_err_set(err, HM_EXIT_INPUT, "%s: not a readable ELF file", bin);
	memset(&ev, 0, sizeof(ev));
	ev.type = PERF_RECORD_COMM;
	ev.misc = PERF_RECORD_MISC_COMM_EXEC;
	ev.comm = (struct hm_perf_comm){ PID, PID, "false_sharing" };
	rc = hm_perfdata_write(w, &ev, err);
	for (uint16_t i = 0; !rc && i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * eh.e_phentsize)) !=
		    (ssize_t)sizeof(ph)) {
			rc = hm_err_set(err, HM_EXIT_INPUT, "%s: program header %u unreadable", bin, i);
			break;
		}
		if (ph.p_type != PT_LOAD)
			continue;
		memset(&ev, 0, sizeof(ev));
		ev.type = PERF_RECORD_MMAP;
		ev.misc = PERF_RECORD_MISC_USER;
		ev.mmap.pid = ev.mmap.tid = PID;
		ev.mmap.start = BASE + (ph.p_vaddr & ~0xfffull);
		ev.mmap.len = ((ph.p_vaddr & 0xfff) + ph.p_memsz + 0xfff) & ~0xfffull;
		ev.mmap.pgoff = ph.p_offset & ~0xfffull;
		ev.mmap.filename = bin;
		rc = hm_perfdata_write(w, &ev, err);
	}
	close(fd);
	return rc;
}

static int write_samples(struct hm_perfdata_writer *w, uint64_t n, uint64_t lines,
			 struct hm_err *err)
{
	struct hm_perf_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = PERF_RECORD_SAMPLE;
	ev.misc = PERF_RECORD_MISC_USER;
	ev.attr = hm_perfdata_writer_attr(w, 0);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t l = i % lines, t = (lines == 1 ? i : i / lines) % 2;
		struct hm_perf_sample *s = &ev.sample;

		s->ip = BASE + (t ? IP_ERRORS : IP_OPS);
		s->pid = PID;
		s->tid = PID + (uint32_t)t;
		s->cpu = (uint32_t)t;
		s->time = 1000000 + i * PERIOD_NS;
		s->period = 4000;
		s->addr = l ? HEAP + l * 64 + t * 8 : BASE + STATS + t * 8;
		if (hm_perfdata_write(w, &ev, err))
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const uint64_t ids[] = { 77 };
	struct hm_perf_attr attr;
	struct hm_perf_build_id bid;
	struct hm_perf_features feat;
	struct hm_perfdata_writer *w;
	struct hm_err err = {0};
	uint64_t n, lines;

	if (argc != 5 || parse_u64(argv[3], &n) || parse_u64(argv[4], &lines) || !n || !lines ||
	    argv[2][0] != '/') {
		fprintf(stderr, "usage: memgen OUT /ABSOLUTE/BINARY N LINES  (N, LINES >= 1)\n");
		return 1;
	}
	memset(&attr, 0, sizeof(attr));
	attr.attr.type = PERF_TYPE_RAW;
	attr.attr.size = PERF_ATTR_SIZE_VER5;
	attr.attr.config = 0x1cd;
	attr.attr.sample_period = 4000;
	attr.attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
				PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU |
				PERF_SAMPLE_PERIOD;
	attr.attr.sample_id_all = 1;
	attr.ids = ids;
	attr.nr_ids = 1;
	memset(&bid, 0, sizeof(bid));
	bid.pid = -1;
	bid.misc = PERF_RECORD_MISC_USER;
	bid.filename = argv[2];
	if (!(bid.size = (uint8_t)hm_buildid_read(argv[2], bid.id))) {
		fprintf(stderr, "memgen: %s: no build-id: give a binary linked with one\n", argv[2]);
		return 2;
	}
	memset(&feat, 0, sizeof(feat));
	feat.nr_build_ids = 1;
	feat.build_ids = &bid;
	if (hm_perfdata_create(argv[1], &attr, 1, 0, &w, &err))
		goto fail;
	if (write_maps(w, argv[2], &err) || write_samples(w, n, lines, &err) ||
	    hm_perfdata_finish(w, &feat, &err)) {
		hm_perfdata_writer_close(w);
		goto fail;
	}
	hm_perfdata_writer_close(w);
	return 0;
fail:
	fprintf(stderr, "memgen: %s\n", err.msg);
	return 2;
}
