/* The layout API: types from DWARF (libdw) or BTF (libbpf) in one model, found by name
 * through an index built once per file, with pahole-exact member offsets, holes and
 * padding, and offset -> member path mapping for the analyzers. */
#ifndef HM_LAYOUT_H
#define HM_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "core/arena.h"
#include "core/err.h"

enum hm_tkind {
	HM_T_VOID,
	HM_T_BASE,	/* integer, float, bool */
	HM_T_ENUM,
	HM_T_PTR,
	HM_T_ARRAY,	/* one dimension; int a[2][3] is array(2) of array(3) */
	HM_T_STRUCT,
	HM_T_UNION,
	HM_T_CLASS,
	HM_T_TYPEDEF,
	HM_T_CONST,
	HM_T_VOLATILE,
	HM_T_RESTRICT,
	HM_T_ATOMIC,
	HM_T_FUNC,	/* a function prototype, seen through pointers */
	HM_T_FWD,	/* a declaration without a definition in this unit */
};

struct hm_layout;
struct hm_type;

struct hm_member {
	const char *name;		/* NULL for an anonymous member */
	const struct hm_type *type;
	uint64_t bit_offset;		/* from the start of the enclosing type */
	uint32_t bit_size;		/* non-zero for bitfields only */
	uint32_t align;			/* explicit __aligned__, 0 if none */
	uint8_t is_base;		/* C++ base class (DW_TAG_inheritance) */
};

struct hm_type {
	enum hm_tkind kind;
	const char *name;		/* NULL when anonymous */
	const char *alias;		/* anonymous aggregates: the typedef naming it
					 * (typedef struct { ... } lreg_args) */
	uint64_t size;			/* bytes; resolved through typedefs and arrays */
	uint64_t nelems;		/* arrays: elements, 0 for a flexible array */
	uint32_t align;			/* explicit __aligned__, 0 if none */
	uint8_t variadic;		/* functions */
	uint8_t flexible;		/* arrays declared [] (C99 flexible member) */
	const struct hm_type *ref;	/* pointee, element, target or return type */
	uint32_t nr_params;
	const struct hm_type **params;
	/* Aggregates only: members load on first use (hm_type_members). */
	struct hm_layout *src;
	uint64_t key;			/* DIE offset or BTF id in src */
	int loaded;
	uint8_t align_state;		/* hm_type_align's cache: 0 none, 1 busy, 2 done */
	uint32_t align_cached;
	uint32_t nr_members;
	struct hm_member *members;
};

enum hm_layout_kind { HM_LAYOUT_DWARF, HM_LAYOUT_BTF };

/* Opens an ELF file with DWARF (executable, shared object, ET_REL object or kernel
 * module with relocations applied, separate debug file). */
int hm_layout_open(const char *path, struct hm_layout **out, struct hm_err *err);
/* Opens raw BTF (e.g. /sys/kernel/btf/vmlinux) or an ELF file's .BTF section. */
int hm_layout_open_btf(const char *path, struct hm_layout **out, struct hm_err *err);
/* Raw split BTF (a module's /sys/kernel/btf/MODULE) over base, a BTF layout (vmlinux's),
 * which it borrows: close it first. It finds the module's own types; members of the
 * base's types are the base's hm_types. */
int hm_layout_open_btf_split(const char *path, struct hm_layout *base, struct hm_layout **out,
			     struct hm_err *err);
/* A BTF layout's enumerator name of enum type: 0 with *value, -1 when lay is no BTF
 * layout or has none (layouts keep no enumerators otherwise). */
int hm_layout_btf_enum(struct hm_layout *lay, const char *type, const char *name,
		       int64_t *value);
void hm_layout_close(struct hm_layout *lay);
const char *hm_layout_path(const struct hm_layout *lay);
/* One line naming what of the file could not be read (compilation units whose headers
 * libdw refuses, and every unit after them; names outside .debug_str), or NULL. Grows
 * as types are read: ask after the last lookup. What was readable is still served. */
const char *hm_layout_damage(const struct hm_layout *lay);
enum hm_layout_kind hm_layout_source(const struct hm_layout *lay);
/* ELF machine (EM_X86_64, ...) and class (ELFCLASS64) of a DWARF file; 0 for BTF. */
void hm_layout_machine(const struct hm_layout *lay, uint16_t *machine, uint8_t *elf_class);
/* Arena of the file: strings and types live as long as the layout. */
struct hm_arena *hm_layout_arena(struct hm_layout *lay);

/* Finds an aggregate by name: "foo", "struct foo", "union foo", or a typedef naming
 * one. Returns the aggregate itself (typedefs resolved), or NULL. */
/* Each anonymous struct or union that a typedef names (its alias), once. */
int hm_layout_foreach_anon(struct hm_layout *lay, int (*cb)(const struct hm_type *t, void *ctx),
			   void *ctx);
const struct hm_type *hm_layout_find(struct hm_layout *lay, const char *name);
/* The type of a global or static variable (DWARF variables, BTF VARs), or NULL. */
const struct hm_type *hm_layout_var_type(struct hm_layout *lay, const char *name);
/* The prototype (HM_T_FUNC: return type, parameters) of function name from BTF FUNC
 * entries, or NULL (DWARF layouts index no functions). */
const struct hm_type *hm_layout_func_type(struct hm_layout *lay, const char *name);
/* Calls cb for every named struct/union/class with members, each name once, in file
 * order. Stops and returns cb's value when it is non-zero. */
int hm_layout_foreach(struct hm_layout *lay, int (*cb)(const struct hm_type *t, void *ctx),
		      void *ctx);
/* Fills out with up to n known aggregate names nearest to name; returns how many. */
size_t hm_layout_suggest(struct hm_layout *lay, const char *name, const char **out, size_t n);

/* Type helpers. */
const struct hm_type *hm_type_strip(const struct hm_type *t);	/* typedefs and qualifiers */
const struct hm_type *hm_type_strip_cv(const struct hm_type *t);	/* qualifiers only */
/* C's keyword for an aggregate: "union", "class" or "struct" (anything else). */
const char *hm_type_keyword(const struct hm_type *t);
int hm_type_is_aggregate(const struct hm_type *t);
/* What a person calls an aggregate: its tag, else the typedef that names it; NULL for a
 * truly anonymous one. */
const char *hm_type_name(const struct hm_type *t);
/* The aggregate an object of type t is made of, through typedefs, qualifiers and arrays
 * (lreg_args gargs[2] -> lreg_args), with the element count in *nelems; NULL when t holds
 * no aggregate. */
const struct hm_type *hm_type_agg(const struct hm_type *t, uint64_t *nelems);
/* Type builders call this on each typedef once its target is set: a typedef of an
 * anonymous struct or union gives it its alias (the first such typedef wins). */
void hm_type_set_alias(struct hm_type *td);
uint32_t hm_type_align(const struct hm_type *t);
const struct hm_member *hm_type_members(const struct hm_type *t, uint32_t *nr);
/* "struct foo", "union bar", or the plain name; "(anonymous)" if unnamed. */
const char *hm_type_tag_name(struct hm_arena *a, const struct hm_type *t);
/* Splits a declaration pahole-style: type column ("struct foo *") and declarator
 * ("name[4]", "(*fn)(int)"). */
void hm_type_decl(struct hm_arena *a, const struct hm_type *t, const char *name,
		  const char **type_col, const char **name_col);

/* Offset -> member path. Descends nested aggregates and arrays: writes
 * "inner.pts[1].v" into buf and the byte offset within that leaf into *within.
 * Returns the leaf type, or NULL if offset is outside t or in a hole/padding (buf
 * then names the nearest preceding member, suffixed "<hole>" or "<padding>"). */
const struct hm_type *hm_layout_field_at(const struct hm_type *t, uint64_t offset, char *buf,
					 size_t len, uint64_t *within);

/* Member path -> offset: "bar.baz[3].x" inside t (anonymous members are searched
 * through). Fills the byte offset and size; 0 on success, -1 if the path names nothing. */
int hm_layout_member_offset(const struct hm_type *t, const char *path, uint64_t *offset,
			    uint64_t *size);

/* Walks leaf members (non-aggregate, or arrays of non-aggregates) depth first with
 * absolute offsets; arrays of aggregates visit element 0 only unless all_elems. */
struct hm_field {
	const char *path;		/* "outer.inner.field" */
	const struct hm_member *m;
	uint64_t bit_offset;		/* absolute, from the start of the walked type */
	uint64_t size;			/* bytes (storage unit for bitfields) */
	int depth;
};
int hm_layout_walk(const struct hm_type *t, int all_elems,
		   int (*cb)(const struct hm_field *f, void *ctx), void *ctx);

#endif
