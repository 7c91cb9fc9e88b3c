#include "render/diff_print.h"

#include <string.h>

#include "core/json.h"

/* Kinds that come in bulk when a member shifts; the text views show the first few per
 * type and count the rest (--json has them all). */
#define BULK_SHOWN 10

static int is_bulk(enum hm_fkind k)
{
	return k == HM_F_SHARED || k == HM_F_UNSHARED || k == HM_F_MOVED ||
	       k == HM_F_UNSTRADDLE || k == HM_F_HOLE_GONE;
}

static void summary_line(FILE *out, const struct hm_diff_view *v, const char *bold)
{
	const struct hm_diff *d = v->types;

	fprintf(out, "%s%zu of %zu type%s changed%s", bold, d->nr, d->compared,
		d->compared == 1 ? "" : "s", bold);
	if (d->nr_only_old || d->nr_only_new)
		fprintf(out, "; %zu only in old, %zu only in new", d->nr_only_old, d->nr_only_new);
	if (v->globals)
		fprintf(out, "; %zu global-variable finding%s", v->globals->nr,
			v->globals->nr == 1 ? "" : "s");
	fputc('\n', out);
}

static void only_list(FILE *out, const char *label, const char **names, size_t n, const char *pre)
{
	if (!n)
		return;
	fprintf(out, "\n%s%s:", pre, label);
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%s%s", i ? ", " : " ", names[i]);
	fputc('\n', out);
}

/* Calls row() for each finding to show, then returns how many bulk ones were skipped
 * per kind in skipped[]. */
static void each_shown(const struct hm_type_diff *td, size_t skipped[HM_F__COUNT],
		       void (*row)(FILE *, const struct hm_finding *), FILE *out)
{
	size_t shown[HM_F__COUNT] = {0};

	for (uint32_t i = 0; i < td->nr; i++) {
		const struct hm_finding *f = &td->f[i];

		if (is_bulk(f->kind) && shown[f->kind] >= BULK_SHOWN) {
			skipped[f->kind]++;
			continue;
		}
		shown[f->kind]++;
		row(out, f);
	}
}

static void text_row(FILE *out, const struct hm_finding *f)
{
	fprintf(out, "  %-10s %-28s %s\n", hm_fkind_name(f->kind), f->member ? f->member : "-",
		f->detail ? f->detail : "");
}

static void skipped_rows(FILE *out, const size_t skipped[HM_F__COUNT], const char *fmt)
{
	for (int k = 0; k < HM_F__COUNT; k++)
		if (skipped[k])
			fprintf(out, fmt, skipped[k], hm_fkind_name((enum hm_fkind)k));
}

void hm_diff_print_text(FILE *out, const struct hm_diff_view *v)
{
	const struct hm_diff *d = v->types;

	fprintf(out, "hitmap diff %s -> %s (%u-byte lines)\n", v->old_path, v->new_path,
		d->line_size);
	summary_line(out, v, "");
	for (size_t i = 0; i < d->nr; i++) {
		const struct hm_type_diff *td = d->types[i];
		size_t skipped[HM_F__COUNT] = {0};

		fprintf(out, "\n%s: size %llu -> %llu, cachelines %llu -> %llu\n", td->name,
			(unsigned long long)td->old_size, (unsigned long long)td->new_size,
			(unsigned long long)td->old_lines, (unsigned long long)td->new_lines);
		each_shown(td, skipped, text_row, out);
		skipped_rows(out, skipped, "  ... %zu more %s findings (--json lists all)\n");
	}
	only_list(out, "only in old", d->only_old, d->nr_only_old, "");
	only_list(out, "only in new", d->only_new, d->nr_only_new, "");
	if (v->globals && v->globals->nr) {
		fprintf(out, "\nglobal variables (data, bss, read-mostly, per-cpu lines):\n");
		for (size_t i = 0; i < v->globals->nr; i++) {
			const struct hm_gfinding *g = &v->globals->f[i];

			fprintf(out, "  %-10s %-28s %s [%s]\n", hm_gkind_name(g->kind), g->var,
				g->detail, g->section);
		}
	}
}

static void md_row(FILE *out, const struct hm_finding *f)
{
	fprintf(out, "| %s | `%s` | %s |\n", hm_fkind_name(f->kind), f->member ? f->member : "-",
		f->detail ? f->detail : "");
}

void hm_diff_print_md(FILE *out, const struct hm_diff_view *v)
{
	const struct hm_diff *d = v->types;

	fprintf(out, "### hitmap layout diff\n\n`%s` → `%s`, %u-byte cache lines: ", v->old_path,
		v->new_path, d->line_size);
	summary_line(out, v, "**");
	for (size_t i = 0; i < d->nr; i++) {
		const struct hm_type_diff *td = d->types[i];
		size_t skipped[HM_F__COUNT] = {0};

		fprintf(out, "\n#### `%s`: size %llu → %llu, cachelines %llu → %llu\n\n", td->name,
			(unsigned long long)td->old_size, (unsigned long long)td->new_size,
			(unsigned long long)td->old_lines, (unsigned long long)td->new_lines);
		fprintf(out, "| finding | member | detail |\n|---|---|---|\n");
		each_shown(td, skipped, md_row, out);
		skipped_rows(out, skipped, "| … | | %zu more %s findings |\n");
	}
	only_list(out, "Only in old", d->only_old, d->nr_only_old, "");
	only_list(out, "Only in new", d->only_new, d->nr_only_new, "");
	if (v->globals && v->globals->nr) {
		fprintf(out, "\n#### Global variables\n\n| finding | variable | section | detail |\n"
			     "|---|---|---|---|\n");
		for (size_t i = 0; i < v->globals->nr; i++) {
			const struct hm_gfinding *g = &v->globals->f[i];

			fprintf(out, "| %s | `%s` | %s | %s |\n", hm_gkind_name(g->kind), g->var,
				g->section, g->detail);
		}
	}
}

static void json_offset(struct hm_json *j, const char *key, int64_t v)
{
	if (v < 0)
		hm_json_null(j, key);
	else
		hm_json_u64(j, key, (uint64_t)v);
}

/* "struct foo" -> "struct", "foo", as hitmap.report/1 and the heat map name types. */
static void json_type_name(struct hm_json *j, const char *name)
{
	static const char *const kw[] = {"struct", "union", "class", "enum"};

	for (size_t i = 0; i < sizeof(kw) / sizeof(kw[0]); i++) {
		size_t n = strlen(kw[i]);

		if (!strncmp(name, kw[i], n) && name[n] == ' ') {
			hm_json_str(j, "type", name + n + 1);
			hm_json_str(j, "kind", kw[i]);
			return;
		}
	}
	hm_json_str(j, "type", name);
	hm_json_null(j, "kind");	/* a typedef of an unnamed aggregate */
}

static void json_type(struct hm_json *j, const struct hm_type_diff *td)
{
	hm_json_obj_begin(j, NULL);
	hm_json_str(j, "name", td->name);
	json_type_name(j, td->name);
	hm_json_u64(j, "old_size", td->old_size);
	hm_json_u64(j, "new_size", td->new_size);
	hm_json_u64(j, "old_cachelines", td->old_lines);
	hm_json_u64(j, "new_cachelines", td->new_lines);
	hm_json_i64(j, "impact", td->impact);
	hm_json_arr_begin(j, "findings");
	for (uint32_t k = 0; k < td->nr; k++) {
		const struct hm_finding *f = &td->f[k];

		hm_json_obj_begin(j, NULL);
		hm_json_str(j, "kind", hm_fkind_name(f->kind));
		hm_json_str(j, "member", f->member);
		if (f->other)
			hm_json_str(j, "other", f->other);
		json_offset(j, "old_offset", f->old_offset);
		json_offset(j, "new_offset", f->new_offset);
		json_offset(j, "old_line", f->old_line);
		json_offset(j, "new_line", f->new_line);
		hm_json_str(j, "detail", f->detail);
		hm_json_obj_end(j);
	}
	hm_json_arr_end(j);
	hm_json_obj_end(j);
}

static void json_names(struct hm_json *j, const char *key, const char **names, size_t n)
{
	hm_json_arr_begin(j, key);
	for (size_t i = 0; i < n; i++)
		hm_json_str(j, NULL, names[i]);
	hm_json_arr_end(j);
}

void hm_diff_print_json(FILE *out, const struct hm_diff_view *v)
{
	struct hm_json j;
	const struct hm_diff *d = v->types;

	hm_json_init(&j, out);
	hm_json_obj_begin(&j, NULL);
	hm_json_str(&j, "schema", "hitmap.diff/1");
	hm_json_str(&j, "old", v->old_path);
	hm_json_str(&j, "new", v->new_path);
	hm_json_u64(&j, "line_size", d->line_size);
	hm_json_u64(&j, "compared", d->compared);
	hm_json_arr_begin(&j, "types");
	for (size_t i = 0; i < d->nr; i++)
		json_type(&j, d->types[i]);
	hm_json_arr_end(&j);
	json_names(&j, "only_old", d->only_old, d->nr_only_old);
	json_names(&j, "only_new", d->only_new, d->nr_only_new);
	hm_json_arr_begin(&j, "globals");
	for (size_t i = 0; v->globals && i < v->globals->nr; i++) {
		const struct hm_gfinding *g = &v->globals->f[i];

		hm_json_obj_begin(&j, NULL);
		hm_json_str(&j, "kind", hm_gkind_name(g->kind));
		hm_json_str(&j, "var", g->var);
		hm_json_str(&j, "section", g->section);
		hm_json_hex(&j, "old_addr", g->old_addr);
		hm_json_hex(&j, "new_addr", g->new_addr);
		if (g->names)
			hm_json_str(&j, "neighbours", g->names);
		hm_json_str(&j, "detail", g->detail);
		hm_json_obj_end(&j);
	}
	hm_json_arr_end(&j);
	hm_json_obj_end(&j);
	hm_json_finish(&j);
}
