/* Presets and libpfm4 event strings to perf_event_attr. Intel events are named per model
 * through libpfm4's tables (several names per preset, first that encodes wins); AMD IBS
 * and Arm SPE are typed from sysfs (pmu_sysfs.c). */
#include <linux/perf_event.h>
#include <perfmon/pfmlib_perf_event.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collectors/pmu_int.h"
#include "core/sample.h"

static const char *const preset_names[] = {"c2c", "hitm", "split", "miss", "stall", NULL};

const char *const *hm_pmu_presets(void)
{
	return preset_names;
}

int hm_pmu_preset_id(const char *name)
{
	for (int i = 0; preset_names[i]; i++)
		if (!strcmp(name, preset_names[i]))
			return i;
	return -1;
}

int hm_pmu_is_preset(const char *name)
{
	return hm_pmu_preset_id(name) >= 0;
}

const char *hm_pmu_sysfs_root(const struct hm_pmu_opts *o)
{
	return o && o->sysfs ? o->sysfs : HM_PMU_SYSFS;
}

void hm_pmu_opts_init(struct hm_pmu_opts *o)
{
	struct hm_pmu_status st;

	memset(o, 0, sizeof(*o));
	o->precise = -1;
	hm_pmu_probe(&st);
	o->phys = st.privileged || (st.paranoid != -99 && st.paranoid <= 1);
}

void hm_pmu_attr_base(struct perf_event_attr *a, const struct hm_pmu_opts *o, uint64_t period)
{
	a->size = sizeof(*a);
	a->sample_period = period;
	a->sample_type = HM_PMU_SAMPLE_TYPE | (o->phys ? PERF_SAMPLE_PHYS_ADDR : 0);
	a->exclude_kernel = !o->kernel;
	a->exclude_hv = 1;
	a->disabled = 1;
	a->sample_id_all = 1;
}

/* --- Model detection ------------------------------------------------------------------ */

static int pfm_ready(void)
{
	/* Idempotent; libpfm4 reads LIBPFM_FORCE_PMU on the first call of the process. */
	return pfm_initialize() == PFM_SUCCESS ? 0 : -1;
}

static enum hm_pmu_vendor vendor_of(const char *name)
{
	if (!strncmp(name, "amd64_", 6))
		return HM_PMU_AMD;
	if (!strncmp(name, "arm_", 4))
		return HM_PMU_ARM;
	return HM_PMU_INTEL;
}

int hm_pmu_model(struct hm_pmu_model *m)
{
	pfm_pmu_info_t info;

	memset(m, 0, sizeof(*m));
	m->pfm_id = -1;
	if (pfm_ready())
		return -1;
	for (int p = 0; p < PFM_PMU_MAX; p++) {
		memset(&info, 0, sizeof(info));
		info.size = sizeof(info);
		if (pfm_get_pmu_info((pfm_pmu_t)p, &info) != PFM_SUCCESS || !info.is_present)
			continue;
		/* The OS-generic tables and the architectural subset name no memory events. */
		if (info.type != PFM_PMU_TYPE_CORE || !strcmp(info.name, "perf") ||
		    !strcmp(info.name, "perf_raw") || !strcmp(info.name, "ix86arch"))
			continue;
		snprintf(m->name, sizeof(m->name), "%s", info.name);
		snprintf(m->desc, sizeof(m->desc), "%s", info.desc ? info.desc : info.name);
		m->vendor = vendor_of(info.name);
		m->pfm_id = p;
		return 0;
	}
	return -1;
}

/* --- Intel ------------------------------------------------------------------------------ */

/* What the tables cannot say. dla: PEBS records carry the data address for every memory
 * event (Haswell on); before that only load latency and precise stores do. aux: the load
 * latency event must sit in a group led by mem-loads-aux (event 0x03, umask 0x82), which
 * the kernel demands on Golden Cove cores. precise: 3 asks for PDIR where the model has
 * it; on SPR that counter cannot count load latency, so 2. */
struct intel_model {
	const char *name;
	uint8_t precise, dla, aux;
};

static const struct intel_model intel_models[] = {
	{"nhm", 2, 0, 0}, {"nhm_ex", 2, 0, 0}, {"wsm", 2, 0, 0}, {"wsm_dp", 2, 0, 0},
	{"snb", 2, 0, 0}, {"snb_ep", 2, 0, 0}, {"ivb", 2, 0, 0}, {"ivb_ep", 2, 0, 0},
	{"hsw", 2, 1, 0}, {"hsw_ep", 2, 1, 0}, {"bdw", 2, 1, 0}, {"bdw_ep", 2, 1, 0},
	{"skl", 3, 1, 0}, {"skx", 3, 1, 0},    {"clx", 3, 1, 0}, {"icl", 3, 1, 0},
	{"icx", 3, 1, 0}, {"spr", 2, 1, 1},
};

static struct intel_model intel_model_of(const char *name)
{
	struct intel_model def = {name, 2, 1, 0};

	for (size_t i = 0; i < sizeof(intel_models) / sizeof(intel_models[0]); i++)
		if (!strcmp(intel_models[i].name, name))
			return intel_models[i];
	return def;
}

#define MAX_CANDIDATES 5
enum { C_LDLAT = 1, C_DLA = 2, C_OPTIONAL = 4, C_PRE_DLA = 8 };

/* One event of a preset: candidate names in the order to try, newest model first. */
struct intel_slot {
	int preset;
	uint8_t op;
	uint8_t flags;		/* C_LDLAT: names take the threshold; C_DLA: only models with dla;
				 * C_PRE_DLA: only models without */
	uint32_t period;	/* primes, so sampling does not lock onto a loop's stride */
	const char *names[MAX_CANDIDATES];
};

static const struct intel_slot intel_slots[] = {
	{HM_PRESET_C2C, HM_OP_LOAD, C_LDLAT, 1009,
	 {"MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=%u",
	  "MEM_TRANS_RETIRED:LATENCY_ABOVE_THRESHOLD:ldlat=%u",
	  "MEM_INST_RETIRED:LATENCY_ABOVE_THRESHOLD:ldlat=%u"}},
	/* Not MEM_TRANS_RETIRED:STORE_SAMPLE on SPR: libpfm4 4.13 encodes it as 0x3cd (its
	 * event code carries umask 1); the kernel's mem-stores there is 0x2cd. */
	{HM_PRESET_C2C, HM_OP_STORE, C_DLA | C_OPTIONAL, 20011,
	 {"MEM_INST_RETIRED:ALL_STORES", "MEM_UOPS_RETIRED:ALL_STORES"}},
	{HM_PRESET_C2C, HM_OP_STORE, C_PRE_DLA | C_OPTIONAL, 20011,
	 {"MEM_TRANS_RETIRED:PRECISE_STORE"}},
	{HM_PRESET_HITM, HM_OP_LOAD, C_DLA, 97,
	 {"MEM_LOAD_L3_HIT_RETIRED:XSNP_HITM", "MEM_LOAD_L3_HIT_RETIRED:XSNP_FWD",
	  "MEM_LOAD_UOPS_L3_HIT_RETIRED:XSNP_HITM", "MEM_LOAD_UOPS_LLC_HIT_RETIRED:XSNP_HITM"}},
	{HM_PRESET_HITM, HM_OP_LOAD, C_DLA | C_OPTIONAL, 97,
	 {"MEM_LOAD_L3_MISS_RETIRED:REMOTE_HITM"}},
	{HM_PRESET_SPLIT, HM_OP_LOAD, C_DLA, 1009,
	 {"MEM_INST_RETIRED:SPLIT_LOADS", "MEM_UOPS_RETIRED:SPLIT_LOADS"}},
	{HM_PRESET_SPLIT, HM_OP_STORE, C_DLA, 1009,
	 {"MEM_INST_RETIRED:SPLIT_STORES", "MEM_UOPS_RETIRED:SPLIT_STORES"}},
	{HM_PRESET_MISS, HM_OP_LOAD, C_DLA, 2003,
	 {"MEM_LOAD_RETIRED:L1_MISS", "MEM_LOAD_UOPS_RETIRED:L1_MISS"}},
	{HM_PRESET_MISS, HM_OP_LOAD, C_DLA, 101,
	 {"MEM_LOAD_RETIRED:L3_MISS", "MEM_LOAD_UOPS_RETIRED:L3_MISS"}},
	{HM_PRESET_STALL, HM_OP_LOAD, C_LDLAT, 101,
	 {"MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=%u",
	  "MEM_TRANS_RETIRED:LATENCY_ABOVE_THRESHOLD:ldlat=%u",
	  "MEM_INST_RETIRED:LATENCY_ABOVE_THRESHOLD:ldlat=%u"}},
};

/* libpfm4 writes its own idea of the attr size and of the privilege bits; keep both ours. */
static int pfm_encode(const char *str, const struct hm_pmu_opts *o, struct perf_event_attr *a,
		      int *idx)
{
	pfm_perf_encode_arg_t arg;
	int plm = PFM_PLM3 | (o->kernel ? PFM_PLM0 : 0);

	memset(a, 0, sizeof(*a));
	memset(&arg, 0, sizeof(arg));
	arg.size = sizeof(arg);
	arg.attr = a;
	int ret = pfm_get_os_event_encoding(str, plm, PFM_OS_PERF_EVENT_EXT, &arg);
	if (ret == PFM_SUCCESS && idx)
		*idx = arg.idx;
	return ret;
}

static void intel_finish(struct hm_pmu_event *ev, const struct hm_pmu_opts *o,
			 const struct intel_model *m, uint64_t period)
{
	struct perf_event_attr *a = &ev->attr;
	uint8_t precise = a->precise_ip;	/* from a ":precise=N" in the string */
	uint64_t user_period = a->sample_period;

	hm_pmu_attr_base(a, o, o->period ? o->period : user_period ? user_period : period);
	a->precise_ip = precise ? precise : o->precise >= 0 ? (uint8_t)o->precise : m->precise;
}

static int ldlat_ok(uint32_t ldlat, struct hm_err *err)
{
	/* The threshold register (MSR_PEBS_LD_LAT_THRESHOLD) holds 16 bits; below 3 cycles
	 * every load qualifies and PEBS drowns. */
	if (ldlat < 3 || ldlat > 65535)
		return hm_err_set(err, HM_EXIT_INPUT,
				  "load latency %u: give 3 to 65535 cycles (perf c2c uses 30)", ldlat);
	return 0;
}

static void tried_append(char *tried, size_t len, const char *name)
{
	size_t n = strlen(tried);

	if (n + 2 < len)
		snprintf(tried + n, len - n, "%s%s", n ? ", " : "", name);
}

/* Encodes one slot: 1 if encoded into ev, 0 if no candidate exists on this model. */
static int intel_slot_encode(const struct intel_slot *s, const struct hm_pmu_opts *o,
			     const struct intel_model *m, uint32_t ldlat, struct hm_pmu_event *ev,
			     char *tried, size_t tried_len)
{
	char str[96];

	if (((s->flags & C_DLA) && !m->dla) || ((s->flags & C_PRE_DLA) && m->dla))
		return 0;
	for (int i = 0; i < MAX_CANDIDATES && s->names[i]; i++) {
		if (s->flags & C_LDLAT)
			snprintf(str, sizeof(str), s->names[i], ldlat);
		else
			snprintf(str, sizeof(str), "%s", s->names[i]);
		tried_append(tried, tried_len, s->names[i]);
		memset(ev, 0, sizeof(*ev));
		if (pfm_encode(str, o, &ev->attr, NULL) != PFM_SUCCESS)
			continue;
		snprintf(ev->name, sizeof(ev->name), "%s", str);
		ev->leader = -1;
		ev->op = s->op;
		intel_finish(ev, o, m, s->period);
		return 1;
	}
	return 0;
}

/* The kernel's mem-loads-aux: a counting leader the load-latency event must follow. */
static void intel_add_aux(struct hm_pmu_events *out, const struct hm_pmu_opts *o)
{
	struct hm_pmu_event *aux = &out->ev[out->nr];

	memset(aux, 0, sizeof(*aux));
	hm_pmu_attr_base(&aux->attr, o, 0);
	aux->attr.type = PERF_TYPE_RAW;
	aux->attr.config = 0x8203;
	snprintf(aux->name, sizeof(aux->name), "mem-loads-aux");
	aux->leader = -1;
	aux->flags = HM_PMU_EV_COUNT_ONLY;
	out->nr++;
}

static int intel_encode_preset(enum hm_preset p, const struct hm_pmu_opts *o,
			       const struct hm_pmu_model *model, struct hm_pmu_events *out,
			       struct hm_err *err)
{
	struct intel_model m = intel_model_of(model->name);
	uint32_t ldlat = o->ldlat ? o->ldlat
				  : p == HM_PRESET_STALL ? HM_PMU_LDLAT_STALL : HM_PMU_LDLAT_C2C;
	char tried[384] = "";
	int required_missing = 0, dla_missing = 0;

	if (ldlat_ok(ldlat, err))
		return -1;
	for (size_t i = 0; i < sizeof(intel_slots) / sizeof(intel_slots[0]); i++) {
		const struct intel_slot *s = &intel_slots[i];
		struct hm_pmu_event ev;

		if (s->preset != (int)p || out->nr + 2 > HM_PMU_MAX_EVENTS)
			continue;
		if (!intel_slot_encode(s, o, &m, ldlat, &ev, tried, sizeof(tried))) {
			required_missing |= !(s->flags & C_OPTIONAL);
			dla_missing |= !(s->flags & C_OPTIONAL) && (s->flags & C_DLA) && !m.dla;
			continue;
		}
		if ((s->flags & C_LDLAT) && m.aux) {
			intel_add_aux(out, o);
			ev.leader = (int)out->nr - 1;
		}
		out->ev[out->nr++] = ev;
	}
	if (dla_missing)
		return hm_err_set(err, HM_EXIT_ENV,
				  "preset '%s' needs data addresses, which PEBS on %s (%s) records "
				  "only for load latency and precise stores: use -e c2c, or -c timer",
				  preset_names[p], model->name, model->desc);
	if (required_missing || !out->nr)
		return hm_err_set(err, HM_EXIT_ENV,
				  "preset '%s' has no event on %s (%s); tried %s: use -e c2c, or "
				  "-c timer (register-decoded addresses)",
				  preset_names[p], model->name, model->desc, tried);
	return 0;
}

static int event_is_precise(int idx)
{
	pfm_event_info_t info;

	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	if (pfm_get_event_info(idx, PFM_OS_PERF_EVENT_EXT, &info) != PFM_SUCCESS)
		return 0;
	return info.is_precise;
}

static int user_event_error(const char *what, int ret, const struct hm_pmu_model *m,
			    int have_model, struct hm_err *err)
{
	const char *why = ret == PFM_ERR_NOTFOUND ? "is not a preset (c2c, hitm, split, miss, "
						    "stall) nor a libpfm4 event"
			  : ret == PFM_ERR_ATTR || ret == PFM_ERR_ATTR_VAL || ret == PFM_ERR_UMASK
			      ? "has an attribute or unit mask libpfm4 does not accept"
			      : "cannot be encoded by libpfm4";

	if (have_model)
		return hm_err_set(err, HM_EXIT_INPUT,
				  "event '%s' %s of PMU %s (%s: %s): run 'hitmap check' for what "
				  "this machine records, or libpfm4's showevtinfo for its event list",
				  what, why, m->name, m->desc, pfm_strerror(ret));
	return hm_err_set(err, HM_EXIT_INPUT,
			  "event '%s' %s (%s), and libpfm4 detects no hardware PMU here: run "
			  "'hitmap check', or use -c timer",
			  what, why, pfm_strerror(ret));
}

static int encode_user(const char *what, const struct hm_pmu_opts *o,
		       const struct hm_pmu_model *m, int have_model, struct hm_pmu_events *out,
		       struct hm_err *err)
{
	struct hm_pmu_event *ev = &out->ev[0];
	struct intel_model im = intel_model_of(m->name);
	int idx = -1, ret;

	memset(ev, 0, sizeof(*ev));
	ret = pfm_encode(what, o, &ev->attr, &idx);
	if (ret != PFM_SUCCESS)
		return user_event_error(what, ret, m, have_model, err);
	snprintf(ev->name, sizeof(ev->name), "%s", what);
	ev->leader = -1;
	ev->op = HM_OP_UNKNOWN;
	if (ev->attr.type == PERF_TYPE_RAW && event_is_precise(idx)) {
		intel_finish(ev, o, &im, 10007);
		if (!im.dla && !strstr(what, "LATENCY") && !strstr(what, "PRECISE_STORE"))
			ev->flags |= HM_PMU_EV_NO_ADDR;
	} else {
		/* AMD core counters, Intel events without PEBS, and the kernel's generic
		 * events: samples with an ip, but nothing says which data address. */
		uint64_t period = ev->attr.sample_period;
		uint8_t precise = ev->attr.precise_ip;

		hm_pmu_attr_base(&ev->attr, o, o->period ? o->period : period ? period : 100003);
		ev->attr.precise_ip = precise;
		ev->flags |= HM_PMU_EV_NO_ADDR;
	}
	out->nr = 1;
	out->vendor = have_model ? m->vendor : HM_PMU_OTHER;
	snprintf(out->pmu, sizeof(out->pmu), "%s", have_model ? m->name : "perf");
	return 0;
}

int hm_pmu_encode(const char *what, const struct hm_pmu_opts *o, struct hm_pmu_events *out,
		  struct hm_err *err)
{
	struct hm_pmu_opts def;
	struct hm_pmu_model m;
	struct hm_pmu_status st;
	char spe[32];
	int p = hm_pmu_preset_id(what), have_model;

	memset(out, 0, sizeof(*out));
	if (!o) {
		hm_pmu_opts_init(&def);
		o = &def;
	}
	if (pfm_ready())
		return hm_err_set(err, HM_EXIT_ENV, "libpfm4 failed to initialise: use -c timer");
	have_model = !hm_pmu_model(&m);
	if (p < 0)
		return encode_user(what, o, &m, have_model, out, err);
	snprintf(out->preset, sizeof(out->preset), "%s", what);
	/* SPE is a platform device, not a core PMU libpfm4 knows: sysfs decides. */
	if (!hm_pmu_sysfs_find(hm_pmu_sysfs_root(o), "arm_spe_", spe, sizeof(spe)))
		return hm_pmu_encode_spe((enum hm_preset)p, o, spe, out, err);
	if (have_model && m.vendor == HM_PMU_AMD)
		return hm_pmu_encode_ibs((enum hm_preset)p, o, m.name, out, err);
	if (have_model && m.vendor == HM_PMU_INTEL) {
		snprintf(out->pmu, sizeof(out->pmu), "%s", m.name);
		out->vendor = HM_PMU_INTEL;
		return intel_encode_preset((enum hm_preset)p, o, &m, out, err);
	}
	hm_pmu_probe_at(hm_pmu_sysfs_root(o), HM_PMU_PARANOID, &st);
	if (hm_pmu_diagnose(&st, o->kernel, err))
		return -1;
	return hm_err_set(err, HM_EXIT_ENV,
			  "the CPU PMU is not one libpfm4 %d.%d knows, so preset '%s' has no "
			  "event names: give a libpfm4 event with -e, or use -c timer",
			  PFM_MAJ_VERSION(pfm_get_version()),
			  PFM_MIN_VERSION(pfm_get_version()), what);
}
