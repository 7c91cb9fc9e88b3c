#include "cli/watchspec.h"

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/target.h"
#include "symbolize/globals.h"
#include "symbolize/layout.h"

static int parse_one(struct watch_specs *ws, int i, struct hm_err *err)
{
	char buf[sizeof(ws->sym[0])], *colon, *slash, *dot, *plus;

	snprintf(buf, sizeof(buf), "%s", ws->text[i]);
	ws->type[i] = HM_BP_RW;
	if ((colon = strrchr(buf, ':'))) {
		*colon = '\0';
		if (!strcmp(colon + 1, "w"))
			ws->type[i] = HM_BP_W;
		else if (!strcmp(colon + 1, "r"))
			ws->type[i] = HM_BP_R;	/* refused below with the reason */
		else if (strcmp(colon + 1, "rw"))
			return hm_err_set(err, HM_EXIT_USAGE, "--watch %s: the access is :w or :rw",
					  ws->text[i]);
	}
	if ((slash = strchr(buf, '/')) && (plus = strchr(buf, '+')) && plus < slash) {
		char *e1, *e2;

		*plus = '\0';
		ws->symoff[i] = strtoull(plus + 1, &e1, 0);
		ws->len[i] = (uint32_t)strtoul(slash + 1, &e2, 0);
		if (e1 != slash || *e2 || !buf[0])
			return hm_err_set(err, HM_EXIT_USAGE, "--watch %s: write SYMBOL+OFF/LEN, "
					  "e.g. stats+8/8", ws->text[i]);
		ws->has_off[i] = 1;
		snprintf(ws->sym[i], sizeof(ws->sym[i]), "%s", buf);
		return 0;
	}
	if (slash) {
		char *e1, *e2;

		ws->addr[i] = strtoull(buf, &e1, 0);
		ws->len[i] = (uint32_t)strtoul(slash + 1, &e2, 0);
		if (e1 != slash || *e2 || !ws->addr[i])
			return hm_err_set(err, HM_EXIT_USAGE, "--watch %s: write ADDR/LEN, e.g. "
					  "0x601040/8", ws->text[i]);
		return 0;
	}
	dot = strpbrk(buf, ".[");
	if (dot) {
		snprintf(ws->pathbuf[i], sizeof(ws->pathbuf[i]), "%s", dot + (*dot == '.'));
		ws->path[i] = ws->pathbuf[i];
		*dot = '\0';
	}
	snprintf(ws->sym[i], sizeof(ws->sym[i]), "%s", buf);
	return 0;
}

int hm_watchspecs_parse(struct watch_specs *ws, struct hm_err *err)
{
	for (int i = 0; i < ws->nr; i++)
		if (parse_one(ws, i, err))
			return -1;
	return 0;
}

static int elf_is_pie(const char *path)
{
	FILE *f = fopen(path, "rb");
	Elf64_Ehdr eh;
	int pie = 0;

	if (f && fread(&eh, sizeof(eh), 1, f) == 1)
		pie = eh.e_type == ET_DYN;
	if (f)
		fclose(f);
	return pie;
}

/* The largest aligned debug-register length that fits size bytes at addr. */
static uint32_t fit_len(uint64_t addr, uint64_t size)
{
	for (uint32_t len = 8; len > 1; len /= 2)
		if (size >= len && addr % len == 0)
			return len;
	return 1;
}

static int resolve_symbol(struct watch_specs *ws, int i, const char *exe, uint64_t base,
			  struct hm_err *err)
{
	struct hm_arena a;
	struct hm_global *g = NULL;
	size_t n = 0, k;
	uint64_t off = 0, size;
	int rc = 0;

	hm_arena_init(&a);
	if (hm_globals_load(&a, exe, &g, &n, err))
		goto out;
	for (k = 0; k < n && strcmp(g[k].name, ws->sym[i]); k++)
		;
	if (k == n) {
		rc = hm_err_set(err, HM_EXIT_INPUT, "--watch %s: no global or static variable "
				"'%s' in %s", ws->text[i], ws->sym[i], exe);
		goto out;
	}
	size = g[k].size;
	if (ws->has_off[i]) {
		if (ws->symoff[i] + ws->len[i] > size) {
			rc = hm_err_set(err, HM_EXIT_INPUT, "--watch %s: '%s' is %llu bytes in %s, "
					"so +%llu/%u lies outside it: the program changed since "
					"the first recording", ws->text[i], ws->sym[i],
					(unsigned long long)size, exe,
					(unsigned long long)ws->symoff[i], ws->len[i]);
			goto out;
		}
		off = ws->symoff[i];
		size = ws->len[i];
	} else if (ws->path[i]) {
		struct hm_layout *lay;
		const struct hm_type *t;

		if (hm_layout_open(exe, &lay, err)) {
			rc = -1;
			goto out;
		}
		t = hm_layout_var_type(lay, ws->sym[i]);
		if (!t || hm_layout_member_offset(t, ws->path[i], &off, &size))
			rc = hm_err_set(err, HM_EXIT_INPUT, "--watch %s: '%s' has no member '%s' "
					"(see 'hitmap layout %s')", ws->text[i], ws->sym[i],
					ws->path[i], exe);
		hm_layout_close(lay);
		if (rc)
			goto out;
	}
	ws->addr[i] = (elf_is_pie(exe) ? base : 0) + g[k].addr + off;
	ws->len[i] = fit_len(ws->addr[i], size);
	if (size > ws->len[i])
		snprintf(ws->label[i], sizeof(ws->label[i]), "mem:%s (first %u of %llu bytes)",
			 ws->text[i], ws->len[i], (unsigned long long)size);
out:
	free(g);
	hm_arena_free(&a);
	return rc ? -1 : 0;
}

int hm_watchspecs_resolve(void *ctx, pid_t pid, struct hm_err *err)
{
	struct watch_specs *ws = ctx;
	char exe[4096];
	unsigned long long base;

	if (hm_target_exe(pid, exe, sizeof(exe), &base))
		return hm_err_set(err, HM_EXIT_ENV, "pid %d: cannot read /proc/%d/exe and maps",
				  (int)pid, (int)pid);
	for (int i = 0; i < ws->nr; i++) {
		const char *why;

		if (ws->sym[i][0] && resolve_symbol(ws, i, exe, base, err))
			return -1;
		if (!ws->label[i][0])
			snprintf(ws->label[i], sizeof(ws->label[i]), "mem:%s", ws->text[i]);
		ws->resolved[i] = (struct hm_watch){ws->addr[i], ws->len[i], ws->type[i], ws->label[i]};
		if ((why = hm_watch_check(&ws->resolved[i])))
			return hm_err_set(err, HM_EXIT_USAGE, "--watch %s (0x%llx/%u): %s", ws->text[i],
					  (unsigned long long)ws->addr[i], ws->len[i], why);
	}
	return 0;
}
