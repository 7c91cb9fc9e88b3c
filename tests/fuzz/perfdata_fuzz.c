/* libFuzzer target for the perf.data reader: any input must give events, an error or a clean
 * end, never a crash, an overread or a hang. Every returned event is fully read (the
 * accessors, the conversion to hm_sample, the features and stats), so a pointer the reader
 * hands out that points outside its buffers is caught by ASan here. The records a record
 * index lists (core/perfdata_index.c) are read once more, alone.
 * Built and run by `make fuzz` (tests/fuzz/README.md). */
#include <string.h>

#include "core/perfdata.h"
#include "tests/fuzz/fuzz_util.h"

static volatile uint64_t sink;

static void touch(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t s = 0;

	for (size_t i = 0; p && i < n; i++)
		s += b[i];
	sink += s;
}

static void touch_sample(const struct hm_perf_sample *s)
{
	touch(s->callchain, s->nr_callchain * sizeof(uint64_t));
	touch(s->raw, s->raw_size);
	touch(s->branch, s->nr_branch * sizeof(*s->branch));
	touch(s->branch_counters, s->branch_counters ? s->nr_branch * sizeof(uint64_t) : 0);
	touch(s->regs_user.regs, s->regs_user.nr * sizeof(uint64_t));
	touch(s->regs_intr.regs, s->regs_intr.nr * sizeof(uint64_t));
	touch(s->stack, s->stack_size);
	touch(s->aux, s->aux_size);
}

/* Words per PERF_FORMAT_GROUP entry: value, then id and lost when asked for. */
static size_t read_stride(uint64_t fmt)
{
	return 1 + !!(fmt & PERF_FORMAT_ID) + !!(fmt & PERF_FORMAT_LOST);
}

static void touch_event(const struct hm_perf_event *ev)
{
	struct hm_sample s;

	switch (ev->type) {
	case PERF_RECORD_SAMPLE:
		touch_sample(&ev->sample);
		if (ev->attr && (ev->attr->attr.read_format & PERF_FORMAT_GROUP))
			touch(ev->sample.read.values, ev->sample.read.nr *
			      read_stride(ev->attr->attr.read_format) * sizeof(uint64_t));
		hm_perfdata_to_sample(ev, HM_SRC_PMU, &s);
		sink += s.addr + hm_perf_sample_weight(ev);
		break;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		sink += strlen(ev->mmap.filename);
		break;
	case PERF_RECORD_COMM:
		sink += strlen(ev->comm.comm);
		break;
	}
	if (ev->attr)
		sink += ev->attr->attr.sample_type + (ev->attr->name ? strlen(ev->attr->name) : 0);
}

static void touch_header(const struct hm_perfdata *pd)
{
	const struct hm_perf_features *f = hm_perfdata_features(pd);
	const char *strs[] = {f->hostname, f->osrelease, f->version, f->arch, f->cpudesc, f->cpuid};
	char name[64];

	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		sink += strs[i] ? strlen(strs[i]) : 0;
	for (uint32_t i = 0; i < f->nr_cmdline; i++)
		sink += strlen(f->cmdline[i]);
	for (uint32_t i = 0; i < f->nr_build_ids; i++)
		sink += strlen(f->build_ids[i].filename) + f->build_ids[i].size;
	for (uint32_t i = 0; i < hm_perfdata_nr_attrs(pd); i++) {
		const struct hm_perf_attr *a = hm_perfdata_attr(pd, i);

		touch(a->ids, a->nr_ids * sizeof(uint64_t));
		sink += a->name ? strlen(a->name) : 0;
		hm_perf_attr_default_name(&a->attr, name, sizeof(name));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hm_perfdata *pd;
	struct hm_perf_event ev;
	struct hm_err err;
	const uint64_t *off;
	uint64_t nr;
	const char *w;
	int fd, rc;

	if (!hm_fuzz_file(data, size, &fd))
		return 0;
	if (hm_perfdata_open_fd(fd, "fuzz", &pd, &err) < 0)
		return 0;
	touch_header(pd);
	while ((rc = hm_perfdata_next(pd, &ev, &err)) > 0) {
		touch_event(&ev);
		if (hm_perfdata_is_pipe(pd))
			touch_header(pd);
	}
	/* hitmap's record index: each listed record read alone (resolve/maps.c) */
	if (rc == 0 && hm_perfdata_index(pd, &off, &nr))
		for (uint64_t i = 0; i < nr; i++)
			if (hm_perfdata_next_at(pd, off[i], &ev, &err) > 0)
				touch_event(&ev);
	sink += hm_perfdata_stats(pd)->lost;
	w = hm_perfdata_warning(pd);
	sink += w ? strlen(w) : 0;
	hm_perfdata_close(pd);
	return 0;
}
