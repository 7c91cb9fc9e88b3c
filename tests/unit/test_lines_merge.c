/* analyzer/lines_merge.c and the batch builders of splits and heat maps: the report built
 * from batches equals hm_lines_build / hm_splits_build / hm_heat_build over the whole
 * array, on random accesses (threads, CPUs, rows, sources, PMU data sources, named and
 * unnamed fields, several code sites). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analyzer/heatmap.h"
#include "analyzer/lines.h"

#define N 6000
#define BASE 0x7f0000001000ull

static const char *const fields[] = { "obj.a", "obj.b", "obj.c", NULL };
static const char *const funcs[] = { "reader", "writer", "flusher", "worker",
				     "scan", "drain", "poke" };

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* A struct of 96 bytes, so that heat maps have two lines and a member on each. */
static struct hm_type *obj_type(void)
{
	static struct hm_member m[3];
	static struct hm_type u32 = { .kind = HM_T_BASE, .name = "unsigned int", .size = 4 };
	static struct hm_type t = { .kind = HM_T_STRUCT, .name = "obj", .size = 96 };

	m[0] = (struct hm_member){ .name = "a", .type = &u32, .bit_offset = 0 };
	m[1] = (struct hm_member){ .name = "b", .type = &u32, .bit_offset = 8 * 8 };
	m[2] = (struct hm_member){ .name = "c", .type = &u32, .bit_offset = 64 * 8 };
	t.members = m;
	t.nr_members = 3;
	t.loaded = 1;
	return &t;
}

static struct hm_access *make(size_t n, uint64_t seed)
{
	struct hm_access *acc = calloc(n, sizeof(*acc));
	const struct hm_type *t = obj_type();
	uint64_t s = seed, time = 1000;

	assert_non_null(acc);
	for (size_t i = 0; i < n; i++) {
		struct hm_access *x = &acc[i];
		uint64_t r = rnd(&s);
		unsigned k = (unsigned)(r % 3), obj = (unsigned)(r >> 8) % 5;
		static const uint32_t off[] = { 0, 8, 64 };

		time += 1 + (r >> 20) % 40000;
		x->s.time = time;
		x->s.pid = 100 + (uint32_t)((r >> 30) % 2);
		x->s.tid = x->s.pid * 10 + (uint32_t)((r >> 32) % 4);
		x->s.cpu = (uint32_t)((r >> 36) % 3);
		x->s.source = (uint8_t)((r >> 40) % 3);
		x->s.op = (uint8_t)(1 + (r >> 42) % 2);
		x->s.size = (r >> 44) % 7 ? 4 : 8;
		x->s.data_src = x->s.source == HM_SRC_PMU ? (r >> 12) & 0xfffffffffull : 0;
		x->s.weight = (uint32_t)(r >> 50);
		x->s.ip = 0x401000 + 16 * ((r >> 47) % 7);
		x->func = funcs[(r >> 47) % 7];
		x->file = "w.c";
		x->line = (int)((r >> 47) % 7);
		x->locked = (r >> 53) % 11 == 0;
		if ((r >> 55) % 17 == 0) {
			x->method = HM_M_NOADDR;
			continue;
		}
		x->obj_base = BASE + 128 * obj;
		x->s.addr = x->obj_base + off[k] + ((r >> 57) % 2 ? 0 : 62 * (k == 2));
		x->field_off = x->s.addr - x->obj_base;
		x->type = t;
		x->object = "struct obj";
		x->field = (r >> 59) % 4 ? fields[k] : NULL;	/* some rows unnamed */
		x->method = HM_M_HEAP;
	}
	return acc;
}

static void same_counts(const struct hm_count *a, uint32_t na, const struct hm_count *b,
			uint32_t nb)
{
	assert_int_equal(na, nb);
	for (uint32_t i = 0; i < na; i++) {
		assert_int_equal(a[i].id, b[i].id);
		assert_int_equal(a[i].pid, b[i].pid);
		assert_int_equal(a[i].records, b[i].records);
		assert_int_equal(a[i].loads, b[i].loads);
		assert_int_equal(a[i].stores, b[i].stores);
		assert_int_equal(a[i].locked, b[i].locked);
	}
}

static void same_c2c(const struct hm_c2c_stats *a, const struct hm_c2c_stats *b)
{
	assert_true(!a == !b);
	if (a)
		assert_memory_equal(a, b, sizeof(*a));
}

static void same_field(const struct hm_lfield *a, const struct hm_lfield *b, size_t bound)
{
	assert_int_equal(a->offset, b->offset);
	assert_int_equal(a->size, b->size);
	assert_string_equal(a->field, b->field);
	assert_int_equal(a->named, b->named);
	assert_int_equal(a->records, b->records);
	assert_int_equal(a->loads, b->loads);
	assert_int_equal(a->stores, b->stores);
	assert_int_equal(a->locked, b->locked);
	assert_true(b->transfers <= a->transfers && a->transfers - b->transfers <= bound);
	assert_true(b->conflicts <= a->conflicts && a->conflicts - b->conflicts <= 2 * bound);
	same_c2c(a->c2c, b->c2c);
	same_counts(a->threads, a->nr_threads, b->threads, b->nr_threads);
	same_counts(a->cpus, a->nr_cpus, b->cpus, b->nr_cpus);
	assert_int_equal(a->nr_sites, b->nr_sites);
	assert_int_equal(a->nr_sites_all, b->nr_sites_all);
	for (uint32_t i = 0; i < a->nr_sites; i++) {
		assert_string_equal(a->sites[i].func, b->sites[i].func);
		assert_int_equal(a->sites[i].count, b->sites[i].count);
		assert_int_equal(a->sites[i].ip, b->sites[i].ip);
	}
}

static const struct hm_line *find(const struct hm_lines *l, const struct hm_line *x)
{
	for (size_t i = 0; i < l->nr; i++)
		if (l->lines[i].addr == x->addr && l->lines[i].pid == x->pid)
			return &l->lines[i];
	fail_msg("line %#llx missing", (unsigned long long)x->addr);
	return NULL;
}

/* Batched equals whole. boundaries: how many conflicts and transfers per line the batched
 * build may miss (0: none; a line's interleaving state is carried across batches). */
static void compare(const struct hm_lines *w, const struct hm_lines *b, size_t boundaries)
{
	assert_int_equal(w->nr, b->nr);
	assert_int_equal(w->total, b->total);
	assert_int_equal(w->with_addr, b->with_addr);
	assert_int_equal(w->resolved, b->resolved);
	assert_int_equal(w->cpus_known, b->cpus_known);
	assert_int_equal(w->source, b->source);
	assert_memory_equal(w->by_method, b->by_method, sizeof(w->by_method));
	assert_memory_equal(&w->c2c, &b->c2c, sizeof(w->c2c));
	same_counts(w->threads, (uint32_t)w->nr_threads, b->threads, (uint32_t)b->nr_threads);
	for (size_t i = 0; i < w->nr; i++) {
		const struct hm_line *x = &w->lines[i], *y = find(b, x);

		assert_int_equal(x->records, y->records);
		assert_int_equal(x->loads, y->loads);
		assert_int_equal(x->stores, y->stores);
		assert_int_equal(x->locked, y->locked);
		assert_true(y->conflicts <= x->conflicts &&
			    x->conflicts - y->conflicts <= boundaries);
		assert_true(y->transfers <= x->transfers &&
			    x->transfers - y->transfers <= boundaries);
		same_c2c(x->c2c, y->c2c);
		assert_true(!x->lat == !y->lat);
		if (x->lat)
			assert_memory_equal(x->lat, y->lat, HM_LVL__COUNT * sizeof(*x->lat));
		same_counts(x->threads, x->nr_threads, y->threads, y->nr_threads);
		same_counts(x->cpus, x->nr_cpus, y->cpus, y->nr_cpus);
		assert_int_equal(x->nr_fields, y->nr_fields);
		for (uint32_t k = 0; k < x->nr_fields; k++)
			same_field(&x->fields[k], &y->fields[k], boundaries);
		assert_string_equal(x->object ? x->object : "", y->object ? y->object : "");
		if (!boundaries) {
			assert_int_equal(x->nr_inter, y->nr_inter);
			assert_memory_equal(x->inter, y->inter, x->nr_inter * sizeof(*x->inter));
			assert_int_equal(x->verdict, y->verdict);
		}
	}
}

static void batched(const struct hm_access *acc, size_t n, size_t batch, struct hm_arena *a,
		    struct hm_lines *out)
{
	struct hm_lines_acc *m = hm_lines_acc_new(a, 64, 0);
	struct hm_err err = {0};

	for (size_t i = 0; i < n; i += batch)
		assert_int_equal(hm_lines_acc_add(m, acc + i, n - i < batch ? batch > n - i ?
						  n - i : batch : batch, &err), 0);
	hm_lines_acc_end(m, out);
}

static void test_one_batch_equals_build(void **state)
{
	struct hm_access *acc = make(N, 0x1234567);
	struct hm_arena a;
	struct hm_lines whole, merged;
	struct hm_err err = {0};

	(void)state;
	hm_arena_init(&a);
	assert_int_equal(hm_lines_build(&a, acc, N, 64, 0, &whole, &err), 0);
	assert_true(whole.nr >= 5 && whole.total == N);
	batched(acc, N, N, &a, &merged);
	compare(&whole, &merged, 0);
	hm_arena_free(&a);
	free(acc);
}

static void test_many_batches_equal_build(void **state)
{
	static const size_t sizes[] = { 1, 7, 100, 999, 2500 };
	struct hm_access *acc = make(N, 0xfeedbeef);
	struct hm_arena a;
	struct hm_lines whole;
	struct hm_err err = {0};

	(void)state;
	hm_arena_init(&a);
	assert_int_equal(hm_lines_build(&a, acc, N, 64, 0, &whole, &err), 0);
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		struct hm_lines merged;

		/* the interleavings go on across each batch's edge: the same answer, exactly,
		 * conflicts, transfers, row pairs and verdicts included */
		batched(acc, N, sizes[k], &a, &merged);
		compare(&whole, &merged, 0);
	}
	hm_arena_free(&a);
	free(acc);
}

static void test_splits_batches_equal_build(void **state)
{
	struct hm_access *acc = make(N, 0xabcdef);
	struct hm_arena a;
	struct hm_splits whole, merged;
	struct hm_splits_acc *c;
	struct hm_err err = {0};

	(void)state;
	hm_arena_init(&a);
	assert_int_equal(hm_splits_build(&a, acc, N, 64, &whole, &err), 0);
	assert_true(whole.nr > 0 && whole.line_splits > 0);
	assert_int_equal(hm_splits_begin(&a, 64, &merged, &c, &err), 0);
	for (size_t i = 0; i < N; i += 333)
		hm_splits_add(c, acc + i, N - i < 333 ? N - i : 333);
	hm_splits_end(c);
	assert_int_equal(whole.nr, merged.nr);
	assert_int_equal(whole.sized, merged.sized);
	assert_int_equal(whole.line_splits, merged.line_splits);
	assert_int_equal(whole.page_splits, merged.page_splits);
	for (size_t i = 0; i < whole.nr; i++) {
		assert_string_equal(whole.s[i].field, merged.s[i].field);
		assert_int_equal(whole.s[i].count, merged.s[i].count);
		assert_int_equal(whole.s[i].loads, merged.s[i].loads);
	}
	assert_int_equal(whole.nr_st, merged.nr_st);
	for (size_t i = 0; i < whole.nr_st; i++)
		assert_int_equal(whole.st[i].accesses, merged.st[i].accesses);
	hm_arena_free(&a);
	free(acc);
}

/* Heat maps keep each line's last access and the threads seen between batches: the
 * same counts, conflicts included, whatever the batch size. */
static void test_heat_batches_equal_build(void **state)
{
	struct hm_access *acc = make(N, 0x5eed);
	struct hm_arena a;
	struct hm_heat whole, merged;
	struct hm_heat_acc *c;
	struct hm_heat_opts o = {.line_size = 64};
	struct hm_err err = {0};

	(void)state;
	hm_arena_init(&a);
	assert_int_equal(hm_heat_build(&a, obj_type(), acc, N, 64, &whole), 0);
	assert_int_equal(hm_heat_begin(&a, obj_type(), &o, &merged, &c, &err), 0);
	for (size_t i = 0; i < N; i += 17)
		hm_heat_add(c, acc + i, N - i < 17 ? N - i : 17);
	hm_heat_end(c);
	assert_true(whole.accesses > N / 2 && whole.max_conflicts > 0);
	assert_int_equal(whole.accesses, merged.accesses);
	assert_int_equal(whole.nr_fields, merged.nr_fields);
	assert_int_equal(whole.nr_lines, merged.nr_lines);
	for (uint32_t i = 0; i < whole.nr_fields; i++) {
		assert_int_equal(whole.fields[i].loads, merged.fields[i].loads);
		assert_int_equal(whole.fields[i].stores, merged.fields[i].stores);
		assert_int_equal(whole.fields[i].conflicts, merged.fields[i].conflicts);
		assert_int_equal(whole.fields[i].threads, merged.fields[i].threads);
	}
	for (uint64_t i = 0; i < whole.nr_lines; i++) {
		assert_int_equal(whole.lines[i].conflicts, merged.lines[i].conflicts);
		assert_int_equal(whole.lines[i].readers, merged.lines[i].readers);
		assert_int_equal(whole.lines[i].writers, merged.lines[i].writers);
	}
	hm_arena_free(&a);
	free(acc);
}

static void same_heat(const struct hm_heat *a, const struct hm_heat *b)
{
	assert_ptr_equal(a->type, b->type);
	assert_int_equal(a->accesses, b->accesses);
	assert_int_equal(a->outside, b->outside);
	assert_int_equal(a->nr_fields, b->nr_fields);
	for (uint32_t i = 0; i < a->nr_fields; i++) {
		assert_int_equal(a->fields[i].loads, b->fields[i].loads);
		assert_int_equal(a->fields[i].stores, b->fields[i].stores);
		assert_int_equal(a->fields[i].conflicts, b->fields[i].conflicts);
		assert_int_equal(a->fields[i].threads, b->fields[i].threads);
	}
	for (uint64_t i = 0; i < a->nr_lines; i++) {
		assert_int_equal(a->lines[i].conflicts, b->lines[i].conflicts);
		assert_int_equal(a->lines[i].writers, b->lines[i].writers);
		assert_int_equal(a->lines[i].line_writers, b->lines[i].line_writers);
	}
}

/* A report's heat maps are laid out on the resolving thread and counted on another
 * (hm_heat_set_prepare, then hm_heat_set_feed, up to HM_STREAM_PREP_AHEAD runs apart):
 * the same maps, in the same order, with the same counts as hm_heat_set_add, and each
 * the same as hm_heat_build over its type's accesses alone. Two struct types (one seen
 * first mid-run), an array of one, and scalars that have no map. */
static void test_heat_set_prepare_feed_equals_add(void **state)
{
	static struct hm_member um[2];
	static struct hm_type pair = { .kind = HM_T_UNION, .name = "pair", .size = 16,
				       .loaded = 1 };
	static struct hm_type arr = { .kind = HM_T_ARRAY, .size = 96 * 4, .nelems = 4 };
	static struct hm_type u32 = { .kind = HM_T_BASE, .name = "unsigned int", .size = 4 };
	struct hm_access *acc = make(N, 0xfeed), *only = calloc(N, sizeof(*acc));
	struct hm_heat_set one, two;
	struct hm_arena a1, a2, a3;
	int8_t *pick[5] = {0};
	size_t nr[5], lag = 3, run = 97;
	uint64_t by_a = 0, by_b = 0;

	(void)state;
	arr.ref = obj_type();
	/* a union: both members at offset 0, so the access's field name picks the row */
	um[0] = (struct hm_member){ .name = "a", .type = &u32 };
	um[1] = (struct hm_member){ .name = "b", .type = &u32 };
	pair.members = um;
	pair.nr_members = 2;
	for (size_t i = 0; i < N; i++) {
		if (i > 500 && i % 5 == 0) {
			acc[i].type = &pair;
			acc[i].field_off = 0;
			acc[i].field = i % 3 ? "pair.b" : "pair.a";
			by_a += i % 3 == 0;
			by_b += i % 3 != 0;
		} else if (i % 7 == 0)
			acc[i].type = &u32;
		else if (i % 11 == 0)
			acc[i].type = &arr, acc[i].field_off += 96 * (i % 4);
	}
	hm_arena_init(&a1);
	hm_arena_init(&a2);
	hm_heat_set_init(&one, &a1, &(struct hm_heat_opts){.line_size = 64});
	hm_heat_set_init(&two, &a2, &(struct hm_heat_opts){.line_size = 64});
	for (size_t i = 0; i < N; i += run)
		hm_heat_set_add(&one, acc + i, N - i < run ? N - i : run);
	/* prepare runs lag runs ahead of feed, as the handoff lets it */
	for (size_t i = 0, r = 0; i < N + lag * run; i += run, r++) {
		if (i < N) {
			size_t m = N - i < run ? N - i : run;

			pick[r % 5] = realloc(pick[r % 5], m);
			nr[r % 5] = hm_heat_set_prepare(&two, acc + i, m, pick[r % 5]);
		}
		if (r >= lag && i - lag * run < N) {
			size_t at = i - lag * run, m = N - at < run ? N - at : run;

			hm_heat_set_feed(&two, acc + at, m, pick[(r - lag) % 5], nr[(r - lag) % 5]);
		}
	}
	hm_heat_set_end(&one);
	hm_heat_set_end(&two);
	assert_int_equal(one.nr, 2);
	assert_int_equal(two.nr, 2);
	for (size_t k = 0; k < one.nr; k++) {
		struct hm_heat whole;
		size_t n = 0;

		assert_int_equal(one.cand[k].count, two.cand[k].count);
		same_heat(&one.cand[k].heat, &two.cand[k].heat);
		for (size_t i = 0; i < N; i++)
			if (hm_heat_type_matches(one.cand[k].t, acc[i].type))
				only[n++] = acc[i];
		hm_arena_init(&a3);
		assert_int_equal(hm_heat_build(&a3, one.cand[k].t, only, n, 64, &whole), 0);
		assert_true(whole.accesses > 100);
		same_heat(&whole, &two.cand[k].heat);
		hm_arena_free(&a3);
	}
	/* counted by hand: each union member's row has its own accesses */
	for (uint32_t i = 0; i < two.cand[1].heat.nr_fields; i++) {
		const struct hm_heat_field *f = &two.cand[1].heat.fields[i];

		if (!f->hole)
			assert_int_equal(f->loads + f->stores + f->other,
					 !strcmp(f->path, "a") ? by_a : by_b);
	}
	for (int i = 0; i < 5; i++)
		free(pick[i]);
	hm_arena_free(&a1);
	hm_arena_free(&a2);
	free(acc);
	free(only);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_batch_equals_build),
		cmocka_unit_test(test_many_batches_equal_build),
		cmocka_unit_test(test_splits_batches_equal_build),
		cmocka_unit_test(test_heat_batches_equal_build),
		cmocka_unit_test(test_heat_set_prepare_feed_equals_add),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
