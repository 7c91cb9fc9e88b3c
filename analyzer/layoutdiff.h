/* What a change between two builds does to type layouts and cache lines: per type,
 * member moves, line changes, straddles, new line sharing, holes, and the types that
 * embed a changed type by value. */
#ifndef HM_LAYOUTDIFF_H
#define HM_LAYOUTDIFF_H

#include "symbolize/layout.h"

enum hm_fkind {
	HM_F_SIZE,
	HM_F_ALIGN,
	HM_F_LINE,	/* a member moved to another cache line */
	HM_F_STRADDLE,	/* a member now crosses a line boundary */
	HM_F_SHARED,	/* two members now share a line */
	HM_F_EMBEDS,	/* contains a changed type by value */
	HM_F_HOLE,	/* a hole appeared or grew */
	HM_F_MOVED,	/* offset changed, same line */
	HM_F_ADDED,
	HM_F_REMOVED,
	HM_F_RENAMED,
	HM_F_RETYPED,
	HM_F_UNSTRADDLE,
	HM_F_UNSHARED,
	HM_F_HOLE_GONE,
	HM_F__COUNT
};

struct hm_finding {
	enum hm_fkind kind;
	const char *member;		/* member path, NULL for type-level findings */
	const char *other;		/* shared: the other member; renamed: the old name;
					 * embeds: the embedded type */
	int64_t old_offset, new_offset;	/* bytes, -1 when absent */
	int64_t old_line, new_line;	/* -1 when absent */
	const char *detail;		/* one readable sentence */
};

struct hm_type_diff {
	const char *name;		/* "struct foo" */
	uint64_t old_size, new_size, old_align, new_align, old_lines, new_lines;
	struct hm_finding *f;
	uint32_t nr, cap;
	int64_t impact;			/* sort key: what a reviewer should read first */
};

struct hm_diff {
	struct hm_type_diff **types;	/* sorted by impact, then name */
	size_t nr, cap;
	const char **only_old, **only_new;
	size_t nr_only_old, nr_only_new;
	size_t compared;
	uint32_t line_size;
};

/* Diffs the named types (all named aggregates of old when nr_names is 0). Requested
 * names absent from both files are an error; absent from one side, they are listed in
 * only_old/only_new. */
int hm_diff_types(struct hm_arena *a, struct hm_layout *old, struct hm_layout *new,
		  const char *const *names, size_t nr_names, uint32_t line_size,
		  struct hm_diff *out, struct hm_err *err);
void hm_diff_free(struct hm_diff *d);
const char *hm_fkind_name(enum hm_fkind k);
/* Parses "straddle,shared,size,hole" into a mask of 1u << kind; -1 on an unknown word. */
int hm_fkind_mask(const char *list, unsigned *mask);

#endif
