/* More watched ranges than debug registers (record --confirm on many lines): the ranges
 * are split into groups of at most HM_MAX_WATCH, and time into slices of slice_ms; each
 * slice arms the next group on the same perf events by PERF_EVENT_IOC_MODIFY_ATTRIBUTES
 * (which the kernel applies to the events every thread inherited, so threads already
 * running switch too: a new event opened on the workload's pid would reach its first
 * thread only). When each range was armed is written into the recording as samples of
 * a software dummy event ("hitmap:watch-slice": addr = range, period = length; addr 0
 * closes the slice), timed by CLOCK_MONOTONIC like the watch events themselves, so the
 * report knows what share of the run each pair was watched. docs/report.md,
 * "Confirmation by watchpoints". */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>

#include "collectors/record_int.h"

/* Far above the ids the kernel hands out (a counter from 1), so no event has it. */
#define MARKER_ID 0x4000000000000001ULL

static long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The ranges of group g in slot order: the i-th range of g goes to slot i. */
static int group_range(const struct hm_record_opts *o, int g, int slot)
{
	for (int i = 0, k = 0; i < o->nr_watches; i++)
		if (o->watch_group[i] == g && k++ == slot)
			return i;
	return -1;
}

/* A slot's range changes: its name says which register, the marks say what it watched. */
static const char *const slot_names[HM_MAX_WATCH] = {
	"mem:rotated-0", "mem:rotated-1", "mem:rotated-2", "mem:rotated-3",
};

void hm_rotate_build(struct hm_session *s, const struct hm_record_opts *o)
{
	struct perf_event_attr *m;

	s->marker_event = -1;
	if (o->nr_groups < 1 || !o->watch_group)
		return;
	s->rotating = 1;
	s->nr_slots = 0;
	for (int slot = 0; slot < HM_MAX_WATCH; slot++) {
		int used = 0, first = -1;

		for (int g = 0; g < o->nr_groups; g++) {
			int r = group_range(o, g, slot);

			used |= r >= 0;
			if (r >= 0 && first < 0)
				first = r;
		}
		if (!used || s->nr_events >= HM_MAX_EVENTS - 1)
			break;
		hm_watch_attr(&s->attrs[s->nr_events], &o->watches[first], o->kernel);
		/* one clock for traps and slice marks */
		s->attrs[s->nr_events].use_clockid = 1;
		s->attrs[s->nr_events].clockid = CLOCK_MONOTONIC;
		s->watch_event[s->nr_events] = 1;
		s->slot_event[s->nr_slots++] = s->nr_events;
		s->names[s->nr_events++] = slot_names[slot];
	}
	m = &s->attrs[s->nr_events];
	memset(m, 0, sizeof(*m));
	m->size = sizeof(*m);
	m->type = PERF_TYPE_SOFTWARE;
	m->config = PERF_COUNT_SW_DUMMY;
	m->sample_period = 1;
	m->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			 PERF_SAMPLE_ADDR | PERF_SAMPLE_PERIOD;
	m->sample_id_all = 1;
	m->exclude_kernel = 1;
	m->use_clockid = 1;
	m->clockid = CLOCK_MONOTONIC;
	s->marker_event = s->nr_events;
	s->ids[s->nr_events][s->nr_ids[s->nr_events]++] = MARKER_ID;
	s->names[s->nr_events++] = HM_WATCH_SLICE_EVENT;
}

void hm_rotate_opened(struct hm_session *s)
{
	/* The file's bp_len is the widest, as a slot's range changes: a trap's sample
	 * carries the range armed at the time (bp_addr), and the report refines the access
	 * within [bp_addr, bp_addr + bp_len) from the registers. */
	for (int k = 0; k < s->nr_slots; k++) {
		s->slot_attr[k] = s->attrs[s->slot_event[k]];
		s->attrs[s->slot_event[k]].bp_len = 8;
	}
}

/* One mark: range addr/len armed from time t on (addr 0: nothing armed from t on). */
static int mark(struct hm_session *s, long long t, uint64_t addr, uint64_t len,
		struct hm_err *err)
{
	struct {
		struct perf_event_header h;
		uint64_t id;
		uint32_t pid, tid;
		uint64_t time, addr, period;
	} r;

	memset(&r, 0, sizeof(r));
	r.h.type = PERF_RECORD_SAMPLE;
	r.h.misc = PERF_RECORD_MISC_USER;
	r.h.size = sizeof(r);
	r.id = MARKER_ID;
	r.pid = r.tid = (uint32_t)s->st->pid;
	r.time = (uint64_t)t;
	r.addr = addr;
	r.period = len;
	return hm_perfdata_write_raw(s->w, &r, sizeof(r), err);
}

static void slot_ioctl(struct hm_session *s, int slot, unsigned long req, void *arg, int *bad)
{
	for (int i = 0; i < s->nr_fds; i++)
		if (s->fds[i].event == s->slot_event[slot] && ioctl(s->fds[i].fd, req, arg) != 0)
			*bad = errno;
}

/* Disarms every slot, points each at group g's range and arms those that have one. */
int hm_rotate_arm(struct hm_session *s, const struct hm_record_opts *o, int g,
		  struct hm_err *err)
{
	int bad = 0;
	long long t;

	for (int k = 0; k < s->nr_slots; k++)
		slot_ioctl(s, k, PERF_EVENT_IOC_DISABLE, 0, &bad);
	t = mono_ns();
	if (s->slice_open && mark(s, t, 0, 0, err))
		return -1;
	s->slice_open = 0;
	if (g < 0)
		return 0;
	for (int k = 0; k < s->nr_slots; k++) {
		int r = group_range(o, g, k);
		struct perf_event_attr a;

		if (r < 0)
			continue;
		/* the kernel refuses any change but the breakpoint's own fields */
		a = s->slot_attr[k];
		a.bp_addr = o->watches[r].addr;
		a.bp_len = o->watches[r].len;
		a.bp_type = o->watches[r].type;
		slot_ioctl(s, k, PERF_EVENT_IOC_MODIFY_ATTRIBUTES, &a, &bad);
		if (bad)
			return hm_err_set(err, HM_EXIT_ENV, "%s: cannot move a watchpoint to it "
					  "(PERF_EVENT_IOC_MODIFY_ATTRIBUTES: %s): this kernel "
					  "cannot rotate debug registers; confirm fewer lines",
					  o->watches[r].label, strerror(bad));
		if (mark(s, mono_ns(), o->watches[r].addr, o->watches[r].len, err))
			return -1;
	}
	for (int k = 0; k < s->nr_slots; k++)
		if (group_range(o, g, k) >= 0)
			slot_ioctl(s, k, PERF_EVENT_IOC_ENABLE, 0, &bad);
	s->slice_open = 1;
	s->group = g;
	s->next_ns = mono_ns() + (long long)o->slice_ms * 1000000LL;
	return 0;
}

/* The next group when the slice is over; the poll timeout until then in *wait_ms. */
int hm_rotate_tick(struct hm_session *s, const struct hm_record_opts *o, int *wait_ms,
		   struct hm_err *err)
{
	long long left;

	if (!s->rotating)
		return 0;
	if (o->nr_groups > 1 && mono_ns() >= s->next_ns &&
	    hm_rotate_arm(s, o, (s->group + 1) % o->nr_groups, err))
		return -1;
	left = (s->next_ns - mono_ns()) / 1000000LL;
	if (o->nr_groups > 1 && left < *wait_ms)
		*wait_ms = left < 1 ? 1 : (int)left;
	return 0;
}
