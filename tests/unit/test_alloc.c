/* resolve/alloc.c: probe samples paired into allocations, the live map over time, and
 * the names it gives accesses. The samples here are synthesized (struct hm_perf_event
 * built by hand, as hitmap's reader hands them out); tests/e2e/alloc.sh checks the same
 * on a real recording, against perf script. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "resolve/alloc.h"

#define PID 100
#define CALLER 0x555555555103ULL	/* a return address in the program */
#define IN_LIBC 0x7ffff7e448ccULL	/* a return address inside libc */

static struct hm_perf_attr attrs[32];
static int nattrs;

static const struct hm_perf_attr *attr(const char *name)
{
	for (int i = 0; i < nattrs; i++)
		if (!strcmp(attrs[i].name, name))
			return &attrs[i];
	attrs[nattrs].name = name;
	return &attrs[nattrs++];
}

/* Entry: di, si, dx (mask bits 3, 4, 5: values in bit order dx, si, di). */
static void entry(struct hm_alloc_map *m, const char *name, uint32_t tid, uint64_t time,
		  uint64_t di, uint64_t si, uint64_t dx)
{
	uint64_t regs[3] = {dx, si, di};
	struct hm_perf_event ev = {.type = PERF_RECORD_SAMPLE, .attr = attr(name)};

	ev.sample = (struct hm_perf_sample){.time = time, .pid = PID, .tid = tid, .ip = 0x7f00};
	ev.sample.regs_user = (struct hm_perf_regs){PERF_SAMPLE_REGS_ABI_64, 0x38, 3, regs};
	hm_alloc_map_add(m, &ev);
}

/* Return: ax and sp (bits 0 and 7), the caller's return address as ip. */
static void ret_stack(struct hm_alloc_map *m, const char *name, uint32_t tid, uint64_t time,
		      uint64_t ax, uint64_t ip, uint64_t sp, const void *stack, size_t len)
{
	uint64_t regs[2] = {ax, sp};
	struct hm_perf_event ev = {.type = PERF_RECORD_SAMPLE, .attr = attr(name)};

	ev.sample = (struct hm_perf_sample){.time = time, .pid = PID, .tid = tid, .ip = ip};
	ev.sample.regs_user = (struct hm_perf_regs){PERF_SAMPLE_REGS_ABI_64, 0x81, 2, regs};
	ev.sample.stack = stack;
	ev.sample.stack_size = ev.sample.stack_dyn_size = len;
	hm_alloc_map_add(m, &ev);
}

static void ret(struct hm_alloc_map *m, const char *name, uint32_t tid, uint64_t time,
		uint64_t ax, uint64_t ip)
{
	ret_stack(m, name, tid, time, ax, ip, 0x7ffe0000, NULL, 0);
}

static void test_event_names_give_kind_and_direction(void **state)
{
	int r;

	(void)state;
	assert_int_equal(hm_alloc_event_kind("hitmap:calloc", &r), HM_AK_CALLOC);
	assert_int_equal(r, 0);
	assert_int_equal(hm_alloc_event_kind("hitmap:posix_memalign_ret", &r), HM_AK_POSIX_MEMALIGN);
	assert_int_equal(r, 1);
	assert_int_equal(hm_alloc_event_kind("hitmap:free", &r), HM_AK_FREE);
	assert_int_equal(hm_alloc_event_kind("cpu-clock", &r), -1);
	assert_int_equal(hm_alloc_event_kind("hitmap:mallocx", &r), -1);
}

static void test_calloc_entry_and_return_make_one_object(void **state)
{
	struct hm_alloc_map *m = hm_alloc_map_new();
	const struct hm_alloc_obj *o;

	(void)state;
	entry(m, "hitmap:calloc", 7, 100, 2, 24, 0);
	ret(m, "hitmap:calloc_ret", 7, 110, 0x5000, CALLER);
	hm_alloc_map_seal(m);
	assert_int_equal(hm_alloc_map_count(m, &o), 1);
	assert_int_equal(o->base, 0x5000);
	assert_int_equal(o->size, 48);
	assert_int_equal(o->kind, HM_AK_CALLOC);
	assert_int_equal(o->site_ip, CALLER);
	assert_ptr_equal(hm_alloc_map_find(m, PID, 0x5000 + 47, 200), o);
	assert_null(hm_alloc_map_find(m, PID, 0x5000 + 48, 200));
	assert_null(hm_alloc_map_find(m, PID + 1, 0x5010, 200));	/* another process */
	hm_alloc_map_free(m);
}

/* A thread that moves between CPUs puts its entry and return in different rings: the
 * return can come first in the file. Pairing goes by time, not file order. */
static void test_return_before_entry_in_file_order_still_pairs(void **state)
{
	struct hm_alloc_map *m = hm_alloc_map_new();
	const struct hm_alloc_obj *o;

	(void)state;
	ret(m, "hitmap:malloc_ret", 7, 110, 0x6000, CALLER);
	entry(m, "hitmap:malloc", 7, 100, 64, 0, 0);
	hm_alloc_map_seal(m);
	assert_int_equal(hm_alloc_map_count(m, &o), 1);
	assert_int_equal(o->base, 0x6000);
	assert_int_equal(o->size, 64);
	hm_alloc_map_free(m);
}

/* glibc's realloc(NULL, n) calls malloc, whose probes fire inside it: the outer call's
 * site is the program's, and the block is the realloc's. */
static void test_realloc_through_malloc_named_by_outer_call(void **state)
{
	struct hm_alloc_map *m = hm_alloc_map_new();
	const struct hm_alloc_obj *o;

	(void)state;
	entry(m, "hitmap:malloc", 7, 10, 32, 0, 0);
	ret(m, "hitmap:malloc_ret", 7, 11, 0x1000, CALLER);
	entry(m, "hitmap:realloc", 7, 20, 0x1000, 100, 0);
	entry(m, "hitmap:malloc", 7, 21, 100, 0, 0);
	ret(m, "hitmap:malloc_ret", 7, 22, 0x2000, IN_LIBC);
	ret(m, "hitmap:realloc_ret", 7, 23, 0x2000, CALLER + 0x40);
	hm_alloc_map_seal(m);
	assert_null(hm_alloc_map_find(m, PID, 0x1000, 30));	/* the old block went */
	o = hm_alloc_map_find(m, PID, 0x2010, 30);
	assert_non_null(o);
	assert_int_equal(o->kind, HM_AK_REALLOC);
	assert_int_equal(o->size, 100);
	assert_int_equal(o->site_ip, CALLER + 0x40);
	hm_alloc_map_free(m);
}

/* operator new calls malloc: the block is new's, from the program's call site. */
static void test_operator_new_keeps_its_site_over_mallocs(void **state)
{
	struct hm_alloc_map *m = hm_alloc_map_new();
	const struct hm_alloc_obj *o;

	(void)state;
	entry(m, "hitmap:new_array", 7, 10, 96, 0, 0);
	entry(m, "hitmap:malloc", 7, 11, 96, 0, 0);
	ret(m, "hitmap:malloc_ret", 7, 12, 0x3000, IN_LIBC);
	ret(m, "hitmap:new_array_ret", 7, 13, 0x3000, CALLER);
	hm_alloc_map_seal(m);
	o = hm_alloc_map_find(m, PID, 0x3000, 20);
	assert_non_null(o);
	assert_int_equal(o->kind, HM_AK_NEW_ARRAY);
	assert_int_equal(o->size, 96);
	assert_int_equal(o->site_ip, CALLER);
	hm_alloc_map_free(m);
}

static void test_free_ends_the_object_at_its_time(void **state)
{
	struct hm_alloc_map *m = hm_alloc_map_new();
	const struct hm_alloc_obj *o;

	(void)state;
	entry(m, "hitmap:malloc", 7, 100, 64, 0, 0);
	ret(m, "hitmap:malloc_ret", 7, 110, 0x7000, CALLER);
	entry(m, "hitmap:free", 8, 500, 0x7000, 0, 0);	/* another thread frees it */
	hm_alloc_map_seal(m);
	hm_alloc_map_count(m, &o);
	assert_int_equal(o->t_free, 500);
	assert_null(hm_alloc_map_find(m, PID, 0x7000, 99));	/* not yet called */
	assert_non_null(hm_alloc_map_find(m, PID, 0x7000, 105));	/* the allocator's */
	assert_non_null(hm_alloc_map_find(m, PID, 0x7000, 499));
	assert_null(hm_alloc_map_find(m, PID, 0x7000, 500));
	hm_alloc_map_free(m);
}

/* malloc never returns live memory: an overlap means a free went unseen (the budget
 * paused the probes), and the older object ends there. */
static void test_overlapping_allocation_ends_the_older(void **state)
{
	struct hm_alloc_map *m = hm_alloc_map_new();
	const struct hm_alloc_obj *o;

	(void)state;
	entry(m, "hitmap:malloc", 7, 10, 64, 0, 0);
	ret(m, "hitmap:malloc_ret", 7, 11, 0x8000, CALLER);
	entry(m, "hitmap:malloc", 7, 20, 16, 0, 0);
	ret(m, "hitmap:malloc_ret", 7, 21, 0x8020, CALLER + 8);
	hm_alloc_map_seal(m);
	assert_null(hm_alloc_map_find(m, PID, 0x8000, 30));
	o = hm_alloc_map_find(m, PID, 0x8024, 30);
	assert_non_null(o);
	assert_int_equal(o->size, 16);
	hm_alloc_map_free(m);
}

/* posix_memalign(&p, 64, 256) returns 0; p is read from the stack copied at return. */
static void test_posix_memalign_result_read_from_callers_stack(void **state)
{
	struct hm_alloc_map *m = hm_alloc_map_new();
	uint8_t stack[64] = {0};
	uint64_t p = 0x9040, sp = 0x7ffe1000;
	const struct hm_alloc_obj *o;

	(void)state;
	memcpy(stack + 24, &p, 8);
	entry(m, "hitmap:posix_memalign", 7, 10, sp + 24, 64, 256);
	ret_stack(m, "hitmap:posix_memalign_ret", 7, 11, 0, CALLER, sp, stack, sizeof(stack));
	hm_alloc_map_seal(m);
	o = hm_alloc_map_find(m, PID, 0x9040 + 255, 20);
	assert_non_null(o);
	assert_int_equal(o->base, 0x9040);
	assert_int_equal(o->size, 256);
	hm_alloc_map_free(m);
}

static struct hm_access access_at(uint64_t addr, uint64_t time)
{
	struct hm_access x;

	memset(&x, 0, sizeof(x));
	x.s.addr = addr;
	x.s.time = time;
	x.s.pid = PID;
	x.s.size = 8;
	return x;
}

static void test_typed_access_gets_element_site_and_line_offset(void **state)
{
	static const struct hm_type targ = {.kind = HM_T_STRUCT, .name = "thread_arg_t", .size = 24};
	struct hm_alloc_map *m = hm_alloc_map_new();
	struct hm_access x[2];

	(void)state;
	entry(m, "hitmap:calloc", 7, 100, 2, 24, 0);
	ret(m, "hitmap:calloc_ret", 7, 110, 0x50a0, CALLER);
	hm_alloc_map_seal(m);
	for (int i = 0; i < 2; i++) {
		x[i] = access_at(0x50a0 + 24u * (unsigned)i, 200);
		x[i].method = HM_M_HEAP;
		x[i].type = &targ;
		x[i].object = "thread_arg_t";
		x[i].obj_base = 0x50a0 + 24u * (unsigned)i;
		x[i].field = "thread_arg_t.ops";
	}
	hm_alloc_name(m, NULL, x, 2, 64);
	assert_string_equal(x[0].field, "thread_arg_t[0].ops");
	assert_string_equal(x[1].field, "thread_arg_t[1].ops");
	assert_int_equal(x[1].alloc_elem, 1);
	assert_int_equal(x[1].alloc_base, 0x50a0);
	assert_int_equal(x[1].alloc_size, 48);
	/* without a code symbolizer the site is the return address; 0x50a0 is 32 into a line */
	assert_string_equal(x[0].alloc_site, "calloc at 0x555555555103");
	assert_string_equal(x[0].object,
			    "thread_arg_t (calloc at 0x555555555103, array at +32 in its line)");
	assert_ptr_equal(x[0].object, x[1].object);	/* one object name per allocation */
	hm_alloc_map_free(m);
}

static void test_unnamed_access_named_by_allocation(void **state)
{
	struct hm_alloc_map *m = hm_alloc_map_new();
	struct hm_access x = access_at(0x6010, 200), before = access_at(0x6010, 50);
	struct hm_access inside = access_at(0x6010, 105);

	(void)state;
	entry(m, "hitmap:malloc", 7, 100, 64, 0, 0);
	ret(m, "hitmap:malloc_ret", 7, 110, 0x6000, CALLER);
	hm_alloc_map_seal(m);
	inside.s.tid = 7;			/* the allocating thread, in the call */
	inside.field = "size_t";
	hm_alloc_name(m, NULL, &before, 1, 64);
	hm_alloc_name(m, NULL, &inside, 1, 64);
	hm_alloc_name(m, NULL, &x, 1, 64);
	assert_null(before.alloc_site);		/* before the call */
	assert_null(before.object);
	/* the allocator's own write: the allocation's, but never a row's name */
	assert_string_equal(inside.alloc_site, "malloc at 0x555555555103");
	assert_null(inside.field);
	assert_string_equal(inside.object, "64 bytes (malloc at 0x555555555103, at +0 in its line)");
	assert_int_equal(x.method, HM_M_HEAP);
	assert_string_equal(x.field, "<malloc at 0x555555555103>+0x10");
	assert_string_equal(x.object, "64 bytes (malloc at 0x555555555103, at +0 in its line)");
	assert_int_equal(x.obj_base, 0x6000);
	assert_int_equal(x.field_off, 0x10);
	hm_alloc_map_free(m);
}

static void test_globals_are_left_alone(void **state)
{
	struct hm_alloc_map *m = hm_alloc_map_new();
	struct hm_access x = access_at(0x6010, 200);

	(void)state;
	entry(m, "hitmap:malloc", 7, 100, 64, 0, 0);
	ret(m, "hitmap:malloc_ret", 7, 110, 0x6000, CALLER);
	hm_alloc_map_seal(m);
	x.method = HM_M_GLOBAL;
	x.field = "counter";
	hm_alloc_name(m, NULL, &x, 1, 64);
	assert_string_equal(x.field, "counter");
	assert_null(x.alloc_site);
	hm_alloc_map_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_event_names_give_kind_and_direction),
		cmocka_unit_test(test_calloc_entry_and_return_make_one_object),
		cmocka_unit_test(test_return_before_entry_in_file_order_still_pairs),
		cmocka_unit_test(test_realloc_through_malloc_named_by_outer_call),
		cmocka_unit_test(test_operator_new_keeps_its_site_over_mallocs),
		cmocka_unit_test(test_free_ends_the_object_at_its_time),
		cmocka_unit_test(test_overlapping_allocation_ends_the_older),
		cmocka_unit_test(test_posix_memalign_result_read_from_callers_stack),
		cmocka_unit_test(test_typed_access_gets_element_site_and_line_offset),
		cmocka_unit_test(test_unnamed_access_named_by_allocation),
		cmocka_unit_test(test_globals_are_left_alone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
