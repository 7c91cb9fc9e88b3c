/* A recording's files' subprogram and variable indexes, built ahead on a thread of their
 * own (data.h, hm_data_warm).
 *
 * Naming a stack slot needs its module's subprograms by address (data_frame.c) and naming
 * a global its variables (data_dwarf.c); each is one walk of every unit of the module's
 * debug file, libc's 41 and 20 ms, and the first sample in libc waited for both on the
 * resolver's thread while the other CPU had nothing to do. The recording's build-id table
 * says which files its samples hit, so this thread opens their debug files (waiting for
 * the inflated copy debugfile.c is making, if any) with a Dwarf of its own and walks
 * them, largest first, while the maps pass reads the file.
 *
 * A ti asks for an index at its first use (data_warm_take). It gets the one built here
 * only from the same file (device, inode, size and modification time of the debug file
 * its Dwfl found) and only where the walk is the ti's own: a debug file whose DWARF
 * points into a dwz file (.gnu_debugaltlink) or needs relocating (ET_REL) is left to the
 * ti. An index not begun yet is taken back by the ti and walked there; one in the making
 * is waited for. The walks are the same code on the same bytes, so the answers do not
 * depend on which thread made them. */
#include "symbolize/data_int.h"

#include <dwarf.h>
#include <gelf.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/buildid.h"
#include "core/perfdata.h"
#include "symbolize/debugfile.h"

enum { QUEUED, RUNNING, DONE, CLAIMED };	/* CLAIMED: the ti walks it (or it failed) */

struct warm_file {
	int fd;				/* the debug file as found; -1 once read */
	struct stat st;
	int state[DATA_WARM_KINDS];
	struct data_index idx[DATA_WARM_KINDS];
	struct hm_arena arena[DATA_WARM_KINDS];
};

struct data_warm {
	pthread_t th;
	pthread_mutex_t lock;
	pthread_cond_t changed;
	atomic_int stop;
	char *dir;			/* NULL: /usr/lib/debug */
	struct warm_file *f;
	size_t n;			/* files found, set once they are (then a ti looks) */
	int finished;			/* the thread has been through every file */
	uint32_t nids;
	struct hm_debugfile_id ids[];
};

int data_each_unit(Dwarf *dw, int skip_types, atomic_int *stop,
		   void (*fn)(Dwarf_Die *cu, void *arg), void *arg)
{
	Dwarf_CU *cu = NULL, *next;
	Dwarf_Die cudie;
	uint8_t unit_type;

	while (dwarf_get_units(dw, cu, &next, NULL, &unit_type, &cudie, NULL) == 0) {
		if (stop && atomic_load(stop))
			return -1;
		cu = next;
		if (!skip_types || (unit_type != DW_UT_type && unit_type != DW_UT_split_type))
			fn(&cudie, arg);
	}
	return 0;
}

/* The walk is the ti's own only for a file whose DWARF libdw reads as it is. */
static int walkable(Elf *e)
{
	GElf_Ehdr eh;
	GElf_Shdr sh;
	size_t shstrndx;

	if (!gelf_getehdr(e, &eh) || eh.e_type == ET_REL || elf_getshdrstrndx(e, &shstrndx))
		return 0;
	for (Elf_Scn *s = NULL; (s = elf_nextscn(e, s));) {
		const char *name = gelf_getshdr(s, &sh) ? elf_strptr(e, shstrndx, sh.sh_name) : NULL;

		if (name && !strcmp(name, ".gnu_debugaltlink"))
			return 0;
	}
	return 1;
}

static void set_state(struct data_warm *w, struct warm_file *f, int kind, int state)
{
	pthread_mutex_lock(&w->lock);
	f->state[kind] = state;
	pthread_cond_broadcast(&w->changed);
	pthread_mutex_unlock(&w->lock);
}

/* Runs the kind's walk when no ti has taken it back. */
static void build(struct data_warm *w, struct warm_file *f, Dwarf *dw, int kind)
{
	int rc;

	pthread_mutex_lock(&w->lock);
	if (f->state[kind] != QUEUED) {
		pthread_mutex_unlock(&w->lock);
		return;
	}
	f->state[kind] = RUNNING;
	pthread_mutex_unlock(&w->lock);
	rc = kind == DATA_WARM_FUNCS ? data_frame_scan(dw, &f->arena[kind], &w->stop, &f->idx[kind])
				     : data_statics_scan(dw, &f->arena[kind], &w->stop, &f->idx[kind]);
	set_state(w, f, kind, rc == 0 ? DONE : CLAIMED);
}

static void warm_one(struct data_warm *w, struct warm_file *f)
{
	int fd = hm_debugfile_inflated(f->fd);	/* waits for the copy in the making */
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	Dwarf *dw = e && walkable(e) ? dwarf_begin_elf(e, DWARF_C_READ, NULL) : NULL;

	f->fd = -1;
	for (int k = 0; k < DATA_WARM_KINDS; k++) {
		if (dw)
			build(w, f, dw, k);
		else
			set_state(w, f, k, CLAIMED);	/* a waiting ti walks it */
	}
	if (dw)
		dwarf_end(dw);
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
}

static void *warm(void *arg)
{
	struct data_warm *w = arg;
	size_t n = 0;
	struct hm_debugfile_found *found = hm_debugfile_find_all(w->ids, w->nids, w->dir, &n);

	if (n && !(w->f = calloc(n, sizeof(*w->f)))) {
		for (size_t i = 0; i < n; i++)
			close(found[i].fd);
		n = 0;
	}
	for (size_t i = 0; i < n; i++) {
		w->f[i].fd = found[i].fd;
		w->f[i].st = found[i].st;
		for (int k = 0; k < DATA_WARM_KINDS; k++)
			hm_arena_init(&w->f[i].arena[k]);
	}
	free(found);
	pthread_mutex_lock(&w->lock);
	w->n = n;
	pthread_mutex_unlock(&w->lock);
	for (size_t i = 0; i < n; i++) {
		if (atomic_load(&w->stop)) {
			for (size_t j = i; j < n; j++)
				for (int k = 0; k < DATA_WARM_KINDS; k++)
					set_state(w, &w->f[j], k, CLAIMED);
			break;
		}
		warm_one(w, &w->f[i]);
	}
	pthread_mutex_lock(&w->lock);
	w->finished = 1;
	pthread_cond_broadcast(&w->changed);
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

void hm_data_warm(struct hm_data *d, const char *dir, const struct hm_perf_build_id *ids,
		  uint32_t n)
{
	struct data_warm *w;

	data_warm_end(d);
	if (!n || !(w = calloc(1, sizeof(*w) + n * sizeof(w->ids[0]))))
		return;
	w->nids = hm_debugfile_ids(ids, n, 1, w->ids);
	if (dir && !(w->dir = strdup(dir))) {
		free(w);
		return;
	}
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->changed, NULL);
	atomic_init(&w->stop, 0);
	elf_version(EV_CURRENT);
	if (!w->nids || pthread_create(&w->th, NULL, warm, w)) {
		pthread_mutex_destroy(&w->lock);
		pthread_cond_destroy(&w->changed);
		free(w->dir);
		free(w);	/* no thread to be had: each index is built at its first use */
		return;
	}
	d->warm = w;
}

void data_warm_end(struct hm_data *d)
{
	struct data_warm *w = d->warm;

	if (!w)
		return;
	atomic_store(&w->stop, 1);	/* a walk stops at its next unit */
	pthread_join(w->th, NULL);
	for (size_t i = 0; i < w->n; i++) {
		if (w->f[i].fd >= 0)
			close(w->f[i].fd);
		for (int k = 0; k < DATA_WARM_KINDS; k++) {
			if (w->f[i].state[k] == DONE)
				free(w->f[i].idx[k].v);
			hm_arena_free(&w->f[i].arena[k]);
		}
	}
	free(w->f);
	free(w->dir);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->changed);
	free(w);
	d->warm = NULL;
}

void data_warm_settle(struct hm_data *d)
{
	struct data_warm *w = d->warm;

	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	while (!w->finished)
		pthread_cond_wait(&w->changed, &w->lock);
	pthread_mutex_unlock(&w->lock);
}

int data_warm_take(struct hm_ti *ti, int kind, struct data_index *out)
{
	struct data_warm *w = ti->warm ? *ti->warm : NULL;
	const char *debugfile = NULL;
	struct warm_file *f = NULL;
	struct stat st;
	int taken = 0;

	if (!w || !ti->dw || !ti->mod ||
	    !dwfl_module_info(ti->mod, NULL, NULL, NULL, NULL, NULL, NULL, &debugfile) ||
	    !debugfile || stat(debugfile, &st))
		return 0;	/* DWARF in the file itself: not one the thread reads */
	pthread_mutex_lock(&w->lock);
	for (size_t i = 0; i < w->n && !f; i++)
		if (hm_debugfile_same(&w->f[i].st, &st))
			f = &w->f[i];
	if (f && f->state[kind] == QUEUED)
		f->state[kind] = CLAIMED;	/* not begun: walked by the ti, now */
	while (f && f->state[kind] == RUNNING)
		pthread_cond_wait(&w->changed, &w->lock);
	if (f && f->state[kind] == DONE) {
		*out = f->idx[kind];
		hm_arena_adopt(&ti->arena, &f->arena[kind]);
		f->state[kind] = CLAIMED;
		taken = 1;
	}
	pthread_mutex_unlock(&w->lock);
	return taken;
}
