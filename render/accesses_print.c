/* report --view accesses (accesses_print.h): one line or object per resolved access. */
#include "render/accesses_print.h"

#include <inttypes.h>

#include "symbolize/data.h"

static const char *op_name(uint8_t op)
{
	return op == HM_OP_LOAD ? "load" : op == HM_OP_STORE ? "store" : "-";
}

void hm_accesses_begin(struct hm_accesses_out *o, FILE *out, int json, size_t top,
		       const char *input)
{
	o->out = out;
	o->json = json;
	o->top = top;
	o->seen = o->printed = 0;
	if (!json) {
		fprintf(out, "# %s: every access as resolved, in time order: time tid cpu ip "
			"function addr/size op method object@base+offset field\n", input);
		return;
	}
	hm_json_init(&o->j, out);
	hm_json_obj_begin(&o->j, NULL);
	hm_json_str(&o->j, "schema", "hitmap.accesses/1");
	hm_json_str(&o->j, "input", input);
	hm_json_arr_begin(&o->j, "accesses");
}

static void text(FILE *out, const struct hm_access *a)
{
	fprintf(out, "%" PRIu64 ".%09" PRIu64 " %u %u %#" PRIx64 " %s %#" PRIx64 "/%u %s %s",
		a->s.time / 1000000000, a->s.time % 1000000000, a->s.tid, a->s.cpu, a->s.ip,
		a->func ? a->func : "?", a->s.addr, a->s.size, op_name(a->s.op),
		hm_data_method_name(a->method));
	if (a->object)
		fprintf(out, " %s@%#" PRIx64 "+%" PRIu64, a->object, a->obj_base, a->field_off);
	else
		fputs(" -", out);
	fprintf(out, " %s", a->field ? a->field : "-");
	if (a->nr_parts)
		fprintf(out, " part %u/%u", a->part + 1, a->nr_parts);
	fputc('\n', out);
}

static void json(struct hm_json *j, const struct hm_access *a)
{
	hm_json_obj_begin(j, NULL);
	hm_json_u64(j, "time", a->s.time);
	hm_json_u64(j, "tid", a->s.tid);
	hm_json_u64(j, "cpu", a->s.cpu);
	hm_json_hex(j, "ip", a->s.ip);
	hm_json_str(j, "func", a->func);	/* null when unknown */
	hm_json_hex(j, "addr", a->s.addr);
	hm_json_u64(j, "size", a->s.size);
	hm_json_str(j, "op", op_name(a->s.op));
	hm_json_str(j, "method", hm_data_method_name(a->method));
	hm_json_str(j, "object", a->object);
	if (a->object) {
		hm_json_hex(j, "obj_base", a->obj_base);
		hm_json_u64(j, "offset", a->field_off);
	} else {
		hm_json_null(j, "obj_base");
		hm_json_null(j, "offset");
	}
	hm_json_str(j, "field", a->field);
	hm_json_u64(j, "part", a->part);
	hm_json_u64(j, "nr_parts", a->nr_parts);
	hm_json_obj_end(j);
}

void hm_accesses_add(struct hm_accesses_out *o, const struct hm_access *acc, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		o->seen++;
		if (o->top && o->printed >= o->top)
			continue;
		o->printed++;
		if (o->json)
			json(&o->j, &acc[i]);
		else
			text(o->out, &acc[i]);
	}
}

void hm_accesses_end(struct hm_accesses_out *o, uint64_t lost, const char *warning)
{
	if (!o->json)
		return;
	hm_json_arr_end(&o->j);
	hm_json_u64(&o->j, "total", o->seen);
	hm_json_u64(&o->j, "printed", o->printed);
	hm_json_u64(&o->j, "lost", lost);
	hm_json_arr_begin(&o->j, "warnings");
	if (warning)
		hm_json_str(&o->j, NULL, warning);
	hm_json_arr_end(&o->j);
	hm_json_obj_end(&o->j);
	hm_json_finish(&o->j);
}
