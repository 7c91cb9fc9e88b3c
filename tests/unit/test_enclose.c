/* Enclosing objects (symbolize/data_enclose.c, resolve/resolve_enclose.c): an access
 * through a pointer to a member or element that falls inside a heap object typed by
 * another sample is named from that, the outermost, object. The rule on thread_arg_t from
 * the real DWARF of the committed tests/data/rec/bin/enclose_hist; then its recording,
 * where the counters are bumped through `int *`s. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "resolve/load.h"
#include "symbolize/data_int.h"

#define BIN "tests/data/rec/bin/enclose_hist"
#define REC "tests/data/rec/enclose_hist.data"
#define B 0x5000001000ull	/* a thread_arg_t on the heap */
#define BLUE 2072		/* offsetof(thread_arg_t, blue), as pahole says */
#define SIZE 3104		/* sizeof(thread_arg_t) */

struct fx {
	struct hm_layout *lay;
	const struct hm_type *arg, *i32;
	struct hm_data *d;
	struct data_proc *p;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct hm_err err = {0};
	const struct hm_member *m;
	uint32_t nr;

	if (!f || hm_layout_open(BIN, &f->lay, &err) || hm_data_open(&f->d, &err))
		fail_msg("%s: %s", BIN, err.msg);
	f->arg = hm_layout_find(f->lay, "thread_arg_t");
	assert_non_null(f->arg);
	m = hm_type_members(hm_type_strip(f->arg), &nr);
	assert_true(nr > 0);
	f->i32 = hm_type_strip(m[3].type)->ref;	/* red's element: int */
	assert_int_equal(hm_type_strip(f->i32)->size, 4);
	f->p = data_proc_get(f->d, 7, 1);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	hm_data_close(f->d);
	hm_layout_close(f->lay);
	free(f);
	return 0;
}

static struct hm_data_obj int_at(const struct fx *f, uint64_t addr)
{
	return (struct hm_data_obj){.method = HM_M_HEAP, .object = "int", .type = f->i32,
				    .base = addr, .field = "int", .offset = 0};
}

static void note_arg(struct fx *f, uint64_t base)
{
	data_known_note(f->p, base, f->arg, "thread_arg_t", "thread_arg_t");
}

/* `blue[5]++` through an int *: named from the thread_arg_t around it. */
static void test_enclose_int_pointer_named_from_struct(void **state)
{
	struct fx *f = *state;
	struct hm_data_obj o = int_at(f, B + BLUE + 5 * 4);

	note_arg(f, B);
	assert_int_equal(data_enclose(f->d, f->p, B + BLUE + 5 * 4, &o), 1);
	assert_int_equal(o.method, HM_M_HEAP);
	assert_string_equal(o.field, "thread_arg_t.blue[5]");
	assert_string_equal(o.object, "thread_arg_t");
	assert_ptr_equal(o.type, f->arg);
	assert_int_equal(o.base, B);
	assert_int_equal(o.offset, BLUE + 20);
	/* an address nobody typed, and no address: nothing */
	o = int_at(f, B + SIZE);
	assert_int_equal(data_enclose(f->d, f->p, B + SIZE, &o), 0);
	assert_string_equal(o.field, "int");
	assert_int_equal(data_enclose(f->d, f->p, 0, &o), 0);
}

/* An untyped access (method unknown) is named too; a global's or a stack variable's never
 * (found by address first, they are outermost already); nor the object itself. */
static void test_enclose_only_heap_and_unknown(void **state)
{
	struct fx *f = *state;
	struct hm_data_obj o = {.method = HM_M_UNKNOWN};

	note_arg(f, B);
	assert_int_equal(data_enclose(f->d, f->p, B + 8, &o), 1);
	assert_string_equal(o.field, "thread_arg_t.len");
	o = (struct hm_data_obj){.method = HM_M_STACK, .field = "x"};
	assert_int_equal(data_enclose(f->d, f->p, B + 8, &o), 0);
	o = (struct hm_data_obj){.method = HM_M_GLOBAL, .field = "g"};
	assert_int_equal(data_enclose(f->d, f->p, B + 8, &o), 0);
	o = (struct hm_data_obj){.method = HM_M_HEAP, .type = f->arg, .base = B,
				 .field = "thread_arg_t.len", .offset = 8};
	assert_int_equal(data_enclose(f->d, f->p, B + 8, &o), 0);
}

/* Outermost objects only: one inside a known one is not kept, one around or across known
 * ones replaces them (memory reused); neighbours stay apart. */
static void test_enclose_keeps_outermost_disjoint(void **state)
{
	struct fx *f = *state;
	const struct data_known *k;

	note_arg(f, B + 0x10000);
	note_arg(f, B + 0x10000);	/* again: the same */
	assert_int_equal(f->p->nr_known, 1);
	note_arg(f, B + 0x10000 + SIZE);	/* args[1], adjacent */
	note_arg(f, B);
	assert_int_equal(f->p->nr_known, 3);
	assert_int_equal(f->p->known[0].base, B);
	k = data_known_at(f->p, B + 0x10000 + SIZE + 4);
	assert_non_null(k);
	assert_int_equal(k->base, B + 0x10000 + SIZE);
	assert_null(data_known_at(f->p, B + SIZE));
	assert_null(data_known_at(f->p, B - 1));
	/* an int[256] red typed as its own object inside args[0]: the outer wins */
	data_known_note(f->p, B + 24, hm_type_strip(hm_type_members(hm_type_strip(f->arg),
						    &(uint32_t){0})[3].type), "int[256]", "int");
	assert_int_equal(f->p->nr_known, 3);
	/* one across both neighbours' bytes: the memory was reused, the latest typing holds */
	note_arg(f, B + 0x10000 + 100);
	assert_int_equal(f->p->nr_known, 2);
	k = data_known_at(f->p, B + 0x10000 + SIZE + 4);
	assert_non_null(k);
	assert_int_equal(k->base, B + 0x10000 + 100);
	assert_null(data_known_at(f->p, B + 0x10000 + 50));
	assert_non_null(data_known_at(f->p, B + 4));
}

static int keep_all(const struct hm_access *a, void *ctx)
{
	(void)a;
	(void)ctx;
	return 1;
}

/* The recording: no counter access stays a bare int, whether its sample came before or
 * after the first one that typed its thread's thread_arg_t. */
static void test_enclose_recording_names_every_counter(void **state)
{
	struct hm_resolve_opts o = {.buildid_dir = "tests/data/rec"};
	struct hm_recording rec;
	struct hm_err err = {0};
	struct hm_data_stats ds;
	size_t named = 0, ints = 0;

	(void)state;
	if (hm_recording_load(REC, &o, keep_all, NULL, &rec, &err))
		fail_msg("%s: %s", REC, err.msg);
	for (size_t i = 0; i < rec.n; i++) {
		const struct hm_access *x = &rec.acc[i];

		ints += x->object && !strcmp(x->object, "int");
		if (x->field && !strncmp(x->field, "thread_arg_t.", 13) && x->field_off >= 24 &&
		    x->field_off < 24 + 3 * 1024) {
			named++;
			assert_int_equal(x->obj_base + x->field_off, x->s.addr);
		}
	}
	hm_data_stats(hm_resolver_data(rec.resolver), 0, &ds);
	assert_int_equal(ints, 0);
	assert_true(named > 1000);
	assert_true(ds.enclosed >= named);
	hm_recording_free(&rec);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_enclose_int_pointer_named_from_struct, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_enclose_only_heap_and_unknown, setup, teardown),
		cmocka_unit_test_setup_teardown(test_enclose_keeps_outermost_disjoint, setup,
						teardown),
		cmocka_unit_test(test_enclose_recording_names_every_counter),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
