/* Error reporting for library code: functions fill a struct hm_err and return a
 * negative errno-style code; only cli/ prints. */
#ifndef HM_ERR_H
#define HM_ERR_H

#include <stdarg.h>
#include <stddef.h>

/* Exit codes shared by every subcommand (DESIGN.md, CLI). */
enum hm_exit {
	HM_EXIT_OK = 0,
	HM_EXIT_USAGE = 1,
	HM_EXIT_INPUT = 2,
	HM_EXIT_ENV = 3,
	HM_EXIT_FINDINGS = 4,
};

struct hm_err {
	int code;	/* one of enum hm_exit, chosen by the failing module */
	char msg[512];	/* one line: names the file, the cause and the fix */
};

/* Formats msg into err (if non-NULL) and returns -1 so callers can `return hm_err_set(...)`. */
int hm_err_set(struct hm_err *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Appends to the one-line message buf (of size bytes), "; " between parts; truncates. */
void hm_msg_vappend(char *buf, size_t size, const char *fmt, va_list ap);

#endif
