#include "err.h"

#include <stdio.h>
#include <string.h>

int hm_err_set(struct hm_err *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return -1;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -1;
}

void hm_msg_vappend(char *buf, size_t size, const char *fmt, va_list ap)
{
	size_t n = strlen(buf);

	if (n && n + 2 < size) {
		memcpy(buf + n, "; ", 3);
		n += 2;
	}
	if (n < size)
		vsnprintf(buf + n, size - n, fmt, ap);
}
