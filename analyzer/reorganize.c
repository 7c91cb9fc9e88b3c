/* pahole -R's search, on a layout recomputed by C's rules after every move.
 *
 * pahole 1.24 edits offsets and the size arithmetically as it moves members, and gets
 * some wrong: struct { int a; char b; } comes out 12 bytes ("saved -4 bytes"), and a
 * struct with a __aligned__(64) member loses the tail padding that alignment requires.
 * Here each candidate order is laid out again (every member at the next multiple of its
 * alignment, the size a multiple of the largest), so the result is a layout a compiler
 * gives; where pahole's is one too, the sizes agree (tests/e2e/layout_reorg.sh).
 *
 * Like pahole, bitfields never move (members sharing a storage unit are one piece), nor
 * does the member right after a hole (the hole may be an explicit alignment); a move
 * only fills a hole, so no member ever goes later and the search ends. */
#include "analyzer/reorganize.h"

#include <string.h>

#include "symbolize/shape.h"

#define MAX_PASSES 100000

/* One member, or the members overlapping in bytes (a bitfield storage unit and what it
 * was combined with): what moves as one piece. */
struct unit {
	uint32_t first, count;		/* perm[first .. first + count) */
	uint64_t off, size;		/* the original layout */
	uint32_t align;			/* natural, explicit or inferred */
	int movable;
	const char *name, *last;	/* first and last member's names */
	uint64_t writer;		/* first writing thread, 0 none */
	uint8_t multi;			/* written by several threads */
	uint64_t lines;			/* lines it touches in the original layout */
};

struct ctx {
	struct hm_arena *a;
	const struct hm_type *t;
	const struct hm_reorg_opts *o;
	struct hm_shape sh;
	uint32_t *perm;			/* member indexes by offset */
	struct unit *u;
	uint32_t nr;
	uint32_t struct_align;
	uint32_t *order, *trial;	/* unit indexes in the current and a trial order */
	uint64_t *off, *toff;		/* offsets by position, current and trial */
	uint64_t size, tsize;
	struct hm_reorg *out;
	uint32_t cap_moves;
};

static uint64_t round_up(uint64_t x, uint64_t a)
{
	return a > 1 ? (x + a - 1) / a * a : x;
}

/* The smallest alignment above al that puts something ending at end at off, 0 if none:
 * what an unrecorded __aligned__ most likely was. */
static uint64_t align_giving(uint64_t end, uint64_t off, uint64_t al)
{
	for (uint64_t p = al * 2; p <= 4096 && off % p == 0; p *= 2)
		if (round_up(end, p) == off)
			return p;
	return 0;
}

static uint64_t lines_of(uint64_t off, uint64_t size, uint32_t ls)
{
	return size ? (off + size - 1) / ls - off / ls + 1 : 0;
}

static void sort_perm(struct ctx *c)
{
	for (uint32_t i = 0; i < c->sh.nr; i++) {
		uint32_t v = i, j = i;

		while (j > 0 && c->sh.ms[c->perm[j - 1]].offset > c->sh.ms[v].offset) {
			c->perm[j] = c->perm[j - 1];
			j--;
		}
		c->perm[j] = v;
	}
}

static void make_units(struct ctx *c)
{
	for (uint32_t k = 0; k < c->sh.nr; k++) {
		const struct hm_member_shape *s = &c->sh.ms[c->perm[k]];
		struct unit *u = c->nr ? &c->u[c->nr - 1] : NULL;
		uint32_t al = s->m->align > s->align ? s->m->align : s->align;

		if (u && s->offset < u->off + u->size) {
			u->count++;
			u->movable = 0;
			if (s->offset + s->size > u->off + u->size)
				u->size = s->offset + s->size - u->off;
			u->align = al > u->align ? al : u->align;
			continue;
		}
		u = &c->u[c->nr++];
		*u = (struct unit){.first = k, .count = 1, .off = s->offset, .size = s->size,
				   .align = al ? al : 1};
		u->movable = !s->m->bit_size && !s->m->is_base && s->size;
		u->name = s->m->name ? s->m->name : hm_arena_printf(c->a, "#%u", c->perm[k]);
	}
	for (uint32_t i = 0; i < c->nr; i++) {
		uint32_t k = c->perm[c->u[i].first + c->u[i].count - 1];
		const struct hm_member *m = c->sh.ms[k].m;

		c->u[i].last = m->name ? m->name : hm_arena_printf(c->a, "#%u", k);
	}
	for (uint32_t i = 0; i < c->nr; i++)
		c->u[i].lines = lines_of(c->u[i].off, c->u[i].size, c->o->line_size);
}

/* Lays out units in order; fills offs and returns the size. */
static uint64_t layout(const struct ctx *c, const uint32_t *order, uint64_t *offs)
{
	uint64_t end = 0;

	for (uint32_t p = 0; p < c->nr; p++) {
		const struct unit *u = &c->u[order[p]];

		offs[p] = round_up(end, u->align);
		end = offs[p] + u->size;
	}
	return round_up(end, c->struct_align);
}

/* Checks that C's rules give the original layout, inferring the alignments DWARF or BTF
 * do not record (BTF has no __aligned__; a member pushed to 64 was aligned to 64). */
static const char *infer_alignment(struct ctx *c)
{
	uint64_t end = 0, size;
	uint32_t maxal = c->t->align ? c->t->align : 1;

	if (c->sh.packed)
		return "packed: its members are not where their alignment puts them";
	for (uint32_t i = 0; i < c->nr; i++) {
		struct unit *u = &c->u[i];
		uint64_t at = round_up(end, u->align), p;

		if (u->off % u->align)
			return hm_arena_printf(c->a, "member '%s' is not aligned as its type", u->name);
		if (u->off > at) {
			if (!(p = align_giving(end, u->off, u->align)))
				return hm_arena_printf(c->a, "no alignment puts member '%s' at %llu",
						       u->name, (unsigned long long)u->off);
			u->align = (uint32_t)p;
		} else if (u->off < at) {
			return hm_arena_printf(c->a, "member '%s' overlaps the one before", u->name);
		}
		maxal = u->align > maxal ? u->align : maxal;
		end = u->off + u->size;
	}
	size = round_up(end, maxal);
	if (c->t->size > size) {
		uint64_t p = align_giving(end, c->t->size, maxal);

		if (!p)
			return "its size is not what its members and alignment give";
		maxal = (uint32_t)p;
	} else if (c->t->size < size) {
		return "its size is smaller than its members and alignment give";
	}
	c->struct_align = maxal;
	return NULL;
}

static int conflict(const struct unit *x, const struct unit *y)
{
	return x->writer && y->writer && (x->multi || y->multi || x->writer != y->writer);
}

static int share_line(uint64_t xo, uint64_t xs, uint64_t yo, uint64_t ys, uint32_t ls)
{
	return xs && ys && xo / ls <= (yo + ys - 1) / ls && yo / ls <= (xo + xs - 1) / ls;
}

static void note(struct ctx *c, const struct hm_reorg_move *m)
{
	struct hm_reorg *r = c->out;

	for (uint32_t i = 0; i < r->nr_moves; i++)	/* a pass tries a refused move again */
		if (r->moves[i].refused && m->refused && !strcmp(r->moves[i].what, m->what))
			return;
	if (r->nr_moves == c->cap_moves) {
		struct hm_reorg_move *n = hm_arena_alloc(c->a, sizeof(*n) * (c->cap_moves * 2 + 8));

		if (r->nr_moves)
			memcpy(n, r->moves, sizeof(*n) * r->nr_moves);
		r->moves = n;
		c->cap_moves = c->cap_moves * 2 + 8;
	}
	r->moves[r->nr_moves++] = *m;
}

/* The line rule on the trial layout: 0 when it holds, else fills why and other. */
static int line_rule(const struct ctx *c, struct hm_reorg_move *m)
{
	uint32_t ls = c->o->line_size;

	if (c->o->allow_splits)
		return 0;
	for (uint32_t p = 0; p < c->nr; p++) {
		const struct unit *u = &c->u[c->trial[p]];

		/* a member wider than a line straddles wherever it is: only narrower ones split */
		if (u->size <= ls && lines_of(c->toff[p], u->size, ls) > u->lines) {
			m->why = HM_RW_SPLIT;
			m->other = u->name;
			return 1;
		}
	}
	for (uint32_t p = 0; p < c->nr; p++)
		for (uint32_t q = p + 1; q < c->nr; q++) {
			const struct unit *x = &c->u[c->trial[p]], *y = &c->u[c->trial[q]];

			if (conflict(x, y) && share_line(c->toff[p], x->size, c->toff[q], y->size, ls) &&
			    !share_line(x->off, x->size, y->off, y->size, ls)) {
				m->why = HM_RW_SHARING;
				if (!strcmp(x->name, m->what) || !strcmp(y->name, m->what))
					m->other = strcmp(x->name, m->what) ? x->name : y->name;
				else
					m->other = hm_arena_printf(c->a, "%s' and '%s", x->name, y->name);
				return 1;
			}
		}
	return 0;
}

/* Moves the unit at position j to right after position i, when it fits the hole there
 * and the line rule holds. */
static int try_move(struct ctx *c, uint32_t i, uint32_t j)
{
	const struct unit *u = &c->u[c->order[j]];
	struct hm_reorg_move m = {.what = u->name, .after = c->u[c->order[i]].last,
				  .old_off = u->off};
	uint32_t p = 0;

	for (uint32_t k = 0; k < c->nr; k++) {
		if (k != j)
			c->trial[p++] = c->order[k];
		if (k == i)
			c->trial[p++] = c->order[j];
	}
	c->tsize = layout(c, c->trial, c->toff);
	m.new_off = c->toff[i + 1];
	if (m.new_off + u->size > c->off[i + 1] || c->tsize > c->size)
		return 0;	/* does not fit the hole */
	if (line_rule(c, &m)) {
		m.refused = 1;
		note(c, &m);
		return 0;
	}
	note(c, &m);
	memcpy(c->order, c->trial, sizeof(*c->order) * c->nr);
	memcpy(c->off, c->toff, sizeof(*c->off) * c->nr);
	c->size = c->tsize;
	return 1;
}

static uint64_t hole_after(const struct ctx *c, uint32_t p)
{
	return p + 1 < c->nr ? c->off[p + 1] - c->off[p] - c->u[c->order[p]].size : 0;
}

/* One pass of pahole's three searches; 1 when a member moved. */
static int pass(struct ctx *c)
{
	uint32_t last = c->nr - 1;
	uint64_t padding = c->size - c->off[last] - c->u[c->order[last]].size;
	int holes = 0;

	for (uint32_t i = 0; i < last; i++) {
		uint64_t hole = hole_after(c, i);

		if (!hole)
			continue;
		holes = 1;
		/* a later member with a hole after it that fits this one */
		for (uint32_t k = i + 1; k < last; k++) {
			const struct unit *u = &c->u[c->order[k]];

			if (!hole_after(c, k) || !u->size || u->size > hole)
				continue;
			if (k == i + 1 || !u->movable)
				break;
			if (try_move(c, i, k))
				return 1;
		}
		/* the last member, when the struct has tail padding */
		if (padding && c->u[c->order[last]].movable &&
		    c->u[c->order[last]].size <= hole && try_move(c, i, last))
			return 1;
	}
	if (!holes)
		return 0;
	/* members taken from the tail */
	for (uint32_t i = 0; i < last; i++) {
		uint64_t hole = hole_after(c, i);

		for (uint32_t k = last; hole && k > i; k--) {
			const struct unit *u = &c->u[c->order[k]];

			if (!u->size || u->size > hole)
				continue;
			if (k == i + 1 || !u->movable)
				break;
			if (try_move(c, i, k))
				return 1;
		}
	}
	return 0;
}

static void writers_of_units(struct ctx *c)
{
	const struct hm_reorg_writers *w = c->o->writers;

	if (!w || w->nr != c->sh.nr)
		return;
	for (uint32_t i = 0; i < c->nr; i++) {
		struct unit *u = &c->u[i];

		for (uint32_t k = u->first; k < u->first + u->count; k++) {
			uint32_t mi = c->perm[k];

			if (!w->thread[mi])
				continue;
			if (u->writer && u->writer != w->thread[mi])
				u->multi = 1;
			u->multi |= w->multi[mi];
			u->writer = u->writer ? u->writer : w->thread[mi];
		}
	}
}

/* A member refused early may move later, once another move made room: keep the move. */
static void drop_overtaken(struct hm_reorg *r)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < r->nr_moves; i++) {
		int moved = 0;

		for (uint32_t k = i + 1; r->moves[i].refused && k < r->nr_moves; k++)
			moved |= !r->moves[k].refused && !strcmp(r->moves[k].what, r->moves[i].what);
		if (!moved)
			r->moves[n++] = r->moves[i];
	}
	r->nr_moves = n;
}

static const struct hm_type *build_type(struct ctx *c)
{
	struct hm_type *nt = hm_arena_alloc(c->a, sizeof(*nt));
	struct hm_member *mm = hm_arena_alloc(c->a, sizeof(*mm) * (c->sh.nr + 1));
	uint32_t n = 0;

	*nt = *c->t;
	for (uint32_t p = 0; p < c->nr; p++) {
		const struct unit *u = &c->u[c->order[p]];

		for (uint32_t k = u->first; k < u->first + u->count; k++) {
			mm[n] = *c->sh.ms[c->perm[k]].m;
			mm[n].bit_offset = mm[n].bit_offset - u->off * 8 + c->off[p] * 8;
			n++;
		}
	}
	nt->members = mm;
	nt->nr_members = n;
	nt->size = c->size;
	nt->loaded = 1;
	nt->align_state = 0;
	return nt;
}

void hm_reorganize(struct hm_arena *a, const struct hm_type *t, const struct hm_reorg_opts *o,
		   struct hm_reorg *out)
{
	struct ctx c = {.a = a, .t = hm_type_strip(t), .o = o, .out = out};
	uint32_t ls = o->line_size;

	memset(out, 0, sizeof(*out));
	out->old_t = out->new_t = c.t;
	out->old_size = out->new_size = c.t->size;
	out->old_lines = out->new_lines = (c.t->size + ls - 1) / ls;
	if (c.t->kind == HM_T_UNION) {
		out->skipped = "a union: its members share offset 0";
		return;
	}
	hm_shape_compute(a, c.t, ls, &c.sh);
	if (!c.sh.nr) {
		out->skipped = "no data members";
		return;
	}
	c.perm = hm_arena_alloc(a, sizeof(*c.perm) * c.sh.nr);
	c.u = hm_arena_alloc(a, sizeof(*c.u) * c.sh.nr);
	sort_perm(&c);
	make_units(&c);
	if ((out->skipped = infer_alignment(&c)))
		return;
	writers_of_units(&c);
	c.order = hm_arena_alloc(a, sizeof(*c.order) * c.nr);
	c.trial = hm_arena_alloc(a, sizeof(*c.trial) * c.nr);
	c.off = hm_arena_alloc(a, sizeof(*c.off) * c.nr);
	c.toff = hm_arena_alloc(a, sizeof(*c.toff) * c.nr);
	for (uint32_t i = 0; i < c.nr; i++)
		c.order[i] = i;
	c.size = layout(&c, c.order, c.off);
	for (int n = 0; n < MAX_PASSES && pass(&c); n++)
		;
	drop_overtaken(out);
	out->new_size = c.size;
	out->align = c.struct_align;
	out->new_lines = (c.size + ls - 1) / ls;
	out->new_t = build_type(&c);
}
