/* perf.data in perf's own format: a reader for file and pipe mode, and a writer whose files
 * perf reads. The layout facts (header, attrs with ids, data section, feature sections,
 * sample field order) follow the kernel's uapi header and perf's tools/perf/util/header.c. */
#ifndef HM_PERFDATA_H
#define HM_PERFDATA_H

#include <stddef.h>
#include <stdint.h>

#include <linux/perf_event.h>

#include "core/err.h"
#include "core/sample.h"

/* Record types perf itself writes; they are not in the kernel's uapi header. */
enum {
	HM_PERF_RECORD_HEADER_ATTR = 64,
	HM_PERF_RECORD_HEADER_EVENT_TYPE = 65,
	HM_PERF_RECORD_HEADER_TRACING_DATA = 66,
	HM_PERF_RECORD_HEADER_BUILD_ID = 67,
	HM_PERF_RECORD_FINISHED_ROUND = 68,
	HM_PERF_RECORD_ID_INDEX = 69,
	HM_PERF_RECORD_AUXTRACE_INFO = 70,
	HM_PERF_RECORD_AUXTRACE = 71,
	HM_PERF_RECORD_EVENT_UPDATE = 78,
	HM_PERF_RECORD_HEADER_FEATURE = 80,
	HM_PERF_RECORD_COMPRESSED = 81,
	HM_PERF_RECORD_FINISHED_INIT = 82,
	HM_PERF_RECORD_MAX_TYPE = 128,	/* stats count types below this */
};

/* Feature section ids (bits of the header's adds_features bitmap). */
enum hm_perf_feat {
	HM_PERF_FEAT_BUILD_ID = 2,
	HM_PERF_FEAT_HOSTNAME = 3,
	HM_PERF_FEAT_OSRELEASE = 4,
	HM_PERF_FEAT_VERSION = 5,
	HM_PERF_FEAT_ARCH = 6,
	HM_PERF_FEAT_NRCPUS = 7,
	HM_PERF_FEAT_CPUDESC = 8,
	HM_PERF_FEAT_CPUID = 9,
	HM_PERF_FEAT_TOTAL_MEM = 10,
	HM_PERF_FEAT_CMDLINE = 11,
	HM_PERF_FEAT_EVENT_DESC = 12,
	HM_PERF_FEAT_CPU_TOPOLOGY = 13,
	HM_PERF_FEAT_NUMA_TOPOLOGY = 14,
	/* hitmap's own: the kernel's slab pages at the end of `record -k` (core/kslab.h).
	 * perf processes only the feature bits it knows, in order, so a bit far above its
	 * last one is skipped by perf report, perf script and perf c2c. */
	HM_PERF_FEAT_HITMAP_INDEX = 249,	/* where the records other than samples lie */
	HM_PERF_FEAT_HITMAP_KSLAB = 250,
	HM_PERF_FEAT_BITS = 256,
};

/* One event of the recording (perf's evsel): its attr, ids and name. */
struct hm_perf_attr {
	struct perf_event_attr attr;	/* zero-extended; attr.size keeps the file's value */
	const uint64_t *ids;
	uint32_t nr_ids;
	uint32_t index;			/* position in the attr list; the writer matches by it */
	const char *name;		/* EVENT_DESC name, else derived from type/config as perf does */
};

struct hm_perf_regs {
	uint64_t abi;			/* enum perf_sample_regs_abi; NONE: no values */
	uint64_t mask;			/* attr.sample_regs_user or sample_regs_intr */
	uint32_t nr;			/* popcount(mask) when abi != NONE */
	const uint64_t *regs;		/* nr values, lowest mask bit first */
};

struct hm_perf_read {
	uint64_t time_enabled, time_running;
	uint64_t value, id, lost;	/* without PERF_FORMAT_GROUP */
	uint64_t nr;			/* with PERF_FORMAT_GROUP: entries in values */
	const uint64_t *values;		/* GROUP: nr × {value, [id], [lost]} */
};

/* A decoded PERF_RECORD_SAMPLE; a field is 0 when its sample_type bit is clear. Pointers
 * point into the reader's copy of the record and live until the next hm_perfdata_next(). */
struct hm_perf_sample {
	uint64_t ip, time, addr, id, stream_id, period;
	uint32_t pid, tid, cpu;
	uint64_t weight;		/* WEIGHT or WEIGHT_STRUCT as recorded (full u64) */
	uint32_t weight_var1;		/* low 32 bits: the latency for WEIGHT_STRUCT */
	uint16_t weight_var2, weight_var3; /* instruction latency, retire latency */
	uint64_t data_src;		/* union perf_mem_data_src, raw */
	uint64_t transaction, phys_addr, cgroup, data_page_size, code_page_size;
	struct hm_perf_read read;
	uint64_t nr_callchain;
	const uint64_t *callchain;
	uint32_t raw_size;
	const void *raw;
	uint64_t nr_branch, branch_hw_idx;
	const struct perf_branch_entry *branch;
	const uint64_t *branch_counters;	/* nr_branch values with BRANCH_COUNTERS */
	struct hm_perf_regs regs_user, regs_intr;
	uint64_t stack_size, stack_dyn_size;
	const void *stack;
	uint64_t aux_size;
	const void *aux;
};

/* MMAP and MMAP2. */
struct hm_perf_mmap {
	uint32_t pid, tid;
	uint64_t start, len, pgoff;
	uint32_t maj, min;		/* MMAP2 without a build-id */
	uint64_t ino, ino_generation;
	uint32_t prot, flags;		/* MMAP2 */
	uint8_t build_id_size;		/* MMAP2 with PERF_RECORD_MISC_MMAP_BUILD_ID */
	uint8_t build_id[20];
	const char *filename;
	/* Bytes after the filename's NUL and padding, before any sample_id trailer: perf
	 * reads the filename as a string and ignores them. hitmap record puts a module's
	 * section addresses there (symbolize/ksections.h); NULL/0 when none. */
	const uint8_t *extra;
	size_t extra_len;
};

struct hm_perf_comm {
	uint32_t pid, tid;
	const char *comm;		/* misc & PERF_RECORD_MISC_COMM_EXEC: set by exec */
};

/* FORK and EXIT. */
struct hm_perf_task {
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};

/* LOST (id, lost) and LOST_SAMPLES (lost only). */
struct hm_perf_lost {
	uint64_t id, lost;
};

/* sample_id_all trailer of a non-sample record. */
struct hm_perf_sample_id {
	uint32_t pid, tid, cpu;
	uint64_t time, id, stream_id;
};

struct hm_perf_event {
	uint32_t type;			/* PERF_RECORD_* */
	uint16_t misc;			/* cpumode and per-type flags */
	uint16_t size;			/* of the record in the file */
	uint64_t offset;		/* byte offset of the record in the file or stream */
	const struct hm_perf_attr *attr; /* samples always; others when the trailer names one */
	int has_sid;			/* sid holds a decoded sample_id_all trailer */
	struct hm_perf_sample_id sid;
	union {
		struct hm_perf_sample sample;
		struct hm_perf_mmap mmap;
		struct hm_perf_comm comm;
		struct hm_perf_task task;
		struct hm_perf_lost lost;
	};
};

struct hm_perf_build_id {
	int32_t pid;
	uint16_t misc;			/* PERF_RECORD_MISC_KERNEL, _USER, _GUEST_* */
	uint8_t size;			/* bytes of id in use; 20 for SHA-1 */
	uint8_t id[20];
	const char *filename;
};

/* Header features; a string is NULL and a number 0 when the file lacks that feature. */
/* HEADER_CPU_TOPOLOGY and HEADER_NUMA_TOPOLOGY as perf writes them (third revision of the
 * CPU one, with dies): perf c2c report refuses a file without them ("Failed setup
 * nodes"). Per-CPU arrays have nr_cpus (the NRCPUS feature's nr_cpus_avail) entries. */
struct hm_perf_numa_node {
	uint32_t node;
	uint64_t mem_total, mem_free;	/* kB */
	const char *cpus;		/* "0-1" */
};

struct hm_perf_topology {
	uint32_t nr_core_sibs, nr_thread_sibs, nr_die_sibs;
	const char **core_sibs, **thread_sibs, **die_sibs;	/* distinct cpu lists */
	uint32_t nr_cpus;
	uint32_t *core_id, *socket_id, *die_id;
	uint32_t nr_nodes;
	struct hm_perf_numa_node *nodes;
};

struct hm_perf_features {
	uint64_t present;		/* bit f set when feature f (< 64) was read */
	const char *hostname, *osrelease, *version, *arch, *cpudesc, *cpuid;
	uint32_t nr_cpus_avail, nr_cpus_online;
	uint64_t total_mem;		/* kB */
	uint32_t nr_cmdline;
	const char **cmdline;
	uint32_t nr_build_ids;
	struct hm_perf_build_id *build_ids;
	const struct hm_perf_topology *topo;	/* written when set; not read back yet */
	const uint8_t *kslab;		/* HITMAP_KSLAB's bytes (core/kslab.h), or NULL; when
					 * read, they live as long as the reader */
	size_t kslab_len;
	const uint8_t *index;		/* HITMAP_INDEX's bytes (core/perfdata_index.c), or
					 * NULL; read only: the writer builds its own */
	size_t index_len;
};

struct hm_perfdata_stats {
	uint64_t records[HM_PERF_RECORD_MAX_TYPE];	/* by PERF_RECORD_* type */
	uint64_t lost;			/* sum of LOST records' counts */
	uint64_t lost_samples;		/* sum of LOST_SAMPLES records' counts */
	uint64_t unknown_id;		/* samples whose id names no attr: skipped (perf 6.1
					 * stops there: "Can't parse sample, err = -14") */
	uint64_t skipped;		/* records of types not returned by hm_perfdata_next */
	uint64_t skipped_kernel;	/* of the samples skipped by their header alone
					 * (want_no_samples), those of kernel mode */
};

struct hm_perfdata;

/* Opens a perf.data file, or stdin for "-", in file or pipe mode. File mode reads the
 * attrs and features at once; pipe mode learns them from records as it goes. */
int hm_perfdata_open(const char *path, struct hm_perfdata **out, struct hm_err *err);
/* Same from an open descriptor (kept open); name is used in messages. */
int hm_perfdata_open_fd(int fd, const char *name, struct hm_perfdata **out, struct hm_err *err);
/* 1 with *ev filled, 0 at the end, negative on error. Returns SAMPLE, MMAP, MMAP2, COMM,
 * FORK, EXIT, LOST and LOST_SAMPLES; handles perf's header records; skips the rest. */
int hm_perfdata_next(struct hm_perfdata *pd, struct hm_perf_event *ev, struct hm_err *err);
void hm_perfdata_close(struct hm_perfdata *pd);
/* From now on, samples of events want refuses are skipped without being decoded (nor
 * checked): for a pass that needs the other records and only some samples. NULL: all. */
void hm_perfdata_want_samples(struct hm_perfdata *pd,
			      int (*want)(const struct hm_perf_attr *a, void *arg), void *arg);
/* From now on, every sample is skipped by its header alone (not even its event is
 * looked up): for a pass that needs the other records only. */
void hm_perfdata_want_no_samples(struct hm_perfdata *pd);

int hm_perfdata_is_pipe(const struct hm_perfdata *pd);
uint32_t hm_perfdata_nr_attrs(const struct hm_perfdata *pd);
const struct hm_perf_attr *hm_perfdata_attr(const struct hm_perfdata *pd, uint32_t i);
const struct hm_perf_features *hm_perfdata_features(const struct hm_perfdata *pd);
const struct hm_perfdata_stats *hm_perfdata_stats(const struct hm_perfdata *pd);
/* A one-line warning (data never finalised, cut-off last record), or NULL. */
const char *hm_perfdata_warning(const struct hm_perfdata *pd);
/* The record index a hitmap writer left (hm_perfdata_index_samples): the file offsets of
 * every record but samples and FINISHED_ROUND, and of the samples of the events it lists
 * (hm_perfdata_index_lists), ascending. 1 with them; 0 when the file has none, or one that
 * does not describe its data section (another tool rewrote the file): read it whole. */
int hm_perfdata_index(struct hm_perfdata *pd, const uint64_t **off, uint64_t *nr);
/* 1 when reading the index's records one by one (hm_perfdata_next_at, a 4 KB read each
 * that the last one did not cover) reads less than a quarter of the data section: where
 * it would read more, reading the file whole costs less. */
int hm_perfdata_index_pays(struct hm_perfdata *pd);
/* 1 when the index lists every sample of event attr. */
int hm_perfdata_index_lists(const struct hm_perfdata *pd, uint32_t attr);
/* The record at off, one of the index's offsets: 1 with *ev filled as hm_perfdata_next
 * fills it, 0 when the reader took the record itself (an event's name), negative on error
 * (damage, or no record the reader returns starts there: the index is wrong). A regular
 * file only; hm_perfdata_next goes on after the record. */
int hm_perfdata_next_at(struct hm_perfdata *pd, uint64_t off, struct hm_perf_event *ev,
			struct hm_err *err);

/* The latency perf reports: var1 for WEIGHT_STRUCT, the whole u64 for WEIGHT. */
uint64_t hm_perf_sample_weight(const struct hm_perf_event *ev);
static inline uint64_t hm_perf_weight_struct(uint32_t var1, uint16_t var2, uint16_t var3)
{
	return (uint64_t)var1 | (uint64_t)var2 << 32 | (uint64_t)var3 << 48;
}
/* Fills the one sample type from a decoded SAMPLE event. */
void hm_perfdata_to_sample(const struct hm_perf_event *ev, enum hm_source source,
			   struct hm_sample *out);
/* perf's name for an attr without EVENT_DESC: "cycles", "cpu-clock", "mem:0x..:rw", "r1cd". */
void hm_perf_attr_default_name(const struct perf_event_attr *attr, char *buf, size_t len);

/* Writer. */
struct hm_perfdata_writer;

enum { HM_PERFDATA_PIPE = 1 };	/* stream layout: no seeks, header records inline */

/* Writes the header (data size 0) and the attrs with their ids at once, so a writer killed
 * later still leaves a file perf can read; attrs[i].index is ignored (i is used). */
int hm_perfdata_create(const char *path, const struct hm_perf_attr *attrs, uint32_t nr_attrs,
		       int flags, struct hm_perfdata_writer **out, struct hm_err *err);
/* The writer's copy of attr i, with its index set: what ev->attr should point to. */
const struct hm_perf_attr *hm_perfdata_writer_attr(const struct hm_perfdata_writer *w,
						   uint32_t i);
/* Appends SAMPLE, MMAP, MMAP2, COMM, FORK, EXIT, LOST or LOST_SAMPLES. ev->attr selects
 * the event by its index (NULL: the first); a zero sample or trailer id takes its first id. */
int hm_perfdata_write(struct hm_perfdata_writer *w, const struct hm_perf_event *ev,
		      struct hm_err *err);
/* Appends a record as the kernel wrote it (from a ring buffer): size bytes starting with its
 * perf_event_header, whose size field must equal size. Its attr must be one of the writer's. */
int hm_perfdata_write_raw(struct hm_perfdata_writer *w, const void *rec, size_t size,
			  struct hm_err *err);
/* Flushes and records the data size in the header: what is written so far stays readable. */
int hm_perfdata_sync(struct hm_perfdata_writer *w, struct hm_err *err);
/* Writes the features (NULL: none but EVENT_DESC) and the final header. */
int hm_perfdata_finish(struct hm_perfdata_writer *w, const struct hm_perf_features *feat,
		       struct hm_err *err);
/* From now on the file gets a record index (core/perfdata_index.c) that lists the samples
 * of the events marked in of (nr_attrs entries by attr index; NULL: none): written by
 * hm_perfdata_finish, unless a sample's event could not be told (several events whose ids
 * are not all at one place) or it grew past 4M entries. A file, not a pipe. */
void hm_perfdata_index_samples(struct hm_perfdata_writer *w, const uint8_t *of);
/* Closes and frees; after finish, or to abandon a file (which stays readable to the last sync). */
void hm_perfdata_writer_close(struct hm_perfdata_writer *w);
uint64_t hm_perfdata_written(const struct hm_perfdata_writer *w);	/* data bytes so far */

#endif
