/* hitmap record [-c auto|timer|watch|pmu] [-e EVENT] [-F HZ] [-k] [-a|-p PID] [-o FILE]
 *               [--watch SPEC]... [--watch-duty PCT] [-m PAGES] [-- CMD ARGS...] */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "cli/cmds.h"
#include "cli/confirm.h"
#include "cli/watchspec.h"
#include "collectors/pmu.h"
#include "collectors/record.h"
#include "symbolize/slab_kcore.h"

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

enum collector { C_AUTO, C_TIMER, C_WATCH, C_PMU };

struct record_args {
	enum collector c;
	const char *event;
	struct hm_pmu_events pmu;
	struct perf_event_attr pmu_attrs[HM_PMU_MAX_EVENTS];
	const char *pmu_names[HM_PMU_MAX_EVENTS];
	int pmu_leader[HM_PMU_MAX_EVENTS];
	char why_timer[512];	/* -c auto chose the timer: the PMU's reason */
	struct hm_record_opts o;
	struct watch_specs ws;
	const char *confirm;		/* --confirm FIRST.data */
	struct hm_resolve_opts confirm_ro;	/* where FIRST's binaries are */
	struct confirm_plan plan;
	int slice_given;		/* --watch-slice */
};

static void record_usage(FILE *out)
{
	fprintf(out,
		"usage: hitmap record [-c auto|timer|watch|pmu] [-e EVENT] [-F HZ] [-k]\n"
		"                     [-a | -p PID] [-o FILE] [--watch SPEC]... [--watch-duty PCT]\n"
		"                     [-m PAGES] [-- CMD [ARGS...]]\n\n"
		"  -c timer     cpu-clock samples with registers; the report decodes the\n"
		"               instruction to get the exact data address (works in any VM)\n"
		"  -c watch     debug-register watchpoints on --watch targets: every access\n"
		"  -c pmu       precise memory events (PEBS/IBS/SPE); -e c2c|hitm|split|miss|stall\n"
		"               or a libpfm4 event; needs a hardware PMU ('hitmap check')\n"
		"  -c auto      pmu where it works, else timer (plus watch with --watch); with -e\n"
		"               the PMU only: exit 3 with the reason where it cannot record -e\n"
		"  --watch SYM[.FIELD.PATH][:w|:rw]  or  ADDR/LEN[:w|:rw]   (at most 4)\n"
		"  --watch-duty PCT   arm watchpoints PCT%% of the time (bounds overhead)\n"
		"  --confirm F  watch the top shared lines' field pairs of an earlier recording F\n"
		"               (-c watch): 'hitmap report' then says confirmed or not, exactly;\n"
		"               --sysroot D / --buildid-dir D: where F's binaries are; more\n"
		"               ranges than 4 debug registers take turns, --watch-slice MS each\n"
		"               (default 50)\n"
		"  -F HZ        timer frequency (default 4000)   -k  also kernel mode\n"
		"  -o FILE      output (default perf.data; an old one becomes perf.data.old)\n"
		"  -m PAGES     ring pages per CPU, a power of two (default 64; 1024 with --watch)\n"
		"  --no-alloc   do not probe malloc/calloc/realloc/free/aligned_alloc/memalign/\n"
		"               posix_memalign (on by default, not with -a): heap objects are\n"
		"               then named by type only, without allocation site or element\n"
		"  --alloc-budget N  allocation events recorded before the probes are removed\n"
		"               (default 50000; bounds the cost, docs/alloc.md)\n\n"
		"Exit status: the workload's (128+N if it died of signal N); 1 usage, 2 bad\n"
		"input, 3 cannot record here (no PMU, no permission, no debug register).\n");
}

static int parse_collector(const char *s, enum collector *c)
{
	static const char *const names[] = {"auto", "timer", "watch", "pmu"};

	for (int i = 0; i < 4; i++)
		if (!strcmp(s, names[i]))
			return *c = (enum collector)i, 0;
	return cli_err("record", -1, "-c %s: choose auto, timer, watch or pmu", s);
}

static int parse_uint(const char *opt, const char *s, unsigned lo, unsigned hi, unsigned *out)
{
	uint64_t v;

	if (cli_number("record", opt, s, lo, hi, &v))
		return -1;
	*out = (unsigned)v;
	return 0;
}

static int parse_args(int argc, char **argv, struct record_args *a)
{
	static const struct option longopts[] = {
		{"collector", required_argument, NULL, 'c'}, {"event", required_argument, NULL, 'e'},
		{"freq", required_argument, NULL, 'F'}, {"kernel", no_argument, NULL, 'k'},
		{"all-cpus", no_argument, NULL, 'a'}, {"pid", required_argument, NULL, 'p'},
		{"output", required_argument, NULL, 'o'}, {"watch", required_argument, NULL, 'W'},
		{"watch-duty", required_argument, NULL, 'D'}, {"mmap-pages", required_argument, NULL, 'm'},
		{"confirm", required_argument, NULL, 'C'}, {"sysroot", required_argument, NULL, 'R'},
		{"buildid-dir", required_argument, NULL, 'B'},
		{"watch-slice", required_argument, NULL, 'S'},
		{"alloc", no_argument, NULL, 'A'}, {"no-alloc", no_argument, NULL, 'N'},
		{"alloc-budget", required_argument, NULL, 'L'},
		{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
	};
	unsigned v;
	int c;

	memset(a, 0, sizeof(*a));
	a->o.freq = 4000;
	a->o.duty_pct = 100;
	a->o.slice_ms = CONFIRM_SLICE_MS;
	a->o.output = "perf.data";
	a->o.alloc = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:c:e:F:kap:o:m:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'c': if (parse_collector(optarg, &a->c)) return -1; break;
		case 'e': a->event = optarg; break;
		case 'F': if (parse_uint("-F", optarg, 1, 100000, &a->o.freq)) return -1; break;
		case 'k': a->o.kernel = 1; break;
		case 'a': a->o.system_wide = 1; break;
		case 'p': if (parse_uint("-p", optarg, 1, 1u << 30, &v)) return -1;
			a->o.pid = (pid_t)v; break;
		case 'o': a->o.output = optarg; break;
		case 'W':
			if (a->ws.nr == HM_MAX_WATCH) {
				return cli_err("record", -1, "--watch %s: at most %d --watch (x86 has "
					       "four debug registers): drop one", optarg, HM_MAX_WATCH);
			}
			a->ws.text[a->ws.nr++] = optarg;
			break;
		case 'D': if (parse_uint("--watch-duty", optarg, 1, 100, &a->o.duty_pct)) return -1; break;
		case 'C': a->confirm = optarg; break;
		case 'S': if (parse_uint("--watch-slice", optarg, 1, 10000, &a->o.slice_ms)) return -1;
			a->slice_given = 1; break;
		case 'A': a->o.alloc = 1; break;
		case 'N': a->o.alloc = 0; break;
		case 'L': if (parse_uint("--alloc-budget", optarg, 1, 1u << 30, &a->o.alloc_budget)) return -1; break;
		case 'R': a->confirm_ro.sysroot = optarg; break;
		case 'B': a->confirm_ro.buildid_dir = optarg; break;
		case 'm':
			if (parse_uint("-m", optarg, 1, 1u << 16, &a->o.mmap_pages) ||
			    (a->o.mmap_pages & (a->o.mmap_pages - 1))) {
				return cli_err("record", -1, "-m %s: give a power of two (64, 128, ...)",
					       optarg);
			}
			break;
		case 'h': record_usage(stdout); exit(HM_EXIT_OK);
		default: cli_bad_option("record", c, argv); return -1;
		}
	}
	if (optind < argc)
		a->o.argv = argv + optind;
	if (a->slice_given && !a->confirm)
		return cli_err("record", -1, "--watch-slice: only --confirm rotates watchpoints: "
			       "add --confirm FIRST.data, or drop --watch-slice");
	if (!!a->o.argv + !!a->o.pid + !!a->o.system_wide != 1 && !(a->o.system_wide && a->o.argv)) {
		return cli_err("record", -1, "nothing to record: give a command after --, or -p PID, "
			       "or -a");
	}
	return 0;
}

/* Encodes and test-opens the PMU events; 0, or -1 with the reason in err. */
static int setup_pmu(struct record_args *a, struct hm_err *err)
{
	struct hm_pmu_status st;
	struct hm_pmu_opts po;
	struct hm_pmu_events *ev = &a->pmu;

	hm_pmu_probe(&st);
	if (hm_pmu_diagnose(&st, a->o.kernel, err))
		return -1;
	hm_pmu_opts_init(&po);
	po.kernel = a->o.kernel;
	if (hm_pmu_encode(a->event ? a->event : "c2c", &po, ev, err) ||
	    hm_pmu_open_check(ev, &st, err))
		return -1;
	for (unsigned i = 0; i < ev->nr; i++) {
		if (ev->ev[i].flags & HM_PMU_EV_AUX)
			return hm_err_set(err, HM_EXIT_ENV, "%s: Arm SPE records into the AUX area, "
					  "which hitmap does not read yet: use -c timer",
					  ev->ev[i].name);
		a->pmu_attrs[i] = ev->ev[i].attr;
		a->pmu_names[i] = ev->ev[i].name;
		a->pmu_leader[i] = ev->ev[i].leader;
	}
	a->o.extra = a->pmu_attrs;
	a->o.extra_names = a->pmu_names;
	a->o.extra_leader = a->pmu_leader;
	a->o.nr_extra = (int)ev->nr;
	return 0;
}

/* Chooses what to record; 0 or an exit code. */
static int choose_collectors(struct record_args *a)
{
	struct hm_err err = {0};

	if (a->c == C_PMU && setup_pmu(a, &err)) {
		fprintf(stderr, "hitmap record: %s\n", err.msg);
		return err.code ? err.code : HM_EXIT_ENV;
	}
	if (a->c == C_AUTO && setup_pmu(a, &err) == 0) {
		a->c = C_PMU;
	} else if (a->c == C_AUTO && a->event) {
		/* -e names a PMU event: falling back to the timer would record something else */
		cli_err("record", 0, "-e %s: %s", a->event, err.msg);
		return err.code ? err.code : HM_EXIT_ENV;
	} else if (a->c == C_AUTO) {
		snprintf(a->why_timer, sizeof(a->why_timer), "%s", err.msg);
	}
	if (a->event && a->c != C_PMU)
		return cli_err("record", HM_EXIT_USAGE, "-e %s: events are PMU events: use -c pmu "
			       "or -c auto, or drop -e", a->event);
	if (a->c == C_WATCH && a->ws.nr == 0) {
		return cli_err("record", HM_EXIT_USAGE, "-c watch needs --watch SYMBOL[.FIELD] or "
			       "--watch ADDR/LEN");
	}
	if (a->ws.nr && (a->o.system_wide || !a->o.argv) && a->o.pid == 0) {
		return cli_err("record", HM_EXIT_USAGE, "--watch needs a command after -- or -p PID "
			       "(not -a)");
	}
	a->o.timer = a->c == C_AUTO || a->c == C_TIMER;
	if (a->c != C_PMU)
		a->o.nr_extra = 0;
	a->o.watches = a->ws.resolved;
	a->o.nr_watches = a->ws.nr;
	return 0;
}

static const char *cli_slice_of(int g, int n)
{
	static char buf[64];

	snprintf(buf, sizeof(buf), ", slice group %d of %d", g + 1, n);
	return buf;
}

/* --confirm: the watches come from the first recording's shared lines. */
static int plan_confirm(struct record_args *a)
{
	struct hm_err err = {0};

	if (a->ws.nr) {
		fprintf(stderr, "hitmap record: --confirm chooses what to watch itself: drop "
				"--watch, or drop --confirm and name the fields\n");
		return HM_EXIT_USAGE;
	}
	if (a->c != C_AUTO && a->c != C_WATCH) {
		fprintf(stderr, "hitmap record: --confirm records with -c watch\n");
		return HM_EXIT_USAGE;
	}
	if (confirm_plan(a->confirm, &a->confirm_ro, &a->plan, &err)) {
		fprintf(stderr, "hitmap record: %s\n", err.msg);
		return err.code ? err.code : HM_EXIT_INPUT;
	}
	a->c = C_WATCH;
	for (int i = 0; i < a->plan.nr; i++) {
		a->ws.text[a->ws.nr++] = a->plan.spec[i];
		fprintf(stderr, "hitmap record: --confirm: watching %s (%s in %s)%s\n",
			a->plan.spec[i], a->plan.field[i], a->confirm,
			a->plan.nr_groups > 1 ? cli_slice_of(a->plan.group[i], a->plan.nr_groups)
					      : "");
	}
	if (a->plan.nr_groups > 1)
		fprintf(stderr, "hitmap record: --confirm: %d ranges for %d debug registers: "
				"%d groups armed in turn, %u ms each\n", a->plan.nr, CONFIRM_REGS,
			a->plan.nr_groups, a->o.slice_ms);
	a->o.watch_group = a->plan.group;
	a->o.nr_groups = a->plan.nr_groups;
	if (a->plan.skipped)
		fprintf(stderr, "hitmap record: --confirm: %d more shared line%s not armed (%s)\n",
			a->plan.skipped, a->plan.skipped == 1 ? "" : "s", a->plan.why);
	return 0;
}

static void keep_old(const char *path)
{
	struct stat st;
	char old[4096];

	if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		snprintf(old, sizeof(old), "%s.old", path);
		rename(path, old);
	}
}

static int exit_code(const struct hm_record_stats *st)
{
	if (!st->exited)
		return HM_EXIT_OK;
	if (WIFEXITED(st->status))
		return WEXITSTATUS(st->status);
	return 128 + WTERMSIG(st->status);
}

/* The PMU's reason without its "use -c timer" advice: -c auto just did. */
static const char *why_not_pmu(char *why)
{
	char *fix = strstr(why, "; use -c timer");

	if (!fix)
		fix = strstr(why, ": use -c timer");
	if (fix)
		*fix = '\0';
	return why;
}

static void summary(struct record_args *a, const struct hm_record_stats *st)
{
	fprintf(stderr, "hitmap record: %llu %s, %llu lost, %.1f KB written to %s\n",
		(unsigned long long)st->samples, cli_plural(st->samples, "sample", "samples"),
		(unsigned long long)st->lost, (double)st->bytes / 1024.0, a->o.output);
	if (st->lost)
		fprintf(stderr, "hitmap record: %llu %s lost: the rings overflowed; raise -m "
				"or lower -F\n", (unsigned long long)st->lost,
			cli_plural(st->lost, "sample", "samples"));
	if (a->why_timer[0])
		fprintf(stderr, "hitmap record: used -c timer%s (%s)\n",
			a->ws.nr ? " and watchpoints" : "", why_not_pmu(a->why_timer));
	if (st->alloc_events)
		fprintf(stderr, "hitmap record: %llu allocation %s%s\n",
			(unsigned long long)st->alloc_events,
			cli_plural(st->alloc_events, "event", "events"),
			st->alloc_stopped ? "; --alloc-budget reached, so the probes were removed: "
					    "later allocations are not named (raise it to name them)"
					  : "");
	if (st->alloc_note[0])
		fprintf(stderr, "hitmap record: %s\n", st->alloc_note);
	if (st->selftest_lost)
		fprintf(stderr, "hitmap record: the watchpoint self-test lost traps in %u %s "
				"before one counted all %d: this kernel drops a debug trap now and "
				"then, so the watch counts may be low\n", st->selftest_lost,
			cli_plural(st->selftest_lost, "try", "tries"), HM_WATCH_SELFTEST_STORES);
	if (st->kslab_bytes)
		fprintf(stderr, "hitmap record: kernel slab facts saved (%.1f KB), for naming "
				"kernel heap objects where the report has no kcore\n",
			(double)st->kslab_bytes / 1024.0);
	else if (st->kslab_why)
		fprintf(stderr, "hitmap record: %s; a report elsewhere names kernel heap by "
				"pointer types only\n", st->kslab_why);
	if (st->stopped_by)
		fprintf(stderr, "hitmap record: stopped by signal %d; the file is complete up to "
				"that point\n", st->stopped_by);
	/* A trap no breakpoint claims is sent to the task as SIGTRAP. Some VMs' kernels do
	 * that to about 1 in 20 processes using hardware breakpoints, with plain `perf
	 * record -e mem:` too (docs/hardening.md): say what killed the workload. */
	if (st->exited && WIFSIGNALED(st->status) && WTERMSIG(st->status) == SIGTRAP &&
	    (a->ws.nr || a->o.nr_watches || a->confirm))
		fprintf(stderr, "hitmap record: the workload was killed by SIGTRAP, a debug trap "
				"that no watchpoint claimed (a kernel fault some VMs show with perf "
				"record -e mem: too); the file holds what came before: record "
				"again\n");
}

int cmd_record(int argc, char **argv)
{
	struct record_args a;
	struct hm_record_stats st;
	struct hm_err err = {0};
	struct sigaction sa;
	int rc;

	if (parse_args(argc, argv, &a))
		return HM_EXIT_USAGE;
	if (a.confirm && (rc = plan_confirm(&a)))
		return rc;
	if ((rc = choose_collectors(&a)))
		return rc;
	if (hm_watchspecs_parse(&a.ws, &err)) {
		fprintf(stderr, "hitmap record: %s\n", err.msg);
		return err.code;
	}
	if (a.ws.nr) {
		a.o.resolve = hm_watchspecs_resolve;
		a.o.resolve_ctx = &a.ws;
	}
	if (a.o.kernel)
		a.o.kernel_slab = hm_slab_snapshot_live;
	a.o.cmdline = (const char *const *)argv - 1;
	a.o.nr_cmdline = argc + 1;
	a.o.stop = &stop_signal;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	keep_old(a.o.output);
	if (hm_record(&a.o, &st, &err)) {
		fprintf(stderr, "hitmap record: %s\n", err.msg);
		return err.code ? err.code : HM_EXIT_ENV;
	}
	summary(&a, &st);
	return exit_code(&st);
}
