/* debuginfod by build-id for what dwfl does not fetch on its own: an executable that is
 * gone from disk, and the kernel's vmlinux. libdw 0.188 dlopens libdebuginfod and, when
 * DEBUGINFOD_URLS is set, dwfl_standard_find_debuginfo already fetches a module's
 * separate debug info. Here we reuse dwfl's client (dwfl_get_debuginfod_client) and load
 * the two find functions the same way, so hitmap runs where libdebuginfod is absent. */
#include "symbolize/code_int.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

int code_debuginfod_enabled(void)
{
	const char *urls = getenv("DEBUGINFOD_URLS");

	return urls && urls[0];
}

static int fetch_init(struct hm_code *c)
{
	static const char *const names[2] = {"debuginfod_find_executable",
					      "debuginfod_find_debuginfo"};

	if (c->fetch_tried)
		return c->fetch_dwfl != NULL;
	c->fetch_tried = 1;
	if (!(c->fetch_so = dlopen("libdebuginfod.so.1", RTLD_LAZY)))
		return 0;
	for (int i = 0; i < 2; i++) {
		void *p = dlsym(c->fetch_so, names[i]);

		if (!p)
			return 0;
		memcpy(&c->fp_find[i], &p, sizeof(p));	/* object to function pointer */
	}
	c->fetch_dwfl = dwfl_begin(&c->cb);
	return c->fetch_dwfl != NULL;
}

int code_fetch(struct hm_code *c, const uint8_t *id, size_t size, int debuginfo,
	       char **path)
{
	debuginfod_client *client;
	int fd;

	*path = NULL;
	if (size == 0 || !code_debuginfod_enabled() || !fetch_init(c) ||
	    !(client = dwfl_get_debuginfod_client(c->fetch_dwfl)))
		return -1;
	fd = c->fp_find[debuginfo != 0](client, id, (int)size, path);
	if (fd < 0) {
		free(*path);
		*path = NULL;
		return -1;
	}
	return fd;
}

void code_fetch_free(struct hm_code *c)
{
	if (c->fetch_dwfl)
		dwfl_end(c->fetch_dwfl);	/* ends the client too */
	if (c->fetch_so)
		dlclose(c->fetch_so);
}
