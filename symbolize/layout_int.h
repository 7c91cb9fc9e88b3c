/* Private to symbolize/layout*.c: what a type source (DWARF, BTF) provides. */
#ifndef HM_LAYOUT_INT_H
#define HM_LAYOUT_INT_H

#include "core/hash.h"
#include "symbolize/layout.h"

/* One named type in the index: key is "struct foo", "union foo", "class foo" or, for
 * typedefs, "foo". ref is the source's handle (DIE offset, BTF id). */
struct hm_name_entry {
	const char *key;
	uint64_t ref;
	const struct hm_type *type;	/* converted on first lookup */
};

struct hm_layout_ops {
	/* Indexes the next chunk of the file (one compile unit); returns 1 while more
	 * remains, 0 at the end, so a lookup scans no further than it must. */
	int (*index_more)(struct hm_layout *lay);
	const struct hm_type *(*type)(struct hm_layout *lay, uint64_t ref);
	void (*load_members)(struct hm_layout *lay, struct hm_type *t);
	const struct hm_type *(*var_type)(struct hm_layout *lay, uint64_t ref);
	void (*close)(struct hm_layout *lay);
};

struct hm_layout {
	const struct hm_layout_ops *ops;
	enum hm_layout_kind kind;
	char *path;
	struct hm_arena arena;
	struct hm_hash names;		/* key -> struct hm_name_entry */
	struct hm_map64 seen;		/* (name pointer, keyword) already indexed: the
					 * string tables dedup names, so most repeats of a
					 * type in later units cost one probe */
	struct hm_name_entry **order;	/* first definition of each name, file order */
	size_t nr_order, cap_order;
	int index_done;
	uint16_t machine;		/* ELF e_machine; 0 for raw BTF */
	uint8_t elf_class;		/* ELFCLASS32/64; 0 for raw BTF */
	void *priv;
	char damage[400];		/* what of the file could not be read, or "" */
};

/* layout_units.c: 0 when libdw reads every unit of .debug_info and .debug_types; else
 * why says how many it cannot (one line), and 1 (some readable) or 2 (none). */
typedef struct Dwarf Dwarf;
int hm_dwarf_units_check(Dwarf *dw, char *why, size_t len);

void hm_layout_base_init(struct hm_layout *lay, const struct hm_layout_ops *ops,
			 enum hm_layout_kind kind, const char *path);
/* Adds a name to the index unless it is already there. kw is "struct", "union",
 * "class", "var" (a global variable: ref is its handle for ops->var_type), "func" (a
 * function: ops->var_type gives its prototype) or NULL for a typedef. */
void hm_layout_index_add(struct hm_layout *lay, const char *kw, const char *name, uint64_t ref);

#endif
