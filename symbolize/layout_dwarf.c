/* DWARF type source (libdw through libdwfl, which applies ET_REL relocations and finds
 * separate debug files by build-id or debuglink). */
#include "symbolize/layout_int.h"
#include "symbolize/debugfile.h"
#include "symbolize/dwarf_key.h"
#include "core/file.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define HM_DWARF_MAX_DEPTH 64

struct dwarf_src {
	Dwfl *dwfl;
	Dwarf *dw;
	Dwarf_CU *cu;		/* last unit indexed; NULL before the first */
	struct hm_map64 imported;	/* partial units indexed through DW_TAG_imported_unit */
	struct hm_map64 types;	/* DIE offset -> struct hm_type */
	uint32_t addr_size;
	char units_why[200];	/* units libdw cannot reach (check_units), or "" */
	uint64_t bad_names;	/* DW_AT_name present but unreadable */
	uint64_t first_bad_name; /* its DIE offset */
};

static struct dwarf_src *src_of(struct hm_layout *lay) { return lay->priv; }

static void index_imported(struct hm_layout *lay, Dwarf_Die *die, int depth);
static void update_damage(struct hm_layout *lay)
{
	const struct dwarf_src *s = src_of(lay);
	char names[160] = "";

	if (s->bad_names)
		snprintf(names, sizeof(names), "%s%" PRIu64 " names lie outside .debug_str (the "
			 "first at DIE 0x%" PRIx64 ")", s->units_why[0] ? "; " : "", s->bad_names,
			 s->first_bad_name);
	if (snprintf(lay->damage, sizeof(lay->damage), "%s: corrupt DWARF: %s%s: types there "
		     "are missing or unnamed; rebuild the file or copy it again", lay->path,
		     s->units_why, names) < 0)
		snprintf(lay->damage, sizeof(lay->damage), "%s", "corrupt DWARF");
}

/* A name attribute that does not resolve (a string offset past a shrunk .debug_str)
 * would print as a blank member name: count it. */
static const char *die_name(struct hm_layout *lay, Dwarf_Die *die)
{
	struct dwarf_src *s = src_of(lay);
	const char *n = dwarf_diename(die);
	Dwarf_Attribute a;

	if (!n && dwarf_attr_integrate(die, DW_AT_name, &a)) {
		if (!s->bad_names++)
			s->first_bad_name = dwarf_dieoffset(die);
		update_damage(lay);
	}
	return n;
}

static void index_die(struct hm_layout *lay, Dwarf_Die *die, int depth)
{
	Dwarf_Die child;
	const char *kw, *name;
	int tag = dwarf_tag(die);

	switch (tag) {
	case DW_TAG_structure_type: kw = "struct"; break;
	case DW_TAG_union_type: kw = "union"; break;
	case DW_TAG_class_type: kw = "class"; break;
	case DW_TAG_typedef: kw = NULL; break;
	case DW_TAG_variable: kw = "var"; break;
	case DW_TAG_imported_unit:
		index_imported(lay, die, depth);
		return;
	case DW_TAG_namespace:
		if (depth < 8 && dwarf_child(die, &child) == 0)
			do
				index_die(lay, &child, depth + 1);
			while (dwarf_siblingof(&child, &child) == 0);
		return;
	default:
		return;
	}
	if (!(name = die_name(lay, die)) || dwarf_hasattr(die, DW_AT_declaration))
		return;
	if (tag == DW_TAG_variable && !dwarf_hasattr(die, DW_AT_type))
		return;
	hm_layout_index_add(lay, kw, name, hm_dwarf_key(src_of(lay)->dw, die));
}

/* dwz's partial units (in this file or the alt file): their types are this unit's too. */
static void index_imported(struct hm_layout *lay, Dwarf_Die *die, int depth)
{
	struct dwarf_src *s = src_of(lay);
	Dwarf_Attribute attr;
	Dwarf_Die unit, child;
	uint64_t key;

	if (depth >= 8 || !dwarf_attr(die, DW_AT_import, &attr) || !dwarf_formref_die(&attr, &unit))
		return;
	key = hm_dwarf_key(s->dw, &unit);
	if (!(key & HM_DWARF_ALT_KEY) || hm_map64_get(&s->imported, key))
		return;	/* the main file's own partial units are indexed as units */
	hm_map64_put(&s->imported, key, s);
	if (dwarf_child(&unit, &child) == 0)
		do
			index_die(lay, &child, depth + 1);
		while (dwarf_siblingof(&child, &child) == 0);
}

static int dwarf_index_more(struct hm_layout *lay)
{
	struct dwarf_src *s = src_of(lay);
	Dwarf_CU *next;
	Dwarf_Half version;
	uint8_t unit_type;
	Dwarf_Die cudie, child;

	if (dwarf_get_units(s->dw, s->cu, &next, &version, &unit_type, &cudie, NULL) != 0)
		return 0;
	s->cu = next;
	if (dwarf_child(&cudie, &child) == 0)
		do
			index_die(lay, &child, 0);
		while (dwarf_siblingof(&child, &child) == 0);
	return 1;
}

static uint64_t attr_u(Dwarf_Die *die, int name, uint64_t dflt)
{
	Dwarf_Attribute attr;
	Dwarf_Word w;

	if (!dwarf_attr_integrate(die, name, &attr) || dwarf_formudata(&attr, &w) != 0)
		return dflt;
	return w;
}

static const struct hm_type *convert(struct hm_layout *lay, Dwarf_Off off, int depth);

static const struct hm_type *convert_ref(struct hm_layout *lay, Dwarf_Die *die, int depth)
{
	Dwarf_Attribute attr;
	Dwarf_Die ref;

	if (!dwarf_attr_integrate(die, DW_AT_type, &attr) || !dwarf_formref_die(&attr, &ref))
		return NULL;	/* void */
	return convert(lay, hm_dwarf_key(src_of(lay)->dw, &ref), depth + 1);
}

/* int a[2][3] is one DIE with two subranges; the model nests one array per dimension. */
static void convert_array(struct hm_layout *lay, Dwarf_Die *die, struct hm_type *t, int depth)
{
	uint64_t dims[16];
	int flex[16], nd = 0;
	Dwarf_Die sub;
	const struct hm_type *elem = convert_ref(lay, die, depth);

	if (dwarf_child(die, &sub) == 0)
		do {
			if (dwarf_tag(&sub) != DW_TAG_subrange_type || nd == 16)
				continue;
			flex[nd] = 0;
			if (dwarf_hasattr(&sub, DW_AT_count)) {
				dims[nd] = attr_u(&sub, DW_AT_count, 0);
			} else if (dwarf_hasattr(&sub, DW_AT_upper_bound)) {
				uint64_t ub = attr_u(&sub, DW_AT_upper_bound, (uint64_t)-1);
				uint64_t lb = attr_u(&sub, DW_AT_lower_bound, 0);

				dims[nd] = ub == (uint64_t)-1 || ub + 1 < lb ? 0 : ub + 1 - lb;
			} else {
				dims[nd] = 0;
				flex[nd] = 1;
			}
			nd++;
		} while (dwarf_siblingof(&sub, &sub) == 0);
	if (nd == 0) {
		dims[0] = 0;
		flex[0] = 1;
		nd = 1;
	}
	for (int i = nd - 1; i > 0; i--) {
		struct hm_type *a = hm_arena_alloc(&lay->arena, sizeof(*a));

		a->kind = HM_T_ARRAY;
		a->ref = elem;
		a->nelems = dims[i];
		a->flexible = (uint8_t)flex[i];
		a->size = elem ? dims[i] * elem->size : 0;
		elem = a;
	}
	t->ref = elem;
	t->nelems = dims[0];
	t->flexible = (uint8_t)flex[0];
	t->size = elem ? dims[0] * elem->size : 0;
}

static void convert_func(struct hm_layout *lay, Dwarf_Die *die, struct hm_type *t, int depth)
{
	Dwarf_Die p;
	uint32_t n = 0;

	t->ref = convert_ref(lay, die, depth);
	if (dwarf_child(die, &p) == 0)
		do
			n += dwarf_tag(&p) == DW_TAG_formal_parameter;
		while (dwarf_siblingof(&p, &p) == 0);
	t->params = hm_arena_alloc(&lay->arena, (n ? n : 1) * sizeof(*t->params));
	if (dwarf_child(die, &p) == 0)
		do {
			if (dwarf_tag(&p) == DW_TAG_formal_parameter && t->nr_params < n)
				t->params[t->nr_params++] = convert_ref(lay, &p, depth);
			else if (dwarf_tag(&p) == DW_TAG_unspecified_parameters)
				t->variadic = 1;
		} while (dwarf_siblingof(&p, &p) == 0);
}

static enum hm_tkind tag_kind(int tag)
{
	switch (tag) {
	case DW_TAG_base_type: return HM_T_BASE;
	case DW_TAG_enumeration_type: return HM_T_ENUM;
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type:
	case DW_TAG_ptr_to_member_type: return HM_T_PTR;
	case DW_TAG_array_type: return HM_T_ARRAY;
	case DW_TAG_structure_type: return HM_T_STRUCT;
	case DW_TAG_union_type: return HM_T_UNION;
	case DW_TAG_class_type: return HM_T_CLASS;
	case DW_TAG_typedef: return HM_T_TYPEDEF;
	case DW_TAG_const_type: return HM_T_CONST;
	case DW_TAG_volatile_type: return HM_T_VOLATILE;
	case DW_TAG_restrict_type: return HM_T_RESTRICT;
	case DW_TAG_atomic_type: return HM_T_ATOMIC;
	case DW_TAG_subroutine_type: return HM_T_FUNC;
	default: return HM_T_VOID;
	}
}

static const struct hm_type *convert(struct hm_layout *lay, Dwarf_Off off, int depth)
{
	struct dwarf_src *s = src_of(lay);
	struct hm_type *t = hm_map64_get(&s->types, off);
	Dwarf_Die die;
	const char *name;

	if (t)
		return t;
	t = hm_arena_alloc(&lay->arena, sizeof(*t));
	hm_map64_put(&s->types, off, t);	/* before recursing: pointers may cycle back */
	if (depth > HM_DWARF_MAX_DEPTH || !hm_dwarf_die(s->dw, off, &die))
		return t;	/* void: a chain this deep is a malformed file */
	t->kind = tag_kind(dwarf_tag(&die));
	if ((name = die_name(lay, &die)))
		t->name = name;	/* points into the mapped .debug_str, lives as long as dw */
	t->size = attr_u(&die, DW_AT_byte_size, 0);
	t->align = (uint32_t)attr_u(&die, DW_AT_alignment, 0);
	switch (t->kind) {
	case HM_T_PTR:
		if (!t->size)
			t->size = s->addr_size;
		t->ref = convert_ref(lay, &die, depth);
		break;
	case HM_T_ARRAY:
		convert_array(lay, &die, t, depth);
		break;
	case HM_T_STRUCT:
	case HM_T_UNION:
	case HM_T_CLASS:
		if (dwarf_hasattr(&die, DW_AT_declaration))
			t->kind = HM_T_FWD;
		t->src = lay;
		t->key = off;
		break;
	case HM_T_TYPEDEF:
	case HM_T_CONST:
	case HM_T_VOLATILE:
	case HM_T_RESTRICT:
	case HM_T_ATOMIC:
		t->ref = convert_ref(lay, &die, depth);
		if (!t->size && t->ref)
			t->size = t->ref->size;
		hm_type_set_alias(t);
		break;
	case HM_T_FUNC:
		convert_func(lay, &die, t, depth);
		break;
	default:
		break;
	}
	return t;
}

static const struct hm_type *dwarf_type(struct hm_layout *lay, uint64_t ref)
{
	return convert(lay, ref, 0);
}

/* DW_AT_data_member_location is a constant in DWARF 3+, an expression before. */
static uint64_t member_location(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	Dwarf_Op *ops;
	size_t nops;
	Dwarf_Word w;

	if (!dwarf_attr(die, DW_AT_data_member_location, &attr))
		return 0;
	if (dwarf_formudata(&attr, &w) == 0)
		return w;
	if (dwarf_getlocation(&attr, &ops, &nops) == 0 && nops == 1 &&
	    ops[0].atom == DW_OP_plus_uconst)
		return ops[0].number;
	return 0;
}

static void fill_member(struct hm_layout *lay, Dwarf_Die *die, struct hm_member *m)
{
	uint64_t byte_off = member_location(die);

	m->name = die_name(lay, die);
	m->type = convert_ref(lay, die, 0);
	m->align = (uint32_t)attr_u(die, DW_AT_alignment, 0);
	m->is_base = dwarf_tag(die) == DW_TAG_inheritance;
	m->bit_size = (uint32_t)attr_u(die, DW_AT_bit_size, 0);
	if (dwarf_hasattr(die, DW_AT_data_bit_offset)) {
		m->bit_offset = attr_u(die, DW_AT_data_bit_offset, 0);
	} else if (m->bit_size && dwarf_hasattr(die, DW_AT_bit_offset)) {
		/* DWARF 2/3 counts from the storage unit's most significant bit. */
		uint64_t unit = attr_u(die, DW_AT_byte_size, m->type ? m->type->size : 0);
		uint64_t msb = attr_u(die, DW_AT_bit_offset, 0);

		m->bit_offset = byte_off * 8 + unit * 8 - msb - m->bit_size;
	} else {
		m->bit_offset = byte_off * 8;
	}
}

static void dwarf_load_members(struct hm_layout *lay, struct hm_type *t)
{
	struct dwarf_src *s = src_of(lay);
	Dwarf_Die die, c;
	uint32_t n = 0;

	if (!hm_dwarf_die(s->dw, t->key, &die) || dwarf_child(&die, &c) != 0)
		return;
	do
		n += dwarf_tag(&c) == DW_TAG_member || dwarf_tag(&c) == DW_TAG_inheritance;
	while (dwarf_siblingof(&c, &c) == 0);
	if (!n)
		return;
	t->members = hm_arena_alloc(&lay->arena, n * sizeof(*t->members));
	dwarf_child(&die, &c);
	do {
		int tag = dwarf_tag(&c);

		/* C++ static members are DW_TAG_member with DW_AT_external or no location
		 * in a struct; they take no space. */
		if ((tag != DW_TAG_member && tag != DW_TAG_inheritance) || t->nr_members == n)
			continue;
		if (tag == DW_TAG_member && t->kind != HM_T_UNION &&
		    (dwarf_hasattr(&c, DW_AT_external) || dwarf_hasattr(&c, DW_AT_declaration)))
			continue;
		fill_member(lay, &c, &t->members[t->nr_members++]);
	} while (dwarf_siblingof(&c, &c) == 0);
}

static const struct hm_type *dwarf_var_type(struct hm_layout *lay, uint64_t ref)
{
	Dwarf_Die die;

	if (!hm_dwarf_die(src_of(lay)->dw, ref, &die))
		return NULL;
	return convert_ref(lay, &die, 0);
}

static void dwarf_close(struct hm_layout *lay)
{
	struct dwarf_src *s = src_of(lay);

	if (!s)
		return;
	hm_map64_free(&s->types);
	hm_map64_free(&s->imported);
	if (s->dwfl)
		dwfl_end(s->dwfl);
	free(s);
}

static const struct hm_layout_ops dwarf_ops = {
	.index_more = dwarf_index_more,
	.type = dwarf_type,
	.load_members = dwarf_load_members,
	.var_type = dwarf_var_type,
	.close = dwarf_close,
};

static char *debuginfo_path;
static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = hm_find_debuginfo,	/* inflated once: debugfile.h */
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

/* The byte past the end of the section headers and of every section with contents;
 * a file shorter than that was cut short. */
static uint64_t elf_extent(Elf *elf)
{
	GElf_Ehdr eh;
	Elf_Scn *scn = NULL;
	uint64_t end;

	if (!gelf_getehdr(elf, &eh))
		return UINT64_MAX;
	end = eh.e_shoff + (uint64_t)eh.e_shnum * eh.e_shentsize;
	if (eh.e_phoff + (uint64_t)eh.e_phnum * eh.e_phentsize > end)
		end = eh.e_phoff + (uint64_t)eh.e_phnum * eh.e_phentsize;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS &&
		    sh.sh_offset + sh.sh_size > end)
			end = sh.sh_offset + sh.sh_size;
	}
	return end;
}

static const char *fmt_bytes(char *buf, size_t len, uint64_t n)
{
	snprintf(buf, len, "%llu bytes", (unsigned long long)n);
	return buf;
}

/* Checks the file before libdwfl sees it, so each bad input gets its own message. */
static int check_elf_file(const char *path, struct hm_err *err)
{
	unsigned char magic[4];
	int fd = hm_file_open(path);
	struct stat st;
	Elf *elf;
	uint64_t need;
	char numbuf[32];
	ssize_t n;

	if (fd < 0)
		return hm_err_set(err, HM_EXIT_INPUT, "%s: %s%s", path, hm_file_strerror(errno),
				  errno == EACCES ? " (run as root or fix its permissions)" : "");
	n = read(fd, magic, sizeof(magic));
	if (n != 4 || memcmp(magic, "\177ELF", 4) != 0 || fstat(fd, &st) != 0) {
		close(fd);
		return hm_err_set(err, HM_EXIT_INPUT,
				  "%s: not an ELF file: give an executable, shared object, .o, .ko "
				  "or separate debug file (for raw BTF use --btf %s)", path, path);
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	need = elf ? elf_extent(elf) : UINT64_MAX;
	elf_end(elf);
	close(fd);
	if (need > (uint64_t)st.st_size)
		return hm_err_set(err, HM_EXIT_INPUT,
				  "%s: truncated or corrupt ELF (%lld bytes, its headers need %s): "
				  "copy or rebuild the file", path, (long long)st.st_size,
				  need == UINT64_MAX ? "a valid ELF header"
						     : fmt_bytes(numbuf, sizeof(numbuf), need));
	return 0;
}

/* Unit headers libdw refuses: named in the damage line; all of them is an error. */
static int check_units(struct hm_layout *lay, struct hm_err *err)
{
	struct dwarf_src *s = src_of(lay);
	int rc = hm_dwarf_units_check(s->dw, s->units_why, sizeof(s->units_why));

	if (rc == 0)
		return 0;
	update_damage(lay);
	if (rc == 2)
		return hm_err_set(err, HM_EXIT_INPUT, "%s", lay->damage);
	return 0;
}

static int no_dwarf_error(Dwfl_Module *mod, const char *path, struct hm_err *err)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	char id[81] = "";
	int n = dwfl_module_build_id(mod, &bits, &vaddr);

	for (int i = 0; i < n && i < 40; i++)
		snprintf(id + 2 * i, sizeof(id) - 2 * (size_t)i, "%02x", bits[i]);
	return hm_err_set(err, HM_EXIT_INPUT,
			  "%s: no DWARF debug info (stripped): install its -dbg/-dbgsym package "
			  "or the file under /usr/lib/debug/.build-id/%.2s/%s.debug, set "
			  "DEBUGINFOD_URLS to fetch build-id %s, or use --btf for a kernel",
			  path, id[0] ? id : "??", id[0] ? id + 2 : "<build-id>",
			  id[0] ? id : "(none)");
}

int hm_layout_open(const char *path, struct hm_layout **out, struct hm_err *err)
{
	struct hm_layout *lay;
	struct dwarf_src *s;
	Dwfl_Module *mod;
	Dwarf_Addr bias;

	*out = NULL;
	if (check_elf_file(path, err))
		return -1;
	lay = malloc(sizeof(*lay));
	s = calloc(1, sizeof(*s));
	if (!lay || !s) {
		free(lay);
		free(s);
		return hm_err_set(err, HM_EXIT_ENV, "%s: out of memory", path);
	}
	hm_layout_base_init(lay, &dwarf_ops, HM_LAYOUT_DWARF, path);
	lay->priv = s;
	hm_map64_init(&s->types);
	hm_map64_init(&s->imported);
	s->dwfl = dwfl_begin(&offline_callbacks);
	mod = s->dwfl ? dwfl_report_offline(s->dwfl, path, path, -1) : NULL;
	if (!mod) {
		hm_err_set(err, HM_EXIT_INPUT, "%s: unreadable ELF (%s): the file is truncated or "
			   "corrupt; copy it again or rebuild it", path, dwfl_errmsg(-1));
		hm_layout_close(lay);
		return -1;
	}
	dwfl_report_end(s->dwfl, NULL, NULL);
	s->dw = dwfl_module_getdwarf(mod, &bias);
	if (!s->dw) {
		no_dwarf_error(mod, path, err);
		hm_layout_close(lay);
		return -1;
	}
	if (check_units(lay, err)) {
		hm_layout_close(lay);
		return -1;
	}
	{
		Elf *elf = dwarf_getelf(s->dw);
		GElf_Ehdr eh;

		s->addr_size = 8;
		if (elf && gelf_getehdr(elf, &eh)) {
			lay->machine = eh.e_machine;
			lay->elf_class = eh.e_ident[EI_CLASS];
			if (eh.e_ident[EI_CLASS] == ELFCLASS32)
				s->addr_size = 4;
		}
	}
	*out = lay;
	return 0;
}
