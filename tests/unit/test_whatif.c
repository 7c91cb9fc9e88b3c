/* analyzer/whatif*.c on crafted accesses to the examples' real types:
 * struct worker_stats from examples/bin/false_sharing (and its padded build), the
 * order_a/order_b pair and holder_a from examples/bin/whatif_order.o, inode_like from the
 * xfs_like pair, and bitfields from examples/bin/tricky.o. */
#include "whatif_util.h"
#include "resolve/handoff.h"

static void test_pad_moves_following_fields(void **state)
{
	struct fx *f = *state;
	const struct hm_type *ws = type_in(f, FS, "worker_stats");
	const struct hm_wi_type *t;

	add(f, ws, BASE, 8, 8, HM_OP_STORE, 1, 0);
	plan_edit(f, HM_WI_PAD, "worker_stats", "errors", 56);
	t = trow(&f->plan, "worker_stats");
	assert_int_equal(row(&f->plan, "worker_stats", "ops")->new_off, 0);
	assert_int_equal(row(&f->plan, "worker_stats", "errors")->new_off, 64);
	assert_int_equal(row(&f->plan, "worker_stats", "errors")->pad_before, 56);
	assert_int_equal(row(&f->plan, "worker_stats", "bytes")->new_off, 72);
	assert_int_equal(row(&f->plan, "worker_stats", "flags")->new_off, 80);
	assert_int_equal(t->old_size, 32);
	assert_int_equal(t->new_size, 88);	/* 84 rounded to the alignment, 8 */
	assert_int_equal(t->new_align, 8);
	assert_int_equal(moved(f, ws, 0), 0);
	assert_int_equal(moved(f, ws, 17), 73);
}

static void test_pad_keeps_offset_inside_field_and_base(void **state)
{
	struct fx *f = *state;
	const struct hm_type *ws = type_in(f, FS, "worker_stats");
	struct hm_access out[2];
	struct hm_wi_counts c;

	add(f, ws, BASE + 16, 10, 2, HM_OP_LOAD, 1, 0);	/* errors + 2, object misaligned */
	add(f, ws, BASE + 16, 3, 1, HM_OP_LOAD, 1, 1);		/* ops + 3 */
	plan_edit(f, HM_WI_PAD, "worker_stats", "errors", 56);
	hm_whatif_replay(&f->plan, f->acc, f->n, out, &c);
	assert_int_equal(out[0].obj_base, BASE + 16);		/* alignment 8: base kept */
	assert_int_equal(out[0].field_off, 66);
	assert_int_equal(out[0].s.addr, BASE + 16 + 66);
	assert_int_equal(out[0].s.size, 2);
	assert_string_equal(out[0].field, "worker_stats.errors");
	assert_int_equal(out[1].s.addr, BASE + 16 + 3);
	assert_int_equal(c.moved, 1);
	assert_int_equal(c.affected, 2);
}

static void test_align_rounds_field_and_object_base(void **state)
{
	struct fx *f = *state;
	const struct hm_type *ws = type_in(f, FS, "worker_stats");
	struct hm_access out[1];
	struct hm_wi_counts c;

	add(f, ws, BASE + 16, 12, 4, HM_OP_STORE, 1, 0);	/* errors + 4 */
	plan_edit(f, HM_WI_ALIGN, "worker_stats", "errors", 64);
	assert_int_equal(row(&f->plan, "worker_stats", "errors")->new_off, 64);
	assert_int_equal(row(&f->plan, "worker_stats", "errors")->forced, 64);
	assert_int_equal(row(&f->plan, "worker_stats", "flags")->new_off, 80);
	assert_int_equal(trow(&f->plan, "worker_stats")->new_align, 64);
	assert_int_equal(trow(&f->plan, "worker_stats")->new_size, 128);
	hm_whatif_replay(&f->plan, f->acc, f->n, out, &c);
	assert_int_equal(out[0].obj_base, BASE + 64);		/* rounded up to 64 */
	assert_int_equal(out[0].s.addr, BASE + 64 + 68);
	assert_int_equal(c.objects_moved, 1);
}

/* Member names in order_b's order, applied to order_a. */
static void test_order_matches_the_compiler(void **state)
{
	struct fx *f = *state;
	const struct hm_type *a = type_in(f, ORDER, "order_a");
	const struct hm_type *b = hm_layout_find(f->lay[0], "order_b");
	const char *names[16];
	uint32_t nr;
	const struct hm_member *bm = hm_type_members(b, &nr);
	struct hm_wi_edit e = {.kind = HM_WI_ORDER, .type = "order_a", .order = names,
			       .nr_order = nr};
	struct hm_wi_spec spec = {.kind = HM_WI_ORDER, .edits = &e, .nr_edits = 1,
				  .line_size = 64};
	const struct hm_wi_type *t;

	assert_true(nr <= 16);
	for (uint32_t i = 0; i < nr; i++)
		names[i] = bm[i].name;
	add(f, a, BASE, 0, 1, HM_OP_LOAD, 1, 0);
	assert_int_equal(hm_whatif_plan(&f->a, f->acc, f->n, &spec, &f->plan, &f->err), 0);
	t = trow(&f->plan, "order_a");
	for (uint32_t i = 0; i < nr; i++) {
		const struct hm_wi_member *m = row(&f->plan, "order_a", bm[i].name);

		assert_int_equal(m->new_off, bm[i].bit_offset / 8);
		assert_string_equal(t->m[i].name, bm[i].name);	/* rows in the new order */
	}
	assert_int_equal(t->new_size, b->size);
	assert_int_equal(t->new_align, hm_type_align(b));
	/* A byte inside pair[1].q keeps its place inside the member. */
	assert_int_equal(moved(f, a, 64 + 8 + 4), 52 + 8 + 4);
}

static void test_edit_moves_types_that_embed_it(void **state)
{
	struct fx *f = *state;
	const struct hm_type *h = type_in(f, ORDER, "holder_a");
	uint64_t after_old, after_size, arr1, sz;
	const struct hm_wi_type *ta;

	assert_int_equal(hm_layout_member_offset(h, "after", &after_old, &after_size), 0);
	assert_int_equal(hm_layout_member_offset(h, "arr[1].l", &arr1, &sz), 0);
	add(f, h, BASE, after_old, 8, HM_OP_STORE, 1, 0);
	plan_edit(f, HM_WI_PAD, "order_a", "l", 64);	/* order_a grows by 64 */
	ta = trow(&f->plan, "order_a");
	assert_int_equal(ta->new_size, ta->old_size + 64);
	assert_true(trow(&f->plan, "holder_a")->changed);
	assert_int_equal(trow(&f->plan, "holder_a")->accesses, 1);
	assert_int_equal(moved(f, h, after_old), after_old + 64);
	/* arr[1].l: the first element grew by 64, and l moved by 64 inside the second. */
	assert_int_equal(moved(f, h, arr1), arr1 + 64 + 64 + 64);
	assert_int_equal(trow(&f->plan, "holder_a")->new_size,
			 trow(&f->plan, "holder_a")->old_size + 3 * 64);
}

static void test_bitfields_move_with_their_storage_unit(void **state)
{
	struct fx *f = *state;
	const struct hm_type *t = type_in(f, TRICKY, "bits_hole");
	const char *order[] = {"l", "tag"};
	struct hm_wi_edit e = {.kind = HM_WI_ORDER, .type = "bits_hole", .order = order,
			       .nr_order = 2};
	struct hm_wi_spec spec = {.kind = HM_WI_ORDER, .edits = &e, .nr_edits = 1,
				  .line_size = 64};

	add(f, t, BASE, 1, 1, HM_OP_LOAD, 1, 0);
	assert_int_equal(hm_whatif_plan(&f->a, f->acc, f->n, &spec, &f->plan, &f->err), 0);
	assert_int_equal(row(&f->plan, "bits_hole", "l")->new_off, 0);
	assert_int_equal(row(&f->plan, "bits_hole", "tag")->new_off, 8);
	assert_int_equal(row(&f->plan, "bits_hole", "x")->new_off, 8);	/* tag's unit */
	assert_int_equal(row(&f->plan, "bits_hole", "y")->new_off, 8);
	assert_int_equal(moved(f, t, 1), 9);
}

static void test_arrays_take_the_new_stride(void **state)
{
	struct fx *f = *state;
	const struct hm_type *ws = type_in(f, FS, "worker_stats");
	struct hm_type *arr = hm_arena_alloc(&f->a, sizeof(*arr));

	*arr = (struct hm_type){.kind = HM_T_ARRAY, .ref = ws, .nelems = 4, .size = 4 * ws->size};
	add(f, arr, BASE, 32 + 8, 8, HM_OP_STORE, 1, 0);	/* [1].errors */
	plan_edit(f, HM_WI_PAD, "worker_stats", "errors", 56);
	assert_int_equal(moved(f, arr, 32 + 8), 88 + 64);
	assert_int_equal(moved(f, arr, 3 * 32 + 24), 3 * 88 + 80);
}

static void test_grown_objects_push_later_ones(void **state)
{
	struct fx *f = *state;
	const struct hm_type *ws = type_in(f, FS, "worker_stats");
	struct hm_access out[3];
	struct hm_wi_counts c;

	add(f, ws, BASE, 0, 8, HM_OP_STORE, 1, 0);
	add(f, ws, BASE + 32, 0, 8, HM_OP_STORE, 2, 1);	/* the next object, adjacent */
	add(f, ws, BASE + 4096, 0, 8, HM_OP_STORE, 2, 2);	/* far away: stays */
	plan_edit(f, HM_WI_PAD, "worker_stats", "errors", 56);
	hm_whatif_replay(&f->plan, f->acc, f->n, out, &c);
	assert_int_equal(out[0].obj_base, BASE);
	assert_int_equal(out[1].obj_base, BASE + 88);
	assert_int_equal(out[2].obj_base, BASE + 4096);
	assert_int_equal(c.objects, 3);
	assert_int_equal(c.objects_moved, 1);
}

static void test_padding_hypothesis_predicts_no_sharing(void **state)
{
	struct fx *f = *state;
	const struct hm_type *ws = type_in(f, FS, "worker_stats");
	struct hm_whatif w;

	false_sharing(f, ws, BASE, 200);
	plan_edit(f, HM_WI_PAD, "worker_stats", "errors", 56);
	assert_int_equal(hm_whatif_run(&f->a, f->acc, f->n, &f->plan, 0, &w, &f->err), 0);
	assert_int_equal(w.tb.false_sharing, 1);
	assert_true(w.tb.contention > 100);
	assert_int_equal(w.ta.shared, 0);
	assert_int_equal(w.ta.contention, 0);
	assert_int_equal(w.stops, 1);
	assert_int_equal(w.starts, 0);
	assert_int_equal(w.false_after, 0);
	assert_int_equal(w.nr_changes, 1);
	assert_int_equal(w.changes[0].nr_after, 2);
	hm_whatif_free(&w);
}

/* A held run handed out in one batch, as the spill gives it back: same accesses, same
 * types. */
struct afeed1 {
	const struct hm_access *acc;
	size_t n;
};

static int feed_all(void *arg, const struct hm_wi_sink *sink, struct hm_err *err)
{
	struct afeed1 *m = arg;

	(void)err;
	return sink->fn(m->acc, m->n, sink->fa);
}

/* A feed that writes each batch where the replay lends room, as the spill is read back:
 * lent counts the rooms it wrote into. */
struct rfeed {
	const struct hm_access *acc;
	size_t n, lent, most;
};

static int feed_room(void *arg, const struct hm_wi_sink *sink, struct hm_err *err)
{
	struct rfeed *m = arg;

	(void)err;
	for (size_t off = 0, k; off < m->n; off += k) {
		size_t max = HM_WI_BATCH;
		struct hm_access *to = sink->room ? sink->room(sink->fa, &max) : NULL;

		if (sink->room && !to)
			return -1;
		k = m->n - off < max ? m->n - off : max;
		if (to) {
			memcpy(to, m->acc + off, k * sizeof(*to));
			m->lent++;
			m->most = max > m->most ? max : m->most;
		}
		if (sink->fn(to ? to : m->acc + off, k, sink->fa))
			return -1;
	}
	return 0;
}

/* With the recorded side built during the first read and the after side on a thread of
 * its own, the replay lends that thread's slots for the feed to write into: the after
 * side built from them is the one built from copies (the held run handed out whole), on
 * more accesses than a slot holds. */
static void test_feed_writes_into_the_after_sides_slots(void **state)
{
	struct fx *f = *state;
	const struct hm_type *ws = type_in(f, FS, "worker_stats");
	size_t n = 10 * 2 * 1500;
	struct hm_access *run = malloc(n * sizeof(*run));
	struct hm_wi_before *b = hm_wi_before_new(64, 0, 0), *b2 = hm_wi_before_new(64, 0, 0);
	struct hm_wi_sum sum;
	struct hm_whatif w, w1, w2;
	struct rfeed rf;

	assert_non_null(run);
	false_sharing(f, ws, BASE, 1500);
	for (size_t i = 0; i < n; i++) {
		run[i] = f->acc[i % f->n];
		run[i].s.time += (i / f->n) * 10000ull * 1500;
		run[i].s.addr += (i / f->n) % 3 * 4096;	/* three objects, three lines */
		run[i].obj_base += (i / f->n) % 3 * 4096;
	}
	plan_edit(f, HM_WI_PAD, "worker_stats", "errors", 56);
	f->plan.jobs = 2;
	hm_wi_sum_init(&sum, 64);
	hm_wi_sum_add(&sum, run, n);
	hm_wi_before_add(b, run, n);
	hm_wi_before_add(b2, run, n);
	rf = (struct rfeed){run, n, 0, 0};
	assert_int_equal(hm_whatif_run_feed(&f->a, &sum, &f->plan, 0, feed_room, &rf, b, &w,
					    &f->err), 0);
	assert_true(rf.lent >= n / HM_HANDOFF_CHUNK);
	assert_int_equal(rf.most, HM_HANDOFF_CHUNK);
	assert_int_equal(hm_whatif_run_feed(&f->a, &sum, &f->plan, 0, feed_all,
					    &(struct afeed1){run, n}, NULL, &w1, &f->err), 0);
	/* a feed that does not write into the room it is lent: placed here all the same */
	assert_int_equal(hm_whatif_run_feed(&f->a, &sum, &f->plan, 0, feed_all,
					    &(struct afeed1){run, n}, b2, &w2, &f->err), 0);
	assert_int_equal(w.after.nr, 6);
	assert_int_equal(w.after.total, n);
	for (const struct hm_whatif *o = &w1; o; o = o == &w1 ? &w2 : NULL) {
		assert_int_equal(w.after.nr, o->after.nr);
		assert_int_equal(w.after.total, o->after.total);
		for (size_t i = 0; i < w.after.nr; i++) {
			assert_int_equal(w.after.lines[i].addr, o->after.lines[i].addr);
			assert_int_equal(w.after.lines[i].records, o->after.lines[i].records);
			assert_int_equal(w.after.lines[i].contention, o->after.lines[i].contention);
			assert_int_equal(w.after.lines[i].verdict, o->after.lines[i].verdict);
		}
		assert_int_equal(w.counts.moved, o->counts.moved);
		assert_int_equal(w.stops, o->stops);
	}
	assert_int_equal(w.counts.affected, n);
	assert_int_equal(w.stops, 3);
	hm_wi_before_free(b);
	hm_wi_before_free(b2);
	hm_whatif_free(&w2);
	hm_wi_sum_free(&sum);
	hm_whatif_free(&w);
	hm_whatif_free(&w1);
	free(run);
}

/* The recorded side built during a streamed run's first read, from chunks that are not
 * the replay's batches, is the one the replay builds, down to each row's type (two
 * opens of one file: two types with one name); past the line bound, or for other
 * batches, it is refused and the replay builds that side. */
static void test_recorded_side_built_during_first_read(void **state)
{
	struct fx *f = *state;
	const struct hm_type *ws = type_in(f, FS, "worker_stats");
	const struct hm_type *ws2 = type_in(f, FS, "worker_stats");	/* another open */
	struct hm_wi_before *b = hm_wi_before_new(64, 0, 0), *small = hm_wi_before_new(64, 0, 1);
	struct hm_wi_plan p1;
	struct hm_wi_sum sum;
	struct hm_lines pre, pre1;
	struct hm_whatif w;
	size_t by_ws2 = 0, by_ws = 0;

	assert_ptr_not_equal(ws, ws2);
	false_sharing(f, ws, BASE, 300);
	false_sharing(f, ws, BASE + 4096, 300);
	for (size_t i = 0; i < f->n; i += 2)
		f->acc[i].type = ws2;
	for (size_t i = 0; i < f->n; i += 97) {
		hm_wi_before_add(b, f->acc + i, f->n - i < 97 ? f->n - i : 97);
		hm_wi_before_add(small, f->acc + i, f->n - i < 97 ? f->n - i : 97);
	}
	plan_edit(f, HM_WI_PAD, "worker_stats", "errors", 56);
	hm_wi_sum_init(&sum, 64);
	hm_wi_sum_add(&sum, f->acc, f->n);
	assert_int_equal(hm_whatif_run_feed(&f->a, &sum, &f->plan, 0, feed_all,
					    &(struct afeed1){f->acc, f->n}, NULL, &w, &f->err), 0);
	assert_int_equal(hm_wi_before_end(b, &f->a, &f->plan, 0, HM_WI_BATCH / 4, &pre), -1);
	assert_int_equal(hm_wi_before_end(b, &f->a, &f->plan, 0, HM_WI_BATCH, &pre), 0);
	assert_int_equal(pre.nr, w.before.nr);
	assert_int_equal(pre.total, w.before.total);
	for (size_t i = 0; i < pre.nr; i++) {
		const struct hm_line *x = &pre.lines[i], *y = &w.before.lines[i];

		assert_int_equal(x->addr, y->addr);
		assert_int_equal(x->records, y->records);
		assert_int_equal(x->verdict, y->verdict);
		assert_int_equal(x->nr_fields, y->nr_fields);
		for (uint32_t k = 0; k < x->nr_fields; k++) {
			assert_ptr_equal(x->fields[k].type, y->fields[k].type);
			assert_int_equal(x->fields[k].records, y->fields[k].records);
			by_ws2 += x->fields[k].type == ws2;
			by_ws += x->fields[k].type == ws;
		}
	}
	assert_true(by_ws2 > 0 && by_ws > 0);
	p1 = f->plan;
	p1.max_lines = 1;	/* two lines: one was dropped where the replay may not drop it */
	assert_int_equal(hm_wi_before_end(small, &f->a, &p1, 0, HM_WI_BATCH, &pre1), -1);
	hm_wi_before_free(b);
	hm_wi_before_free(small);
	hm_wi_sum_free(&sum);
	hm_whatif_free(&w);
}

static void test_order_that_keeps_fields_together_stays_shared(void **state)
{
	struct fx *f = *state;
	const struct hm_type *ws = type_in(f, FS, "worker_stats");
	const char *order[] = {"errors", "ops"};
	struct hm_wi_edit e = {.kind = HM_WI_ORDER, .type = "worker_stats", .order = order,
			       .nr_order = 2};
	struct hm_wi_spec spec = {.kind = HM_WI_ORDER, .edits = &e, .nr_edits = 1,
				  .line_size = 64};
	struct hm_whatif w;

	false_sharing(f, ws, BASE, 100);
	assert_int_equal(hm_whatif_plan(&f->a, f->acc, f->n, &spec, &f->plan, &f->err), 0);
	assert_int_equal(hm_whatif_run(&f->a, f->acc, f->n, &f->plan, 0, &w, &f->err), 0);
	assert_int_equal(w.stays, 1);
	assert_int_equal(w.false_after, 1);
	assert_int_equal(w.ta.contention, w.tb.contention);	/* same interleaving */
	hm_whatif_free(&w);
}

static void test_change_that_joins_fields_starts_sharing(void **state)
{
	struct fx *f = *state;
	const struct hm_type *a = type_in(f, XFS_A, "inode_like");
	const struct hm_type *b = hm_layout_find(open_lay(f, XFS_B), "inode_like");
	struct hm_wi_spec spec = {.kind = HM_WI_LAYOUT, .build = f->lay[1], .line_size = 64};
	struct hm_whatif w;

	assert_non_null(b);
	for (int i = 0; i < 100; i++) {
		add(f, a, BASE, 56, 8, HM_OP_LOAD, 1, 10000ull * i);	/* i_lookups */
		add(f, a, BASE, 64, 8, HM_OP_STORE, 2, 10000ull * i + 3000);	/* i_writes */
	}
	assert_int_equal(hm_whatif_plan(&f->a, f->acc, f->n, &spec, &f->plan, &f->err), 0);
	assert_int_equal(row(&f->plan, "inode_like", "i_lookups")->new_off, 64);
	assert_int_equal(hm_whatif_run(&f->a, f->acc, f->n, &f->plan, 0, &w, &f->err), 0);
	assert_int_equal(w.tb.shared, 0);
	assert_int_equal(w.starts, 1);
	assert_int_equal(w.false_after, 1);
	assert_int_equal(w.changes[0].nr_before, 2);
	assert_true(w.ta.contention > 100);	/* from the recorded interleaving */
	hm_whatif_free(&w);
}

static void test_layout_of_padded_build(void **state)
{
	struct fx *f = *state;
	const struct hm_type *ws = type_in(f, FS, "worker_stats");
	struct hm_wi_spec spec = {.kind = HM_WI_LAYOUT, .build = open_lay(f, FS_PADDED),
				  .line_size = 64};
	struct hm_whatif w;

	false_sharing(f, ws, BASE + 32, 100);	/* misaligned: the new type's 64 rounds it */
	assert_int_equal(hm_whatif_plan(&f->a, f->acc, f->n, &spec, &f->plan, &f->err), 0);
	assert_int_equal(row(&f->plan, "worker_stats", "errors")->new_off, 64);
	assert_int_equal(trow(&f->plan, "worker_stats")->new_align, 64);
	assert_int_equal(hm_whatif_run(&f->a, f->acc, f->n, &f->plan, 0, &w, &f->err), 0);
	assert_int_equal(w.replayed[0].obj_base, BASE + 64);
	assert_int_equal(w.ta.shared, 0);
	assert_int_equal(w.stops, 1);
	hm_whatif_free(&w);
}

static void test_layout_reports_absent_fields(void **state)
{
	struct fx *f = *state;
	const struct hm_type *b = type_in(f, XFS_B, "inode_like");
	struct hm_wi_spec spec = {.kind = HM_WI_LAYOUT, .build = open_lay(f, XFS_A),
				  .line_size = 64};
	struct hm_access out[2];
	struct hm_wi_counts c;

	add(f, b, BASE, 16, 4, HM_OP_LOAD, 1, 0);	/* i_imap.im_gen: only in B */
	add(f, b, BASE, 64, 8, HM_OP_LOAD, 1, 1);	/* i_lookups */
	assert_int_equal(hm_whatif_plan(&f->a, f->acc, f->n, &spec, &f->plan, &f->err), 0);
	assert_int_equal(f->plan.nr_absent, 1);
	assert_string_equal(f->plan.absent[0].type, "inode_like");
	assert_string_equal(f->plan.absent[0].field, "i_imap.im_gen");
	assert_int_equal(f->plan.absent[0].accesses, 1);
	hm_whatif_replay(&f->plan, f->acc, f->n, out, &c);
	assert_int_equal(c.dropped, 1);
	assert_int_equal(out[0].s.addr, 0);
	assert_int_equal(out[1].s.addr, BASE + 56);
}

/* A recorded type the new build leaves as it was is not kept in the plan, and the slot
 * it was built in is reused: the next type's rows must start afresh there. imap_like
 * from B itself (unchanged in B) and inode_like from A (changed in B), in either order. */
static void test_layout_unchanged_type_leaves_no_rows_behind(void **state)
{
	struct fx *f = *state;
	const char *want[] = {"i_imap", "i_name", "i_lookups", "i_writes", "i_flags"};
	struct hm_wi_spec spec = {.kind = HM_WI_LAYOUT, .build = open_lay(f, XFS_B),
				  .line_size = 64};
	const struct hm_wi_type *t;

	add(f, type_in(f, XFS_B, "imap_like"), BASE + 4096, 0, 8, HM_OP_LOAD, 1, 0);
	add(f, type_in(f, XFS_A, "inode_like"), BASE, 56, 8, HM_OP_LOAD, 1, 1);
	assert_int_equal(hm_whatif_plan(&f->a, f->acc, f->n, &spec, &f->plan, &f->err), 0);
	assert_int_equal(f->plan.nr_types, 1);
	t = trow(&f->plan, "inode_like");
	assert_int_equal(t->nr, 5);
	for (uint32_t i = 0; i < t->nr; i++) {
		assert_non_null(t->m[i].name);
		assert_string_equal(t->m[i].name, want[i]);
	}
	assert_int_equal(row(&f->plan, "inode_like", "i_lookups")->new_off, 64);
}

/* PMU: a HITM load keeps its HITM only while its new line is still shared. */
static void test_pmu_hitm_dropped_when_line_no_longer_shared(void **state)
{
	struct fx *f = *state;
	const struct hm_type *ws = type_in(f, FS, "worker_stats");
	const uint64_t hitm = PERF_MEM_S(OP, LOAD) | PERF_MEM_S(LVL, HIT) | PERF_MEM_S(LVL, L3) |
			      PERF_MEM_S(SNOOP, HITM);
	const uint64_t store = PERF_MEM_S(OP, STORE) | PERF_MEM_S(LVL, HIT) | PERF_MEM_S(LVL, L1);
	struct hm_whatif w;

	for (int i = 0; i < 20; i++) {
		struct hm_access *x = add(f, ws, BASE, 0, 8, HM_OP_LOAD, 1, 1000ull * i);

		x->s.source = HM_SRC_PMU;
		x->s.data_src = hitm;
		x = add(f, ws, BASE, 8, 8, HM_OP_STORE, 2, 1000ull * i + 500);
		x->s.source = HM_SRC_PMU;
		x->s.data_src = store;
	}
	plan_edit(f, HM_WI_PAD, "worker_stats", "errors", 56);
	assert_int_equal(hm_whatif_run(&f->a, f->acc, f->n, &f->plan, 0, &w, &f->err), 0);
	assert_int_equal(w.before.source, HM_SRC_PMU);
	assert_int_equal(w.tb.contention, 20);		/* HITM loads */
	assert_int_equal(w.ta.contention, 0);
	assert_int_equal(w.stops, 1);
	hm_whatif_free(&w);
}

/* Anonymous members by #N; a packed struct keeps its members unaligned; unions refused. */
static void test_anonymous_packed_and_union(void **state)
{
	struct fx *f = *state;
	const struct hm_type *an = type_in(f, TRICKY, "anon_nest");
	const struct hm_type *ps = hm_layout_find(f->lay[0], "packed_s");
	const struct hm_type *tu = hm_layout_find(f->lay[0], "top_union");
	const char *order[] = {"#1", "kind"};
	struct hm_wi_edit e[2] = {
		{.kind = HM_WI_ORDER, .type = "anon_nest", .order = order, .nr_order = 2},
		{.kind = HM_WI_PAD, .type = "struct packed_s", .field = "i", .value = 2},
	};
	struct hm_wi_spec spec = {.kind = HM_WI_ORDER, .edits = e, .nr_edits = 2,
				  .line_size = 64};

	add(f, an, BASE, 0, 4, HM_OP_LOAD, 1, 0);
	add(f, ps, BASE + 256, 1, 4, HM_OP_LOAD, 1, 1);
	add(f, tu, BASE + 512, 0, 4, HM_OP_LOAD, 1, 2);
	assert_int_equal(hm_whatif_plan(&f->a, f->acc, f->n, &spec, &f->plan, &f->err), 0);
	assert_int_equal(row(&f->plan, "anon_nest", "kind")->new_off, 8);	/* after the union */
	assert_int_equal(trow(&f->plan, "anon_nest")->m[0].new_off, 0);
	assert_null(trow(&f->plan, "anon_nest")->m[0].name);
	assert_int_equal(row(&f->plan, "packed_s", "i")->new_off, 3);	/* 1 + 2, packed */
	assert_int_equal(row(&f->plan, "packed_s", "s")->new_off, 7);
	assert_int_equal(trow(&f->plan, "packed_s")->new_size, 17);
	hm_whatif_plan_free(&f->plan);
	e[0] = (struct hm_wi_edit){.kind = HM_WI_PAD, .type = "top_union", .field = "#0", .value = 8};
	spec.nr_edits = 1;
	assert_int_equal(hm_whatif_plan(&f->a, f->acc, f->n, &spec, &f->plan, &f->err), -1);
	assert_non_null(strstr(f->err.msg, "is a union"));
}

static void test_unknown_type_names_the_nearest(void **state)
{
	struct fx *f = *state;
	const struct hm_type *ws = type_in(f, FS, "worker_stats");
	struct hm_wi_edit e = {.kind = HM_WI_PAD, .type = "worker_stat", .field = "errors",
			       .value = 8};
	struct hm_wi_spec spec = {.kind = HM_WI_PAD, .edits = &e, .nr_edits = 1, .line_size = 64};

	add(f, ws, BASE, 0, 8, HM_OP_STORE, 1, 0);
	assert_int_equal(hm_whatif_plan(&f->a, f->acc, f->n, &spec, &f->plan, &f->err), -1);
	assert_int_equal(f->err.code, HM_EXIT_INPUT);
	assert_non_null(strstr(f->err.msg, "nearest: worker_stats"));
	e = (struct hm_wi_edit){.kind = HM_WI_ALIGN, .type = "worker_stats", .field = "eror",
				.value = 64};
	assert_int_equal(hm_whatif_plan(&f->a, f->acc, f->n, &spec, &f->plan, &f->err), -1);
	assert_non_null(strstr(f->err.msg, "no member 'eror'; nearest: errors"));
	e.field = "errors";
	e.value = 48;
	assert_int_equal(hm_whatif_plan(&f->a, f->acc, f->n, &spec, &f->plan, &f->err), -1);
	assert_non_null(strstr(f->err.msg, "power of two"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_pad_moves_following_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pad_keeps_offset_inside_field_and_base, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_align_rounds_field_and_object_base, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_order_matches_the_compiler, setup, teardown),
		cmocka_unit_test_setup_teardown(test_edit_moves_types_that_embed_it, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bitfields_move_with_their_storage_unit, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_arrays_take_the_new_stride, setup, teardown),
		cmocka_unit_test_setup_teardown(test_grown_objects_push_later_ones, setup, teardown),
		cmocka_unit_test_setup_teardown(test_padding_hypothesis_predicts_no_sharing, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_order_that_keeps_fields_together_stays_shared,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_change_that_joins_fields_starts_sharing, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_layout_of_padded_build, setup, teardown),
		cmocka_unit_test_setup_teardown(test_layout_unchanged_type_leaves_no_rows_behind, setup, teardown),
		cmocka_unit_test_setup_teardown(test_layout_reports_absent_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pmu_hitm_dropped_when_line_no_longer_shared,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_anonymous_packed_and_union, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_type_names_the_nearest, setup, teardown),
		cmocka_unit_test_setup_teardown(test_feed_writes_into_the_after_sides_slots, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_recorded_side_built_during_first_read, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
