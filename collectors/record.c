/* Opens one ring per CPU (every event of that CPU redirected into it), writes what
 * existed before recording started, then drains rings into perf.data until the
 * workload exits or a signal arrives. The header is synced every second, so even a
 * SIGKILL leaves a file that perf and hitmap read up to the last sync. */
#include "collectors/record.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collectors/record_int.h"
#include "collectors/synth.h"
#include "collectors/target.h"

#define HM_PAGES 64		/* ring data pages per CPU without -m */
#define HM_WATCH_PAGES 1024	/* the same with watchpoints */

static int perf_open(struct perf_event_attr *a, pid_t pid, int cpu, int group)
{
	return (int)syscall(SYS_perf_event_open, a, pid, cpu, group, PERF_FLAG_FD_CLOEXEC);
}

/* The fd of event k's group leader opened for the same pid and CPU, or -1. */
static int leader_fd(const struct hm_session *s, int k, int pidx, int cpu)
{
	if (s->leader[k] < 0)
		return -1;
	for (int i = 0; i < s->nr_fds; i++)
		if (s->fds[i].event == s->leader[k] && s->fds[i].pidx == pidx && s->fds[i].cpu == cpu)
			return s->fds[i].fd;
	return -1;
}

static int open_error(const struct hm_session *s, int k, int e, struct hm_err *err)
{
	const char *name = s->names[k];

	if (e == EACCES || e == EPERM)
		return hm_err_set(err, HM_EXIT_ENV, "%s: permission denied: run as root or lower "
				  "/proc/sys/kernel/perf_event_paranoid (-1 for -a and -k)", name);
	if (e == ENOSPC)
		return hm_err_set(err, HM_EXIT_ENV, "%s: no free debug register: at most %d "
				  "watchpoints per thread, and a debugger may hold some", name,
				  HM_MAX_WATCH);
	if (e == ENOENT || e == ENODEV || e == EOPNOTSUPP)
		return hm_err_set(err, HM_EXIT_ENV, "%s: not supported here (%s): no hardware PMU "
				  "in this VM? use -c timer; 'hitmap check' tells what works",
				  name, strerror(e));
	return hm_err_set(err, HM_EXIT_ENV, "%s: perf_event_open: %s", name, strerror(e));
}

static int add_fd(struct hm_session *s, int k, int pidx, int cpu, int fd, struct hm_err *err)
{
	uint64_t id;

	if (s->nr_fds == HM_MAX_FDS) {
		close(fd);
		return hm_err_set(err, HM_EXIT_ENV, "too many events (threads x CPUs): record "
				  "fewer threads or use -a");
	}
	if (ioctl(fd, PERF_EVENT_IOC_ID, &id) != 0) {
		close(fd);
		return hm_err_set(err, HM_EXIT_ENV, "PERF_EVENT_IOC_ID: %s", strerror(errno));
	}
	s->fds[s->nr_fds] = (struct hm_sfd){.fd = fd, .event = k, .cpu = cpu, .pidx = pidx};
	s->ids[k][s->nr_ids[k]++] = id;
	s->nr_fds++;
	int *ring = cpu < 0 ? &s->ring_of_pid[pidx] : &s->ring_of_cpu[cpu];

	if (*ring < 0) {
		int rc = hm_ring_open(&s->rings[s->nr_rings], fd, s->pages, err);

		if (rc && s->pages_min && s->pages > s->pages_min) {
			s->pages = s->pages_min;	/* over the mlock limit: the usual size */
			rc = hm_ring_open(&s->rings[s->nr_rings], fd, s->pages, err);
		}
		if (rc)
			return -1;
		*ring = s->nr_rings++;
	} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, s->rings[*ring].fd) != 0) {
		return hm_err_set(err, HM_EXIT_ENV, "PERF_EVENT_IOC_SET_OUTPUT: %s", strerror(errno));
	}
	return 0;
}

/* The pids to open events on: the workload (inherit covers its future threads), every
 * thread of -p, or -1 for -a. */
static size_t target_pids(const struct hm_record_opts *o, pid_t child, pid_t *pids, size_t cap)
{
	if (o->system_wide)
		return pids[0] = -1, 1;
	if (o->argv)
		return pids[0] = child, 1;
	return hm_target_threads(o->pid, pids, cap);
}

/* Closes the allocation probes of the session (all of its fds from first_alloc on) and
 * keeps the others; returns how many fds are left. */
int hm_session_close_alloc(struct hm_session *s)
{
	int keep = 0, n = 0, *fds = malloc(((size_t)s->nr_fds + 1) * sizeof(int));

	if (s->first_alloc_ring < s->nr_rings) {
		for (int i = s->first_alloc_ring; i < s->nr_rings; i++)
			hm_ring_close(&s->rings[i]);
		s->nr_rings = s->first_alloc_ring;
	}
	for (int i = 0; i < s->nr_fds; i++) {
		if (s->fds[i].event < s->first_alloc)
			s->fds[keep++] = s->fds[i];
		else if (fds)
			fds[n++] = s->fds[i].fd;
		else
			close(s->fds[i].fd);
	}
	if (fds)
		hm_alloc_close_fds(fds, n, &s->alloc);
	free(fds);
	return s->nr_fds = keep;
}

/* An allocation probe that cannot be opened (no uprobes, not root, a libc the kernel
 * refuses to probe) costs the recording its allocation names, not the recording: all
 * probes are closed, the reason kept for record to say once. */
static void drop_alloc(struct hm_session *s, int k, int e)
{
	hm_session_close_alloc(s);
	for (int j = s->first_alloc; j < s->nr_events; j++)
		s->nr_ids[j] = 0;
	snprintf(s->st->alloc_note, sizeof(s->st->alloc_note), "allocation tracking off: %.64s "
		 "on %.400s: %s%s; heap objects will be named by type only (--no-alloc hides this)",
		 s->names[k], s->alloc.path, strerror(e),
		 e == EACCES || e == EPERM ? " (uprobes need root or perf_event_paranoid -1)" : "");
}

/* 0, -1 with err, or for an allocation probe the errno that refused it. The test hook
 * HITMAP_ALLOC_FAIL_OPEN=1 refuses every allocation probe as a non-root user is. */
static int open_one(struct hm_session *s, int k, pid_t pid, int p, int c, struct hm_err *err)
{
	int alloc = k >= s->first_alloc;
	int fd = alloc && getenv("HITMAP_ALLOC_FAIL_OPEN")
			 ? (errno = EACCES, -1)
			 : perf_open(&s->attrs[k], pid, c, leader_fd(s, k, p, c));

	if (fd < 0) {
		if (errno == ESRCH)
			return 0;	/* a thread of -p exited */
		if (alloc)
			return errno;
		open_error(s, k, errno, err);
		return -1;
	}
	return add_fd(s, k, p, c, fd, err) ? -1 : 0;
}

static int open_events(struct hm_session *s, const struct hm_record_opts *o, pid_t child,
		       struct hm_err *err)
{
	pid_t pids[256];
	size_t np = target_pids(o, child, pids, 256);
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);

	if (np == 0)
		return hm_err_set(err, HM_EXIT_INPUT, "pid %d: no such process", (int)o->pid);
	if (ncpu > HM_MAX_CPUS)
		ncpu = HM_MAX_CPUS;
	for (int c = 0; c < ncpu; c++)
		s->ring_of_cpu[c] = -1;
	for (size_t p = 0; p < np; p++)
		s->ring_of_pid[p] = -1;
	for (int k = 0; k < s->first_alloc; k++)
		for (size_t p = 0; k != s->marker_event && p < np; p++)
			for (int c = 0; c < ncpu; c++)
				if (open_one(s, k, pids[p], (int)p, c, err))
					return -1;
	return 0;
}

/* The probes as tracefs events, per CPU and inherited (alloc_tracefs.c): the threads
 * the workload creates later are probed too, their samples go to the CPU's ring. 0, or
 * -1 (nothing left open) when the kernel refuses them or they would be too many fds. */
static int open_alloc_inherited(struct hm_session *s, const pid_t *pids, size_t np)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	int nprobe = s->nr_events - s->first_alloc;
	struct hm_err e;

	if (ncpu > HM_MAX_CPUS)
		ncpu = HM_MAX_CPUS;
	if (!s->alloc.tp_group[0] ||
	    (size_t)s->nr_fds + np * (size_t)ncpu * (size_t)nprobe > HM_MAX_FDS)
		return -1;
	for (int k = s->first_alloc; k < s->nr_events; k++) {
		struct perf_event_attr a = s->attrs[k];

		hm_alloc_tracefs_attr(&a, s->alloc.tp_id[k - s->first_alloc]);
		for (size_t p = 0; p < np; p++)
			for (int c = 0; c < ncpu; c++) {
				int fd = s->ring_of_cpu[c] < 0 || getenv("HITMAP_ALLOC_FAIL_OPEN")
						 ? -1
						 : perf_open(&a, pids[p], c, -1);

				if (fd < 0 && errno == ESRCH)
					continue;	/* a thread of -p exited */
				if (fd < 0 || add_fd(s, k, (int)p, c, fd, &e)) {
					hm_session_close_alloc(s);
					for (int j = s->first_alloc; j < s->nr_events; j++)
						s->nr_ids[j] = 0;
					return -1;
				}
			}
	}
	return 0;
}

/* For -p the probes go on after the file exists and holds the process's maps:
 * registering one took up to 150 ms on this loaded machine (it write-locks every
 * process's memory map that maps libc), and a process that exits meanwhile would leave
 * a file without its maps. The header may be written by then, so it declares each
 * probe with one id of hitmap's own (HM_ALLOC_ID:
 * kernel ids count up from 1), and take_record writes their samples under it. Without
 * tracefs events, one probe of the uprobe PMU per thread (cpu -1, one ring per
 * thread), not per CPU: closing one waits for a grace period. */
static void open_alloc(struct hm_session *s, const struct hm_record_opts *o, pid_t child,
		       struct hm_err *err)
{
	pid_t pids[256];
	size_t np = s->first_alloc < s->nr_events ? target_pids(o, child, pids, 256) : 0;

	s->first_alloc_ring = s->nr_rings;
	/* defining them takes about 0.35 s here (each definition registers with the
	 * kernel): after the other events, so that a -p process is attached first */
	int tfs = np ? hm_alloc_tracefs_create(&s->alloc) : -1;

	if (np && tfs == 0 && open_alloc_inherited(s, pids, np) == 0) {
		/* inherited: a command's file says so (-p's header is written already) */
		for (int k = s->first_alloc; k < s->nr_events; k++)
			s->attrs[k].inherit = 1;
		goto ids;
	}
	if (np && !s->st->alloc_note[0])
		snprintf(s->st->alloc_note, sizeof(s->st->alloc_note), "allocation probes are per "
			 "thread (%s): threads started after recording began are not probed, so "
			 "their allocations are not named", tfs ? "no writable tracefs: run as "
			 "root, or mount -t tracefs nodev /sys/kernel/tracing" : "inherited ones "
			 "would need too many descriptors");
	for (size_t p = 0; p < np; p++)
		s->ring_of_pid[p] = -1;
	for (int k = s->first_alloc; k < s->nr_events; k++)
		for (size_t p = 0; p < np; p++) {
			int rc = open_one(s, k, pids[p], (int)p, -1, err);

			if (rc) {
				drop_alloc(s, k, rc > 0 ? rc : EIO);
				return;
			}
		}
ids:
	for (int k = s->first_alloc; k < s->nr_events; k++)
		for (uint32_t i = 0; i < s->nr_ids[k]; i++)
			hm_map64_put(&s->alloc_ids, s->ids[k][i], (void *)(uintptr_t)(HM_ALLOC_ID + k));
}

/* The malloc family's probes, after every other event: the first event stays the one
 * that tracks mmaps, and a probe that fails to open is dropped alone (drop_alloc). */
static void add_alloc(struct hm_session *s, const struct hm_record_opts *o, pid_t child)
{
	s->first_alloc = s->nr_events;
	if (!o->alloc || o->system_wide)
		return;
	if (hm_alloc_probes_build(&s->alloc, o->argv ? child : o->pid, o->argv != NULL)) {
		snprintf(s->st->alloc_note, sizeof(s->st->alloc_note), "allocation tracking "
			 "off: %s", s->alloc.why);
		return;
	}
	for (int i = 0; i < s->alloc.n && s->nr_events < HM_MAX_EVENTS; i++) {
		s->attrs[s->nr_events] = s->alloc.attrs[i];
		/* ADDR (0: no data address) when the file's events have it (watch, PMU), or
		 * `perf script -F addr` refuses the whole file ("Samples for 'hitmap:malloc'
		 * event do not have ADDR attribute set") */
		if (s->nr_events && (s->attrs[0].sample_type & PERF_SAMPLE_ADDR))
			s->attrs[s->nr_events].sample_type |= PERF_SAMPLE_ADDR;
		s->names[s->nr_events++] = s->alloc.names[i];
	}
}

static void build_events(struct hm_session *s, const struct hm_record_opts *o, pid_t child)
{
	int first_extra;

	for (int k = 0; k < HM_MAX_EVENTS; k++)
		s->leader[k] = -1;
	if (o->timer) {
		hm_timer_attr(&s->attrs[s->nr_events], o->freq, o->kernel);
		s->names[s->nr_events++] = "cpu-clock";
	}
	first_extra = s->nr_events;
	for (int i = 0; i < o->nr_extra && s->nr_events < HM_MAX_EVENTS; i++) {
		s->attrs[s->nr_events] = o->extra[i];
		s->attrs[s->nr_events].disabled = 1;
		s->attrs[s->nr_events].inherit = 1;
		if (o->extra_leader && o->extra_leader[i] >= 0) {
			s->leader[s->nr_events] = first_extra + o->extra_leader[i];
			s->attrs[s->nr_events].disabled = 0;	/* members follow the leader */
		}
		s->names[s->nr_events++] = o->extra_names[i];
	}
	hm_rotate_build(s, o);
	for (int i = 0; !s->rotating && i < o->nr_watches && s->nr_events < HM_MAX_EVENTS; i++) {
		hm_watch_attr(&s->attrs[s->nr_events], &o->watches[i], o->kernel);
		s->watch_event[s->nr_events] = 1;
		s->names[s->nr_events++] = o->watches[i].label;
	}
	add_alloc(s, o, child);
	/* One event needs no id in its samples: perf finds the attr without it, and each
	 * sample is 8 bytes smaller. */
	if (s->nr_events == 1)
		s->attrs[0].sample_type &= ~(uint64_t)PERF_SAMPLE_IDENTIFIER;
	/* Only the first event tracks mmap/comm/task, or every record would come twice. */
	for (int k = 1; k < s->nr_events; k++) {
		s->attrs[k].mmap = s->attrs[k].mmap2 = s->attrs[k].comm = 0;
		s->attrs[k].comm_exec = s->attrs[k].task = 0;
	}
	if (s->nr_events && !o->timer) {
		s->attrs[0].mmap = s->attrs[0].mmap2 = s->attrs[0].comm = 1;
		s->attrs[0].comm_exec = s->attrs[0].task = 1;
	}
}

static int create_output(struct hm_session *s, const struct hm_record_opts *o, pid_t child,
			 struct hm_err *err)
{
	struct hm_perf_attr pa[HM_MAX_EVENTS];
	uint8_t probe[HM_MAX_EVENTS] = {0};

	memset(pa, 0, sizeof(pa));
	for (int k = 0; k < s->nr_events; k++) {
		pa[k].attr = s->attrs[k];
		s->alloc_id[k] = HM_ALLOC_ID + (uint64_t)k;
		pa[k].ids = k < s->first_alloc ? s->ids[k] : &s->alloc_id[k];
		pa[k].nr_ids = k < s->first_alloc ? s->nr_ids[k] : 1;
		pa[k].name = s->names[k];
		probe[k] = k >= s->first_alloc;
	}
	if (hm_perfdata_create(o->output, pa, (uint32_t)s->nr_events, 0, &s->w, err))
		return -1;
	/* a report reads the maps and the allocations from the index, not the whole file */
	hm_perfdata_index_samples(s->w, probe);
	if (o->kernel && hm_synth_kernel(s->w, hm_session_note_file, s, err))
		return -1;
	if (o->system_wide)
		return hm_synth_all(s->w, hm_session_note_file, s, err);
	return hm_synth_process(s->w, o->argv ? child : o->pid, hm_session_note_file, s, err);
}

static void session_free(struct hm_session *s)
{
	int nr_alloc_rings = s->nr_rings - s->first_alloc_ring;

	/* everything but the probes first: their closer (alloc.c) inherits what is open */
	for (int i = 0; i < s->first_alloc_ring && nr_alloc_rings > 0; i++)
		hm_ring_close(&s->rings[i]);
	for (int i = 0; i < s->nr_fds; i++)
		if (s->fds[i].event < s->first_alloc)
			close(s->fds[i].fd), s->fds[i].fd = -1;
	if (s->w)
		hm_perfdata_writer_close(s->w);
	hm_session_close_alloc(s);
	for (int i = 0; i < s->nr_rings; i++)
		hm_ring_close(&s->rings[i]);
	for (int i = 0; i < s->nr_fds; i++)
		if (s->fds[i].fd >= 0)
			close(s->fds[i].fd);
	hm_session_names_free(s);
	hm_map64_free(&s->alloc_ids);
	free(s);
}

int hm_record(const struct hm_record_opts *o, struct hm_record_stats *st, struct hm_err *err)
{
	struct hm_session *s = calloc(1, sizeof(*s));
	pid_t child = 0;
	int rc = -1;

	memset(st, 0, sizeof(*st));
	if (!s)
		return hm_err_set(err, HM_EXIT_ENV, "out of memory");
	/* Watchpoints sample every access, about one sample per 10 us per CPU: 64 pages
	 * (256 KiB) filled within a scheduling delay of the reader and lost thousands of
	 * samples on a busy 2-CPU VM, which makes exact counts inexact. Without -m they get
	 * 4 MiB per CPU, or 64 pages where the mlock limit refuses that. */
	s->pages = o->mmap_pages ? o->mmap_pages : o->nr_watches ? HM_WATCH_PAGES : HM_PAGES;
	if (!o->mmap_pages && o->nr_watches)
		s->pages_min = HM_PAGES;
	s->st = st;
	hm_session_names_init(s);
	hm_map64_init(&s->alloc_ids);
	if (o->argv && hm_target_spawn(o->argv, &child, err))
		goto out;
	st->pid = o->argv ? child : o->pid;
	/* --watch names first (a misspelt one is the user's to fix, exit 2, wherever it
	 * runs), then whether traps come: the command is stopped at exec until then */
	if (o->resolve && o->resolve(o->resolve_ctx, st->pid, err))
		goto kill;
	if (o->nr_watches && hm_watch_selftest(err, &st->selftest_lost))
		goto kill;
	build_events(s, o, child);
	if (open_events(s, o, child, err))
		goto kill;
	hm_rotate_opened(s);
	/* a command is stopped at exec: its probes first, so that the file, once it
	 * exists, is recording; -p: after its maps are in the file (open_alloc) */
	if (o->argv)
		open_alloc(s, o, child, err);
	if (create_output(s, o, child, err))
		goto kill;
	if (!o->argv)
		open_alloc(s, o, child, err);
	rc = hm_session_run(s, o, child, err);
	goto out;
kill:
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
out:
	session_free(s);
	return rc;
}
