/* The one-sentence fix of a shared line, from its top pair's rows: which member to move
 * or pad, which type or object to align (sharing.c decides the verdict; fixcheck.c
 * replays the fix before it is printed). */
#include "analyzer/sharing_fix.h"

#include <inttypes.h>
#include <string.h>

const char *hm_sharing_fix_true(struct hm_arena *a, const struct hm_line *ln,
			    const struct hm_pair *p, uint32_t line_size)
{
	const struct hm_lfield *fa = &ln->fields[p->a], *fb = &ln->fields[p->b];
	const char *what = p->a == p->b || strcmp(fa->field, fb->field) == 0
				   ? fa->field
				   : hm_arena_printf(a, "%s and %s", fa->field, fb->field);

	return hm_arena_printf(a,
			       "threads %u and %u both use %s and one writes it: give each "
			       "thread its own copy (per-thread or per-CPU, each on its own "
			       "%u-byte line) and combine the copies when read, or batch the "
			       "updates so the shared copy is written less often",
			       p->tid_a, p->tid_b, what, line_size);
}

/* The two rows live in one object: move the later member past the next line boundary,
 * counted from the object's start (an aligned object puts that boundary on a line). */
static const char *fix_same_object(struct hm_arena *a, const struct hm_lfield *first,
				   const struct hm_lfield *mover, uint32_t L)
{
	uint64_t in_line = mover->field_off % L;
	uint64_t misalign = mover->obj_base % L;

	if (!in_line)
		return hm_arena_printf(a,
				       "align %s to %u (__attribute__((aligned(%u)))): it starts "
				       "%" PRIu64 " bytes into a cache line, so %s and %s share one",
				       mover->object, L, L, misalign, first->field, mover->field);
	if (!misalign)
		return hm_arena_printf(a,
				       "move %s to its own cache line: insert %" PRIu64 " bytes "
				       "of padding before it, or align it to %u "
				       "(__attribute__((aligned(%u))))",
				       mover->field, L - in_line, L, L);
	return hm_arena_printf(a,
			       "move %s to its own cache line: insert %" PRIu64 " bytes of "
			       "padding before it, or align it to %u (__attribute__((aligned(%u)))); "
			       "%s starts %" PRIu64 " bytes into a line here, so align it to %u too",
			       mover->field, L - in_line, L, L, mover->object, misalign, L);
}

/* Two objects (or two elements of an array) on one line. */
static const char *fix_two_objects(struct hm_arena *a, const struct hm_lfield *first,
				   const struct hm_lfield *mover, uint32_t L)
{
	const struct hm_type *t = mover->type;

	if (first->object && mover->object && strcmp(first->object, mover->object) == 0 &&
	    t && t->size && t->size < L)
		return hm_arena_printf(a,
				       "give each %s its own cache line: align the type to %u "
				       "(__attribute__((aligned(%u)))) or pad it from %" PRIu64
				       " to %u bytes",
				       mover->object, L, L, t->size, L);
	if (first->object && mover->object && strcmp(first->object, mover->object) == 0)
		return hm_arena_printf(a,
				       "give each %s its own cache line: align it to %u "
				       "(__attribute__((aligned(%u)))) so that instances used by "
				       "different threads do not share one",
				       mover->object, L, L);
	return hm_arena_printf(a,
			       "move %s to its own cache line: align %s to %u "
			       "(__attribute__((aligned(%u)))) so it no longer shares one with %s",
			       mover->field, mover->object ? mover->object : mover->field, L, L,
			       first->field);
}

/* Two elements of one array, used by different threads. */
static const char *fix_elements(struct hm_arena *a, const char *array, const struct hm_type *elem,
				uint32_t L)
{
	const char *name = hm_type_name(elem) ? hm_type_name(elem) : "element";

	if (elem->size % L == 0)
		return hm_arena_printf(a, "give each element of %s its own cache line: align %s "
				       "to %u (__attribute__((aligned(%u)))) so that the array "
				       "starts on a line", array ? array : "the array", name, L, L);
	return hm_arena_printf(a, "give each element of %s its own cache line: align %s to %u "
			       "(__attribute__((aligned(%u)))), which pads it from %" PRIu64
			       " to %" PRIu64 " bytes, or give each thread its own copy",
			       array ? array : "the array", name, L, L, elem->size,
			       (elem->size + L - 1) / L * L);
}

/* A row of a variable named by its symbol alone: no type, no member path. */
static int by_symbol(const struct hm_lfield *f)
{
	return !f->type && f->field && f->object && !strcmp(f->field, f->object);
}

const char *hm_sharing_fix_false(struct hm_arena *a, const struct hm_line *ln,
			     const struct hm_pair *p, uint32_t L)
{
	const struct hm_lfield *fa = &ln->fields[p->a], *fb = &ln->fields[p->b];
	const struct hm_lfield *first = fa, *mover = fb;	/* rows sort by offset */
	const struct hm_type *elem;
	uint64_t nel = 1;

	if (!fa->obj_base || !fb->obj_base)
		return hm_arena_printf(a,
				       "put %s and %s on different cache lines (threads %u and "
				       "%u, one writing): pad or align the later one to %u; "
				       "record with debug info (-g) to have them named",
				       fa->field, fb->field, p->tid_a, p->tid_b, L);
	/* A variable named by its symbol alone (no debug info): its bytes have no fields,
	 * and moving the variable cannot part them. */
	if (fa->obj_base == fb->obj_base && by_symbol(fa) && by_symbol(fb))
		return hm_arena_printf(a,
				       "%s+0x%" PRIx64 " and +0x%" PRIx64 " (threads %u and %u, "
				       "one writing) are bytes of one variable with no debug info: "
				       "rebuild with -g to have its fields named and a fix given",
				       fa->object ? fa->object : fa->field, fa->field_off,
				       fb->field_off, p->tid_a, p->tid_b);
	if (fa->obj_base == fb->obj_base && (elem = hm_type_agg(fa->type, &nel)) && nel > 1 &&
	    elem->size && fa->field_off / elem->size != fb->field_off / elem->size)
		return fix_elements(a, fa->object, elem, L);
	if (fa->obj_base == fb->obj_base) {
		if (fa->field_off > fb->field_off) {
			first = fb;
			mover = fa;
		}
		return fix_same_object(a, first, mover, L);
	}
	return fix_two_objects(a, first, mover, L);
}

