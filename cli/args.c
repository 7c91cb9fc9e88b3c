/* What the subcommands share: option values, the one-line error style, plurals, and the
 * 120-column fit of text output. */
#include "cli/cmds.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "resolve/load.h"
#include "core/err.h"

int cli_err(const char *cmd, int code, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "hitmap %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return code;
}

int cli_line_size(const char *cmd, const char *arg, uint32_t min, uint32_t max, uint32_t *out)
{
	char *end;
	unsigned long v = strtoul(arg, &end, 0);

	if (!*arg || *arg == '-' || *end || v < min || v > max || (v & (v - 1))) {
		cli_err(cmd, 0, "--line-size %s: give a power of two from %u to %u (64, or 128 for "
			"adjacent-line prefetch)", arg, min, max);
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

int cli_number(const char *cmd, const char *opt, const char *arg, uint64_t lo, uint64_t hi,
	       uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (*arg < '0' || *arg > '9' || *end || errno || v < lo || v > hi) {
		cli_err(cmd, 0, "%s %s: give a whole number from %llu to %llu", opt, arg,
			(unsigned long long)lo, (unsigned long long)hi);
		return -1;
	}
	*out = v;
	return 0;
}

int cli_size_t(const char *cmd, const char *opt, const char *arg, size_t *out)
{
	uint64_t v;

	if (cli_number(cmd, opt, arg, 0, 1000000000, &v))
		return -1;
	*out = (size_t)v;
	return 0;
}

int cli_window(const char *cmd, const char *arg, uint64_t *ns)
{
	uint64_t us;

	if (cli_number(cmd, "--window", arg, 1, 60000000, &us))
		return -1;
	*ns = us * 1000;
	return 0;
}

int cli_jobs(const char *cmd, const char *arg, int *jobs)
{
	uint64_t v;

	if (cli_number(cmd, "--jobs", arg, 1, 3, &v))
		return -1;
	*jobs = (int)v;
	return 0;
}

int cli_jobs_default(void)
{
	return sysconf(_SC_NPROCESSORS_ONLN) >= 2 ? 2 : 1;
}

/* getopt's own messages are off (opterr = 0, optstring starting ':'): this says which
 * option failed, in the house style. */
int cli_bad_option(const char *cmd, int c, char **argv)
{
	const char *arg = optind > 0 ? argv[optind - 1] : "";
	char name[64];

	if (arg && !strncmp(arg, "--", 2))
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(arg, "="), arg);
	else
		snprintf(name, sizeof(name), "-%c", optopt ? optopt : '?');
	if (c == ':')
		return cli_err(cmd, HM_EXIT_USAGE, "%s needs a value; see 'hitmap %s --help'", name,
			       cmd);
	return cli_err(cmd, HM_EXIT_USAGE, "%s: unknown option; see 'hitmap %s --help'", name, cmd);
}

const char *cli_plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

static const char *bare(const char *s)
{
	static const char *const kw[] = {"struct ", "union ", "class ", "enum "};

	for (size_t i = 0; i < sizeof(kw) / sizeof(kw[0]); i++)
		if (!strncmp(s, kw[i], strlen(kw[i])))
			return s + strlen(kw[i]);
	return s;
}

static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), row[128], prev, tmp;

	if (strstr(a, b) || strstr(b, a))
		return 1;	/* a substring ranks as close as one edit */
	if (lb >= sizeof(row) / sizeof(row[0]))
		return la > lb ? la : lb;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t best = prev + (a[i - 1] != b[j - 1]);

			tmp = row[j];
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			prev = tmp;
		}
	}
	return row[lb];
}

size_t cli_nearest(const char *want, const char *const *cands, size_t n, const char **out,
		   size_t max)
{
	size_t got = 0, d[16];

	if (max > 16)
		max = 16;
	want = bare(want);
	for (size_t i = 0; i < n; i++) {
		size_t di = distance(want, bare(cands[i])), at = got;

		while (at > 0 && d[at - 1] > di)
			at--;
		if (at >= max)
			continue;
		if (got < max)
			got++;
		memmove(&out[at + 1], &out[at], (got - 1 - at) * sizeof(*out));
		memmove(&d[at + 1], &d[at], (got - 1 - at) * sizeof(*d));
		out[at] = cands[i];
		d[at] = di;
	}
	return got;
}

/* --- the 120-column fit --- */

static size_t col_after(const char *s, size_t n)
{
	size_t col = 0;

	for (size_t i = 0; i < n; i++)
		col = s[i] == '\t' ? (col / 8 + 1) * 8 : col + 1;
	return col;
}

/* Where a wrapped line goes on: under the last column of a table row (text after a gap
 * of two or more spaces) when that leaves 20 columns, else four past the indent. */
static size_t hang(const char *s, size_t brk, size_t indent, size_t width)
{
	size_t at = 0;

	for (size_t i = indent; i + 2 < brk; i++)
		if (s[i] == ' ' && s[i + 1] == ' ' && s[i + 2] != ' ')
			at = i + 2;
	if (at && col_after(s, at) + 20 <= width)
		return col_after(s, at);
	return col_after(s, indent) + 4;
}

/* One line (no newline) of n bytes, wrapped at spaces into width columns. A word longer
 * than the room (a path) stays whole rather than be cut. */
static void fit_line(FILE *out, const char *s, size_t n, size_t width)
{
	size_t indent = strspn(s, " \t"), pad = 0, first = 1;

	if (indent > n)
		indent = n;
	while (col_after(s, n) + pad > width) {
		size_t brk = 0, h, end;

		for (size_t i = first ? indent : 0; i < n; i++) {
			if (s[i] != ' ')
				continue;
			if (col_after(s, i) + pad > width && brk)
				break;
			brk = i;
		}
		if (!brk)
			break;
		h = first ? hang(s, brk, indent, width) : pad;
		for (end = brk; end > 0 && s[end - 1] == ' '; end--)
			;
		fprintf(out, "%*s%.*s\n", (int)pad, "", (int)end, s);
		first = 0;
		pad = h;
		while (brk < n && s[brk] == ' ')
			brk++;
		n -= brk;
		s += brk;
	}
	fprintf(out, "%*s%.*s\n", (int)pad, "", (int)n, s);
}

FILE *cli_text_begin(struct cli_text *t, int wide)
{
	memset(t, 0, sizeof(*t));
	t->width = wide ? 0 : CLI_WIDTH;
	if (!t->width)
		return stdout;
	t->f = open_memstream(&t->buf, &t->len);
	return t->f ? t->f : stdout;
}

void cli_text_end(struct cli_text *t)
{
	const char *s, *nl;

	if (!t->f)
		return;
	fclose(t->f);
	for (s = t->buf; s < t->buf + t->len; s = nl + 1) {
		nl = memchr(s, '\n', (size_t)(t->buf + t->len - s));
		if (!nl) {
			fputs(s, stdout);	/* a last line without its newline */
			break;
		}
		fit_line(stdout, s, (size_t)(nl - s), t->width);
	}
	free(t->buf);
	t->f = NULL;
}

int cli_stale(const char *cmd, const struct hm_recording *rec, int force)
{
	const struct hm_resolve_stats *st = hm_resolver_stats(rec->resolver);

	if (!st->stale)
		return 0;
	if (force) {
		cli_err(cmd, 0, "warning: --force: %s (%llu %s)", st->stale_hint,
			(unsigned long long)st->stale, cli_plural(st->stale, "sample", "samples"));
		return 0;
	}
	return cli_err(cmd, HM_EXIT_INPUT, "%s (%llu %s); or pass --force to use it anyway",
		       st->stale_hint, (unsigned long long)st->stale,
		       cli_plural(st->stale, "sample", "samples"));
}
