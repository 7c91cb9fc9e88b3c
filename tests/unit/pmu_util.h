/* Shared by the collectors/pmu*.c unit tests: running libpfm4 in a child, preset encoding
 * per forced model, the PEBS event check, and fake sysfs trees.
 *
 * libpfm4 reads LIBPFM_FORCE_PMU once per process, and pfm_terminate() does not forget a
 * PMU it marked present, so every libpfm4 call runs in a forked child that reports back
 * through shared memory; the parent never initialises libpfm4. */
#ifndef HM_TEST_PMU_UTIL_H
#define HM_TEST_PMU_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <ftw.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collectors/pmu.h"
#include "collectors/pmu_int.h"
#include "core/sample.h"

#ifndef UNUSED
#define UNUSED __attribute__((unused))
#endif

struct shared {
	int rc, skipped;
	struct hm_err err;
	struct hm_pmu_events ev;
	struct hm_pmu_status st;
};

struct encode_arg {
	const char *what;
	struct hm_pmu_opts o;
};

typedef void (*child_fn)(struct shared *sh, const void *arg);

/* Runs fn in a child with LIBPFM_FORCE_PMU=force (unset for NULL); returns its report. */
static UNUSED void in_child(const char *force, child_fn fn, const void *arg,
			    struct shared *out)
{
	struct shared *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int status = 0;
	pid_t pid;

	assert_true(sh != MAP_FAILED);
	memset(sh, 0, sizeof(*sh));
	sh->rc = -12345;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (force)
			setenv("LIBPFM_FORCE_PMU", force, 1);
		else
			unsetenv("LIBPFM_FORCE_PMU");
		fn(sh, arg);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	*out = *sh;
	munmap(sh, sizeof(*sh));
}

static UNUSED void do_encode(struct shared *sh, const void *arg)
{
	const struct encode_arg *a = arg;

	sh->rc = hm_pmu_encode(a->what, &a->o, &sh->ev, &sh->err);
}

static UNUSED struct hm_pmu_opts opts(void)
{
	struct hm_pmu_opts o;

	memset(&o, 0, sizeof(o));
	o.precise = -1;
	o.phys = 1;
	return o;
}

static UNUSED void encode_as(const char *model, const char *what,
			     const struct hm_pmu_opts *o, struct shared *out)
{
	struct encode_arg a = {what, *o};

	in_child(model, do_encode, &a, out);
}

static const uint64_t sample_type = HM_PMU_SAMPLE_TYPE | PERF_SAMPLE_PHYS_ADDR;

static UNUSED void check_pebs(const struct hm_pmu_event *ev, const char *name,
			      uint64_t config, uint64_t config1, unsigned precise, uint8_t op)
{
	assert_string_equal(ev->name, name);
	assert_int_equal(ev->attr.type, PERF_TYPE_RAW);
	assert_int_equal(ev->attr.config, config);
	assert_int_equal(ev->attr.config1, config1);
	assert_int_equal(ev->attr.precise_ip, precise);
	assert_int_equal(ev->attr.sample_type, sample_type);
	assert_int_equal(ev->attr.size, sizeof(struct perf_event_attr));
	assert_true(ev->attr.exclude_kernel);
	assert_true(ev->attr.exclude_hv);
	assert_true(ev->attr.disabled);
	assert_true(ev->attr.sample_id_all);
	assert_true(ev->attr.sample_period > 0);
	assert_int_equal(ev->op, op);
	assert_int_equal(ev->flags, 0);
}

/* --- fake sysfs trees -------------------------------------------------------------------- */

static UNUSED void put(const char *root, const char *rel, const char *text)
{
	char path[512], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (slash = strchr(path + strlen(root) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static UNUSED int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static UNUSED void rm_tree(const char *root)
{
	nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static UNUSED void make_root(char *root, size_t len)
{
	snprintf(root, len, "/tmp/hm_pmu_test.XXXXXX");
	assert_non_null(mkdtemp(root));
	put(root, "software/type", "1\n");
	put(root, "breakpoint/type", "5\n");
}

#endif
