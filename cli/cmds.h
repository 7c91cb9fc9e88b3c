/* One entry point per subcommand; each returns the process exit code (enum hm_exit). The
 * helpers below give every subcommand the same option parsing and error style:
 * one line on stderr, "hitmap CMD: FLAG or FILE: what is wrong: the fix". */
#ifndef HM_CLI_CMDS_H
#define HM_CLI_CMDS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define HITMAP_VERSION "0.9.0"
#define CLI_WIDTH 120		/* text output fits this many columns unless --wide */

int cmd_layout(int argc, char **argv);
int cmd_script(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_whatif(int argc, char **argv);

/* "hitmap cmd: " + the message + newline on stderr; returns code. */
int cli_err(const char *cmd, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* --line-size arg: a power of two from min to max into *out; else one line on stderr
 * ("hitmap cmd: ...") and -1. */
int cli_line_size(const char *cmd, const char *arg, uint32_t min, uint32_t max, uint32_t *out);
/* A decimal whole number from lo to hi ("-1", "x", "" and overflow refused); else one line
 * naming opt and -1. */
int cli_number(const char *cmd, const char *opt, const char *arg, uint64_t lo, uint64_t hi,
	       uint64_t *out);
/* --top-like counts: 0 to 10^9. */
int cli_size_t(const char *cmd, const char *opt, const char *arg, size_t *out);
/* --window US (1 us to 60 s) into nanoseconds. */
int cli_window(const char *cmd, const char *arg, uint64_t *ns);
/* --jobs N (1 or 2: the stages of a streamed read, resolve/handoff.h) into *jobs. */
int cli_jobs(const char *cmd, const char *arg, int *jobs);
/* 2 where two CPUs are online, else 1. */
int cli_jobs_default(void);
/* After getopt_long returned '?' or ':' (optstring begins with ':', opterr 0): one line
 * naming the option; returns HM_EXIT_USAGE. */
int cli_bad_option(const char *cmd, int c, char **argv);
/* Up to max of the n candidates nearest to want (edit distance; "struct " ignored). */
size_t cli_nearest(const char *want, const char *const *cands, size_t n, const char **out,
		   size_t max);
const char *cli_plural(uint64_t n, const char *one, const char *many);
struct hm_recording;
/* A binary rebuilt after recording (another build-id on disk): 0 when none, or when force
 * (then one warning line); else one error line and HM_EXIT_INPUT, as for a --vmlinux of
 * another build. */
int cli_stale(const char *cmd, const struct hm_recording *rec, int force);

/* Text output: rendered into memory, then written to stdout with lines longer than
 * CLI_WIDTH wrapped at spaces (continuations indented); wide: straight to stdout. */
struct cli_text {
	FILE *f;
	char *buf;
	size_t len;
	size_t width;
};
FILE *cli_text_begin(struct cli_text *t, int wide);
void cli_text_end(struct cli_text *t);

#endif
