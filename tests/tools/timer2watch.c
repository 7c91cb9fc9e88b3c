/* timer2watch IN OUT [--max-watch N] [--len N] [--off-by-one]: a `hitmap record -c watch` recording made
 * from a `hitmap record -c timer` one, for testing the watchpoint path of the report on
 * data that real traps cannot reach: `--watch` arms globals and statics by name, while
 * heap objects, stack locals and thread-locals have addresses only at run time (and a
 * deliberately wrong file, --off-by-one, cannot come from the kernel). Debug-register
 * traps do fire on this VM (tests/e2e/watch.sh counts them exactly, as perf does), and
 * tests/e2e/watchsym.sh uses real traps for globals. These samples are SYNTHESIZED, not
 * recorded: each is what the kernel would have written had a watchpoint been armed on a
 * range that a timer sample saw accessed, at the moment of that access.
 *
 * IN is resolved with the library as `hitmap report` does (MMAP records first, in time
 * order, then hm_resolver_sample). The hottest data ranges (at most N, default and most 4:
 * x86 has four debug registers) become one PERF_TYPE_BREAKPOINT attr each, built by
 * collectors/events.c hm_watch_attr as `hitmap record -c watch` builds it (read+write,
 * period 1, ADDR and the user registers sampled). A range is what `--watch SYM.FIELD`
 * arms for the accessed field: its address and the largest aligned length of 8, 4, 2 or
 * 1 that the access covers (8-byte aligned ranges for the 8-byte fields of the examples);
 * `--len N` arms N-byte aligned ranges instead, as `--watch ADDR/N` would. `--off-by-one`
 * writes a WRONG file, on purpose: ip is the accessing instruction instead of the next one
 * (as if traps were faults), so that tests/e2e/watchsym.sh can show its checks catch it.
 *
 * OUT holds IN's non-sample records (MMAP, COMM, FORK, EXIT, LOST) in file order, and in
 * place of each user-space timer sample whose access overlaps a watched range one
 * breakpoint sample per range it overlaps (x86 reports every debug register that
 * matched), as perf_bp_event() fills it:
 *   - ip: the instruction after the access (x86 data breakpoints are traps). When the
 *     resolver took the instruction before the sampled ip (timer skid), the sampled ip is
 *     exactly that. Otherwise the access is the sampled instruction itself, decoded here
 *     (symbolize/decode.h), and the trap ip is its address plus its length.
 *   - addr: the range's bp_addr (perf_sample_data_init(&sample, bp->attr.bp_addr, 0)), not
 *     the accessed byte; hitmap's watch collector writes the kernel's records unchanged
 *     (collectors/record_loop.c), so its files carry the same.
 *   - pid, tid, time, cpu: the timer sample's; period 1.
 *   - user registers: after a skid the timer's registers are those after the access,
 *     exactly what the trap would give. Otherwise they are those before it: ip becomes
 *     the trap ip, and each register the access writes gets POISON, since its value after
 *     the access (loaded data) is not in a timer sample.
 * A range is armed from the first access the timer path named with its field, as a
 * watchpoint on a local is armed once its frame exists (a slot is other frames' before).
 * Not reproduced: traps between timer ticks (a real watchpoint sees every access, so
 * counts here are the timer's, far fewer), string instructions' per-iteration traps.
 * Thread-locals: a timer sample gives only the fs offset of a __thread access (fs_base is
 * not a sampled register), while a trap gives the armed runtime address; each thread's
 * fs_base is stood in for by TLS_STANDIN + tid * 64 KiB, below where x86-64 maps shared
 * libraries (the report names such an access by its fs offset, whatever the address).
 *
 * Prints one line: the samples written per watched range. Errors: one line, exit 1-3. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "resolve/load.h"
#include "resolve/resolve.h"
#include "collectors/events.h"
#include "core/perfdata.h"
#include "core/sort.h"
#include "symbolize/code.h"
#include "symbolize/decode.h"

#define MAX_WATCH 4
#define POISON 0xdeadbeefdeadbeefULL
#define TLS_STANDIN 0x7e0000000000ULL
#define USER_END 0x800000000000ULL	/* x86-64 user addresses end here: no watchpoint above */

/* One timer sample's access as a trap would report it; ok 0: no user-space access. */
struct site {
	uint64_t addr;			/* accessed address (thread-local: stand-in fs_base + offset) */
	uint64_t trap_ip;
	uint64_t time;
	uint32_t size;
	uint32_t clobbered;		/* registers the access writes, unknown after it */
	const char *field;
	int ok;
};

struct range {
	uint64_t addr, count;		/* timer accesses that overlap it */
	uint64_t written;		/* breakpoint samples (while picking: field's count) */
	uint64_t from;			/* armed at: the first access the timer path named
					 * with field (a stack slot is other frames' before) */
	uint32_t len;
	const char *field;		/* the timer path's name for most of its accesses */
	char label[64];
};

struct conv {
	const char *in, *out;
	int max_watch;
	uint32_t force_len;
	int off_by_one;			/* ip = the accessing instruction: a wrong file, on purpose */
	struct hm_perfdata *pd;		/* kept open: attrs and features for OUT */
	const struct hm_perf_attr *timer;
	struct hm_resolver *r;
	struct hm_code *code;		/* the resolver's is private: bytes for the decoder */
	struct hm_decoder *dec;
	struct site *sites;		/* one per timer sample of IN, in file order */
	size_t nr_sites, cap_sites;
	struct range ranges[MAX_WATCH];
	int nr_ranges;
	uint64_t *ids[MAX_WATCH];	/* the watch attrs' ids, one per timer id */
	uint32_t nr_ids;
	struct hm_perfdata_writer *w;
};

static int usage(void)
{
	fprintf(stderr, "usage: timer2watch IN OUT [--max-watch 1-4] [--len 1|2|4|8] "
		"[--off-by-one]\n");
	return 1;
}

static int parse_num(const char *s, long max, long *v)
{
	char *end;

	errno = 0;
	*v = strtol(s, &end, 10);
	return errno || end == s || *end || *v < 1 || *v > max ? -1 : 0;
}

static int parse_args(int argc, char **argv, struct conv *c)
{
	int pos = 0;
	long v;

	c->max_watch = MAX_WATCH;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--off-by-one")) {
			c->off_by_one = 1;
		} else if (!strcmp(argv[i], "--max-watch")) {
			if (++i == argc || parse_num(argv[i], MAX_WATCH, &v))
				return -1;
			c->max_watch = (int)v;
		} else if (!strcmp(argv[i], "--len")) {
			if (++i == argc || parse_num(argv[i], 8, &v) || (v & (v - 1)))
				return -1;
			c->force_len = (uint32_t)v;
		} else if (pos < 2) {
			*(pos++ ? &c->out : &c->in) = argv[i];
		} else {
			return -1;
		}
	}
	return pos == 2 ? 0 : -1;
}

/* The cpu-clock event with every register an effective address needs. */
static int find_timer(struct conv *c, struct hm_err *err)
{
	for (uint32_t i = 0; i < hm_perfdata_nr_attrs(c->pd); i++) {
		const struct hm_perf_attr *a = hm_perfdata_attr(c->pd, i);

		if (a->attr.type == PERF_TYPE_SOFTWARE && a->attr.config == PERF_COUNT_SW_CPU_CLOCK &&
		    (a->attr.sample_type & PERF_SAMPLE_REGS_USER) &&
		    (a->attr.sample_regs_user & HM_X86_EA_REGS) == HM_X86_EA_REGS) {
			c->timer = a;
			return 0;
		}
	}
	return hm_err_set(err, HM_EXIT_INPUT, "%s: no cpu-clock event with the user registers: "
			  "record it with 'hitmap record -c timer'", c->in);
}

/* Address spaces as resolve/load.c builds them (hm_recording_maps); the decoder's code
 * map takes the executable ones, as the resolver's does. */
static void track_map(const struct hm_perf_event *ev, void *arg)
{
	struct conv *c = arg;
	const struct hm_perf_mmap *m = &ev->mmap;
	int exec = ev->type == PERF_RECORD_MMAP2 ? (m->prot & PROT_EXEC) != 0
		   : !(ev->misc & PERF_RECORD_MISC_MMAP_DATA);

	hm_resolver_track(c->r, ev);
	if (exec)
		hm_code_add_map(c->code, m->pid, m->start, m->len, m->pgoff, m->filename,
				m->build_id, m->build_id_size);
}

/* The operand the resolver reports: the first explicit data operand (resolve/resolve.c). */
static const struct hm_memop *data_operand(const struct hm_insn *in)
{
	for (uint32_t i = 0; i < in->nr_mem; i++)
		if (hm_access_is_data(in->mem[i].access) && !in->mem[i].implicit && !in->mem[i].vsib)
			return &in->mem[i];
	return NULL;
}

/* Fills s from a resolved timer sample; leaves s->ok 0 when no watchpoint could see it. */
static void site_of(struct conv *c, const struct hm_perf_event *ev, const struct hm_access *a,
		    struct site *s)
{
	uint8_t buf[16];
	struct hm_insn in;
	const struct hm_memop *op;
	size_t n;

	memset(s, 0, sizeof(*s));
	if (a->s.kernel || !a->s.addr || !a->s.size ||
	    ev->sample.regs_user.abi == PERF_SAMPLE_REGS_ABI_NONE)
		return;
	n = hm_code_read(c->code, a->s.pid, a->s.ip, 0, buf, sizeof(buf));
	if (!n || hm_decode_insn(c->dec, buf, n, a->s.ip, &in) || !(op = data_operand(&in)) ||
	    op->segment == HM_SEG_GS)
		return;
	if (a->s.ip != ev->sample.ip) {
		/* Skid: the resolver took the instruction that ends at the sampled ip. */
		if (a->s.ip + in.len != ev->sample.ip)
			return;
		s->trap_ip = ev->sample.ip;
	} else {
		s->trap_ip = in.addr + in.len;
		s->clobbered = in.regs_written;
	}
	if (c->off_by_one)
		s->trap_ip = in.addr;
	/* An fs-relative access's address is its offset from the thread pointer. */
	s->addr = op->segment == HM_SEG_FS ? TLS_STANDIN + (uint64_t)a->s.tid * 0x10000 + a->s.addr
					   : a->s.addr;
	s->size = a->s.size;
	s->time = a->s.time;
	s->field = a->field;
	s->ok = s->addr && s->addr < USER_END;
}

static int resolve_all(struct conv *c, struct hm_err *err)
{
	struct hm_perfdata *pd;
	struct hm_perf_event ev;
	struct hm_access a;
	int rc;

	if (hm_perfdata_open(c->in, &pd, err))
		return -1;
	while ((rc = hm_perfdata_next(pd, &ev, err)) > 0) {
		if (ev.type != PERF_RECORD_SAMPLE || !ev.attr || ev.attr->index != c->timer->index)
			continue;
		if (c->nr_sites == c->cap_sites) {
			size_t cap = c->cap_sites ? c->cap_sites * 2 : 4096;
			struct site *ns = realloc(c->sites, cap * sizeof(*ns));

			if (!ns) {
				rc = hm_err_set(err, HM_EXIT_ENV, "out of memory");
				break;
			}
			c->sites = ns;
			c->cap_sites = cap;
		}
		hm_resolver_sample(c->r, &ev, &a);
		site_of(c, &ev, &a, &c->sites[c->nr_sites++]);
	}
	hm_perfdata_close(pd);
	return rc < 0 ? -1 : 0;
}

/* The largest aligned debug-register length the access covers (cli/watchspec.c fit_len). */
static uint32_t fit_len(uint64_t addr, uint64_t size)
{
	for (uint32_t len = 8; len > 1; len /= 2)
		if (size >= len && addr % len == 0)
			return len;
	return 1;
}

static struct range range_of(const struct conv *c, const struct site *s)
{
	struct range r = {0};

	r.len = c->force_len ? c->force_len : fit_len(s->addr, s->size);
	r.addr = s->addr & ~(uint64_t)(r.len - 1);
	r.field = s->field;
	return r;
}

static int overlaps(const struct range *r, const struct site *s)
{
	return s->addr < r->addr + r->len && r->addr < s->addr + s->size;
}

static int cmp_range_addr(const void *x, const void *y)
{
	const struct range *a = x, *b = y;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return a->len < b->len ? -1 : a->len > b->len;
}

/* Fields are interned by the resolver: equal names are equal pointers. */
static int cmp_range_field(const void *x, const void *y)
{
	const struct range *a = x, *b = y;
	int c = cmp_range_addr(x, y);

	if (c)
		return c;
	return (uintptr_t)a->field < (uintptr_t)b->field ? -1 : (uintptr_t)a->field > (uintptr_t)b->field;
}

static int cmp_range_count(const void *x, const void *y)
{
	const struct range *a = x, *b = y;

	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return cmp_range_addr(x, y);
}

/* Counts accesses per range and arms the hottest ranges that overlap no other. */
static int pick_ranges(struct conv *c, struct hm_err *err)
{
	struct range *v = malloc((c->nr_sites ? c->nr_sites : 1) * sizeof(*v));
	size_t n = 0, k = 0;
	uint64_t run = 0;

	if (!v)
		return hm_err_set(err, HM_EXIT_ENV, "out of memory");
	for (size_t i = 0; i < c->nr_sites; i++)
		if (c->sites[i].ok)
			v[n++] = range_of(c, &c->sites[i]);
	/* Per range its count and the field the timer path named most often: run counts the
	 * current field, written holds the best count until the ranges are picked. */
	hm_sort(v, n, sizeof(*v), cmp_range_field);
	for (size_t i = 0; i < n; i++) {
		int same_field = i && !cmp_range_field(&v[i - 1], &v[i]);

		if (!k || cmp_range_addr(&v[k - 1], &v[i])) {
			v[k] = v[i];
			v[k++].count = 0;
		}
		v[k - 1].count++;
		run = same_field ? run + 1 : 1;
		if (run > v[k - 1].written) {
			v[k - 1].written = run;
			v[k - 1].field = v[i].field;
		}
	}
	hm_sort(v, k, sizeof(*v), cmp_range_count);
	for (size_t i = 0; i < k && c->nr_ranges < c->max_watch; i++) {
		int clash = 0;

		for (int j = 0; j < c->nr_ranges; j++)
			clash |= v[i].addr < c->ranges[j].addr + c->ranges[j].len &&
				 c->ranges[j].addr < v[i].addr + v[i].len;
		if (!clash) {
			c->ranges[c->nr_ranges] = v[i];
			c->ranges[c->nr_ranges++].written = 0;
		}
	}
	free(v);
	/* Each range is armed from its field's first access: a local's watchpoint is armed
	 * once its frame exists, and before that the dynamic loader's startup may use the
	 * same stack slot (a make check run once had a sample there, which named the slot
	 * auxv_values[44], and the report's row at that address took that name). */
	for (int j = 0; j < c->nr_ranges; j++) {
		struct range *r = &c->ranges[j];

		r->from = UINT64_MAX;
		for (size_t i = 0; i < c->nr_sites; i++)
			if (c->sites[i].ok && c->sites[i].field == r->field &&
			    overlaps(r, &c->sites[i]) && c->sites[i].time < r->from)
				r->from = c->sites[i].time;
	}
	if (!c->nr_ranges)
		return hm_err_set(err, HM_EXIT_INPUT, "%s: no timer sample has a user-space data "
				  "address to watch: record a workload that accesses memory with "
				  "'hitmap record -c timer'", c->in);
	return 0;
}

/* One watch attr per range, as collectors/record.c build_events makes them: only the
 * first tracks mmap/comm/task, and a lone event drops the sample identifier. Ids: one per
 * timer id (the timer's fds, one per CPU or thread), distinct from the timer's. */
static int create_out(struct conv *c, struct hm_err *err)
{
	struct hm_perf_attr pa[MAX_WATCH];
	uint64_t next = 1;
	struct stat a, b;

	if (!stat(c->in, &a) && !stat(c->out, &b) && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
		return hm_err_set(err, HM_EXIT_USAGE, "%s: OUT is IN: pass another output file",
				  c->out);
	for (uint32_t i = 0; i < c->timer->nr_ids; i++)
		next = c->timer->ids[i] >= next ? c->timer->ids[i] + 1 : next;
	c->nr_ids = c->timer->nr_ids ? c->timer->nr_ids : 1;
	memset(pa, 0, sizeof(pa));
	for (int k = 0; k < c->nr_ranges; k++) {
		struct range *r = &c->ranges[k];
		struct hm_watch wt = {r->addr, r->len, HM_BP_RW, r->label};
		const char *why = hm_watch_check(&wt);

		snprintf(r->label, sizeof(r->label), "mem:0x%" PRIx64 "/%u", r->addr, r->len);
		if (why)
			return hm_err_set(err, HM_EXIT_INPUT, "%s: range %s: %s", c->in, r->label, why);
		hm_watch_attr(&pa[k].attr, &wt, 0);
		if (!(c->ids[k] = malloc(c->nr_ids * sizeof(uint64_t))))
			return hm_err_set(err, HM_EXIT_ENV, "out of memory");
		for (uint32_t j = 0; j < c->nr_ids; j++)
			c->ids[k][j] = next++;
		pa[k].ids = c->ids[k];
		pa[k].nr_ids = c->nr_ids;
		pa[k].name = r->label;
	}
	pa[0].attr.mmap = pa[0].attr.mmap2 = pa[0].attr.comm = 1;
	pa[0].attr.comm_exec = pa[0].attr.task = 1;
	if (c->nr_ranges == 1)
		pa[0].attr.sample_type &= ~(uint64_t)PERF_SAMPLE_IDENTIFIER;
	return hm_perfdata_create(c->out, pa, (uint32_t)c->nr_ranges, 0, &c->w, err);
}

/* The position of a timer id among the timer's ids (0 when unknown or not sampled). */
static uint32_t id_slot(const struct conv *c, uint64_t id)
{
	for (uint32_t j = 0; j < c->timer->nr_ids && j < c->nr_ids; j++)
		if (c->timer->ids[j] == id)
			return j;
	return 0;
}

/* The breakpoint sample range k would have produced for the access of site s. */
static int write_trap(struct conv *c, const struct hm_perf_event *ev, const struct site *s,
		      int k, struct hm_err *err)
{
	const struct hm_perf_regs *tr = &ev->sample.regs_user;
	uint64_t regs[64], v;
	struct hm_perf_event o;
	uint32_t nr = 0;

	memset(&o, 0, sizeof(o));
	o.type = PERF_RECORD_SAMPLE;
	o.misc = ev->misc & PERF_RECORD_MISC_CPUMODE_MASK;
	o.attr = hm_perfdata_writer_attr(c->w, (uint32_t)k);
	o.sample.ip = s->trap_ip;
	o.sample.pid = ev->sample.pid;
	o.sample.tid = ev->sample.tid;
	o.sample.time = ev->sample.time;
	o.sample.cpu = ev->sample.cpu;
	o.sample.addr = c->ranges[k].addr;
	o.sample.period = 1;
	o.sample.id = c->ids[k][id_slot(c, ev->sample.id)];
	for (int reg = 0; reg < 64; reg++) {
		if (!(HM_X86_EA_REGS >> reg & 1))
			continue;
		if (hm_decode_reg(tr->mask, tr->regs, reg, &v))
			v = POISON;	/* not reached: find_timer asks for every one */
		if (reg == HM_REG_IP)
			v = s->trap_ip;
		else if (s->clobbered >> reg & 1)
			v = POISON;
		regs[nr++] = v;
	}
	o.sample.regs_user = (struct hm_perf_regs){tr->abi, HM_X86_EA_REGS, nr, regs};
	c->ranges[k].written++;
	return hm_perfdata_write(c->w, &o, err);
}

/* IN again: its non-sample records as they are, its timer samples as traps. */
static int write_all(struct conv *c, struct hm_err *err)
{
	struct hm_perfdata *pd;
	struct hm_perf_event ev;
	size_t i = 0;
	int rc;

	if (hm_perfdata_open(c->in, &pd, err))
		return -1;
	while ((rc = hm_perfdata_next(pd, &ev, err)) > 0) {
		if (ev.type != PERF_RECORD_SAMPLE) {
			ev.attr = NULL;		/* the first watch attr, which tracks */
			ev.sid.id = c->ids[0][id_slot(c, ev.sid.id)];
			if (ev.type == PERF_RECORD_LOST)
				ev.lost.id = c->ids[0][id_slot(c, ev.lost.id)];
			rc = hm_perfdata_write(c->w, &ev, err);
		} else if (ev.attr && ev.attr->index == c->timer->index && i < c->nr_sites) {
			const struct site *s = &c->sites[i++];

			for (int k = 0; rc >= 0 && s->ok && k < c->nr_ranges; k++)
				if (overlaps(&c->ranges[k], s) && s->time >= c->ranges[k].from)
					rc = write_trap(c, &ev, s, k, err);
		}
		if (rc < 0)
			break;
	}
	hm_perfdata_close(pd);
	if (rc >= 0 && i != c->nr_sites)
		rc = hm_err_set(err, HM_EXIT_INPUT, "%s: changed while being read: copy it "
				"somewhere stable first", c->in);
	return rc < 0 ? -1 : hm_perfdata_finish(c->w, hm_perfdata_features(c->pd), err);
}

static int convert(struct conv *c, struct hm_err *err)
{
	struct hm_resolve_opts ro = {0};
	struct hm_code_opts co = {0};

	if (hm_perfdata_open(c->in, &c->pd, err) || find_timer(c, err))
		return -1;
	ro.osrelease = co.kernel_release = hm_perfdata_features(c->pd)->osrelease;
	if (hm_resolver_open(&ro, &c->r, err) || hm_code_open(&co, &c->code, err) ||
	    hm_decode_open(&c->dec, err))
		return -1;
	hm_resolver_features(c->r, hm_perfdata_features(c->pd));
	if (hm_recording_maps(c->in, track_map, c, err) || resolve_all(c, err) || pick_ranges(c, err) ||
	    create_out(c, err))
		return -1;
	return write_all(c, err);
}

static void summary(const struct conv *c)
{
	uint64_t total = 0;

	for (int k = 0; k < c->nr_ranges; k++)
		total += c->ranges[k].written;
	printf("timer2watch: %s: %" PRIu64 " breakpoint samples from %zu timer samples:", c->out,
	       total, c->nr_sites);
	for (int k = 0; k < c->nr_ranges; k++)
		printf("%s 0x%" PRIx64 "/%u (%s) %" PRIu64, k ? "," : "", c->ranges[k].addr,
		       c->ranges[k].len, c->ranges[k].field ? c->ranges[k].field : "?",
		       c->ranges[k].written);
	printf("\n");
}

int main(int argc, char **argv)
{
	struct conv c = {0};
	struct hm_err err = {0};
	int rc;

	if (parse_args(argc, argv, &c))
		return usage();
	if (!strcmp(c.in, "-") || !strcmp(c.out, "-")) {
		fprintf(stderr, "timer2watch: IN and OUT must be files, not '-': IN is read three "
			"times; save a pipe to a file first\n");
		return 1;
	}
	rc = convert(&c, &err);
	if (!rc)
		summary(&c);
	hm_perfdata_writer_close(c.w);
	for (int k = 0; k < MAX_WATCH; k++)
		free(c.ids[k]);
	free(c.sites);
	if (c.dec)
		hm_decode_close(c.dec);
	if (c.code)
		hm_code_close(c.code);
	hm_resolver_close(c.r);
	hm_perfdata_close(c.pd);
	if (rc) {
		fprintf(stderr, "timer2watch: %s\n", err.msg);
		return err.code ? err.code : 2;
	}
	return 0;
}
