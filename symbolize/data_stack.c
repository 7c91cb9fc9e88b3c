/* Stack addresses: the local variables and parameters of the sampled frame that live in
 * memory, at frame base + DW_OP_fbreg offset (the frame base usually being the CFA,
 * computed from the CFI rule at ip and the sampled registers) or at reg + offset. Only
 * the sampled frame: callers' frames would need the stack contents to unwind. */
#include "symbolize/data_int.h"

#include <stdio.h>

static int reg_val(const struct data_regs *r, int reg, uint64_t *v)
{
	return r->regs ? hm_decode_reg(r->mask, r->regs, reg, v) : -1;
}

static int frame_base(const struct hm_ti_frame *f, const struct data_regs *r, uint64_t *fb)
{
	uint64_t v;

	if (f->fb == HM_TI_FB_CFA && f->cfa_reg != HM_REG_NONE &&
	    reg_val(r, f->cfa_reg, &v) == 0) {
		*fb = v + (uint64_t)f->cfa_off;
		return 0;
	}
	if (f->fb == HM_TI_FB_REG && reg_val(r, f->fb_reg, &v) == 0) {
		*fb = v + (uint64_t)f->fb_off;
		return 0;
	}
	return -1;
}

int data_stack(struct hm_data *d, const struct data_image *img, uint64_t ip, uint64_t addr,
	       const struct data_regs *r, struct hm_data_obj *out)
{
	struct data_mod *m = img->mod;
	const struct hm_ti_frame *f;
	uint64_t fb = 0, v;
	int have_fb;
	char obj[512];

	data_mod_open(d, m);
	if (!m->ti || !hm_ti_has_dwarf(m->ti))
		return -1;
	f = hm_ti_frame_at(m->ti, ip - img->bias);
	if (!f->func)
		return -1;
	have_fb = frame_base(f, r, &fb) == 0;
	for (uint32_t i = 0; i < f->nr_vars; i++) {
		const struct hm_ti_var *var = &f->vars[i];
		uint64_t at;

		if (var->loc == HM_TI_LOC_FBREG && have_fb)
			at = fb + (uint64_t)var->off;
		else if (var->loc == HM_TI_LOC_MEM && reg_val(r, var->reg, &v) == 0)
			at = v + (uint64_t)var->off;
		else
			continue;
		if (addr < at || addr - at >= (var->size ? var->size : 1))
			continue;
		snprintf(obj, sizeof(obj), "%s (stack of %s)",
			 var->type ? data_type_label(d, var->type) : "?", f->func);
		out->method = HM_M_STACK;
		out->object = data_intern(d, obj);
		out->type = var->type;
		out->base = at;
		out->offset = addr - at;
		out->prefix = var->name ? var->name : "?";
		out->field = data_field(d, out->prefix, var->type, addr - at);
		out->module = m->path;
		return 0;
	}
	return -1;
}
