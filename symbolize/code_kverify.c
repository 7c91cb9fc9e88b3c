/* A named vmlinux against the recorded kernel's build-id: another build's DWARF gives
 * wrong names, types and KASLR, so it is an error unless forced. A named kallsyms file
 * likewise, by what it can be checked on (code_kallsyms.c). */
#include "symbolize/code_int.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

static int vmlinux_verify(struct hm_code *c, const char **warning, struct hm_err *err)
{
	struct code_kernel *k = &c->k;
	uint8_t id[HM_BUILD_ID_MAX];
	const char *msg;
	size_t n;
	int fd;

	*warning = NULL;
	if (!c->vmlinux || !c->vmlinux[0] || !k->build_id_size)
		return 0;	/* nothing named, or nothing recorded to compare with */
	if ((fd = open(c->vmlinux, O_RDONLY | O_CLOEXEC)) < 0)
		return hm_err_set(err, HM_EXIT_INPUT, "--vmlinux %s: %s: give an existing, "
				  "readable file", c->vmlinux, strerror(errno));
	n = code_fd_build_id(fd, id);
	close(fd);
	if (n == k->build_id_size && memcmp(id, k->build_id, n) == 0)
		return 0;
	msg = hm_arena_printf(&c->arena, "--vmlinux %s: build-id %s, but the recorded kernel "
			      "(%s) has build-id %s", c->vmlinux,
			      n ? code_hex(&c->arena, id, n) : "none", c->release,
			      code_hex(&c->arena, k->build_id, k->build_id_size));
	if (c->force) {
		*warning = hm_arena_printf(&c->arena, "%s: used anyway (--force); kernel names "
					   "and types may be wrong", msg);
		return 0;
	}
	return hm_err_set(err, HM_EXIT_INPUT, "%s: pass that kernel's vmlinux (linux-image-%s-dbg"
			  ": /usr/lib/debug/boot/vmlinux-%s), or --force to use this one anyway",
			  msg, c->release, c->release);
}

/* --kallsyms F: of the recorded kernel and boot, as far as kallsyms can tell. */
static int kallsyms_verify(struct hm_code *c, const char **warning, struct hm_err *err)
{
	const char *msg;

	*warning = NULL;
	if (c->kallsyms_default || !(msg = code_kallsyms_mismatch(c)))
		return 0;
	if (c->force) {
		*warning = hm_arena_printf(&c->arena, "%s: used anyway (--force); kernel "
					   "function names may be wrong", msg);
		return 0;
	}
	return hm_err_set(err, HM_EXIT_INPUT, "%s: give the recording machine's "
			  "/proc/kallsyms, copied while it recorded, or --force", msg);
}

int hm_code_kernel_verify(struct hm_code *c, const char **warning, struct hm_err *err)
{
	const char *w1, *w2;

	if (vmlinux_verify(c, &w1, err) || kallsyms_verify(c, &w2, err))
		return -1;
	*warning = w1 && w2 ? hm_arena_printf(&c->arena, "%s; %s", w1, w2) : w1 ? w1 : w2;
	return 0;
}
