/* PMUs the kernel types at boot (AMD ibs_op, Arm arm_spe_N): their type and format bits
 * come from sysfs, not from libpfm4 tables, so they are encoded here. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/pmu_int.h"
#include "core/sample.h"

/* IBS counts ops in units of 16 (the low 4 bits of IbsOpMaxCnt do not exist). */
#define IBS_PERIOD_DEFAULT 0x10000
/* SPE samples one op per interval; the hardware minimum is in caps/min_interval. */
#define SPE_PERIOD_DEFAULT 4096
/* PMSEVFR_EL1.E[3]: level 1 data cache refill. */
#define SPE_EVENT_L1D_REFILL (1ULL << 3)
#define SPE_MIN_LATENCY_MAX 4095	/* PMSLATFR_EL1.MINLAT is 12 bits */

static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	if (!fgets(buf, (int)len, f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

int hm_pmu_sysfs_type(const char *sysfs, const char *pmu)
{
	char path[512], line[32], *end;
	long v;

	snprintf(path, sizeof(path), "%s/%s/type", sysfs, pmu);
	if (read_line(path, line, sizeof(line)))
		return -1;
	v = strtol(line, &end, 10);
	if (end == line || v < 0 || v > 0x7fffffff)
		return -1;
	return (int)v;
}

int hm_pmu_sysfs_find(const char *sysfs, const char *prefix, char *name, size_t len)
{
	DIR *d = opendir(sysfs);
	struct dirent *e;
	int found = -1;

	if (!d)
		return -1;
	/* Lowest-named match, so arm_spe_0 wins over arm_spe_1 whatever readdir's order. */
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, prefix, strlen(prefix)))
			continue;
		if (found == 0 && strcmp(e->d_name, name) >= 0)
			continue;
		snprintf(name, len, "%s", e->d_name);
		found = 0;
	}
	closedir(d);
	return found;
}

static int parse_word(const char *s, size_t n, int *word)
{
	if (n == 6 && !strncmp(s, "config", 6))
		*word = 0;
	else if (n == 7 && !strncmp(s, "config1", 7))
		*word = 1;
	else if (n == 7 && !strncmp(s, "config2", 7))
		*word = 2;
	else
		return -1;	/* config3 and beyond: not in the attr this header knows */
	return 0;
}

int hm_pmu_format_parse(const char *spec, int *word, uint64_t *mask)
{
	const char *colon = strchr(spec, ':'), *p;
	char *end;

	if (!colon || parse_word(spec, (size_t)(colon - spec), word))
		return -1;
	*mask = 0;
	p = colon + 1;
	for (;;) {
		unsigned long lo = strtoul(p, &end, 10), hi = lo;

		if (end == p || lo > 63)
			return -1;
		if (*end == '-') {
			p = end + 1;
			hi = strtoul(p, &end, 10);
			if (end == p || hi > 63 || hi < lo)
				return -1;
		}
		for (unsigned long b = lo; b <= hi; b++)
			*mask |= 1ULL << b;
		if (*end != ',')
			break;
		p = end + 1;
	}
	return *end == '\0' || *end == '\n' ? 0 : -1;
}

int hm_pmu_format_set(const char *sysfs, const char *pmu, const char *field,
		      const char *fallback, uint64_t value, struct perf_event_attr *attr)
{
	char path[512], spec[128];
	uint64_t mask;
	__u64 *dst;
	int word;

	snprintf(path, sizeof(path), "%s/%s/format/%s", sysfs, pmu, field);
	if (read_line(path, spec, sizeof(spec))) {
		if (!fallback)
			return -1;
		snprintf(spec, sizeof(spec), "%s", fallback);
	}
	if (hm_pmu_format_parse(spec, &word, &mask))
		return -1;
	dst = word == 0 ? &attr->config : word == 1 ? &attr->config1 : &attr->config2;
	/* Value bits go into the mask's bits from the lowest up, as perf's pmu parser does. */
	for (int b = 0; b < 64 && value; b++) {
		if (!(mask & (1ULL << b)))
			continue;
		if (value & 1)
			*dst |= 1ULL << b;
		else
			*dst &= ~(1ULL << b);
		value >>= 1;
	}
	return 0;
}

static void name_add(char *name, size_t len, const char *field, uint64_t v)
{
	size_t n = strlen(name);
	int first = name[n - 1] == '/';

	snprintf(name + n, len - n, "%s%s=%llu", first ? "" : ",", field, (unsigned long long)v);
}

static void name_close(char *name, size_t len)
{
	size_t n = strlen(name);

	snprintf(name + n, len - n, "/");
}

int hm_pmu_encode_ibs(enum hm_preset p, const struct hm_pmu_opts *o, const char *model,
		      struct hm_pmu_events *out, struct hm_err *err)
{
	const char *sysfs = hm_pmu_sysfs_root(o);
	struct hm_pmu_event *ev = &out->ev[0];
	int type = hm_pmu_sysfs_type(sysfs, "ibs_op");
	uint64_t period = o->period ? o->period : IBS_PERIOD_DEFAULT;

	if (type < 0)
		return hm_err_set(err, HM_EXIT_ENV,
				  "AMD PMU %s but no 'ibs_op' in %s: IBS is off (firmware, a VM, or a "
				  "kernel without AMD IBS); use -c timer (register-decoded addresses)",
				  model, sysfs);
	if (p == HM_PRESET_SPLIT)
		return hm_err_set(err, HM_EXIT_ENV,
				  "preset 'split' has no precise event on AMD (IBS marks misaligned ops "
				  "only in raw data): record -e c2c or -c timer and use 'hitmap report "
				  "--view splits', which finds line-crossing accesses by address");
	if (period & 0xf)
		return hm_err_set(err, HM_EXIT_INPUT,
				  "period %llu: IBS counts in units of 16; give a multiple of 16",
				  (unsigned long long)period);
	memset(ev, 0, sizeof(*ev));
	hm_pmu_attr_base(&ev->attr, o, period);
	ev->attr.type = (uint32_t)type;
	ev->attr.precise_ip = 0;	/* IBS has no skid by design; the field is for core PMUs */
	ev->leader = -1;
	ev->op = HM_OP_UNKNOWN;		/* data_src.mem_op says load or store per sample */
	snprintf(ev->name, sizeof(ev->name), "ibs_op/");
	/* Count dispatched ops, not cycles, so every memory op has the same chance. */
	if (!hm_pmu_format_set(sysfs, "ibs_op", "cnt_ctl", NULL, 1, &ev->attr))
		name_add(ev->name, sizeof(ev->name), "cnt_ctl", 1);
	/* Zen 4 and later can tag only ops that miss the L3: far fewer, all slow, samples. */
	if ((p == HM_PRESET_MISS || p == HM_PRESET_STALL) &&
	    !hm_pmu_format_set(sysfs, "ibs_op", "l3missonly", NULL, 1, &ev->attr))
		name_add(ev->name, sizeof(ev->name), "l3missonly", 1);
	/* IBS cannot filter by privilege in hardware: without the kernel's software filter
	 * (swfilt, Linux 6.15) exclude_* is EINVAL, so the reader must drop kernel samples. */
	ev->attr.exclude_hv = 0;
	ev->attr.exclude_kernel = 0;
	if (!o->kernel) {
		if (!hm_pmu_format_set(sysfs, "ibs_op", "swfilt", NULL, 1, &ev->attr)) {
			name_add(ev->name, sizeof(ev->name), "swfilt", 1);
			ev->attr.exclude_kernel = 1;
			ev->attr.exclude_hv = 1;
		} else {
			ev->flags |= HM_PMU_EV_KERNEL_UNFILTERED;
		}
	}
	name_close(ev->name, sizeof(ev->name));
	out->nr = 1;
	out->vendor = HM_PMU_AMD;
	snprintf(out->pmu, sizeof(out->pmu), "ibs_op");
	return 0;
}

static uint64_t spe_min_interval(const char *sysfs, const char *spe)
{
	char path[512], line[32];

	snprintf(path, sizeof(path), "%s/%s/caps/min_interval", sysfs, spe);
	if (read_line(path, line, sizeof(line)))
		return 0;
	return strtoull(line, NULL, 10);
}

/* Bit positions from drivers/perf/arm_spe_pmu.c, used when sysfs lacks a format file. */
static int spe_set(const char *sysfs, const char *spe, const char *field, uint64_t v,
		   struct hm_pmu_event *ev)
{
	static const struct { const char *field, *spec; } fallback[] = {
		{"ts_enable", "config:0"}, {"pa_enable", "config:1"},
		{"load_filter", "config:33"}, {"store_filter", "config:34"},
		{"event_filter", "config1:0-63"}, {"min_latency", "config2:0-11"},
	};
	const char *spec = NULL;

	for (size_t i = 0; i < sizeof(fallback) / sizeof(fallback[0]); i++)
		if (!strcmp(fallback[i].field, field))
			spec = fallback[i].spec;
	if (hm_pmu_format_set(sysfs, spe, field, spec, v, &ev->attr))
		return -1;
	name_add(ev->name, sizeof(ev->name), field, v);
	return 0;
}

int hm_pmu_encode_spe(enum hm_preset p, const struct hm_pmu_opts *o, const char *spe,
		      struct hm_pmu_events *out, struct hm_err *err)
{
	const char *sysfs = hm_pmu_sysfs_root(o);
	struct hm_pmu_event *ev = &out->ev[0];
	int type = hm_pmu_sysfs_type(sysfs, spe);
	uint64_t period = o->period ? o->period : SPE_PERIOD_DEFAULT;
	uint64_t min = spe_min_interval(sysfs, spe);
	uint32_t lat = o->ldlat ? o->ldlat : HM_PMU_LDLAT_STALL;

	if (type < 0)
		return hm_err_set(err, HM_EXIT_ENV, "%s/%s/type is unreadable: use -c timer",
				  sysfs, spe);
	if (p == HM_PRESET_SPLIT)
		return hm_err_set(err, HM_EXIT_ENV,
				  "preset 'split' has no SPE filter: record -e c2c or -c timer and use "
				  "'hitmap report --view splits', which finds line-crossing accesses");
	if (p == HM_PRESET_STALL && lat > SPE_MIN_LATENCY_MAX)
		return hm_err_set(err, HM_EXIT_INPUT,
				  "load latency %u: SPE filters at most %d cycles; give less",
				  lat, SPE_MIN_LATENCY_MAX);
	if (min && period < min)
		period = min;
	memset(ev, 0, sizeof(*ev));
	hm_pmu_attr_base(&ev->attr, o, period);
	ev->attr.type = (uint32_t)type;
	ev->attr.precise_ip = 0;
	ev->leader = -1;
	ev->op = p == HM_PRESET_MISS || p == HM_PRESET_STALL ? HM_OP_LOAD : HM_OP_UNKNOWN;
	/* SPE writes records to the AUX buffer; perf turns them into samples when reading. */
	ev->flags = HM_PMU_EV_AUX;
	snprintf(ev->name, sizeof(ev->name), "%s/", spe);
	spe_set(sysfs, spe, "ts_enable", 1, ev);
	/* Physical addresses need CAP_PERFMON: asking without it makes the open fail. */
	if (o->phys)
		spe_set(sysfs, spe, "pa_enable", 1, ev);
	spe_set(sysfs, spe, "load_filter", 1, ev);
	/* No min_latency for c2c: SPE applies it to stores too, and stores must all stay. */
	if (p == HM_PRESET_C2C || p == HM_PRESET_HITM)
		spe_set(sysfs, spe, "store_filter", 1, ev);
	if (p == HM_PRESET_MISS)
		spe_set(sysfs, spe, "event_filter", SPE_EVENT_L1D_REFILL, ev);
	if (p == HM_PRESET_STALL)
		spe_set(sysfs, spe, "min_latency", lat, ev);
	name_close(ev->name, sizeof(ev->name));
	out->nr = 1;
	out->vendor = HM_PMU_ARM;
	snprintf(out->pmu, sizeof(out->pmu), "%s", spe);
	return 0;
}
