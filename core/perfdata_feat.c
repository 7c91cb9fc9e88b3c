/* Header feature sections (tools/perf/util/header.c layouts), both directions, and event
 * names: EVENT_DESC and EVENT_UPDATE names, or perf's default name for an attr. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/perfdata_int.h"
#include "core/oom.h"

void hm_pbuf_put(struct hm_pbuf *b, const void *src, size_t n)
{
	if (b->cap - b->len < n) {
		size_t cap = b->cap ? b->cap : 256;

		while (cap - b->len < n)
			cap *= 2;
		b->p = realloc(b->p, cap);
		if (!b->p) {
			hm_oom();
		}
		b->cap = cap;
	}
	if (src)
		memcpy(b->p + b->len, src, n);
	else
		memset(b->p + b->len, 0, n);
	b->len += n;
}

void hm_pbuf_zero(struct hm_pbuf *b, size_t n)
{
	hm_pbuf_put(b, NULL, n);
}

void hm_pbuf_u16(struct hm_pbuf *b, uint16_t v)
{
	hm_pbuf_put(b, &v, sizeof(v));
}

void hm_pbuf_u32(struct hm_pbuf *b, uint32_t v)
{
	hm_pbuf_put(b, &v, sizeof(v));
}

void hm_pbuf_u64(struct hm_pbuf *b, uint64_t v)
{
	hm_pbuf_put(b, &v, sizeof(v));
}

void hm_pbuf_str(struct hm_pbuf *b, const char *s)
{
	size_t n = strlen(s), padded = (n + 1 + HM_PERF_NAME_ALIGN - 1) & ~(size_t)(HM_PERF_NAME_ALIGN - 1);

	hm_pbuf_u32(b, (uint32_t)padded);
	hm_pbuf_put(b, s, n);
	hm_pbuf_zero(b, padded - n);
}

void hm_pbuf_free(struct hm_pbuf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

static const char *const feat_names[] = {
	"RESERVED", "TRACING_DATA", "BUILD_ID", "HOSTNAME", "OSRELEASE", "VERSION", "ARCH",
	"NRCPUS", "CPUDESC", "CPUID", "TOTAL_MEM", "CMDLINE", "EVENT_DESC", "CPU_TOPOLOGY",
	"NUMA_TOPOLOGY", "BRANCH_STACK", "PMU_MAPPINGS", "GROUP_DESC", "AUXTRACE", "STAT",
	"CACHE", "SAMPLE_TIME", "MEM_TOPOLOGY", "CLOCKID", "DIR_FORMAT", "BPF_PROG_INFO",
	"BPF_BTF", "COMPRESSED", "CPU_PMU_CAPS", "CLOCK_DATA", "HYBRID_TOPOLOGY", "PMU_CAPS",
};

void hm_pd_feat_what(int f, char *buf, size_t len)
{
	if (f == HM_PERF_FEAT_HITMAP_KSLAB)
		snprintf(buf, len, "hitmap's kernel slab feature section");
	else if (f == HM_PERF_FEAT_HITMAP_INDEX)
		snprintf(buf, len, "hitmap's record index feature section");
	else if (f >= 0 && (size_t)f < sizeof(feat_names) / sizeof(feat_names[0]))
		snprintf(buf, len, "the %s feature section", feat_names[f]);
	else
		snprintf(buf, len, "feature section %d", f);
}

/* perf's string: u32 length (with NUL and padding), then the bytes. */
static const char *take_fstr(struct hm_perfdata *pd, struct hm_pcur *c)
{
	uint32_t n = hm_pcur_u32(c);
	const char *s = hm_pcur_take(c, n);
	char *copy;
	size_t len;

	if (!s)
		return NULL;
	len = strnlen(s, n);
	copy = hm_arena_alloc(&pd->arena, len + 1);
	memcpy(copy, s, len);
	return copy;
}

int hm_pd_build_id_add(struct hm_perfdata *pd, const uint8_t *p, size_t len, int old_layout)
{
	size_t hdr = old_layout ? HM_PERF_BUILD_ID_HDR - 4 : HM_PERF_BUILD_ID_HDR;
	struct perf_event_header h;
	struct hm_perf_build_id *b;
	const uint8_t *id = p + (old_layout ? 8 : 12);
	size_t flen;

	if (len < hdr)
		return -1;
	memcpy(&h, p, sizeof(h));
	if (h.size < hdr || h.size > len)
		return -1;
	if (pd->feat.nr_build_ids == pd->cap_build_ids) {
		uint32_t cap = pd->cap_build_ids ? pd->cap_build_ids * 2 : 16;
		void *nb = realloc(pd->feat.build_ids, cap * sizeof(*b));

		if (!nb)
			return -1;
		pd->feat.build_ids = nb;
		pd->cap_build_ids = cap;
	}
	b = &pd->feat.build_ids[pd->feat.nr_build_ids++];
	memset(b, 0, sizeof(*b));
	if (!old_layout)
		memcpy(&b->pid, p + 8, 4);
	b->misc = h.misc;
	memcpy(b->id, id, 20);
	b->size = (h.misc & HM_PERF_MISC_BUILD_ID_SIZE) && id[20] <= 20 ? id[20] : 20;
	flen = strnlen((const char *)p + hdr, h.size - hdr);
	b->filename = memcpy(hm_arena_alloc(&pd->arena, flen + 1), p + hdr, flen);
	return (int)h.size;
}

static int parse_build_ids(struct hm_perfdata *pd, const uint8_t *p, size_t len)
{
	size_t off = 0;
	/* perf's 2.6.35-era files lack the pid: the first name then reads "nel.kallsyms]". */
	int old = len >= HM_PERF_BUILD_ID_HDR + 13 &&
		  !memcmp(p + HM_PERF_BUILD_ID_HDR, "nel.kallsyms]", 13);

	while (off < len) {
		int n = hm_pd_build_id_add(pd, p + off, len - off, old);

		if (n < 0)
			return -1;
		off += (size_t)n;
	}
	return 0;
}

static int parse_cmdline(struct hm_perfdata *pd, struct hm_pcur *c)
{
	uint32_t n = hm_pcur_u32(c);

	if (n > hm_pcur_left(c) / 4)
		return -1;
	pd->feat.cmdline = hm_arena_alloc(&pd->arena, (n + 1) * sizeof(char *));
	for (uint32_t i = 0; i < n; i++) {
		pd->feat.cmdline[i] = take_fstr(pd, c);
		if (!pd->feat.cmdline[i])
			return -1;
	}
	pd->feat.nr_cmdline = n;
	return 0;
}

/* nr × {attr (sz bytes), u32 nr_ids, string name, u64 ids[nr_ids]}. */
static int parse_event_desc(struct hm_perfdata *pd, struct hm_pcur *c)
{
	uint32_t nr = hm_pcur_u32(c), sz = hm_pcur_u32(c);

	if (c->bad || sz < PERF_ATTR_SIZE_VER0 || nr > hm_pcur_left(c) / sz)
		return -1;
	for (uint32_t i = 0; i < nr; i++) {
		uint32_t nr_ids;
		const char *name;
		const void *ids;
		uint64_t *copy;

		hm_pcur_take(c, sz);
		nr_ids = hm_pcur_u32(c);
		name = take_fstr(pd, c);
		if (!name || nr_ids > hm_pcur_left(c) / 8)
			return -1;
		ids = hm_pcur_take(c, (uint64_t)nr_ids * 8);
		copy = hm_arena_alloc(&pd->arena, (size_t)nr_ids * 8 + 8);
		memcpy(copy, ids, (size_t)nr_ids * 8);
		hm_pd_desc_add(pd, name, copy, nr_ids, i);
	}
	return c->bad ? -1 : 0;
}

static int parse_one(struct hm_perfdata *pd, int f, struct hm_pcur *c)
{
	struct hm_perf_features *ft = &pd->feat;

	switch (f) {
	case HM_PERF_FEAT_HOSTNAME:
		return (ft->hostname = take_fstr(pd, c)) ? 0 : -1;
	case HM_PERF_FEAT_OSRELEASE:
		return (ft->osrelease = take_fstr(pd, c)) ? 0 : -1;
	case HM_PERF_FEAT_VERSION:
		return (ft->version = take_fstr(pd, c)) ? 0 : -1;
	case HM_PERF_FEAT_ARCH:
		return (ft->arch = take_fstr(pd, c)) ? 0 : -1;
	case HM_PERF_FEAT_CPUDESC:
		return (ft->cpudesc = take_fstr(pd, c)) ? 0 : -1;
	case HM_PERF_FEAT_CPUID:
		return (ft->cpuid = take_fstr(pd, c)) ? 0 : -1;
	case HM_PERF_FEAT_NRCPUS:
		ft->nr_cpus_avail = hm_pcur_u32(c);
		ft->nr_cpus_online = hm_pcur_u32(c);
		return c->bad ? -1 : 0;
	case HM_PERF_FEAT_TOTAL_MEM:
		ft->total_mem = hm_pcur_u64(c);
		return c->bad ? -1 : 0;
	case HM_PERF_FEAT_CMDLINE:
		return parse_cmdline(pd, c);
	case HM_PERF_FEAT_EVENT_DESC:
		return parse_event_desc(pd, c);
	default:
		return 1;	/* not a feature hitmap uses: skipped */
	}
}

int hm_pd_feat_parse(struct hm_perfdata *pd, int f, const uint8_t *p, size_t len, uint64_t off,
		     struct hm_err *err)
{
	struct hm_pcur c;
	char what[64];
	int rc;

	if (f == HM_PERF_FEAT_HITMAP_KSLAB) {	/* checked where it is decoded */
		pd->feat.kslab = p;
		pd->feat.kslab_len = len;
		return 0;
	}
	if (f == HM_PERF_FEAT_HITMAP_INDEX) {	/* checked where it is used */
		pd->feat.index = p;
		pd->feat.index_len = len;
		return 0;
	}
	hm_pcur_init(&c, p, len);
	rc = f == HM_PERF_FEAT_BUILD_ID ? parse_build_ids(pd, p, len) : parse_one(pd, f, &c);
	if (rc < 0) {
		hm_pd_feat_what(f, what, sizeof(what));
		return hm_pd_corrupt(pd, off, what, err);
	}
	if (rc == 0 && f < 64)
		pd->feat.present |= 1ull << f;
	return 0;
}

void hm_pd_desc_add(struct hm_perfdata *pd, const char *name, const uint64_t *ids,
		    uint32_t nr_ids, uint32_t index)
{
	if (pd->nr_descs == pd->cap_descs) {
		uint32_t cap = pd->cap_descs ? pd->cap_descs * 2 : 8;
		void *nd = realloc(pd->descs, cap * sizeof(*pd->descs));

		if (!nd)
			return;	/* names are cosmetic: keep the default ones */
		pd->descs = nd;
		pd->cap_descs = cap;
	}
	pd->descs[pd->nr_descs++] = (struct hm_pd_desc){name, ids, nr_ids, index};
}

/* A name goes to the attr holding its first id, as perf does; without ids, by position. */
void hm_pd_apply_names(struct hm_perfdata *pd)
{
	for (uint32_t i = 0; i < pd->nr_descs; i++) {
		const struct hm_pd_desc *d = &pd->descs[i];
		struct hm_perf_attr *a = NULL;

		if (d->nr_ids && d->ids[0])
			a = hm_map64_get(&pd->id2attr, d->ids[0]);
		else if (d->index < pd->nr_attrs)
			a = pd->attrs[d->index];
		if (!a && d->nr_ids && pd->nr_attrs == 1)
			a = pd->attrs[0];
		if (a && d->name[0])
			a->name = d->name;
	}
}

static const char *const hw_names[] = {
	"cycles", "instructions", "cache-references", "cache-misses", "branches",
	"branch-misses", "bus-cycles", "stalled-cycles-frontend", "stalled-cycles-backend",
	"ref-cycles",
};

static const char *const sw_names[] = {
	"cpu-clock", "task-clock", "page-faults", "context-switches", "cpu-migrations",
	"minor-faults", "major-faults", "alignment-faults", "emulation-faults", "dummy",
	"bpf-output", "cgroup-switches",
};

/* <linux/hw_breakpoint.h> values; that header is not one this module may use. */
enum { BP_R = 1, BP_W = 2, BP_X = 4 };

#define NAMES(a, i) ((i) < sizeof(a) / sizeof(a[0]) ? a[i] : NULL)

static int base_name(const struct perf_event_attr *a, char *buf, size_t len)
{
	const char *n = NULL;

	if (a->type == PERF_TYPE_HARDWARE)
		n = NAMES(hw_names, a->config);
	else if (a->type == PERF_TYPE_SOFTWARE)
		n = NAMES(sw_names, a->config);
	if (n)
		return snprintf(buf, len, "%s", n);
	if (a->type == PERF_TYPE_BREAKPOINT)
		return snprintf(buf, len, "mem:0x%" PRIx64 ":%s%s%s", (uint64_t)a->bp_addr,
				a->bp_type & BP_R ? "r" : "",
				a->bp_type & BP_W ? "w" : "",
				a->bp_type & BP_X ? "x" : "");
	if (a->type == PERF_TYPE_RAW)
		return snprintf(buf, len, "r%" PRIx64, (uint64_t)a->config);
	if (a->type == PERF_TYPE_TRACEPOINT)
		return snprintf(buf, len, "tracepoint:%" PRIu64, (uint64_t)a->config);
	return snprintf(buf, len, "type%u/config=0x%" PRIx64 "/", a->type, (uint64_t)a->config);
}

void hm_perf_attr_default_name(const struct perf_event_attr *a, char *buf, size_t len)
{
	int n = base_name(a, buf, len);
	size_t at = n < 0 ? 0 : (size_t)n;

	if (a->type == PERF_TYPE_BREAKPOINT || at + 8 >= len)
		return;
	/* perf's modifiers: the privilege levels counted when some are excluded, then p's. */
	if (a->exclude_kernel || a->exclude_user || a->exclude_hv) {
		buf[at++] = ':';
		if (!a->exclude_user)
			buf[at++] = 'u';
		if (!a->exclude_kernel)
			buf[at++] = 'k';
		if (!a->exclude_hv)
			buf[at++] = 'h';
	} else if (a->precise_ip) {
		buf[at++] = ':';
	}
	for (unsigned i = 0; i < a->precise_ip && i < 3; i++)
		buf[at++] = 'p';
	buf[at] = 0;
}

static void build_event_desc(const struct hm_perf_attr *attrs, uint32_t nr, uint32_t attr_size,
			     struct hm_pbuf *b)
{
	hm_pbuf_u32(b, nr);
	hm_pbuf_u32(b, attr_size);
	for (uint32_t i = 0; i < nr; i++) {
		struct perf_event_attr a = attrs[i].attr;
		char name[128];

		a.size = attr_size;
		hm_pbuf_put(b, &a, attr_size);
		hm_pbuf_u32(b, attrs[i].nr_ids);
		if (!attrs[i].name)
			hm_perf_attr_default_name(&attrs[i].attr, name, sizeof(name));
		hm_pbuf_str(b, attrs[i].name ? attrs[i].name : name);
		hm_pbuf_put(b, attrs[i].ids, (size_t)attrs[i].nr_ids * 8);
	}
}

static void build_build_ids(const struct hm_perf_features *ft, struct hm_pbuf *b)
{
	for (uint32_t i = 0; i < ft->nr_build_ids; i++) {
		const struct hm_perf_build_id *bi = &ft->build_ids[i];
		const char *fn = bi->filename ? bi->filename : "";
		size_t flen = (strlen(fn) + 1 + HM_PERF_NAME_ALIGN - 1) & ~(size_t)(HM_PERF_NAME_ALIGN - 1);
		uint8_t id[24] = {0};

		memcpy(id, bi->id, bi->size <= 20 ? bi->size : 20);
		id[20] = bi->size <= 20 ? bi->size : 20;
		hm_pbuf_u32(b, HM_PERF_RECORD_HEADER_BUILD_ID);
		hm_pbuf_u16(b, bi->misc | HM_PERF_MISC_BUILD_ID_SIZE);
		hm_pbuf_u16(b, (uint16_t)(HM_PERF_BUILD_ID_HDR + flen));
		hm_pbuf_u32(b, (uint32_t)bi->pid);
		hm_pbuf_put(b, id, sizeof(id));
		hm_pbuf_put(b, fn, strlen(fn));
		hm_pbuf_zero(b, flen - strlen(fn));
	}
}

static int build_str(const char *s, struct hm_pbuf *b)
{
	if (!s)
		return 0;
	hm_pbuf_str(b, s);
	return 1;
}

static void build_str_list(struct hm_pbuf *b, const char *const *v, uint32_t n)
{
	hm_pbuf_u32(b, n);
	for (uint32_t i = 0; i < n; i++)
		hm_pbuf_str(b, v[i] ? v[i] : "");
}

static int build_cpu_topology(const struct hm_perf_topology *t, struct hm_pbuf *b)
{
	if (!t || !t->nr_cpus || !t->nr_core_sibs)
		return 0;
	build_str_list(b, t->core_sibs, t->nr_core_sibs);
	build_str_list(b, t->thread_sibs, t->nr_thread_sibs);
	for (uint32_t i = 0; i < t->nr_cpus; i++) {
		hm_pbuf_u32(b, t->core_id[i]);
		hm_pbuf_u32(b, t->socket_id[i]);
	}
	build_str_list(b, t->die_sibs, t->nr_die_sibs);
	for (uint32_t i = 0; i < t->nr_cpus; i++)
		hm_pbuf_u32(b, t->die_id[i]);
	return 1;
}

static int build_numa_topology(const struct hm_perf_topology *t, struct hm_pbuf *b)
{
	if (!t || !t->nr_nodes)
		return 0;
	hm_pbuf_u32(b, t->nr_nodes);
	for (uint32_t i = 0; i < t->nr_nodes; i++) {
		hm_pbuf_u32(b, t->nodes[i].node);
		hm_pbuf_u64(b, t->nodes[i].mem_total);
		hm_pbuf_u64(b, t->nodes[i].mem_free);
		hm_pbuf_str(b, t->nodes[i].cpus ? t->nodes[i].cpus : "");
	}
	return 1;
}

int hm_pd_feat_build(int f, const struct hm_perf_features *ft, const struct hm_perf_attr *attrs,
		     uint32_t nr_attrs, uint32_t attr_size, struct hm_pbuf *b)
{
	switch (f) {
	case HM_PERF_FEAT_EVENT_DESC:
		build_event_desc(attrs, nr_attrs, attr_size, b);
		return 1;
	case HM_PERF_FEAT_BUILD_ID:
		build_build_ids(ft, b);
		return ft->nr_build_ids > 0;
	case HM_PERF_FEAT_HOSTNAME:
		return build_str(ft->hostname, b);
	case HM_PERF_FEAT_OSRELEASE:
		return build_str(ft->osrelease, b);
	case HM_PERF_FEAT_VERSION:
		return build_str(ft->version, b);
	case HM_PERF_FEAT_ARCH:
		return build_str(ft->arch, b);
	case HM_PERF_FEAT_CPUDESC:
		return build_str(ft->cpudesc, b);
	case HM_PERF_FEAT_CPUID:
		return build_str(ft->cpuid, b);
	case HM_PERF_FEAT_NRCPUS:
		if (!ft->nr_cpus_avail && !ft->nr_cpus_online)
			return 0;
		hm_pbuf_u32(b, ft->nr_cpus_avail);
		hm_pbuf_u32(b, ft->nr_cpus_online);
		return 1;
	case HM_PERF_FEAT_TOTAL_MEM:
		if (!ft->total_mem)
			return 0;
		hm_pbuf_u64(b, ft->total_mem);
		return 1;
	case HM_PERF_FEAT_CPU_TOPOLOGY:
		return build_cpu_topology(ft->topo, b);
	case HM_PERF_FEAT_NUMA_TOPOLOGY:
		return build_numa_topology(ft->topo, b);
	case HM_PERF_FEAT_CMDLINE:
		if (!ft->nr_cmdline)
			return 0;
		hm_pbuf_u32(b, ft->nr_cmdline);
		for (uint32_t i = 0; i < ft->nr_cmdline; i++)
			hm_pbuf_str(b, ft->cmdline[i] ? ft->cmdline[i] : "");
		return 1;
	case HM_PERF_FEAT_HITMAP_KSLAB:
		if (!ft->kslab || !ft->kslab_len)
			return 0;
		hm_pbuf_put(b, ft->kslab, ft->kslab_len);
		return 1;
	default:
		return 0;
	}
}
