/* hitmap compare: two sets of runs (A, the base build, and B, the new one), each run
 * resolved with its own build's debuginfo. Per run, metrics named by type.field (never
 * by address, which differs between builds); per metric, mean, %stddev, %change and
 * Welch's p over the runs (analyzer/stats.h); then the layout side: what B's build did
 * to the lines and neighbours of the hot fields (analyzer/layoutdiff.h), ranked by how
 * much contention moved with them. docs/compare.md has the rules. */
#ifndef HM_COMPARE_H
#define HM_COMPARE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "symbolize/access.h"
#include "analyzer/layoutdiff.h"
#include "analyzer/stats.h"
#include "core/arena.h"
#include "core/buildid.h"
#include "core/err.h"
#include "core/hash.h"

#define HM_CMP_PER 1000.0		/* field and type counts are per this many samples */
#define HM_CMP_HOT 10.0			/* a field with this many samples per 1000 (1%) on
					 * either side, or any contention, is hot */
#define HM_CMP_MAX_LINES 500000	/* distinct lines per run by default (compare
					 * --max-lines), as report's: past it the least
					 * contended go (and are noted) */
#define HM_CMP_MIN_EVENTS 5.0		/* a field or type count below this many events per
					 * run on both sides is too rare to call significant:
					 * one stray sample per run is not a change */

enum hm_cmp_kind {
	HM_CMP_RUN,			/* the run as a whole: samples, elapsed seconds */
	HM_CMP_USER,			/* given per run (FILE:NAME=VALUE, FILE.metrics, --metric) */
	HM_CMP_FIELD,			/* one type.field */
	HM_CMP_TYPE,			/* one type: its lines */
};

/* One metric of one run. */
struct hm_cmp_val {
	const char *name;		/* "worker_stats.ops conflicts", "throughput" */
	double v;
	enum hm_cmp_kind kind;
	const char *unit;		/* "per 1k samples", "cycles", "lines", "s", "" */
	const char *field;		/* field metrics: "worker_stats.ops" */
	const char *type;		/* field and type metrics: "worker_stats"; NULL for a
					 * field that is a global scalar */
	int contention;			/* the run's contention measure (conflicts, HITM...) */
	int count;			/* a run that lacks it counted 0 of it; else (latency,
					 * user metrics) such a run is left out of the mean */
};

/* One recording's metrics. */
struct hm_cmp_run {
	const char *path;
	struct hm_cmp_val *v;		/* malloc'd; strings in the arena */
	size_t n, cap;
	struct hm_hash idx;		/* name -> index + 1 */
	uint64_t samples;
	enum hm_source source;		/* whose measure "contention" is */
	uint64_t dropped_lines;		/* past max_lines: lines not counted, */
	uint64_t dropped_samples;	/* and the samples on them */
};

/* The main executable of a recording: the file the workload exec'd, with the build-id
 * the recording stored for it. */
enum hm_cmp_build_kind {
	HM_CMP_BUILD_USER,		/* the samples are the program's: its build counts */
	HM_CMP_BUILD_KERNEL,		/* at least 90% kernel samples (record -k, -a) */
	HM_CMP_BUILD_BOTH,		/* a workload spanning both: both builds count */
};

/* A kernel module of a run, from the recording's BUILD_ID table. */
struct hm_cmp_mod {
	const char *path;		/* as recorded: "/lib/modules/R/kernel/fs/xfs/xfs.ko" */
	const char *name;		/* "xfs.ko" */
	uint8_t id[HM_BUILD_ID_MAX];
	size_t id_size;
	const char *hex;
};

struct hm_cmp_ident {
	enum hm_cmp_build_kind kind;
	const char *exe;		/* as recorded: "/work/examples/bin/false_sharing";
					 * NULL for a kernel run without one */
	const char *comm;		/* exec'd command name, NULL if not recorded */
	uint8_t build_id[HM_BUILD_ID_MAX];
	size_t build_id_size;		/* 0: none recorded (refused unless kernel) */
	const char *build_id_hex;
	const char *kernel_release;	/* the recording's os release, NULL if none */
	uint8_t kernel_build_id[HM_BUILD_ID_MAX];
	size_t kernel_build_id_size;	/* [kernel.kallsyms]'s, 0 if not recorded */
	const char *kernel_build_id_hex;
	const struct hm_cmp_mod *mods;	/* its modules with a recorded build-id */
	size_t nr_mods;
	const char *mods_label;		/* the modules it differs in from the other side
					 * (hm_cmp_label_modules), NULL when none */
	uint64_t samples, kernel_samples;
};

/* Reads the recording's COMM and MMAP records, its BUILD_ID table and os release, and
 * counts its kernel samples. Fails (exit 2) when the build that counts (the kind) is
 * not identified: no executable mapping or build-id for a user run, neither release
 * nor kernel build-id for a kernel run. */
int hm_cmp_identify(struct hm_arena *a, const char *path, struct hm_cmp_ident *out,
		    struct hm_err *err);
/* All runs of one side must come from one build of one program (or one kernel): refuses
 * the first run that differs from the first, naming both (side: "A" or "B"). */
int hm_cmp_check_side(const char *side, const char *const *paths,
		      const struct hm_cmp_ident *ids, size_t n, struct hm_err *err);
/* The ELF file that carries id's build: the recorded path (under sysroot) while its
 * build-id still matches, else buildid_dir/.build-id/xx/yyyy/elf, else
 * /usr/lib/debug/.build-id/xx/yyyy.debug. NULL when none is at hand. */
const char *hm_cmp_find_binary(struct hm_arena *a, const struct hm_cmp_ident *id,
			       const char *sysroot, const char *buildid_dir);

const char *hm_cmp_build_kind_name(enum hm_cmp_build_kind k);	/* "user", "kernel", "both" */
/* Whether two runs ran the same build (of what their kind counts). */
int hm_cmp_same_build(const struct hm_cmp_ident *x, const struct hm_cmp_ident *y);
/* "kernel 6.1.0-57-cloud-amd64 (build-id 1a2b3c4d5e6f)", "false_sharing (build-id ..)",
 * or both joined by " on ": how a side's build is named. */
const char *hm_cmp_build_label(struct hm_arena *a, const struct hm_cmp_ident *id);
/* A module both runs have whose build differs (an out-of-tree xfs.ko against Debian's):
 * x's, with y's in *ym; NULL when every module they share is the same build. */
const struct hm_cmp_mod *hm_cmp_changed_module(const struct hm_cmp_ident *x,
					       const struct hm_cmp_ident *y,
					       const struct hm_cmp_mod **ym);
/* Sets mods_label of every run of each side (a[0..na), b[0..nb)) to the modules whose
 * build differs from the other side's first run: "xfs.ko (build-id 5889a14b5ad1)". */
void hm_cmp_label_modules(struct hm_arena *ar, struct hm_cmp_ident *a, size_t na,
			  struct hm_cmp_ident *b, size_t nb);
/* The module file of m's build: the recorded path under sysroot while its build-id
 * matches, else buildid_dir/.build-id/xx/yyyy/elf (perf buildid-cache -a), else
 * /usr/lib/debug/.build-id/xx/yyyy.debug; NULL when none is at hand. */
const char *hm_cmp_find_module(struct hm_arena *a, const struct hm_cmp_mod *m,
			       const char *sysroot, const char *buildid_dir);
/* The vmlinux with id's kernel build: under sysroot, /usr/lib/debug/boot/vmlinux-R and
 * the other places a -dbg package puts it, with a matching build-id. NULL when none. */
const char *hm_cmp_find_vmlinux(struct hm_arena *a, const struct hm_cmp_ident *id,
				const char *sysroot);
void hm_cmp_run_init(struct hm_cmp_run *r, const char *path);
void hm_cmp_run_free(struct hm_cmp_run *r);
/* The metrics of one run's accesses (docs/compare.md lists them). Counts are divided
 * by the run's accesses and multiplied by HM_CMP_PER, so runs of different length
 * compare. Strings are copied into a. */
int hm_cmp_extract(struct hm_arena *a, const struct hm_access *acc, size_t n,
		   uint32_t line_size, struct hm_cmp_run *out, struct hm_err *err);
/* The same from consecutive batches of a run (hitmap compare streams each recording):
 * memory holds per-line and per-field tables, not the run's accesses. As exact as
 * hm_lines_acc_add, which it uses; one batch of all n is hm_cmp_extract. end fills the
 * run given to new and frees the state. */
struct hm_cmp_acc;
struct hm_cmp_acc *hm_cmp_acc_new(struct hm_arena *a, uint32_t line_size,
				  struct hm_cmp_run *r);
int hm_cmp_acc_add(struct hm_cmp_acc *c, const struct hm_access *acc, size_t n,
		   struct hm_err *err);
/* Distinct lines kept (default HM_CMP_MAX_LINES; 0: no limit), as hm_lines_acc_set_max:
 * before the first add. */
void hm_cmp_acc_set_max(struct hm_cmp_acc *c, size_t max_lines);
void hm_cmp_acc_end(struct hm_cmp_acc *c);
/* A user metric: "NAME=VALUE[,NAME=VALUE...]". */
int hm_cmp_user_parse(struct hm_arena *a, struct hm_cmp_run *r, const char *text,
		      struct hm_err *err);
/* "NAME VALUE" lines ('#' starts a comment) from path; 0 when read, 1 when there is no
 * such file, -1 on a malformed line. */
int hm_cmp_user_file(struct hm_arena *a, struct hm_cmp_run *r, const char *path,
		     struct hm_err *err);
void hm_cmp_user_set(struct hm_arena *a, struct hm_cmp_run *r, const char *name, double v);

/* One metric over both sides. */
struct hm_cmp_metric {
	const char *name, *unit, *field, *type;
	enum hm_cmp_kind kind;
	int contention;
	double *a, *b;			/* one value per run, NaN where a run lacks it */
	size_t seen_a, seen_b;		/* runs that measured it (the rest count 0 or are
					 * left out, by struct hm_cmp_val.count) */
	double a_events, b_events;	/* counts: mean events per run before scaling */
	int rare;			/* both below HM_CMP_MIN_EVENTS: never significant */
	struct hm_change c;
	/* Interleaved controls only (hm_cmp_drift; struct hm_cmp.groups.nr_a >= 2): */
	double drift_pct;		/* largest |%change| between consecutive A groups;
					 * NaN when no two A groups measured it */
	double vs_controls_pct;		/* B's groups against the midpoints of the A groups
					 * around each, averaged; NaN without one */
	int within_drift;		/* the test said significant, but the change is no
					 * larger than the drift: not significant */
};

/* Runs in time order, A1.. -- B1.. -- A2.. [-- B2.. -- A3..]: the sizes of A's groups and
 * B's, each side's runs concatenated in that order (struct hm_cmp_metric.a and .b). */
#define HM_CMP_MAX_GROUPS 16
struct hm_cmp_groups {
	size_t a[HM_CMP_MAX_GROUPS], b[HM_CMP_MAX_GROUPS];
	size_t nr_a, nr_b;
};

struct hm_cmp {
	struct hm_cmp_metric *m;	/* significant first, rare last, then by |%change|,
					 * then name */
	size_t nr;
	size_t na, nb;			/* runs per side */
	enum hm_source source_a, source_b;
	struct hm_cmp_groups groups;	/* nr_a >= 2: interleaved controls (hm_cmp_drift) */
};

int hm_cmp_build(struct hm_arena *a, const struct hm_cmp_run *ra, size_t na,
		 const struct hm_cmp_run *rb, size_t nb, struct hm_cmp *out);
/* Significant first, rare last, then by |%change|, then name. */
void hm_cmp_sort(struct hm_cmp *c);
/* compare_drift.c: after hm_cmp_build on runs given as interleaved groups (g->nr_a >= 2),
 * each metric's drift between the A controls and B's change against their midpoints; a
 * change within the drift loses its significance. Sorts again. */
void hm_cmp_drift(struct hm_cmp *c, const struct hm_cmp_groups *g);
const struct hm_cmp_metric *hm_cmp_find(const struct hm_cmp *c, const char *name);
/* "only A", "only B" (measured in no run of the other side), or NULL. */
const char *hm_cmp_presence(const struct hm_cmp_metric *m);

/* The layout side. */
enum hm_cmp_hot_status {
	HM_CMP_CHANGED,			/* B's build moved it or changed its neighbours */
	HM_CMP_ONLY_A,			/* B's type has no such member */
	HM_CMP_ONLY_B,
	HM_CMP_TYPE_ONLY_A,		/* B's build has no such type */
	HM_CMP_TYPE_ONLY_B,
};

struct hm_cmp_hot {
	const char *field, *type, *member;	/* "worker_stats.ops", "worker_stats", "ops" */
	enum hm_cmp_hot_status status;
	const char *measure;		/* "conflicts", "HITM", "transfers" */
	double a, b;			/* its contention, means per HM_CMP_PER samples */
	const struct hm_finding **f;	/* the diff's findings for this member */
	const char **why;		/* per finding, one sentence about this member */
	uint32_t nr_f;
};

struct hm_cmp_layout {
	const char *a_path, *b_path;	/* the binaries diffed */
	uint32_t line_size;
	double hot_min;			/* a field is hot with this many samples per
					 * HM_CMP_PER on either side, or any contention */
	struct hm_cmp_hot *hot;		/* by |b - a|, then field */
	size_t nr;
	size_t unchanged;		/* hot fields whose offset, line and neighbours stayed */
	const char **elsewhere;		/* hot types in neither main executable (libraries) */
	size_t nr_elsewhere;
};

/* Diffs (hm_diff_types, old = A's build) the types of the hot fields (hot_min samples per
 * HM_CMP_PER on either side, or any contention; HM_CMP_HOT by default) and keeps the hot
 * fields the diff names. */
int hm_cmp_layout(struct hm_arena *a, const struct hm_cmp *c, struct hm_layout *la,
		  struct hm_layout *lb, uint32_t line_size, double hot_min,
		  struct hm_cmp_layout *out, struct hm_err *err);
const char *hm_cmp_hot_status_name(enum hm_cmp_hot_status s);


#endif
