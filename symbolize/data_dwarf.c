/* One ELF file for data symbolization: opening it through libdwfl, its bytes by file
 * address, DWARF type DIEs as struct hm_type (named aggregates from the layout API, so
 * that every module's `struct item` is the layout's one), and its variables with static
 * or thread-local storage sorted by address. */
#include "symbolize/data_int.h"
#include "symbolize/debugfile.h"
#include "symbolize/dwarf_key.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>
#include "core/file.h"
#include "core/sort.h"
#include "core/oom.h"

#define TI_MAX_DEPTH 32

static char *ti_debuginfo_path;
static const Dwfl_Callbacks ti_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = hm_find_debuginfo,	/* inflated once: debugfile.h */
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &ti_debuginfo_path,
};

static void load_sections(struct hm_ti *ti)
{
	Elf_Scn *scn = NULL;
	size_t n = 0, cap = 0;

	while ((scn = elf_nextscn(ti->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) ||
		    sh.sh_type == SHT_NOBITS || !sh.sh_size || !(data = elf_getdata(scn, NULL)) ||
		    !data->d_buf || data->d_size < sh.sh_size)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 32;
			ti->secs = realloc(ti->secs, cap * sizeof(*ti->secs));
			if (!ti->secs)
				hm_oom();
		}
		ti->secs[n++] = (struct ti_sec){sh.sh_addr, sh.sh_size, data->d_buf};
	}
	ti->nr_secs = n;
}

int hm_ti_open(const char *path, struct hm_layout *lay, struct hm_ti **out, struct hm_err *err)
{
	struct hm_ti *ti = calloc(1, sizeof(*ti));

	*out = NULL;
	if (!ti)
		return hm_err_set(err, HM_EXIT_ENV, "%s: out of memory", path);
	hm_arena_init(&ti->arena);
	hm_map64_init(&ti->types);
	hm_map64_init(&ti->frames);
	hm_map64_init(&ti->funcs);
	ti->lay = lay;
	ti->dwfl = hm_path_is_elf(path) ? dwfl_begin(&ti_callbacks) : NULL;
	ti->mod = ti->dwfl ? dwfl_report_offline(ti->dwfl, path, path, -1) : NULL;
	if (!ti->mod || dwfl_report_end(ti->dwfl, NULL, NULL) != 0 ||
	    !(ti->elf = dwfl_module_getelf(ti->mod, &ti->ebias))) {
		hm_err_set(err, HM_EXIT_INPUT, "%s: not a readable ELF file (%s): data in it "
			   "cannot be named; check the path the recording mapped",
			   path, dwfl_errmsg(-1));
		hm_ti_close(ti);
		return -1;
	}
	ti->dw = dwfl_module_getdwarf(ti->mod, &ti->dwbias);
	load_sections(ti);
	*out = ti;
	return 0;
}

void hm_ti_close(struct hm_ti *ti)
{
	if (!ti)
		return;
	hm_map64_free(&ti->types);
	hm_map64_free(&ti->frames);
	hm_map64_free(&ti->funcs);
	hm_map64_free(&ti->chunks);
	data_frame_free(ti);
	data_btf_free(ti);
	free(ti->secs);
	free(ti->statics);
	free(ti->tls_statics);
	if (ti->dwfl)
		dwfl_end(ti->dwfl);
	hm_arena_free(&ti->arena);
	free(ti);
}

int hm_ti_has_dwarf(const struct hm_ti *ti) { return ti->dw != NULL; }
Elf *hm_ti_elf(struct hm_ti *ti) { return ti->elf; }
Elf *hm_ti_debug_elf(struct hm_ti *ti) { return ti->dw ? dwarf_getelf(ti->dw) : NULL; }
struct hm_arena *hm_ti_arena(struct hm_ti *ti) { return &ti->arena; }

const uint8_t *hm_ti_bytes(struct hm_ti *ti, uint64_t vaddr, size_t *avail)
{
	if (ti->has_code)
		return data_code_bytes(ti, vaddr, avail);
	for (size_t i = 0; i < ti->nr_secs; i++) {
		const struct ti_sec *s = &ti->secs[i];

		if (vaddr >= s->addr && vaddr - s->addr < s->size) {
			*avail = (size_t)(s->size - (vaddr - s->addr));
			return s->bytes + (vaddr - s->addr);
		}
	}
	*avail = 0;
	return NULL;
}

/* ---- Type DIEs -> struct hm_type ---- */

static const struct hm_type *build(struct hm_ti *ti, Dwarf_Die *die, int depth);

static int type_ref(Dwarf_Die *die, Dwarf_Die *ref)
{
	Dwarf_Attribute attr;

	return dwarf_attr_integrate(die, DW_AT_type, &attr) && dwarf_formref_die(&attr, ref);
}

static const struct hm_type *build_ref(struct hm_ti *ti, Dwarf_Die *die, int depth)
{
	Dwarf_Die ref;

	return type_ref(die, &ref) ? build(ti, &ref, depth + 1) : NULL;
}

static uint64_t attr_u(Dwarf_Die *die, int name, uint64_t dflt)
{
	Dwarf_Attribute attr;
	Dwarf_Word w;

	if (!dwarf_attr_integrate(die, name, &attr) || dwarf_formudata(&attr, &w) != 0)
		return dflt;
	return w;
}

static struct hm_type *new_type(struct hm_ti *ti, Dwarf_Die *die, enum hm_tkind kind)
{
	struct hm_type *t = hm_arena_alloc(&ti->arena, sizeof(*t));

	t->kind = kind;
	t->name = dwarf_diename(die);
	t->size = attr_u(die, DW_AT_byte_size, 0);
	t->loaded = 1;	/* no members unless it came from the layout */
	hm_map64_put(&ti->types, hm_dwarf_key(ti->dw, die), t);
	return t;
}

/* The layout's definition of an aggregate named in this file. A same-named type of
 * another size is a different definition (another unit's private struct): not it. */
static const struct hm_type *layout_aggregate(struct hm_ti *ti, const char *kw, const char *name,
					      uint64_t size)
{
	char key[512];
	const struct hm_type *t;

	if (!ti->lay || !name)
		return NULL;
	if (kw)
		snprintf(key, sizeof(key), "%s %s", kw, name);
	t = hm_layout_find(ti->lay, kw ? key : name);
	return t && (!size || t->size == size) ? t : NULL;
}

static const struct hm_type *build_aggregate(struct hm_ti *ti, Dwarf_Die *die, int tag)
{
	const char *kw = tag == DW_TAG_union_type ? "union" :
			 tag == DW_TAG_class_type ? "class" : "struct";
	int decl = dwarf_hasattr(die, DW_AT_declaration);
	const struct hm_type *t = layout_aggregate(ti, kw, dwarf_diename(die),
						   decl ? 0 : attr_u(die, DW_AT_byte_size, 0));
	struct hm_type *nt;

	if (t) {
		hm_map64_put(&ti->types, hm_dwarf_key(ti->dw, die), (void *)t);
		return t;
	}
	nt = new_type(ti, die, tag == DW_TAG_union_type ? HM_T_UNION :
			       tag == DW_TAG_class_type ? HM_T_CLASS : HM_T_STRUCT);
	if (decl)
		nt->kind = HM_T_FWD;
	return nt;
}

static const struct hm_type *build_array(struct hm_ti *ti, Dwarf_Die *die, int depth)
{
	struct hm_type *t = new_type(ti, die, HM_T_ARRAY);
	const struct hm_type *elem = build_ref(ti, die, depth);
	uint64_t dims[8];
	int nd = 0;
	Dwarf_Die sub;

	if (dwarf_child(die, &sub) == 0)
		do {
			if (dwarf_tag(&sub) != DW_TAG_subrange_type || nd == 8)
				continue;
			if (dwarf_hasattr(&sub, DW_AT_count))
				dims[nd++] = attr_u(&sub, DW_AT_count, 0);
			else if (dwarf_hasattr(&sub, DW_AT_upper_bound)) {
				uint64_t ub = attr_u(&sub, DW_AT_upper_bound, UINT64_MAX);
				uint64_t lb = attr_u(&sub, DW_AT_lower_bound, 0);

				/* a VLA's bound is an expression: unknown, like [] */
				dims[nd++] = ub == UINT64_MAX || ub + 1 < lb ? 0 : ub + 1 - lb;
			} else
				dims[nd++] = 0;
		} while (dwarf_siblingof(&sub, &sub) == 0);
	if (!nd)
		dims[nd++] = 0;
	for (int i = nd - 1; i > 0; i--) {
		struct hm_type *a = hm_arena_alloc(&ti->arena, sizeof(*a));

		a->kind = HM_T_ARRAY;
		a->ref = elem;
		a->nelems = dims[i];
		a->size = elem ? dims[i] * elem->size : 0;
		a->loaded = 1;
		elem = a;
	}
	t->ref = elem;
	t->nelems = dims[0];
	t->flexible = dims[0] == 0;
	t->size = elem ? dims[0] * elem->size : 0;
	return t;
}

static const struct hm_type *build_typedef(struct hm_ti *ti, Dwarf_Die *die, int depth)
{
	struct hm_type *t = new_type(ti, die, HM_T_TYPEDEF);
	Dwarf_Die ref;

	/* typedef struct { ... } item_t: the layout indexes the anonymous struct under
	 * the typedef's name. */
	if (type_ref(die, &ref) && !dwarf_diename(&ref) &&
	    (dwarf_tag(&ref) == DW_TAG_structure_type || dwarf_tag(&ref) == DW_TAG_union_type))
		t->ref = layout_aggregate(ti, NULL, t->name, attr_u(&ref, DW_AT_byte_size, 0));
	if (!t->ref)
		t->ref = build_ref(ti, die, depth);
	t->size = t->ref ? t->ref->size : 0;
	hm_type_set_alias(t);
	return t;
}

static const struct hm_type *build(struct hm_ti *ti, Dwarf_Die *die, int depth)
{
	const struct hm_type *cached = hm_map64_get(&ti->types, hm_dwarf_key(ti->dw, die));
	int tag = dwarf_tag(die);
	struct hm_type *t;

	if (cached || depth > TI_MAX_DEPTH)
		return cached;
	switch (tag) {
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
	case DW_TAG_class_type:
		return build_aggregate(ti, die, tag);
	case DW_TAG_array_type:
		return build_array(ti, die, depth);
	case DW_TAG_typedef:
		return build_typedef(ti, die, depth);
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type:
		t = new_type(ti, die, HM_T_PTR);	/* in the map first: pointers cycle */
		if (!t->size)
			t->size = 8;
		t->ref = build_ref(ti, die, depth);
		return t;
	case DW_TAG_const_type:
	case DW_TAG_volatile_type:
	case DW_TAG_restrict_type:
	case DW_TAG_atomic_type:
		/* Qualifiers do not change where fields are. */
		return build_ref(ti, die, depth);
	case DW_TAG_base_type:
		return new_type(ti, die, HM_T_BASE);
	case DW_TAG_enumeration_type:
		return new_type(ti, die, HM_T_ENUM);
	case DW_TAG_subroutine_type:
		return new_type(ti, die, HM_T_FUNC);
	default:
		return NULL;
	}
}

const struct hm_type *hm_ti_type_of(struct hm_ti *ti, uint64_t die_off)
{
	Dwarf_Die die, ref;

	if (!ti->dw || !hm_dwarf_die(ti->dw, die_off, &die))
		return NULL;
	switch (dwarf_tag(&die)) {
	case DW_TAG_variable:
	case DW_TAG_formal_parameter:
	case DW_TAG_member:
		return type_ref(&die, &ref) ? build(ti, &ref, 0) : NULL;
	default:
		return build(ti, &die, 0);
	}
}

/* ---- Variables with static or thread-local storage ---- */

/* What one walk of a file's variables fills (a Dwarf and an arena as fidx_buf's in
 * data_frame.c). */
struct statics_buf {
	Dwarf *dw;
	struct hm_arena *arena;
	struct hm_ti_static *v;
	size_t n, cap;
};

static void add_static(struct statics_buf *b, Dwarf_Die *var, uint64_t addr, int tls)
{
	Dwarf_Attribute attr;
	Dwarf_Die type;
	Dwarf_Word size = 0;
	const char *name = dwarf_attr_integrate(var, DW_AT_name, &attr) ? dwarf_formstring(&attr)
									   : NULL;

	if (!name || !type_ref(var, &type))
		return;
	if (dwarf_aggregate_size(&type, &size) != 0)
		size = 1;	/* unknown (an array without bounds): its first byte at least */
	else if (!size)
		return;	/* an empty struct (lock_class_key without lockdep) holds no byte;
			 * the variable the linker put at its address does (xfsstats) */
	if (b->n == b->cap) {
		b->cap = b->cap ? b->cap * 2 : 256;
		b->v = realloc(b->v, b->cap * sizeof(*b->v));
		if (!b->v)
			hm_oom();
	}
	b->v[b->n++] = (struct hm_ti_static){
		.addr = addr, .size = size, .name = hm_arena_strdup(b->arena, name),
		.die = hm_dwarf_key(b->dw, var), .tls = (uint8_t)tls,
	};
}

static void static_var(struct statics_buf *b, Dwarf_Die *var)
{
	Dwarf_Attribute attr, addr_attr;
	Dwarf_Op *ops;
	size_t n;
	Dwarf_Addr a;

	if (!dwarf_attr(var, DW_AT_location, &attr) || dwarf_getlocation(&attr, &ops, &n) != 0)
		return;
	if (n == 1 && ops[0].atom == DW_OP_addr) {
		add_static(b, var, ops[0].number, 0);
	} else if (n == 1 && (ops[0].atom == DW_OP_addrx || ops[0].atom == DW_OP_GNU_addr_index)) {
		if (dwarf_getlocation_attr(&attr, &ops[0], &addr_attr) == 0 &&
		    dwarf_formaddr(&addr_attr, &a) == 0)
			add_static(b, var, a, 0);
	} else if (n == 2 && (ops[1].atom == DW_OP_form_tls_address ||
			      ops[1].atom == DW_OP_GNU_push_tls_address) &&
		   (ops[0].atom == DW_OP_const8u || ops[0].atom == DW_OP_const4u ||
		    ops[0].atom == DW_OP_constu || ops[0].atom == DW_OP_addr)) {
		add_static(b, var, ops[0].number, 1);
	}
}

/* Globals at the top of a unit, function-scope statics inside subprograms and blocks. */
static void scan_statics(struct statics_buf *b, Dwarf_Die *parent, int depth)
{
	Dwarf_Die c;

	if (depth > 16 || dwarf_child(parent, &c) != 0)
		return;
	do {
		switch (dwarf_tag(&c)) {
		case DW_TAG_variable:
			static_var(b, &c);
			break;
		case DW_TAG_subprogram:
		case DW_TAG_lexical_block:
		case DW_TAG_namespace:
			scan_statics(b, &c, depth + 1);
			break;
		default:
			break;
		}
	} while (dwarf_siblingof(&c, &c) == 0);
}

static int cmp_static(const void *x, const void *y)
{
	const struct hm_ti_static *a = x, *b = y;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return a->size > b->size ? -1 : a->size < b->size;	/* the enclosing one first */
}

static void statics_unit(Dwarf_Die *cu, void *arg)
{
	scan_statics(arg, cu, 0);
}

int data_statics_scan(Dwarf *dw, struct hm_arena *arena, atomic_int *stop, struct data_index *out)
{
	struct statics_buf b = {dw, arena, NULL, 0, 0};

	if (data_each_unit(dw, 0, stop, statics_unit, &b)) {
		free(b.v);
		return -1;
	}
	*out = (struct data_index){b.v, b.n};
	return 0;
}

static void index_statics(struct hm_ti *ti)
{
	struct data_index x = {0};
	struct hm_ti_static *all;
	size_t nt = 0;

	ti->statics_done = 1;
	if (!ti->dw)
		return;
	if (!data_warm_take(ti, DATA_WARM_STATICS, &x))
		data_statics_scan(ti->dw, &ti->arena, NULL, &x);
	all = x.v;
	for (size_t i = 0; i < x.n; i++)
		nt += all[i].tls;
	ti->tls_statics = nt ? malloc(nt * sizeof(*ti->tls_statics)) : NULL;
	ti->statics = x.n - nt ? malloc((x.n - nt) * sizeof(*ti->statics)) : NULL;
	for (size_t i = 0; i < x.n; i++) {
		if (all[i].tls) {
			ti->tls_statics[ti->nr_tls_statics++] = all[i];
			continue;
		}
		ti->statics[ti->nr_statics] = all[i];
		/* DWARF addresses -> the file's own (they differ for a prelinked file) */
		ti->statics[ti->nr_statics++].addr += ti->dwbias - ti->ebias;
	}
	free(all);
	if (ti->nr_statics)
		hm_sort(ti->statics, ti->nr_statics, sizeof(*ti->statics), cmp_static);
	if (ti->nr_tls_statics)
		hm_sort(ti->tls_statics, ti->nr_tls_statics, sizeof(*ti->tls_statics), cmp_static);
}

const struct hm_ti_static *hm_ti_static_at(struct hm_ti *ti, uint64_t addr, int tls)
{
	struct hm_ti_static *v, *hit = NULL;
	size_t lo = 0, hi;

	if (!ti->statics_done)
		index_statics(ti);
	v = tls ? ti->tls_statics : ti->statics;
	hi = tls ? ti->nr_tls_statics : ti->nr_statics;
	while (lo < hi) {	/* the last variable starting at or below addr */
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Walk back over variables that start at the same place or earlier and may still
	 * cover addr (an alias, or a smaller variable placed after a larger one). */
	for (size_t i = lo; i > 0 && lo - i < 8; i--)
		if (addr - v[i - 1].addr < v[i - 1].size) {
			hit = &v[i - 1];
			break;
		}
	if (hit && !hit->type)
		hit->type = hm_ti_type_of(ti, hit->die);
	return hit;
}
