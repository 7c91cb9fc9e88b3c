/* PERF_RECORD_SAMPLE bodies and sample_id_all trailers, both directions. The field order is
 * the kernel's (perf_output_sample in kernel/events/core.c), which the uapi header documents. */
#include "core/perfdata_int.h"
#include "core/zero.h"

#define ST(bit) (t & PERF_SAMPLE_##bit)

int hm_pd_id_pos(uint64_t t)
{
	if (ST(IDENTIFIER))
		return 0;
	if (!ST(ID))
		return -1;
	return !!ST(IP) + !!ST(TID) + !!ST(TIME) + !!ST(ADDR);
}

int hm_pd_is_pos(uint64_t t)
{
	if (ST(IDENTIFIER))
		return 1;
	if (!ST(ID))
		return -1;
	return 1 + !!ST(CPU) + !!ST(STREAM_ID);
}

/* n elements of `width` u64s each; the record copy is 8-aligned, so is every array in it. */
static const uint64_t *take_u64s(struct hm_pcur *c, uint64_t n, unsigned width)
{
	const uint64_t *p;

	if (n > hm_pcur_left(c) / 8 / width) {
		c->bad = 1;
		return NULL;
	}
	p = hm_pcur_take(c, n * 8 * width);
	if (p && ((uintptr_t)p & 7))
		c->bad = 1;
	return p;
}

static void decode_head(uint64_t t, struct hm_pcur *c, struct hm_perf_sample *s)
{
	if (ST(IDENTIFIER))
		s->id = hm_pcur_u64(c);
	if (ST(IP))
		s->ip = hm_pcur_u64(c);
	if (ST(TID)) {
		s->pid = hm_pcur_u32(c);
		s->tid = hm_pcur_u32(c);
	}
	if (ST(TIME))
		s->time = hm_pcur_u64(c);
	if (ST(ADDR))
		s->addr = hm_pcur_u64(c);
	if (ST(ID))
		s->id = hm_pcur_u64(c);
	if (ST(STREAM_ID))
		s->stream_id = hm_pcur_u64(c);
	if (ST(CPU)) {
		s->cpu = hm_pcur_u32(c);
		hm_pcur_u32(c);
	}
	if (ST(PERIOD))
		s->period = hm_pcur_u64(c);
}

static unsigned read_stride(uint64_t fmt)
{
	return 1 + !!(fmt & PERF_FORMAT_ID) + !!(fmt & PERF_FORMAT_LOST);
}

static void decode_read(uint64_t fmt, struct hm_pcur *c, struct hm_perf_read *r)
{
	if (fmt & PERF_FORMAT_GROUP)
		r->nr = hm_pcur_u64(c);
	else
		r->value = hm_pcur_u64(c);
	if (fmt & PERF_FORMAT_TOTAL_TIME_ENABLED)
		r->time_enabled = hm_pcur_u64(c);
	if (fmt & PERF_FORMAT_TOTAL_TIME_RUNNING)
		r->time_running = hm_pcur_u64(c);
	if (fmt & PERF_FORMAT_GROUP) {
		r->values = take_u64s(c, r->nr, read_stride(fmt));
		return;
	}
	if (fmt & PERF_FORMAT_ID)
		r->id = hm_pcur_u64(c);
	if (fmt & PERF_FORMAT_LOST)
		r->lost = hm_pcur_u64(c);
}

static void decode_arrays(const struct perf_event_attr *a, struct hm_pcur *c,
			  struct hm_perf_sample *s)
{
	uint64_t t = a->sample_type;

	if (ST(CALLCHAIN)) {
		s->nr_callchain = hm_pcur_u64(c);
		s->callchain = take_u64s(c, s->nr_callchain, 1);
	}
	if (ST(RAW)) {
		s->raw_size = hm_pcur_u32(c);
		s->raw = hm_pcur_take(c, s->raw_size);
		/* The kernel pads size+data to 8 bytes; later arrays rely on that alignment. */
		if ((s->raw_size + 4) % 8)
			c->bad = 1;
	}
	if (ST(BRANCH_STACK)) {
		s->nr_branch = hm_pcur_u64(c);
		if (a->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX)
			s->branch_hw_idx = hm_pcur_u64(c);
		s->branch = (const void *)take_u64s(c, s->nr_branch, 3);
		if (a->branch_sample_type & HM_PERF_SAMPLE_BRANCH_COUNTERS)
			s->branch_counters = take_u64s(c, s->nr_branch, 1);
	}
}

static void decode_regs(struct hm_pcur *c, uint64_t mask, struct hm_perf_regs *r)
{
	r->abi = hm_pcur_u64(c);
	r->mask = mask;
	if (r->abi == PERF_SAMPLE_REGS_ABI_NONE)
		return;
	r->nr = (uint32_t)__builtin_popcountll(mask);
	r->regs = take_u64s(c, r->nr, 1);
}

static void decode_tail(const struct perf_event_attr *a, struct hm_pcur *c,
			struct hm_perf_sample *s)
{
	uint64_t t = a->sample_type;

	if (ST(REGS_USER))
		decode_regs(c, a->sample_regs_user, &s->regs_user);
	if (ST(STACK_USER)) {
		s->stack_size = hm_pcur_u64(c);
		if (s->stack_size) {
			s->stack = take_u64s(c, s->stack_size / 8, 1);
			if (s->stack_size % 8)
				c->bad = 1;
			s->stack_dyn_size = hm_pcur_u64(c);
		}
	}
	if (t & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)) {
		s->weight = hm_pcur_u64(c);
		s->weight_var1 = (uint32_t)s->weight;
		s->weight_var2 = (uint16_t)(s->weight >> 32);
		s->weight_var3 = (uint16_t)(s->weight >> 48);
	}
	if (ST(DATA_SRC))
		s->data_src = hm_pcur_u64(c);
	if (ST(TRANSACTION))
		s->transaction = hm_pcur_u64(c);
	if (ST(REGS_INTR))
		decode_regs(c, a->sample_regs_intr, &s->regs_intr);
	if (ST(PHYS_ADDR))
		s->phys_addr = hm_pcur_u64(c);
	if (ST(CGROUP))
		s->cgroup = hm_pcur_u64(c);
	if (ST(DATA_PAGE_SIZE))
		s->data_page_size = hm_pcur_u64(c);
	if (ST(CODE_PAGE_SIZE))
		s->code_page_size = hm_pcur_u64(c);
	if (ST(AUX)) {
		s->aux_size = hm_pcur_u64(c);
		s->aux = take_u64s(c, s->aux_size / 8, 1);
		if (s->aux_size % 8)
			c->bad = 1;
	}
}

int hm_pd_decode_sample(const struct hm_perf_attr *pa, const uint8_t *rec, size_t size,
			struct hm_perf_sample *s)
{
	const struct perf_event_attr *a = &pa->attr;
	struct hm_pcur c;

	hm_zero(s, sizeof(*s));	/* not one rep stos: core/zero.h */
	if (a->sample_type & ~(uint64_t)(PERF_SAMPLE_MAX - 1))
		return -2;
	hm_pcur_init(&c, rec + sizeof(struct perf_event_header),
		     size - sizeof(struct perf_event_header));
	decode_head(a->sample_type, &c, s);
	if (a->sample_type & PERF_SAMPLE_READ)
		decode_read(a->read_format, &c, &s->read);
	decode_arrays(a, &c, s);
	decode_tail(a, &c, s);
	if (c.bad)
		return -1;
	/* The kernel writes exactly the fields of sample_type (RAW padded to 8 bytes): bytes
	 * left over mean the attr does not describe the records, and every field after
	 * the first difference was read from the wrong offset. */
	return hm_pcur_left(&c) ? -3 : 0;
}

size_t hm_pd_sid_size(const struct perf_event_attr *a)
{
	uint64_t t = a->sample_type;

	if (!a->sample_id_all)
		return 0;
	return 8 * (size_t)(!!ST(TID) + !!ST(TIME) + !!ST(ID) + !!ST(STREAM_ID) + !!ST(CPU) +
			    !!ST(IDENTIFIER));
}

/* p holds hm_pd_sid_size(a) bytes; the caller checked that. */
void hm_pd_decode_sid(const struct perf_event_attr *a, const uint8_t *p,
		      struct hm_perf_sample_id *sid)
{
	uint64_t t = a->sample_type;
	struct hm_pcur c;

	memset(sid, 0, sizeof(*sid));
	hm_pcur_init(&c, p, hm_pd_sid_size(a));
	if (ST(TID)) {
		sid->pid = hm_pcur_u32(&c);
		sid->tid = hm_pcur_u32(&c);
	}
	if (ST(TIME))
		sid->time = hm_pcur_u64(&c);
	if (ST(ID))
		sid->id = hm_pcur_u64(&c);
	if (ST(STREAM_ID))
		sid->stream_id = hm_pcur_u64(&c);
	if (ST(CPU)) {
		sid->cpu = hm_pcur_u32(&c);
		hm_pcur_u32(&c);
	}
	if (ST(IDENTIFIER))
		sid->id = hm_pcur_u64(&c);
}

void hm_pd_encode_sid(const struct perf_event_attr *a, const struct hm_perf_sample_id *sid,
		      uint64_t id, struct hm_pbuf *b)
{
	uint64_t t = a->sample_type;

	if (!a->sample_id_all)
		return;
	if (ST(TID)) {
		hm_pbuf_u32(b, sid->pid);
		hm_pbuf_u32(b, sid->tid);
	}
	if (ST(TIME))
		hm_pbuf_u64(b, sid->time);
	if (ST(ID))
		hm_pbuf_u64(b, id);
	if (ST(STREAM_ID))
		hm_pbuf_u64(b, sid->stream_id);
	if (ST(CPU)) {
		hm_pbuf_u32(b, sid->cpu);
		hm_pbuf_u32(b, 0);
	}
	if (ST(IDENTIFIER))
		hm_pbuf_u64(b, id);
}

/* n u64s from src, or zeros when the caller gave none. */
static void put_u64s(struct hm_pbuf *b, const void *src, uint64_t n)
{
	if (src)
		hm_pbuf_put(b, src, n * 8);
	else
		hm_pbuf_zero(b, n * 8);
}

static void encode_head(uint64_t t, const struct hm_perf_sample *s, uint64_t id,
			struct hm_pbuf *b)
{
	if (ST(IDENTIFIER))
		hm_pbuf_u64(b, id);
	if (ST(IP))
		hm_pbuf_u64(b, s->ip);
	if (ST(TID)) {
		hm_pbuf_u32(b, s->pid);
		hm_pbuf_u32(b, s->tid);
	}
	if (ST(TIME))
		hm_pbuf_u64(b, s->time);
	if (ST(ADDR))
		hm_pbuf_u64(b, s->addr);
	if (ST(ID))
		hm_pbuf_u64(b, id);
	if (ST(STREAM_ID))
		hm_pbuf_u64(b, s->stream_id);
	if (ST(CPU)) {
		hm_pbuf_u32(b, s->cpu);
		hm_pbuf_u32(b, 0);
	}
	if (ST(PERIOD))
		hm_pbuf_u64(b, s->period);
}

static void encode_read(uint64_t fmt, const struct hm_perf_read *r, struct hm_pbuf *b)
{
	hm_pbuf_u64(b, fmt & PERF_FORMAT_GROUP ? r->nr : r->value);
	if (fmt & PERF_FORMAT_TOTAL_TIME_ENABLED)
		hm_pbuf_u64(b, r->time_enabled);
	if (fmt & PERF_FORMAT_TOTAL_TIME_RUNNING)
		hm_pbuf_u64(b, r->time_running);
	if (fmt & PERF_FORMAT_GROUP) {
		put_u64s(b, r->values, r->nr * read_stride(fmt));
		return;
	}
	if (fmt & PERF_FORMAT_ID)
		hm_pbuf_u64(b, r->id);
	if (fmt & PERF_FORMAT_LOST)
		hm_pbuf_u64(b, r->lost);
}

static void encode_arrays(const struct perf_event_attr *a, const struct hm_perf_sample *s,
			  struct hm_pbuf *b)
{
	uint64_t t = a->sample_type;

	if (ST(CALLCHAIN)) {
		hm_pbuf_u64(b, s->nr_callchain);
		put_u64s(b, s->callchain, s->nr_callchain);
	}
	if (ST(RAW)) {
		uint32_t padded = ((s->raw_size + 4 + 7) & ~7u) - 4;

		hm_pbuf_u32(b, padded);
		if (s->raw)
			hm_pbuf_put(b, s->raw, s->raw_size);
		else
			hm_pbuf_zero(b, s->raw_size);
		hm_pbuf_zero(b, padded - s->raw_size);
	}
	if (ST(BRANCH_STACK)) {
		hm_pbuf_u64(b, s->nr_branch);
		if (a->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX)
			hm_pbuf_u64(b, s->branch_hw_idx);
		put_u64s(b, s->branch, s->nr_branch * 3);
		if (a->branch_sample_type & HM_PERF_SAMPLE_BRANCH_COUNTERS)
			put_u64s(b, s->branch_counters, s->nr_branch);
	}
}

static void encode_regs(const struct hm_perf_regs *r, uint64_t mask, struct hm_pbuf *b)
{
	hm_pbuf_u64(b, r->abi);
	if (r->abi != PERF_SAMPLE_REGS_ABI_NONE)
		put_u64s(b, r->regs, (uint64_t)__builtin_popcountll(mask));
}

static void encode_blob(uint64_t size, const void *data, struct hm_pbuf *b)
{
	uint64_t padded = (size + 7) & ~7ull;

	hm_pbuf_u64(b, padded);
	if (data)
		hm_pbuf_put(b, data, size);
	else
		hm_pbuf_zero(b, size);
	hm_pbuf_zero(b, padded - size);
}

static void encode_tail(const struct perf_event_attr *a, const struct hm_perf_sample *s,
			struct hm_pbuf *b)
{
	uint64_t t = a->sample_type;

	if (ST(REGS_USER))
		encode_regs(&s->regs_user, a->sample_regs_user, b);
	if (ST(STACK_USER)) {
		encode_blob(s->stack_size, s->stack, b);
		if (s->stack_size)
			hm_pbuf_u64(b, s->stack_dyn_size);
	}
	if (t & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT))
		hm_pbuf_u64(b, s->weight);
	if (ST(DATA_SRC))
		hm_pbuf_u64(b, s->data_src);
	if (ST(TRANSACTION))
		hm_pbuf_u64(b, s->transaction);
	if (ST(REGS_INTR))
		encode_regs(&s->regs_intr, a->sample_regs_intr, b);
	if (ST(PHYS_ADDR))
		hm_pbuf_u64(b, s->phys_addr);
	if (ST(CGROUP))
		hm_pbuf_u64(b, s->cgroup);
	if (ST(DATA_PAGE_SIZE))
		hm_pbuf_u64(b, s->data_page_size);
	if (ST(CODE_PAGE_SIZE))
		hm_pbuf_u64(b, s->code_page_size);
	if (ST(AUX))
		encode_blob(s->aux_size, s->aux, b);
}

void hm_pd_encode_sample(const struct perf_event_attr *a, const struct hm_perf_sample *s,
			 uint64_t id, struct hm_pbuf *b)
{
	encode_head(a->sample_type, s, id, b);
	if (a->sample_type & PERF_SAMPLE_READ)
		encode_read(a->read_format, &s->read, b);
	encode_arrays(a, s, b);
	encode_tail(a, s, b);
}

uint64_t hm_perf_sample_weight(const struct hm_perf_event *ev)
{
	if (ev->attr && (ev->attr->attr.sample_type & PERF_SAMPLE_WEIGHT_STRUCT))
		return (uint32_t)ev->sample.weight;	/* var1_dw */
	return ev->sample.weight;
}

void hm_perfdata_to_sample(const struct hm_perf_event *ev, enum hm_source source,
			   struct hm_sample *out)
{
	const struct hm_perf_sample *s = &ev->sample;
	uint64_t t = ev->attr ? ev->attr->attr.sample_type : 0;
	uint64_t w = ST(WEIGHT) || ST(WEIGHT_STRUCT) ? hm_perf_sample_weight(ev) : s->period;
	uint16_t mode = ev->misc & PERF_RECORD_MISC_CPUMODE_MASK;
	union perf_mem_data_src ds = {.val = s->data_src};

	memset(out, 0, sizeof(*out));
	out->time = s->time;
	out->ip = s->ip;
	out->addr = s->addr;
	out->phys = s->phys_addr;
	out->pid = s->pid;
	out->tid = s->tid;
	out->cpu = s->cpu;
	out->weight = w > UINT32_MAX ? UINT32_MAX : (uint32_t)w;
	out->data_src = s->data_src;
	if (ST(DATA_SRC) && (ds.mem_op & PERF_MEM_OP_LOAD))
		out->op = HM_OP_LOAD;
	else if (ST(DATA_SRC) && (ds.mem_op & PERF_MEM_OP_STORE))
		out->op = HM_OP_STORE;
	out->source = (uint8_t)source;
	out->kernel = mode == PERF_RECORD_MISC_KERNEL || mode == PERF_RECORD_MISC_GUEST_KERNEL;
}
