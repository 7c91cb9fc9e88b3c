/* Typing without DWARF: a function's extent comes from the ELF symbol table, and at its
 * first instruction each parameter sits where the SysV x86-64 ABI puts it, so BTF's
 * FUNC -> FUNC_PROTO types the argument registers there. typeinfer.c's backward walk
 * ends here when it reaches the entry of the function. */
#include "symbolize/data_int.h"

#include <stdlib.h>
#include <string.h>
#include "core/sort.h"
#include "core/oom.h"

#define ABI_NR_GP 6
#define ABI_MAX_DEPTH 8

struct ti_fsym {
	uint64_t lo, hi;		/* file addresses */
	const char *name;
};

static int cmp_fsym(const void *x, const void *y)
{
	const struct ti_fsym *a = x, *b = y;

	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

/* STT_FUNC symbols with a size, from .symtab, else .dynsym. */
static void index_fsyms(struct hm_ti *ti)
{
	Elf_Scn *scn = data_symtab_of(ti->elf, SHT_SYMTAB);
	size_t cap = 0;
	Elf_Data *data;
	GElf_Shdr sh;

	ti->fsyms_done = 1;
	if (!scn)
		scn = data_symtab_of(ti->elf, SHT_DYNSYM);
	if (!scn || !gelf_getshdr(scn, &sh) || !(data = elf_getdata(scn, NULL)))
		return;
	for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
		GElf_Sym s;
		const char *name;

		if (!gelf_getsym(data, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
		    !s.st_size || s.st_shndx == SHN_UNDEF || s.st_shndx >= SHN_LORESERVE ||
		    !(name = elf_strptr(ti->elf, sh.sh_link, s.st_name)) || !*name)
			continue;
		if (ti->nr_fsyms == cap) {
			cap = cap ? cap * 2 : 256;
			if (!(ti->fsyms = realloc(ti->fsyms, cap * sizeof(*ti->fsyms))))
				hm_oom();
		}
		ti->fsyms[ti->nr_fsyms++] = (struct ti_fsym){s.st_value, s.st_value + s.st_size,
							     name};
	}
	if (ti->nr_fsyms)
		hm_sort(ti->fsyms, ti->nr_fsyms, sizeof(*ti->fsyms), cmp_fsym);
}

void data_btf_free(struct hm_ti *ti)
{
	free(ti->fsyms);
}

int hm_ti_btf(const struct hm_ti *ti)
{
	return !ti->dw && ti->lay && hm_layout_source(ti->lay) == HM_LAYOUT_BTF;
}

/* The function symbol holding pc; of aliases at one address (memcpy, __memcpy) the one
 * BTF describes. */
void data_btf_frame(struct hm_ti *ti, struct hm_ti_frame *f, uint64_t pc)
{
	size_t lo = 0, hi, first;

	if (ti->has_code) {
		data_code_frame(ti, f, pc);
		return;
	}
	if (!ti->fsyms_done)
		index_fsyms(ti);
	hi = ti->nr_fsyms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ti->fsyms[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || pc >= ti->fsyms[lo - 1].hi)
		return;
	for (first = lo - 1; first > 0 && ti->fsyms[first - 1].lo == ti->fsyms[lo - 1].lo;)
		first--;
	f->func = ti->fsyms[lo - 1].name;
	f->lo = ti->fsyms[lo - 1].lo;
	f->hi = ti->fsyms[lo - 1].hi;
	for (size_t i = first; i < lo && ti->lay; i++)
		if (ti->fsyms[i].hi > pc && hm_layout_func_type(ti->lay, ti->fsyms[i].name)) {
			f->func = ti->fsyms[i].name;
			f->hi = ti->fsyms[i].hi;
			break;
		}
}

/* ---- SysV x86-64 argument passing ---- */

static int is_float(const struct hm_type *t)
{
	/* BTF and DWARF spell C's floating types with these words; hm_type keeps no
	 * encoding. */
	return t->kind == HM_T_BASE && t->name &&
	       (strstr(t->name, "float") || strstr(t->name, "double") ||
		strstr(t->name, "_Float"));
}

/* 1 if any scalar inside t is a floating type (its eightbyte may be SSE class). */
static int has_float(const struct hm_type *t, int depth)
{
	const struct hm_member *m;
	uint32_t n;

	t = hm_type_strip(t);
	if (!t || depth > ABI_MAX_DEPTH)
		return 1;
	if (t->kind == HM_T_ARRAY)
		return has_float(t->ref, depth + 1);
	if (!hm_type_is_aggregate(t))
		return is_float(t);
	m = hm_type_members(t, &n);
	for (uint32_t i = 0; i < n; i++)
		if (has_float(m[i].type, depth + 1))
			return 1;
	return 0;
}

enum abi_class { ABI_GP, ABI_OTHER, ABI_UNKNOWN };

/* How a value of type t travels: in *nr general registers (ABI_GP), in SSE registers or
 * memory (ABI_OTHER), or in a way this does not model (ABI_UNKNOWN: stop counting). */
static enum abi_class classify(const struct hm_type *t, int *nr)
{
	*nr = 0;
	t = hm_type_strip(t);
	if (!t)
		return ABI_UNKNOWN;
	switch (t->kind) {
	case HM_T_PTR:
	case HM_T_ENUM:
	case HM_T_FUNC:
	case HM_T_ARRAY:	/* decays to a pointer */
		*nr = 1;
		return ABI_GP;
	case HM_T_BASE:
		if (is_float(t))
			return ABI_OTHER;	/* xmm, or memory for long double */
		if (!t->size || t->size > 16)
			return ABI_UNKNOWN;
		*nr = t->size > 8 ? 2 : 1;
		return ABI_GP;
	case HM_T_STRUCT:
	case HM_T_UNION:
	case HM_T_CLASS:
		if (t->size > 16)
			return ABI_OTHER;	/* MEMORY: copied to the stack */
		if (!t->size || has_float(t, 0))
			return ABI_UNKNOWN;	/* mixed INTEGER/SSE eightbytes */
		*nr = t->size > 8 ? 2 : 1;
		return ABI_GP;
	default:
		return ABI_UNKNOWN;
	}
}

int hm_ti_param_reg(const struct hm_type *proto, uint32_t idx)
{
	static const int gp[ABI_NR_GP] = {HM_REG_DI, HM_REG_SI, HM_REG_DX,
					  HM_REG_CX, HM_REG_R8, HM_REG_R9};
	const struct hm_type *ret;
	int next = 0, nr;

	if (!proto || proto->kind != HM_T_FUNC || idx >= proto->nr_params)
		return HM_REG_NONE;
	/* A returned aggregate of class MEMORY: the caller passes its address in rdi. */
	ret = hm_type_strip(proto->ref);
	if (ret && hm_type_is_aggregate(ret) && ret->size > 16)
		next = 1;
	for (uint32_t i = 0; i <= idx; i++) {
		enum abi_class c = classify(proto->params[i], &nr);

		if (c == ABI_UNKNOWN)
			return HM_REG_NONE;
		if (c != ABI_GP || next + nr > ABI_NR_GP) {
			/* On the stack; an argument that does not fit leaves the registers
			 * to later ones. */
			if (i == idx)
				return HM_REG_NONE;
			continue;
		}
		if (i == idx)
			return nr == 1 ? gp[next] : HM_REG_NONE;
		next += nr;
	}
	return HM_REG_NONE;
}

const struct hm_type *data_btf_entry_param(struct hm_ti *ti, const struct hm_ti_frame *f,
					   int reg, uint32_t *idx)
{
	const struct hm_type *proto;

	/* foo.isra.0, foo.constprop.0, foo.part.0: clones whose parameters the compiler
	 * changed; foo.cold: not an entry. */
	if (!hm_ti_btf(ti) || !f->func || strchr(f->func, '.') ||
	    !(proto = hm_layout_func_type(ti->lay, f->func)) || proto->kind != HM_T_FUNC)
		return NULL;
	for (uint32_t i = 0; i < proto->nr_params; i++)
		if (hm_ti_param_reg(proto, i) == reg) {
			*idx = i;
			return proto->params[i];
		}
	return NULL;
}
