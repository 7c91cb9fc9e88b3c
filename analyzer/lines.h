/* The report's aggregation: accesses grouped per cache line and per (offset, size) inside
 * it (lines.c, lines_fill.c), each line's interleavings, sharing verdict, field pairs and
 * fix (sharing.c), and the accesses that cross a line or page boundary (splits.c). Pure
 * functions of an array of struct hm_access; every result lives in the caller's arena.
 * docs/report.md has the rules. */
#ifndef HM_LINES_H
#define HM_LINES_H

#include <stddef.h>
#include <stdint.h>

#include "symbolize/access.h"
#include "analyzer/c2c.h"
#include "core/arena.h"
#include "core/err.h"

#define HM_LINES_TOP_SITES 5		/* code sites kept per field row */
#define HM_LINES_MAX_PAIRS 8		/* field pairs kept per shared line */
#define HM_LINES_KERNEL_PID UINT32_MAX	/* address space of kernel-half addresses */
#define HM_LINES_TLS_SPACE 0x80000000u	/* | tid: one thread's TLS, by thread-pointer offset */
#define HM_LINES_TID_MASK 0x003fffffu	/* pid_max is at most 2^22 */
#define HM_LINES_IS_TLS(space) (((space) & ~HM_LINES_TID_MASK) == HM_LINES_TLS_SPACE)
/* Address spaces of the per-CPU areas (hm_access.percpu): one per CPU, below the kernel's
 * and above any pid (pid_max is at most 2^22). */
#define HM_LINES_PERCPU_PID(cpu) (HM_LINES_KERNEL_PID - 1 - ((cpu) & 0xffff))
#define HM_LINES_IS_PERCPU(pid) ((pid) < HM_LINES_KERNEL_PID && (pid) >= HM_LINES_KERNEL_PID - 0x10001)
#define HM_LINES_PERCPU_CPU(pid) (HM_LINES_KERNEL_PID - 1 - (pid))
#define HM_LINES_WINDOW_NS 100000	/* default timer conflict window: 100 us */

/* The address space an access's line belongs to: its process for user addresses, the
 * kernel's for kernel-half ones, its CPU's per-CPU area for %gs: offsets. */
uint32_t hm_lines_space(const struct hm_access *x);

/* A thread or a CPU and what it did. */
struct hm_count {
	uint32_t id;			/* tid or cpu */
	uint32_t pid;			/* threads: the process; CPUs: 0 */
	uint64_t records, loads, stores;
	uint64_t locked;		/* atomic accesses: they write, whatever their op */
	uint64_t writes;		/* stores and atomics, each once (hm_lines_writes) */
};

/* A code site: function file:line when symbolized, else the ip alone. */
struct hm_site {
	const char *func, *file;	/* NULL when unknown */
	int line;
	uint64_t ip;			/* the first ip seen at this site */
	uint64_t count;
};

/* Decided from which threads touch which bytes; the CPUs they ran on are evidence
 * (hm_line.latent), not part of the verdict. */
enum hm_verdict {
	HM_V_PRIVATE,			/* one thread */
	HM_V_READ_ONLY,			/* several threads, no stores */
	HM_V_FALSE_SHARING,		/* different threads, disjoint bytes, one writes */
	HM_V_TRUE_SHARING,		/* different threads, overlapping bytes, one writes */
	HM_V_FEW_SAMPLES,		/* a sharing pair, on too few samples to call it */
};

/* Whether a line's fix was replayed through whatif before it was printed (fixcheck.c). */
enum hm_fix_check {
	HM_FIX_UNCHECKED,		/* not examined (below the lines checked, or none) */
	HM_FIX_REPLAYED,		/* its replay leaves no false sharing for the type */
	HM_FIX_FAILED,			/* no candidate's replay removed it: fix is NULL */
	HM_FIX_NOT_LAYOUT,		/* no layout change expresses it (true sharing,
					 * elements of one array member, unnamed objects) */
};

/* How much the samples behind a sharing verdict say (docs/report.md, Confidence). */
enum hm_confidence {
	HM_CONF_NONE,			/* no sharing verdict */
	HM_CONF_LOW,			/* below the minimum: HM_V_FEW_SAMPLES */
	HM_CONF_MEDIUM,
	HM_CONF_HIGH,
};

/* Sampled (timer, PMU) evidence below which a pair gets no verdict: each side of the
 * pair at least this many records, the writing side at least HM_MIN_STORES stores. Watch
 * counts are exact and need no minimum. */
#define HM_MIN_RECORDS 6
#define HM_MIN_STORES 3
/* High confidence: each side this many records, and the pair interleaved (a timer
 * conflict, a watch transfer) or the line took HITM loads. */
#define HM_HIGH_RECORDS 30
/* Exact counts (watch): a side with at most this many accesses in the whole run is a
 * one-off (main reading a counter once after join), not contention. */
#define HM_ONE_OFF 2

/* One row of a line: the accesses with the same offset and size. */
struct hm_lfield {
	uint32_t offset;		/* first byte, from the start of the line */
	uint32_t size;			/* bytes per access, 0 if unknown */
	const char *field;		/* member path, else "object+0x18", else "+0x18" */
	const char *object;		/* NULL if unknown */
	const struct hm_type *type;	/* the object's type when known */
	uint64_t obj_base;		/* runtime address of the object, 0 if unknown */
	uint64_t field_off;		/* offset inside the object (valid with obj_base) */
	enum hm_method method;		/* how the object was found (heap: malloc'd) */
	const char *alloc_site;		/* "calloc at alloc_array.c:51" (heap), else NULL */
	int named;			/* field came from symbolization */
	uint64_t records, loads, stores, locked;
	uint64_t spin;			/* loads in a spin-wait loop (struct hm_access.spin) */
	uint64_t conflicts;		/* timer conflicts this row took part in (either side) */
	uint64_t transfers;		/* watch transfers to this row's access */
	uint64_t contention;		/* HITM loads, transfers or conflicts (as the line) */
	struct hm_c2c_stats *c2c;	/* its PMU samples; NULL when none */
	struct hm_count *threads;	/* by records, then pid and tid */
	uint32_t nr_threads;
	struct hm_count *cpus;
	uint32_t nr_cpus;
	struct hm_site *sites;		/* the top HM_LINES_TOP_SITES by count */
	uint32_t nr_sites, nr_sites_all;
};

/* Two rows touched by different threads, at least one of them writing. */
struct hm_pair {
	uint32_t a, b;			/* row indexes; a == b for one row shared by threads */
	enum hm_verdict kind;		/* HM_V_FALSE_SHARING or HM_V_TRUE_SHARING */
	uint32_t tid_a, tid_b;		/* the top thread on each side, tid_a != tid_b */
	uint64_t events;		/* conflicts or transfers between these rows */
	uint64_t weight;		/* ranking: min of the two rows' records */
};

/* Timer conflicts plus watch transfers between two rows (a <= b), for the pairs. */
struct hm_rowpair {
	uint32_t a, b;
	uint64_t n;
};

struct hm_lat {
	uint64_t n, sum;		/* PMU loads served at a level, their latency sum */
};

/* What a line's interleavings carry from one batch to the next, so that a streamed report
 * counts the conflicts and transfers across a batch's edge as inside one (the answer does
 * not depend on --batch, nor on how the stream is cut for the second thread): the last
 * timer sample, and who holds the line by the watch samples (sharing.c). */
struct hm_own {
	int has_w;
	uint32_t w, w_row;		/* the writer and the row it last wrote */
	uint32_t ns;			/* distinct sharers seen since the last write */
	uint32_t s[2], s_row[2];
};

struct hm_icarry {
	struct hm_own own;
	uint64_t prev_time;
	uint32_t prev_tid, prev_row;
	uint8_t has_prev, prev_writes;
};

/* In a batch line's carry, a row of the merged line that came in with the state before
 * the batch (not one of the batch's rows). */
#define HM_ROW_CARRIED 0x80000000u

/* A batch line's conflict or transfer with a carried row: from is the merged line's row,
 * to the batch's; conflict: a timer conflict, which credits from's row too when the rows
 * differ. */
struct hm_iedge {
	uint32_t from, to;
	uint8_t conflict;
};

struct hm_line {
	uint64_t addr;			/* first byte of the line */
	uint32_t pid;			/* address space; HM_LINES_KERNEL_PID for kernel */
	const char *object;		/* objects on the line, most accessed first */
	uint64_t records, loads, stores, locked;
	uint64_t spin;			/* loads in a spin-wait loop: waiters on the line */
	uint64_t conflicts;		/* timer estimate (docs/report.md) */
	uint64_t transfers;		/* watch: exact ownership transfers */
	uint64_t contention;		/* the sort key: HITM, transfers or conflicts */
	uint64_t t_first, t_last;	/* the first and last access's time (ns) */
	struct hm_c2c_stats *c2c;	/* its PMU samples; NULL when none */
	struct hm_lat *lat;		/* HM_LVL__COUNT entries; NULL without PMU samples */
	struct hm_count *threads;
	uint32_t nr_threads;
	struct hm_count *cpus;
	uint32_t nr_cpus;
	struct hm_lfield *fields;	/* by offset, then size */
	uint32_t nr_fields;
	struct hm_rowpair *inter;	/* by a, then b */
	uint32_t nr_inter;
	/* streamed builds only (lines_merge.c): the state after the line's last access */
	struct hm_icarry *carry;
	struct hm_iedge *edges;		/* a batch line's events with carried rows */
	uint32_t nr_edges;
	/* sharing.c */
	enum hm_verdict verdict;
	struct hm_pair *pairs;		/* heaviest first */
	uint32_t nr_pairs;
	const char *fix;		/* one sentence; NULL for private and read-only */
	enum hm_fix_check fix_check;	/* set by hm_fixcheck_lines */
	const char *fix_replay;		/* what the replay of the fix showed, or why none */
	enum hm_confidence confidence;
	int latent;			/* a sharing pair, but every access on one CPU */
	uint32_t latent_cpu;		/* that CPU, when latent */
	/* The top pair's sides (tid_a on row a, tid_b on row b): records and stores. */
	uint64_t ev_records[2], ev_writes[2];
	const char *evidence;		/* one sentence on the top pair; NULL without one */
	const char *advice;		/* what to do: too few samples, or latent */
};

struct hm_lines {
	struct hm_line *lines;		/* by contention, then records, then address */
	size_t nr;
	uint32_t line_size;
	uint64_t window_ns;
	enum hm_source source;		/* whose measure is `contention` */
	uint64_t total, with_addr, resolved;
	uint64_t prim, prim_resolved;	/* of with_addr and resolved: made by string and
					 * copy primitives (hm_access.prim) */
	int cpus_known;			/* samples name more than one CPU; 0 for recordings
					 * without PERF_SAMPLE_CPU, where every cpu reads 0 */
	uint32_t first_cpu;		/* the first access's CPU (merging batches) */
	uint64_t by_source[3];		/* accesses per enum hm_source */
	uint64_t by_method[HM_M__COUNT];
	struct hm_c2c_stats c2c;	/* every PMU access: perf c2c's Trace Event Information */
	struct hm_count *threads;	/* every access, by records */
	size_t nr_threads;
	/* hm_lines_acc_set_max: lines dropped to stay within max_lines (0: no limit), and
	 * the accesses on them (counted in total, with_addr, threads; in no line). */
	size_t max_lines;
	uint64_t dropped_lines, dropped_records;
};

/* Groups accesses by cache line (line_size 64 or 128; window_ns 0 takes
 * HM_LINES_WINDOW_NS), fills each line's rows and measures, classifies each line
 * (hm_sharing_classify) and sorts. The contention measure is that of the source with the
 * most accesses (ties: pmu, watch, timer). Accesses with no address are counted, not
 * placed. */
int hm_lines_build(struct hm_arena *a, const struct hm_access *acc, size_t n,
		   uint32_t line_size, uint64_t window_ns, struct hm_lines *out,
		   struct hm_err *err);
/* The same built from consecutive batches of a recording (hitmap report streams it,
 * so memory holds one batch, not every sample): each batch is built as above and merged
 * into per-line tables in a; the ranking and verdicts come at the end. Below the line
 * bound (hm_lines_acc_set_max) exact, whatever the batches (docs/report.md, What batches
 * change): each merged line carries its interleaving state (struct hm_icarry) into the
 * next batch, so a timer conflict or watch transfer across a batch boundary is counted
 * where it belongs. */
struct hm_lines_acc;
struct hm_lines_acc *hm_lines_acc_new(struct hm_arena *a, uint32_t line_size,
				      uint64_t window_ns);
int hm_lines_acc_add(struct hm_lines_acc *m, const struct hm_access *acc, size_t n,
		     struct hm_err *err);
/* At most max_lines lines (0: no limit, the default). Past it, the lines with the least
 * contention so far (then: used by one thread, fewest accesses, highest address) are
 * dropped, a quarter of max_lines at a time, and stay dropped: what later batches put on
 * them is counted in dropped_records. A kept line is exact; a line that would have
 * risen to the top only after it was dropped is lost. Below the limit nothing changes. */
void hm_lines_acc_set_max(struct hm_lines_acc *m, size_t max_lines);
/* Fills out (its arrays live in a) and frees m. */
void hm_lines_acc_end(struct hm_lines_acc *m, struct hm_lines *out);
/* Frees m unended: what it put in a stays there until a is freed. NULL: nothing. */
void hm_lines_acc_free(struct hm_lines_acc *m);
/* Sets whose measure is `contention` (a recording with timer and watch samples); the
 * order follows at hm_lines_rank (hm_sharing_classify calls it). */
void hm_lines_set_source(struct hm_lines *l, enum hm_source src);
/* Sorts: shared verdicts first, then contention, records, address. */
void hm_lines_rank(struct hm_lines *l);
/* The address space an access's line belongs to: its process, the kernel (one space), or
 * one thread's static TLS (HM_LINES_TLS_SPACE | tid) when only the offset is known. */
uint32_t hm_lines_space(const struct hm_access *x);
/* A store, or an atomic read-modify-write (which takes the line exclusively even when
 * decoded as a load). */
int hm_lines_writes(const struct hm_access *x);

const char *hm_verdict_name(enum hm_verdict v);	/* the JSON strings */
const char *hm_confidence_name(enum hm_confidence c);
/* Whether the verdict is false or true sharing (what ranks first, what a fix is for). */
int hm_verdict_shared(enum hm_verdict v);
const char *hm_source_name(enum hm_source s);	/* "pmu", "timer", "watch" */
/* "HITM", "transfers" or "conflicts". */
const char *hm_contention_name(enum hm_source s);

/* One access as hm_lines_build() keeps it while filling its line: copied once into line
 * order so that every pass over a line reads memory in sequence. */
struct hm_lrec {
	uint64_t time, ip;
	uint32_t idx;			/* in the input array */
	uint32_t pid, tid, cpu;
	uint16_t size;			/* bytes, 0 if unknown */
	uint16_t off;			/* first byte, from the start of the line */
	uint8_t op;			/* enum hm_op */
	uint8_t source;			/* enum hm_source */
	uint8_t locked;			/* atomic */
	uint8_t writes;			/* hm_lines_writes() */
	uint8_t spin;			/* struct hm_access.spin */
};

/* sharing.c: timer conflicts and watch transfers of one line (docs/report.md): r[] holds
 * its m accesses in time order, rows[] their rows in ln->fields; fills conflicts and
 * transfers of the line and its rows, and ln->inter. scratch holds m entries. Called by
 * hm_lines_build. A streamed build goes on from in, the line's state at the end of the
 * batches before (NULL: none), and with carry sets ln->carry and ln->edges for the
 * merge. */
void hm_sharing_interleave(struct hm_arena *a, struct hm_line *ln, const struct hm_lrec *r,
			   const uint32_t *rows, size_t m, uint64_t window_ns,
			   struct hm_rowpair *scratch, const struct hm_icarry *in, int carry);
/* sharing.c: a rotated watch recording's lines say what share of the run their top pair
 * was watched (resolve/watched.h). */
struct hm_watched;
void hm_sharing_watched(struct hm_arena *a, struct hm_lines *l, const struct hm_watched *w);
/* sharing.c: sets verdict, pairs and fix of every line. Called by hm_lines_build. */
void hm_sharing_classify(struct hm_arena *a, struct hm_lines *l);
/* cpus_known 0: whether all accesses ran on one CPU (latent) is not judged; src: the
 * contention measure's source (watch counts are exact and need no sample minimum). */
void hm_sharing_line(struct hm_arena *a, struct hm_line *ln, uint32_t line_size,
		     int cpus_known, enum hm_source src);

/* splits.c */
struct hm_split {
	const char *field;		/* as in rows: member path or "+0x3e" */
	const char *object;
	const char *func, *file;
	int line;
	uint64_t ip;
	uint64_t addr;			/* the first access seen */
	uint32_t size;			/* its size */
	uint32_t line_offset;		/* its first byte's offset in its line */
	uint64_t count;			/* accesses crossing a line boundary */
	uint64_t page_splits;		/* of those, crossing a 4 KiB page boundary */
	uint64_t loads, stores;
};

/* A member of an accessed struct type that crosses a line boundary in the layout itself
 * (whether or not a sample caught it): every access to it is a split when the object
 * starts on a line boundary. */
struct hm_straddle {
	const char *type;		/* "struct record" */
	const char *field;		/* "record.stamp" */
	uint64_t offset, size;		/* in the type */
	uint64_t accesses;		/* sampled accesses to objects of the type */
};

struct hm_splits {
	struct hm_split *s;		/* by count, then page splits, then field */
	size_t nr;
	struct hm_straddle *st;		/* by accesses to the type, then type, offset */
	size_t nr_st;
	uint32_t line_size;
	uint64_t sized;			/* accesses with an address and a known size */
	uint64_t line_splits, page_splits;
};

/* Groups the accesses whose [addr, addr+size) crosses a line_size boundary by field and
 * code site. Accesses of unknown size (0) cannot split and are not counted. */
int hm_splits_build(struct hm_arena *a, const struct hm_access *acc, size_t n,
		    uint32_t line_size, struct hm_splits *out, struct hm_err *err);
/* The same from batches (hitmap report streams a recording); equal to one build over
 * all of them. end sorts into out and frees the state. */
struct hm_splits_acc;
int hm_splits_begin(struct hm_arena *a, uint32_t line_size, struct hm_splits *out,
		    struct hm_splits_acc **acc, struct hm_err *err);
void hm_splits_add(struct hm_splits_acc *acc, const struct hm_access *x, size_t n);
void hm_splits_end(struct hm_splits_acc *acc);

#endif
