/* The recording loop and the file's closing features. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collectors/record_int.h"
#include "collectors/topology.h"
#include "collectors/target.h"
#include "core/buildid.h"

#define POLL_MS 100
#define SYNC_NS 1000000000LL
#define DUTY_PERIOD_NS 100000000LL
#define STOP_GRACE_NS 2000000000LL

void hm_session_names_init(struct hm_session *s)
{
	hm_arena_init(&s->arena);
	hm_hash_init(&s->files);
}

void hm_session_names_free(struct hm_session *s)
{
	hm_hash_free(&s->files);
	hm_arena_free(&s->arena);
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void hm_session_note_file(void *ctx, const char *file)
{
	struct hm_session *s = ctx;

	if (file[0] != '/' || hm_hash_get(&s->files, file))
		return;
	file = hm_arena_strdup(&s->arena, file);
	hm_hash_put(&s->files, file, (void *)file);
}

/* Remembers the file of an MMAP/MMAP2 record for the BUILD_ID feature. */
static void note_file(struct hm_session *s, const struct perf_event_header *h)
{
	size_t at = h->type == PERF_RECORD_MMAP ? 40 : 72;
	const char *name = (const char *)h + at;

	if (h->size > at && strnlen(name, h->size - at) < h->size - at)
		hm_session_note_file(s, name);
}

static int take_record(void *ctx, const struct perf_event_header *h)
{
	struct hm_session *s = ctx;
	uint64_t id, to;

	s->st->records++;
	if (h->type == PERF_RECORD_SAMPLE) {
		s->st->samples++;
		/* every event has PERF_SAMPLE_IDENTIFIER when there are probes: the id first;
		 * a probe's goes out as the file's id for it (record.c, open_alloc) */
		if (s->alloc_ids.len && h->size >= 16 && (memcpy(&id, h + 1, 8), 1) &&
		    (to = (uint64_t)(uintptr_t)hm_map64_get(&s->alloc_ids, id))) {
			s->st->alloc_events++;
			memcpy(s->alloc_patch, h, h->size);
			memcpy(s->alloc_patch + sizeof(*h), &to, 8);
			h = (const struct perf_event_header *)(const void *)s->alloc_patch;
		}
	}
	else if (s->alloc_ids.len && h->size >= 24 &&
		 (memcpy(&id, (const char *)h + h->size - 8, 8), 1) &&
		 (to = (uint64_t)(uintptr_t)hm_map64_get(&s->alloc_ids, id))) {
		/* a probe's own record (LOST when its ring was full as it fired): its
		 * sample_id ends with the identifier, which must be the file's id for the
		 * probe too, or perf refuses the record ("Bad address") and stops there */
		memcpy(s->alloc_patch, h, h->size);
		memcpy(s->alloc_patch + h->size - 8, &to, 8);
		if (h->type == PERF_RECORD_LOST)
			memcpy(s->alloc_patch + sizeof(*h), &to, 8);
		h = (const struct perf_event_header *)(const void *)s->alloc_patch;
	}
	if (h->type == PERF_RECORD_LOST)
		s->st->lost += ((const uint64_t *)(h + 1))[1];
	else if (h->type == PERF_RECORD_MMAP || h->type == PERF_RECORD_MMAP2)
		note_file(s, h);
	if (hm_perfdata_write_raw(s->w, h, h->size, s->err)) {
		s->failed = 1;
		return -1;
	}
	return 0;
}

static int drain_all(struct hm_session *s)
{
	for (int i = 0; i < s->nr_rings; i++)
		if (hm_ring_drain(&s->rings[i], take_record, s) < 0)
			return -1;
	return 0;
}

static void set_enabled(struct hm_session *s, int watch_only, int on)
{
	for (int i = 0; i < s->nr_fds; i++)
		if (s->rotating && on && s->watch_event[s->fds[i].event])
			continue;	/* hm_rotate_arm arms them a group at a time */
		else if (!watch_only || s->watch_event[s->fds[i].event])
			ioctl(s->fds[i].fd, on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0);
}

/* Arms the watchpoints for duty_pct of every DUTY_PERIOD_NS: each trap costs about
 * 10 us here, so a hot field would otherwise slow the workload several times. */
static void duty_cycle(struct hm_session *s, const struct hm_record_opts *o, long long t,
		       int *armed)
{
	long long phase = t % DUTY_PERIOD_NS;
	int want = phase < DUTY_PERIOD_NS * (long long)o->duty_pct / 100;

	if (s->rotating || o->duty_pct >= 100 || want == *armed)
		return;
	set_enabled(s, 1, want);
	*armed = want;
}


/* The bound on what allocation tracking costs: each probe hit is a trap (9 to 25 us in
 * this VM, bench/alloc.sh), and disabling the events (ioctl) leaves the breakpoints in
 * place: measured, the workload kept 77% of the cost. Only closing them removes the
 * breakpoints, and a closed probe cannot come back under the same id. So after budget
 * events the probes are closed for the rest of the recording. The recorder is woken
 * every 64 probe samples (alloc.c), and the kernel takes about 100 ms per probe to
 * remove it: that is the overshoot. */
static void alloc_budget(struct hm_session *s, const struct hm_record_opts *o)
{
	uint64_t budget = o->alloc_budget ? o->alloc_budget : HM_ALLOC_BUDGET;

	if (s->alloc_stopped || !s->alloc_ids.len || s->st->alloc_events < budget)
		return;
	for (int i = 0; i < s->nr_fds; i++)	/* no more samples while they go */
		if (s->fds[i].event >= s->first_alloc)
			ioctl(s->fds[i].fd, PERF_EVENT_IOC_DISABLE, 0);
	drain_all(s);
	hm_session_close_alloc(s);
	s->alloc_stopped = 1;
	s->st->alloc_stopped = 1;
}

static int child_gone(pid_t child, struct hm_record_stats *st)
{
	int status;

	if (child <= 0 || waitpid(child, &status, WNOHANG) != child)
		return 0;
	st->exited = 1;
	st->status = status;
	return 1;
}

/* -p PID: the recording ends when that process does, as perf's does. (Its events then
 * poll with POLLHUP at once, so the loop would spin until a signal.) */
static int attached_gone(pid_t pid, int pidfd)
{
	return pid > 0 && hm_target_gone(pid, pidfd);
}

static int loop(struct hm_session *s, const struct hm_record_opts *o, pid_t child,
		int pidfd, struct hm_err *err)
{
	struct pollfd pfd[HM_MAX_RINGS];
	long long last_sync = now_ns(), stop_at = 0;
	pid_t attached = child <= 0 && !o->argv ? o->pid : 0;
	int armed = 1;

	for (;;) {
		long long t;
		int wait_ms = POLL_MS;

		/* the probes' rings go when the budget is spent */
		for (int i = 0; i < s->nr_rings; i++)
			pfd[i] = (struct pollfd){.fd = s->rings[i].fd, .events = POLLIN};
		if (hm_rotate_tick(s, o, &wait_ms, err))
			return -1;
		poll(pfd, (nfds_t)s->nr_rings, wait_ms);
		if (drain_all(s))
			return -1;
		t = now_ns();
		duty_cycle(s, o, t, &armed);
		alloc_budget(s, o);
		if (t - last_sync > SYNC_NS) {
			if (hm_perfdata_sync(s->w, err))
				return -1;
			last_sync = t;
		}
		if (child_gone(child, s->st) || attached_gone(attached, pidfd))
			return 0;
		if (o->stop && *o->stop && !stop_at) {
			s->st->stopped_by = *o->stop;
			if (child <= 0)
				return 0;
			kill(child, *o->stop);	/* a terminal's Ctrl-C reached it already */
			stop_at = t;
		}
		if (stop_at && t - stop_at > STOP_GRACE_NS) {
			kill(child, SIGKILL);
			stop_at = t;
		}
	}
}

static const char *cpu_model(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];

	snprintf(buf, len, "unknown");
	if (!f)
		return buf;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (!strncmp(line, "model name", 10) && colon) {
			snprintf(buf, len, "%s", colon + 2);
			buf[strcspn(buf, "\n")] = '\0';
			break;
		}
	}
	fclose(f);
	return buf;
}

static void kernel_build_id(struct hm_session *s, struct hm_perf_build_id *b)
{
	uint8_t notes[4096];
	FILE *f = fopen("/sys/kernel/notes", "rb");
	size_t n = f ? fread(notes, 1, sizeof(notes), f) : 0;

	if (f)
		fclose(f);
	b->size = (uint8_t)hm_buildid_notes(notes, n, b->id);
	b->pid = -1;
	b->misc = PERF_RECORD_MISC_KERNEL;
	b->filename = hm_arena_strdup(&s->arena, "[kernel.kallsyms]");
}

static int finish(struct hm_session *s, const struct hm_record_opts *o, struct hm_err *err)
{
	struct hm_perf_features f;
	struct hm_perf_topology topo;
	struct hm_arena topo_arena;
	struct utsname u;
	char model[256];
	struct hm_perf_build_id *ids = calloc(s->files.len + 1, sizeof(*ids));
	uint32_t n = 0;
	int rc;

	if (!ids)
		return hm_err_set(err, HM_EXIT_ENV, "out of memory");
	memset(&f, 0, sizeof(f));
	uname(&u);
	f.hostname = u.nodename;
	f.osrelease = u.release;
	f.arch = u.machine;
	f.version = "hitmap";
	f.nr_cpus_avail = (uint32_t)sysconf(_SC_NPROCESSORS_CONF);
	f.nr_cpus_online = (uint32_t)sysconf(_SC_NPROCESSORS_ONLN);
	f.cpudesc = cpu_model(model, sizeof(model));
	f.cmdline = (const char **)o->cmdline;
	f.nr_cmdline = (uint32_t)o->nr_cmdline;
	hm_arena_init(&topo_arena);
	hm_topology_read(&topo_arena, "", f.nr_cpus_avail, &topo);
	f.topo = &topo;
	for (size_t i = 0; i < s->files.cap; i++) {
		const char *file = s->files.slots[i].key;

		if (file && (ids[n].size = (uint8_t)hm_buildid_read(file, ids[n].id))) {
			ids[n].pid = -1;
			/* module files (synth.c) are kernel code, as perf marks them */
			ids[n].misc = strncmp(file, "/lib/modules/", 13) ? PERF_RECORD_MISC_USER
									 : PERF_RECORD_MISC_KERNEL;
			ids[n++].filename = file;
		}
	}
	if (o->kernel) {
		kernel_build_id(s, &ids[n]);
		n += ids[n].size != 0;
	}
	f.build_ids = ids;
	f.nr_build_ids = n;
	/* a pipe carries no slab section (perfdata_write.c): no walk for nothing */
	if (o->kernel && o->kernel_slab && !s->st->stopped_by && o->output &&
	    strcmp(o->output, "-")) {
		uint8_t *kslab = o->kernel_slab(&f.kslab_len, &s->st->kslab_why);

		f.kslab = kslab;
		s->st->kslab_bytes = kslab ? f.kslab_len : 0;
	}
	rc = hm_perfdata_finish(s->w, &f, err);
	free((void *)f.kslab);
	free(ids);
	hm_arena_free(&topo_arena);
	return rc;
}

int hm_session_run(struct hm_session *s, const struct hm_record_opts *o, pid_t child,
		   struct hm_err *err)
{
	int rc, pidfd;

	s->err = err;
	set_enabled(s, 0, 1);
	if (s->rotating && hm_rotate_arm(s, o, 0, err))
		return -1;
	if (child > 0 && hm_target_resume(child, err))
		return -1;
	pidfd = child <= 0 && o->pid > 0 ? hm_target_watch(o->pid) : -1;
	rc = loop(s, o, child, pidfd, err);
	if (pidfd >= 0)
		close(pidfd);
	set_enabled(s, 0, 0);
	if (!rc && s->rotating)
		rc = hm_rotate_arm(s, o, -1, err);	/* the last slice's end */
	if (!rc)
		rc = drain_all(s);
	if (rc && child > 0 && !s->st->exited) {
		kill(child, SIGKILL);
		waitpid(child, &s->st->status, 0);
	}
	s->st->bytes = hm_perfdata_written(s->w);
	/* The probed libc was a guess for a spawned workload (alloc.c): say when it was
	 * not the one the workload mapped. */
	if (s->alloc_ids.len && !hm_hash_get(&s->files, s->alloc.path))
		snprintf(s->st->alloc_note, sizeof(s->st->alloc_note), "allocation tracking "
			 "probed %.400s, which the workload never mapped: no allocation was recorded",
			 s->alloc.path);
	if (rc) {
		struct hm_err ignore;

		hm_perfdata_sync(s->w, &ignore);	/* keep what is on disk readable */
		return -1;
	}
	return finish(s, o, err);
}
