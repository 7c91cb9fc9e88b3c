/* Heap objects by allocation: the live-allocation map over time, built from the malloc
 * family's probe samples (hitmap:FN and hitmap:FN_ret events, docs/alloc.md), and the
 * names it gives an access whose address lies in a live allocation: the allocation
 * site ("calloc at alloc_array.c:51"), the element when the object's type is known
 * ("thread_arg_t[1]") and where the object starts in its cache line. */
#ifndef HM_ALLOC_MAP_H
#define HM_ALLOC_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "symbolize/access.h"
#include "core/err.h"
#include "core/perfdata.h"
#include "symbolize/code.h"

enum hm_alloc_kind {
	HM_AK_MALLOC, HM_AK_CALLOC, HM_AK_REALLOC, HM_AK_FREE, HM_AK_ALIGNED_ALLOC,
	HM_AK_MEMALIGN, HM_AK_POSIX_MEMALIGN, HM_AK_NEW, HM_AK_NEW_ARRAY, HM_AK__COUNT
};

struct hm_alloc_obj {
	uint64_t base, size;
	uint64_t t_entry;		/* the call: live from here for the allocator itself */
	uint64_t t_alloc, t_free;	/* the return; the free (UINT64_MAX: live to the end) */
	uint64_t site_ip;		/* the return address in the caller */
	uint32_t pid, tid;
	uint8_t kind;			/* enum hm_alloc_kind */
	const char *site;		/* "calloc at alloc_array.c:51", named on first use */
};

struct hm_alloc_map;

/* The kind an event name stands for ("hitmap:calloc_ret" -> calloc, *ret = 1); -1 for
 * any other name. */
int hm_alloc_event_kind(const char *name, int *ret);
/* 1 when ev is a sample of an allocation-family event (not a memory access). */
int hm_alloc_is_sample(const struct hm_perf_event *ev);

struct hm_alloc_map *hm_alloc_map_new(void);
void hm_alloc_map_free(struct hm_alloc_map *m);
/* Feeds one sample of an allocation-family event, in any order across threads but in
 * time order per thread (as the kernel wrote each ring). */
void hm_alloc_map_add(struct hm_alloc_map *m, const struct hm_perf_event *ev);
/* After the last add: the objects in time order, ready for lookups. */
void hm_alloc_map_seal(struct hm_alloc_map *m);
size_t hm_alloc_map_count(const struct hm_alloc_map *m, const struct hm_alloc_obj **objs);

/* The object live at time in pid's heap holding addr, or NULL. Lookups move through
 * time: asked in time order they cost a binary search each; an earlier time than the
 * last is answered from the later state. */
const struct hm_alloc_obj *hm_alloc_map_find(struct hm_alloc_map *m, uint32_t pid,
					     uint64_t addr, uint64_t time);

/* Names the accesses that lie in a live allocation (code names the call sites; may be
 * NULL): sets alloc_* and, for heap or unnamed accesses, object and field with the
 * element and the site. Strings live as long as m. line_size: for the offset in line. */
void hm_alloc_name(struct hm_alloc_map *m, struct hm_code *code, struct hm_access *acc,
		   size_t n, uint32_t line_size);
/* The same for one access, for a caller that holds its accesses in time order by other
 * means (a batch's sorted keys): ask in time order, as hm_alloc_name does. */
void hm_alloc_name_one(struct hm_alloc_map *m, struct hm_code *code, struct hm_access *x,
		       uint32_t line_size);

#endif
