/* Which build a recording is: its main executable and build-id, and the checks that
 * every run of a side comes from one build of one program. */
#include "analyzer/compare.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/perfdata.h"

#define MAX_MAPS 256

/* --- which build a run is --- */

struct map_cand {
	uint32_t pid;
	const char *file;
	uint8_t bid[HM_BUILD_ID_MAX];
	uint8_t bid_size;
};

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* Shared objects (libc.so.6, ld-linux-x86-64.so.2) are never the workload. */
static int is_library(const char *file)
{
	return strstr(base_name(file), ".so") != NULL;
}

static char *hex(struct hm_arena *a, const uint8_t *id, size_t n)
{
	char *s = hm_arena_alloc(a, 2 * n + 1);

	for (size_t i = 0; i < n; i++)
		snprintf(s + 2 * i, 3, "%02x", id[i]);
	return s;
}

/* The exec'd program: the command name is at most 15 characters of the file name. */
static int matches_comm(const char *file, const char *comm)
{
	return comm && *comm && !strncmp(base_name(file), comm, strlen(comm));
}

static const struct map_cand *pick_exe(const struct map_cand *m, size_t n, uint32_t pid,
				       const char *comm)
{
	for (size_t i = 0; i < n; i++)
		if (m[i].pid == pid && matches_comm(m[i].file, comm))
			return &m[i];
	for (size_t i = 0; i < n; i++)
		if (m[i].pid == pid && !is_library(m[i].file))
			return &m[i];
	for (size_t i = 0; i < n; i++)
		if (!is_library(m[i].file))
			return &m[i];
	return NULL;
}

static void count_sample(const struct hm_perf_event *ev, struct hm_cmp_ident *out)
{
	out->samples++;
	out->kernel_samples += (ev->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
}

/* Reads records until the exec'd command and its executable's mapping are known, then
 * the rest for the samples' count (kernel or user). Once the process is known (its first
 * COMM or sample) samples are counted by their headers alone: decoding every one made
 * this scan a third read of each run, as dear as the samples' own (a sample whose event
 * id the file does not declare is counted here, not in the load). */
static int scan_maps(struct hm_arena *a, struct hm_perfdata *pd, struct map_cand *m,
		     size_t *nm, uint32_t *pid, struct hm_cmp_ident *out, struct hm_err *err)
{
	const struct hm_perfdata_stats *st = hm_perfdata_stats(pd);
	struct hm_perf_event ev;
	uint64_t at_n = 0, at_k = 0;
	int rc, have_exec = 0, have_pid = 0, first_comm = 0, done = 0, by_header = 0;

	while ((rc = hm_perfdata_next(pd, &ev, err)) > 0) {
		if (ev.type == PERF_RECORD_SAMPLE)
			count_sample(&ev, out);
		if (have_pid && !by_header) {	/* from here samples are only counted */
			hm_perfdata_want_no_samples(pd);
			at_n = st->records[PERF_RECORD_SAMPLE];
			at_k = st->skipped_kernel;
			by_header = 1;
		}
		if (done)
			continue;
		if (ev.type == PERF_RECORD_COMM && !have_exec &&
		    ((ev.misc & PERF_RECORD_MISC_COMM_EXEC) || !first_comm)) {
			/* without an exec flag (hitmap's own COMM, perf -p), the first COMM
			 * stands in, but only until an exec shows up */
			have_exec = (ev.misc & PERF_RECORD_MISC_COMM_EXEC) != 0;
			first_comm = have_pid = 1;
			*pid = ev.comm.pid;
			out->comm = hm_arena_strdup(a, ev.comm.comm ? ev.comm.comm : "");
		} else if (ev.type == PERF_RECORD_SAMPLE && !have_pid) {
			have_pid = 1;
			*pid = ev.sample.pid;
		} else if ((ev.type == PERF_RECORD_MMAP || ev.type == PERF_RECORD_MMAP2) &&
			   *nm < MAX_MAPS && ev.mmap.filename && ev.mmap.filename[0] == '/') {
			struct map_cand *c = &m[(*nm)++];

			c->pid = ev.mmap.pid;
			c->file = hm_arena_strdup(a, ev.mmap.filename);
			c->bid_size = ev.mmap.build_id_size > HM_BUILD_ID_MAX ? 0
									      : ev.mmap.build_id_size;
			memcpy(c->bid, ev.mmap.build_id, c->bid_size);
			done = have_exec && c->pid == *pid && matches_comm(c->file, out->comm);
		}
	}
	if (by_header) {
		out->samples += st->records[PERF_RECORD_SAMPLE] - at_n;
		out->kernel_samples += st->skipped_kernel - at_k;
	}
	if (!have_pid && *nm)
		*pid = m[0].pid;
	return rc < 0 ? -1 : 0;
}

static void build_id_of(const struct hm_perf_features *f, const char *file, uint8_t *id,
			size_t *size)
{
	for (uint32_t i = 0; i < f->nr_build_ids && !*size; i++)
		if (f->build_ids[i].filename && !strcmp(f->build_ids[i].filename, file) &&
		    f->build_ids[i].size <= HM_BUILD_ID_MAX) {
			*size = f->build_ids[i].size;
			memcpy(id, f->build_ids[i].id, *size);
		}
}

/* Which build counts: the kernel's when at least 90% of the samples are kernel samples
 * (or there is no executable at all), the program's when at most 10% are. */
static enum hm_cmp_build_kind kind_of(const struct hm_cmp_ident *id, int have_exe)
{
	double k = id->samples ? (double)id->kernel_samples / (double)id->samples : 0;

	if ((!have_exe && id->kernel_samples) || k >= 0.9)
		return HM_CMP_BUILD_KERNEL;
	return k <= 0.1 ? HM_CMP_BUILD_USER : HM_CMP_BUILD_BOTH;
}

static int is_module(const char *file)
{
	size_t n = file ? strlen(file) : 0;

	return n > 3 && !strcmp(file + n - 3, ".ko");
}

/* The BUILD_ID table's kernel modules (perf and hitmap record both list them). */
static void identify_modules(struct hm_arena *a, const struct hm_perf_features *f,
			     struct hm_cmp_ident *out)
{
	struct hm_cmp_mod *m;
	size_t n = 0;

	for (uint32_t i = 0; i < f->nr_build_ids; i++)
		n += is_module(f->build_ids[i].filename) && f->build_ids[i].size <= HM_BUILD_ID_MAX;
	if (!n)
		return;
	out->mods = m = hm_arena_alloc(a, n * sizeof(*m));
	for (uint32_t i = 0; i < f->nr_build_ids; i++) {
		if (!is_module(f->build_ids[i].filename) || f->build_ids[i].size > HM_BUILD_ID_MAX)
			continue;
		m->path = hm_arena_strdup(a, f->build_ids[i].filename);
		m->name = base_name(m->path);
		m->id_size = f->build_ids[i].size;
		memcpy(m->id, f->build_ids[i].id, m->id_size);
		m->hex = hex(a, m->id, m->id_size);
		m++;
	}
	out->nr_mods = n;
}

static int identify_kernel(struct hm_arena *a, const char *path,
			   const struct hm_perf_features *f, struct hm_cmp_ident *out,
			   struct hm_err *err)
{
	identify_modules(a, f, out);
	if (f->osrelease && f->osrelease[0])
		out->kernel_release = hm_arena_strdup(a, f->osrelease);
	build_id_of(f, "[kernel.kallsyms]", out->kernel_build_id, &out->kernel_build_id_size);
	if (out->kernel_build_id_size)
		out->kernel_build_id_hex = hex(a, out->kernel_build_id, out->kernel_build_id_size);
	if (out->kind == HM_CMP_BUILD_USER || out->kernel_release || out->kernel_build_id_size)
		return 0;
	return hm_err_set(err, HM_EXIT_INPUT, "%s: %llu of %llu samples are kernel samples, but "
			  "neither the kernel's release nor its build-id is recorded, so its build "
			  "is unknown: record with 'hitmap record -k' or 'perf record'", path,
			  (unsigned long long)out->kernel_samples, (unsigned long long)out->samples);
}

static int identify_exe(struct hm_arena *a, const char *path, const struct map_cand *exe,
			const struct hm_perf_features *f, struct hm_cmp_ident *out,
			struct hm_err *err)
{
	if (!exe)
		return out->kind == HM_CMP_BUILD_KERNEL ? 0 :
			hm_err_set(err, HM_EXIT_INPUT, "%s: no mapping of the workload's executable "
				   "is recorded, so its build is unknown: record with 'hitmap record "
				   "-- CMD' or 'perf record', which keep MMAP records", path);
	out->exe = exe->file;
	build_id_of(f, exe->file, out->build_id, &out->build_id_size);
	if (!out->build_id_size && exe->bid_size) {
		out->build_id_size = exe->bid_size;
		memcpy(out->build_id, exe->bid, exe->bid_size);
	}
	if (out->build_id_size)
		out->build_id_hex = hex(a, out->build_id, out->build_id_size);
	if (out->build_id_size || out->kind == HM_CMP_BUILD_KERNEL)
		return 0;
	return hm_err_set(err, HM_EXIT_INPUT, "%s: no build-id is recorded for %s, so runs of "
			  "different builds cannot be told apart: record again with 'hitmap record' "
			  "(or 'perf record' without --no-buildid)", path, exe->file);
}

int hm_cmp_identify(struct hm_arena *a, const char *path, struct hm_cmp_ident *out,
		    struct hm_err *err)
{
	struct map_cand *m = calloc(MAX_MAPS, sizeof(*m));
	const struct map_cand *exe;
	const struct hm_perf_features *f;
	struct hm_perfdata *pd;
	size_t nm = 0;
	uint32_t pid = 0;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (!m)
		return hm_err_set(err, HM_EXIT_ENV, "out of memory");
	if (!strcmp(path, "-")) {
		free(m);
		return hm_err_set(err, HM_EXIT_USAGE, "compare reads recordings from files, not "
				  "from a pipe: record each run with -o FILE");
	}
	if (hm_perfdata_open(path, &pd, err)) {
		free(m);
		return -1;
	}
	if (scan_maps(a, pd, m, &nm, &pid, out, err))
		goto out;
	exe = pick_exe(m, nm, pid, out->comm);
	out->kind = kind_of(out, exe != NULL);
	f = hm_perfdata_features(pd);
	if (!identify_exe(a, path, exe, f, out, err) && !identify_kernel(a, path, f, out, err))
		rc = 0;
out:
	hm_perfdata_close(pd);
	free(m);
	return rc;
}

static int same_id(const uint8_t *x, size_t nx, const uint8_t *y, size_t ny)
{
	return nx == ny && !memcmp(x, y, nx);
}

const struct hm_cmp_mod *hm_cmp_changed_module(const struct hm_cmp_ident *x,
					       const struct hm_cmp_ident *y,
					       const struct hm_cmp_mod **ym)
{
	for (size_t i = 0; i < x->nr_mods; i++)
		for (size_t j = 0; j < y->nr_mods; j++)
			if (!strcmp(x->mods[i].name, y->mods[j].name) &&
			    !same_id(x->mods[i].id, x->mods[i].id_size, y->mods[j].id,
				     y->mods[j].id_size)) {
				*ym = &y->mods[j];
				return &x->mods[i];
			}
	return NULL;
}

static const char *mods_label(struct hm_arena *ar, const struct hm_cmp_ident *x,
			      const struct hm_cmp_ident *y)
{
	const char *label = NULL;

	for (size_t i = 0; i < x->nr_mods; i++)
		for (size_t j = 0; j < y->nr_mods; j++)
			if (!strcmp(x->mods[i].name, y->mods[j].name) &&
			    !same_id(x->mods[i].id, x->mods[i].id_size, y->mods[j].id,
				     y->mods[j].id_size))
				label = hm_arena_printf(ar, "%s%s%s (build-id %.12s)",
							label ? label : "", label ? ", " : "",
							x->mods[i].name, x->mods[i].hex);
	return label;
}

static int same_kernel_image(const struct hm_cmp_ident *x, const struct hm_cmp_ident *y)
{
	if (x->kernel_build_id_size && y->kernel_build_id_size)
		return same_id(x->kernel_build_id, x->kernel_build_id_size, y->kernel_build_id,
			       y->kernel_build_id_size);
	return x->kernel_release && y->kernel_release &&
	       !strcmp(x->kernel_release, y->kernel_release);
}

void hm_cmp_label_modules(struct hm_arena *ar, struct hm_cmp_ident *a, size_t na,
			  struct hm_cmp_ident *b, size_t nb)
{
	/* Between two kernels every module differs: the kernel names the build. */
	if (!na || !nb || a[0].kind == HM_CMP_BUILD_USER || !same_kernel_image(&a[0], &b[0]))
		return;
	for (size_t i = 0; i < na; i++)
		a[i].mods_label = mods_label(ar, &a[i], &b[0]);
	for (size_t i = 0; i < nb; i++)
		b[i].mods_label = mods_label(ar, &b[i], &a[0]);
}

static int same_kernel(const struct hm_cmp_ident *x, const struct hm_cmp_ident *y)
{
	const struct hm_cmp_mod *ym;

	/* one kernel, another build of a module, is another build */
	return same_kernel_image(x, y) && !hm_cmp_changed_module(x, y, &ym);
}

int hm_cmp_same_build(const struct hm_cmp_ident *x, const struct hm_cmp_ident *y)
{
	int user = same_id(x->build_id, x->build_id_size, y->build_id, y->build_id_size);

	switch (x->kind) {
	case HM_CMP_BUILD_KERNEL: return same_kernel(x, y);
	case HM_CMP_BUILD_BOTH: return user && same_kernel(x, y);
	default: return user;
	}
}

const char *hm_cmp_build_kind_name(enum hm_cmp_build_kind k)
{
	return k == HM_CMP_BUILD_KERNEL ? "kernel" : k == HM_CMP_BUILD_BOTH ? "both" : "user";
}

const char *hm_cmp_build_label(struct hm_arena *a, const struct hm_cmp_ident *id)
{
	const char *k = hm_arena_printf(a, "kernel %s (build-id %.12s)%s%s",
					id->kernel_release ? id->kernel_release : "?",
					id->kernel_build_id_hex ? id->kernel_build_id_hex : "none",
					id->mods_label ? " with " : "",
					id->mods_label ? id->mods_label : "");
	const char *u = id->exe ? hm_arena_printf(a, "%s (build-id %.12s)", base_name(id->exe),
						  id->build_id_hex ? id->build_id_hex : "none")
				: "?";

	switch (id->kind) {
	case HM_CMP_BUILD_KERNEL: return k;
	case HM_CMP_BUILD_BOTH: return hm_arena_printf(a, "%s on %s", u, k);
	default: return u;
	}
}

/* What a run of kind k measures, after "measures the". */
static const char *measures(enum hm_cmp_build_kind k)
{
	return k == HM_CMP_BUILD_KERNEL ? "kernel" : k == HM_CMP_BUILD_BOTH ? "program and the kernel"
									    : "program";
}

int hm_cmp_check_side(const char *side, const char *const *paths,
		      const struct hm_cmp_ident *ids, size_t n, struct hm_err *err)
{
	for (size_t i = 1; i < n; i++) {
		const struct hm_cmp_ident *x = &ids[i], *y = &ids[0];

		if (x->kind != y->kind)
			return hm_err_set(err, HM_EXIT_INPUT, "%s measures the %s (%llu of %llu "
					  "samples in the kernel) but %s measures the %s (at least "
					  "90%% in the kernel counts as the kernel): give runs of one "
					  "kind per side (record them alike)", paths[i],
					  measures(x->kind), (unsigned long long)x->kernel_samples,
					  (unsigned long long)x->samples, paths[0], measures(y->kind));
		if (hm_cmp_same_build(x, y))
			continue;
		if (x->kind != HM_CMP_BUILD_USER && !same_kernel(x, y))
			return hm_err_set(err, HM_EXIT_INPUT, "%s ran kernel %s (build-id %s) but "
					  "%s ran %s (build-id %s) on side %s: compare runs of one "
					  "kernel build per side", paths[i],
					  x->kernel_release ? x->kernel_release : "?",
					  x->kernel_build_id_hex ? x->kernel_build_id_hex : "none",
					  paths[0], y->kernel_release ? y->kernel_release : "?",
					  y->kernel_build_id_hex ? y->kernel_build_id_hex : "none", side);
		if (strcmp(base_name(x->exe), base_name(y->exe)))
			return hm_err_set(err, HM_EXIT_INPUT, "%s ran %s but %s ran %s: runs of "
					  "different workloads on side %s: give the runs of one "
					  "program per side", paths[i], x->exe, paths[0], y->exe, side);
		return hm_err_set(err, HM_EXIT_INPUT, "%s was recorded from another build of %s "
				  "(build-id %s; %s has %s): compare runs of one build per side",
				  paths[i], base_name(x->exe), x->build_id_hex, paths[0],
				  y->build_id_hex);
	}
	return 0;
}

static int has_id(const char *path, const uint8_t *id, size_t size)
{
	uint8_t got[HM_BUILD_ID_MAX];

	return size && hm_buildid_read(path, got) == size && !memcmp(got, id, size);
}

static int has_build(const char *path, const struct hm_cmp_ident *id)
{
	return has_id(path, id->build_id, id->build_id_size);
}

const char *hm_cmp_find_module(struct hm_arena *a, const struct hm_cmp_mod *m,
			       const char *sysroot, const char *buildid_dir)
{
	const char *h = m->hex, *p;

	p = hm_arena_printf(a, "%s%s", sysroot ? sysroot : "", m->path);
	if (has_id(p, m->id, m->id_size))
		return p;
	if (buildid_dir && has_id(p = hm_arena_printf(a, "%s/.build-id/%.2s/%s/elf", buildid_dir,
						      h, h + 2), m->id, m->id_size))
		return p;
	p = hm_arena_printf(a, "/usr/lib/debug/.build-id/%.2s/%s.debug", h, h + 2);
	return has_id(p, m->id, m->id_size) ? p : NULL;
}

const char *hm_cmp_find_binary(struct hm_arena *a, const struct hm_cmp_ident *id,
			       const char *sysroot, const char *buildid_dir)
{
	const char *h = id->build_id_hex, *p;

	p = hm_arena_printf(a, "%s%s", sysroot ? sysroot : "", id->exe);
	if (has_build(p, id))
		return p;
	if (buildid_dir &&
	    has_build(p = hm_arena_printf(a, "%s/.build-id/%.2s/%s/elf", buildid_dir, h, h + 2), id))
		return p;
	p = hm_arena_printf(a, "/usr/lib/debug/.build-id/%.2s/%s.debug", h, h + 2);
	return has_build(p, id) ? p : NULL;
}


/* The places a -dbg package puts the vmlinux (symbolize/code_kernel.c searches the same). */
static const char *const vmlinux_paths[] = {
	"/usr/lib/debug/boot/vmlinux-%s",
	"/usr/lib/debug/lib/modules/%s/vmlinux",
	"/lib/modules/%s/build/vmlinux",
	"/boot/vmlinux-%s",
};

const char *hm_cmp_find_vmlinux(struct hm_arena *a, const struct hm_cmp_ident *id,
				const char *sysroot)
{
	uint8_t got[HM_BUILD_ID_MAX];

	if (!id->kernel_release)
		return NULL;
	for (size_t i = 0; i < sizeof(vmlinux_paths) / sizeof(vmlinux_paths[0]); i++) {
		const char *p = hm_arena_printf(a, "%s", sysroot ? sysroot : "");
		size_t n;

		p = hm_arena_printf(a, "%s%s", p, hm_arena_printf(a, vmlinux_paths[i],
								  id->kernel_release));
		n = hm_buildid_read(p, got);
		if (n && (!id->kernel_build_id_size ||
			  same_id(got, n, id->kernel_build_id, id->kernel_build_id_size)))
			return p;
	}
	return NULL;
}
