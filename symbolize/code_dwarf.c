/* DWARF side of a code lookup: source line (dwfl's line tables) and the inline chain.
 * dwarf_getscopes walks every top-level DIE of the unit on each call (milliseconds in a
 * kernel unit full of header types), so each unit's functions are indexed once by
 * address and a lookup walks only the scopes of the one function holding the address. */
#include "symbolize/code_int.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdlib.h>
#include <string.h>
#include "core/sort.h"
#include "core/oom.h"

#define HM_SCOPE_MAX 64

struct code_fn {
	uint64_t lo, hi;	/* one address range of the function (DWARF addresses) */
	Dwarf_Die die;
};

struct code_cu {
	struct code_fn *fns;	/* by lo */
	size_t n;
};

struct fn_buf {
	struct code_fn *v;
	size_t n, cap;
};

static void fn_push(struct fn_buf *b, uint64_t lo, uint64_t hi, Dwarf_Die *die)
{
	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 64;
		struct code_fn *v = realloc(b->v, cap * sizeof(*v));

		if (!v)
			hm_oom();
		b->v = v;
		b->cap = cap;
	}
	b->v[b->n++] = (struct code_fn){lo, hi, *die};
}

static void fns_collect(Dwarf_Die *parent, struct fn_buf *b, int depth)
{
	Dwarf_Die child;

	if (dwarf_child(parent, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);

		if (tag == DW_TAG_subprogram) {
			Dwarf_Addr base, lo, hi;
			ptrdiff_t off = 0;

			/* Several ranges when the compiler split off a cold part. */
			while ((off = dwarf_ranges(&child, off, &base, &lo, &hi)) > 0)
				if (hi > lo)
					fn_push(b, lo, hi, &child);
		} else if (tag == DW_TAG_namespace && depth < 8) {
			fns_collect(&child, b, depth + 1);
		}
	} while (dwarf_siblingof(&child, &child) == 0);
}

static int fn_cmp(const void *pa, const void *pb)
{
	const struct code_fn *a = pa, *b = pb;

	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

static struct code_cu *cu_index(struct hm_code *c, struct code_dso *d, Dwarf_Die *cudie)
{
	uint64_t key = dwarf_dieoffset(cudie) + 1;
	struct code_cu *cu = hm_map64_get(&d->cus, key);
	struct fn_buf b = {0};

	if (cu)
		return cu;
	fns_collect(cudie, &b, 0);
	hm_sort(b.v, b.n, sizeof(*b.v), fn_cmp);
	cu = hm_arena_alloc(&c->arena, sizeof(*cu));
	cu->n = b.n;
	if (b.n) {
		cu->fns = hm_arena_alloc(&c->arena, b.n * sizeof(*b.v));
		memcpy(cu->fns, b.v, b.n * sizeof(*b.v));
	}
	free(b.v);
	hm_map64_put(&d->cus, key, cu);
	return cu;
}

static const struct code_fn *fn_find(const struct code_cu *cu, uint64_t pc)
{
	size_t lo = 0, hi = cu->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cu->fns[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo, tries = 0; i > 0 && tries < 4; i--, tries++)
		if (pc < cu->fns[i - 1].hi)
			return &cu->fns[i - 1];
	return NULL;
}

/* Appends the scopes inside parent that hold pc, outermost first; returns the new
 * length. A lexical block without addresses is a container: look inside it. */
static int descend(Dwarf_Die *parent, Dwarf_Addr pc, Dwarf_Die *chain, int n)
{
	Dwarf_Die child;

	if (n >= HM_SCOPE_MAX || dwarf_child(parent, &child) != 0)
		return n;
	do {
		int tag = dwarf_tag(&child), has, m;

		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_lexical_block)
			continue;
		has = dwarf_hasattr(&child, DW_AT_low_pc) || dwarf_hasattr(&child, DW_AT_ranges);
		if (has && dwarf_haspc(&child, pc) == 1) {
			chain[n] = child;
			return descend(&chain[n], pc, chain, n + 1);
		}
		if (!has && tag == DW_TAG_lexical_block && (m = descend(&child, pc, chain, n)) > n)
			return m;
	} while (dwarf_siblingof(&child, &child) == 0);
	return n;
}

/* Innermost inlined call first, each with its call site in the scope around it. */
static void inline_chain(struct hm_code *c, Dwarf_Die *chain, int n, struct hm_code_loc *loc)
{
	struct hm_code_inline *inl;
	Dwarf_Files *files = NULL;
	Dwarf_Die cu;
	uint32_t nr = 0, k = 0;

	for (int i = 1; i < n; i++)
		nr += dwarf_tag(&chain[i]) == DW_TAG_inlined_subroutine;
	if (nr == 0)
		return;
	if (dwarf_diecu(&chain[0], &cu, NULL, NULL))
		dwarf_getsrcfiles(&cu, &files, NULL);
	inl = hm_arena_alloc(&c->arena, nr * sizeof(*inl));
	for (int i = n - 1; i > 0; i--) {
		Dwarf_Attribute a;
		Dwarf_Word w;

		if (dwarf_tag(&chain[i]) != DW_TAG_inlined_subroutine)
			continue;
		inl[k].func = dwarf_diename(&chain[i]);
		if (files && dwarf_formudata(dwarf_attr(&chain[i], DW_AT_call_file, &a), &w) == 0)
			inl[k].file = dwarf_filesrc(files, w, NULL, NULL);
		if (dwarf_formudata(dwarf_attr(&chain[i], DW_AT_call_line, &a), &w) == 0)
			inl[k].line = (int)w;
		if (dwarf_formudata(dwarf_attr(&chain[i], DW_AT_call_column, &a), &w) == 0)
			inl[k].column = (int)w;
		k++;
	}
	loc->inlines = inl;
	loc->nr_inlines = k;
}

void code_dwarf_resolve(struct hm_code *c, struct code_dso *d, uint64_t vaddr,
			struct hm_code_loc *loc)
{
	Dwfl_Line *ln = dwfl_module_getsrc(d->mod, vaddr);
	Dwarf_Die chain[HM_SCOPE_MAX], *cudie;
	const struct code_fn *fn;
	Dwarf_Addr bias = 0;
	int n;

	if (ln)
		loc->file = dwfl_lineinfo(ln, NULL, &loc->line, &loc->column, NULL, NULL);
	if (!(cudie = dwfl_module_addrdie(d->mod, vaddr, &bias)) ||
	    !(fn = fn_find(cu_index(c, d, cudie), vaddr - bias)))
		return;
	if (!loc->func && (loc->func = dwarf_diename((Dwarf_Die *)&fn->die))) {
		loc->func_start = fn->lo + bias;
		loc->func_size = fn->hi - fn->lo;
		loc->offset = vaddr - loc->func_start;
	}
	chain[0] = fn->die;
	n = descend(&chain[0], vaddr - bias, chain, 1);
	inline_chain(c, chain, n, loc);
}
