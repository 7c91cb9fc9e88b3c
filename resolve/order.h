/* A streamed recording's time order across batches (resolve/load.c). perf and hitmap
 * write each ring buffer (one per CPU, or per thread) in turn, so file order is time
 * order only within a ring. A batch is sorted by time and handed on up to the latest time
 * every ring seen in it has reached (the smallest of the last times per CPU and per
 * thread): later samples of those rings cannot be older. The rest waits for the next
 * batch, but never more than half of it, so memory stays one batch. */
#ifndef HM_ORDER_H
#define HM_ORDER_H

#include <stddef.h>
#include <stdint.h>

#include "symbolize/access.h"

/* An access of the batch by time, then by position in the batch (keys are distinct). */
struct hm_okey {
	uint64_t time;
	size_t idx;
};

struct hm_order;

/* For batches of at most cap accesses; NULL when out of memory. */
struct hm_order *hm_order_new(size_t cap);
void hm_order_free(struct hm_order *o);
/* The rings x came from (its thread, its CPU) have reached x's time; x is the batch's
 * access at pos, whose time the next sort takes from here (while every access from 0 on
 * was noted in turn) instead of from the batch. */
void hm_order_note(struct hm_order *o, const struct hm_access *x, size_t pos);
/* The batch's accesses moved or were split other than by hm_order_compact: the next sort
 * reads their times from the batch. */
void hm_order_moved(struct hm_order *o);
/* The n accesses' keys in time order (an array of o's, valid until the next sort). */
struct hm_okey *hm_order_sort(struct hm_order *o, const struct hm_access *acc, size_t n);
/* How many of the sorted keys k go on now: those up to the latest time every ring has
 * reached, at least half (all when final). Forgets the rings for the next batch. */
size_t hm_order_cut(struct hm_order *o, const struct hm_okey *k, size_t n, int final);
/* Puts acc in the order of k (acc[i] becomes the old acc[k[i].idx]) in place; k's
 * indices are used up. */
void hm_order_permute(struct hm_access *acc, struct hm_okey *k, size_t n);
/* After k[0..cut) of src went on: the other n - cut accesses moved to the front of dst
 * (src itself, or another batch's array) in their order in the batch. Not time order,
 * but the next sort puts them where it would put them in time order: keys are (time,
 * position), and both orders rank the rest's equal times alike and before every access
 * read later. */
void hm_order_compact(struct hm_order *o, struct hm_access *dst, const struct hm_access *src,
		      const struct hm_okey *k, size_t n, size_t cut);

#endif
