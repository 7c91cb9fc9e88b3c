/* libFuzzer target for the whole report pipeline, as `hitmap report` runs it: a perf.data
 * streamed in small batches (resolve/load.c: two passes, time order across batch
 * boundaries), every sample resolved against a real ELF file (code, decode, data
 * symbolization through its DWARF), lines, splits and heat maps accumulated batch by
 * batch, the sharing verdicts, and every renderer (text views, JSON, the c2c view in
 * both widths and its JSON, the --html page, heat map text, JSON and HTML, --stats) into
 * /dev/null. What the perfdata target cannot reach: the reader
 * alone never hands events to the resolver or the analyzers.
 *
 * The seeds name the examples as /proc/self/cwd/examples/bin/NAME (seeds.sh rewrites
 * their MMAP records with renamebin.py), so the recorded files resolve from the working
 * directory, the repository root under tests/fuzz/run.sh and fuzz_regress.sh, wherever
 * the checkout is, and the data symbolizer reads them as well as the code resolver (it
 * does not apply --sysroot). The kernel is tests/data/kallsyms.txt only: no vmlinux, no
 * kcore, no BTF; debuginfod is off. The batch size (7 or 97), line size, conflict window,
 * --top, a --type filter and, for one length in four, hm_recording_load (the whole file at
 * once, as compare and whatif read it) instead of the stream follow from the input's
 * length, so an input always runs the same way.
 * Built and run by `make fuzz` (tests/fuzz/README.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/c2c_view.h"
#include "analyzer/heatmap.h"
#include "resolve/load.h"
#include "render/html.h"
#include "render/report_print.h"
#include "render/stats_print.h"
#include "tests/fuzz/fuzz_util.h"
#include "render/c2c_print.h"
#include "render/heatmap_print.h"

#define MAX_DRAWN 3

static FILE *null_out;

/* --- what cli/report.c does with the batches --- */

struct run {
	struct hm_arena ar;
	struct hm_lines_acc *lines;
	struct hm_splits_acc *splits;
	struct hm_splits split_out;
	struct hm_heat_set heat;
	struct hm_c2c_acc *c2c;		/* the c2c view, as --view c2c builds it */
	uint32_t line_size;
	const char *type;
	struct hm_err err;
};

static int matches_type(const struct hm_access *a, const char *want)
{
	const struct hm_type *t = hm_type_strip(a->type);

	if (t && t->name && !strcmp(t->name, want))
		return 1;
	return a->object && !strcmp(a->object, want);
}

static int keep_type(const struct hm_access *x, void *ctx)
{
	return matches_type(x, ctx);
}

static int on_batch(const struct hm_access *acc, size_t n, void *arg)
{
	struct run *r = arg;

	if (hm_lines_acc_add(r->lines, acc, n, &r->err))
		return -1;
	hm_splits_add(r->splits, acc, n);
	hm_heat_set_add(&r->heat, acc, n);
	hm_c2c_acc_add(r->c2c, acc, n);
	return 0;
}

/* The busiest heat maps into hp, each rendered as text and JSON; their number. */
static size_t heatmaps(struct run *r, const struct hm_heat **hp)
{
	size_t n = 0;
	struct hm_json j;

	n = hm_heat_set_busiest(&r->heat, hp, MAX_DRAWN);
	if (!n)
		return 0;
	hm_heat_print_html(null_out, hp, n, "fuzz");
	hm_json_init(&j, null_out);
	hm_json_obj_begin(&j, NULL);
	hm_json_arr_begin(&j, "types");
	for (size_t i = 0; i < n; i++) {
		hm_heat_print_text(null_out, hp[i]);
		hm_heat_print_json(&j, hp[i]);
	}
	hm_json_arr_end(&j);
	hm_json_obj_end(&j);
	hm_json_finish(&j);
	return n;
}

/* --view c2c in both widths and its JSON member, then the --html page. */
static void c2c_and_page(struct run *r, struct hm_recording *rec, const struct hm_lines *lines,
			 const struct hm_heat **hp, size_t nh, size_t top)
{
	struct hm_c2c_view c2v;
	struct hm_json j;
	struct hm_html_page pg = {.input = "fuzz", .lost = rec->lost, .lines = lines,
				  .heat = hp, .nr_heat = nh, .command = "fuzz -x"};

	hm_c2c_acc_end(r->c2c, &r->ar, lines, &c2v);
	r->c2c = NULL;
	hm_c2c_print_text(null_out, &c2v, "fuzz", top, 0);
	hm_c2c_print_text(null_out, &c2v, "fuzz", top, 1);
	hm_json_init(&j, null_out);
	hm_json_obj_begin(&j, NULL);
	hm_c2c_print_json(&j, &c2v, top);
	hm_json_obj_end(&j);
	hm_json_finish(&j);
	hm_html_print_report(null_out, &pg);
}

static void analyze(struct run *r, struct hm_recording *rec, size_t top)
{
	const struct hm_heat *hp[MAX_DRAWN];
	size_t nh;
	struct hm_lines lines;
	struct hm_report_view v = {.input = "fuzz", .lost = rec->lost, .top = top,
				   .splits = &r->split_out};

	hm_lines_acc_end(r->lines, &lines);
	r->lines = NULL;
	hm_splits_end(r->splits);
	r->splits = NULL;
	hm_heat_set_end(&r->heat);
	nh = heatmaps(r, hp);
	v.source = lines.source;
	v.lines = &lines;
	for (int view = HM_VIEW_LINES; view <= HM_VIEW_SPLITS; view++) {
		v.view = (enum hm_report_view_kind)view;
		hm_report_print_text(null_out, &v);
	}
	hm_report_print_json(null_out, &v);
	hm_stats_print(null_out, rec->resolver);
	c2c_and_page(r, rec, &lines, hp, nh, top);
}

static void run_free(struct run *r)
{
	struct hm_lines discard;

	if (r->lines)
		hm_lines_acc_end(r->lines, &discard);
	if (r->c2c)
		hm_c2c_acc_end(r->c2c, &r->ar, NULL, &(struct hm_c2c_view){0});
	hm_splits_end(r->splits);
	hm_heat_set_end(&r->heat);
	hm_arena_free(&r->ar);
}

/* --- structure-aware mutation ---
 * Byte mutation seldom hits a record header: half the time one record of the data
 * section (file mode) is damaged the ways hostile files are: its size below the header,
 * short or long by 8, its type or misc changed, a byte of its body flipped, or the file
 * cut right after it. The rest is libFuzzer's own mutation (weak: replay.c has none). */
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max) __attribute__((weak));
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max, unsigned int seed);

static uint32_t next_rand(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

/* Offset of a record of the data section picked by r, or 0; its size in *rsize. */
static size_t pick_record(const uint8_t *data, size_t size, uint32_t r, uint16_t *rsize)
{
	uint64_t doff, dsize, end;
	size_t pos, n = 0, want;

	if (size < 104 || memcmp(data, "PERFILE2", 8))
		return 0;
	memcpy(&doff, data + 40, 8);
	memcpy(&dsize, data + 48, 8);
	if (doff >= size)
		return 0;
	end = dsize < size - doff ? doff + dsize : size;
	for (pos = doff; pos + 8 <= end && n < 100000; n++) {	/* count them */
		memcpy(rsize, data + pos + 6, 2);
		if (*rsize < 8)
			break;
		pos += *rsize;
	}
	if (!n)
		return 0;
	want = r % n;
	for (pos = doff; want--; pos += *rsize)
		memcpy(rsize, data + pos + 6, 2);
	memcpy(rsize, data + pos + 6, 2);
	return pos;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max, unsigned int seed)
{
	static const uint32_t types[] = { 0, 1, 3, 9, 10, 11, 12, 68, 73, 80, 0xffff };
	uint32_t x = seed | 1, r = next_rand(&x), v;
	uint16_t rsize, s16;
	size_t at;

	if ((r & 1 || !(at = pick_record(data, size, next_rand(&x), &rsize))) && LLVMFuzzerMutate)
		return LLVMFuzzerMutate(data, size, max);
	if (!at)
		return size;
	switch ((r >> 1) % 6) {
	case 0: s16 = (uint16_t)(next_rand(&x) % 8); memcpy(data + at + 6, &s16, 2); break;
	case 1: s16 = rsize - 8; memcpy(data + at + 6, &s16, 2); break;
	case 2: s16 = rsize + 8; memcpy(data + at + 6, &s16, 2); break;
	case 3:
		v = types[next_rand(&x) % (sizeof(types) / sizeof(types[0]))];
		memcpy(data + at, &v, 4);
		data[at + 4] ^= (uint8_t)next_rand(&x);
		break;
	case 4:
		if (rsize > 8 && at + rsize <= size)
			data[at + 8 + next_rand(&x) % (rsize - 8u)] ^= (uint8_t)(1u << (r >> 8) % 8);
		break;
	case 5:
		return at + rsize < size ? at + rsize : size;
	}
	return size;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hm_resolve_opts ro = {.vmlinux = "", .kcore = "", .kernel_btf = "",
				     .kallsyms = "tests/data/kallsyms.txt",
				     .osrelease = "hm-fuzz"};
	struct hm_recording rec = {0};
	struct hm_err err = {0};
	struct run r = {0};
	const char *path;
	size_t batch = size & 1 ? 7 : 97;

	if (!null_out) {
		unsetenv("DEBUGINFOD_URLS");	/* no network */
		null_out = fopen("/dev/null", "w");
	}
	if (!null_out || !(path = hm_fuzz_file(data, size, NULL)))
		return 0;
	r.line_size = size & 2 ? 128 : 64;
	r.type = (size & 12) == 12 ? "worker_stats" : NULL;
	hm_arena_init(&r.ar);
	hm_heat_set_init(&r.heat, &r.ar, &(struct hm_heat_opts){.line_size = r.line_size,
							       .all_elems = r.line_size == 128});
	r.lines = hm_lines_acc_new(&r.ar, r.line_size, size & 16 ? 1000 : 0);
	r.c2c = hm_c2c_acc_new(r.line_size, &(struct hm_c2c_opts){
		.display = (enum hm_c2c_display)(size % 4), .show_all = (size & 32) != 0,
		.coalesce = HM_C2C_BY_IADDR | (size & 8 ? HM_C2C_BY_TID | HM_C2C_BY_PID : 0)});
	if (hm_splits_begin(&r.ar, r.line_size, &r.split_out, &r.splits, &err)) {
		run_free(&r);
		return 0;
	}
	if ((size & 192) == 192) {	/* whole, as compare and whatif load a recording */
		if (hm_recording_load(path, &ro, r.type ? keep_type : NULL, (void *)r.type, &rec,
				      &err) || on_batch(rec.acc, rec.n, &r)) {
			run_free(&r);
			hm_recording_free(&rec);
			return 0;
		}
		rec.total = rec.n;
	} else if (hm_recording_stream(path, &ro, r.type ? keep_type : NULL, (void *)r.type,
				       batch, on_batch, &r, &rec, &err)) {
		run_free(&r);	/* before rec: it holds the resolver's strings */
		hm_recording_free(&rec);
		return 0;
	}
	if (rec.total)
		analyze(&r, &rec, size & 32 ? 3 : 0);
	run_free(&r);
	hm_recording_free(&rec);
	return 0;
}
