/* Kernel heap objects named by their slab cache (slab.h) in hm_data: the guest's report
 * reads struct page and kmem_cache from /proc/kcore with BTF's offsets; the object's
 * base from the slab makes the member exact (xfs_inode.i_vnode.i_rwsem.owner), where the
 * instruction's pointer type alone names the embedded struct (inode.i_rwsem.owner). A
 * cache that names no type (kmalloc-*) leaves the address to the instruction's typing.
 * The memory read is of report time: an object freed since the recording and its slot
 * reused by the same cache still has that cache's type, but a page freed and taken by
 * another cache names the new cache's object. */
#include "symbolize/data_int.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "core/kslab.h"
#include "core/oom.h"
#include "symbolize/layout.h"
#include "symbolize/code.h"
#include "symbolize/slab_kcore.h"

void data_slab_kcore(struct hm_data *d, struct data_mod *m, struct hm_code *code)
{
	const char *why = NULL;

	if (hm_slab_open_kcore(code, m->lay, &d->slab, NULL, &why) != 0) {
		d->slab_hint = why;
		return;
	}
	d->slab_lay = m->lay;
	d->slab_source = "kcore";
}

int data_slab_table(struct hm_data *d, struct hm_layout *lay, const uint8_t *bytes, size_t len,
		    const char *name)
{
	struct hm_kslab k;
	struct hm_err err = {0};

	if (hm_kslab_decode(bytes, len, name, &k, &err) != 0) {
		d->slab_hint = d->slab_damage = data_intern(d, err.msg);
		return -1;
	}
	hm_slab_close(d->slab);
	d->slab = hm_slab_open_table(&k);
	hm_kslab_free(&k);
	d->slab_lay = lay;
	d->slab_source = "recording";
	d->slab_hint = NULL;
	return 0;
}

/* How many kernel modules' files with types the report has met: a cache whose type none
 * had is looked up again when another comes (xfs.ko's xfs_inode, on the host). */
static uint64_t module_types(struct hm_data *d)
{
	uint64_t n = 0;

	for (struct data_mod *m = d->mod_list; m; m = m->next)
		n += m->kernel && m != d->kimg.mod && m->opened && m->lay;
	return n;
}

/* The running kernel's modules' BTF (/sys/kernel/btf/MODULE, split over vmlinux's),
 * each opened once, at the first cache whose type the vmlinux lacks: the guest's report
 * types xfs_inode objects through xfs's. */
static void open_module_btf(struct hm_data *d)
{
	const char *base = d->kbtf_base ? hm_layout_path(d->kbtf_base) : NULL;
	char dir[4096];
	struct dirent *e;
	DIR *dh;

	d->kbtf_done = 1;
	if (!base || strlen(base) >= sizeof(dir) || !strrchr(base, '/'))
		return;
	strcpy(dir, base);
	*strrchr(dir, '/') = '\0';
	if (!(dh = opendir(dir)))
		return;
	while ((e = readdir(dh))) {
		struct hm_layout *lay = NULL;
		struct hm_err err = {0};
		char *path;

		if (e->d_name[0] == '.' || !strcmp(e->d_name, "vmlinux"))
			continue;
		path = hm_arena_printf(&d->arena, "%s/%s", dir, e->d_name);
		if (hm_layout_open_btf_split(path, d->kbtf_base, &lay, &err) != 0)
			continue;	/* not a module's BTF: that module's caches stay untyped */
		if (!(d->kbtf = realloc(d->kbtf, (d->nr_kbtf + 1) * sizeof(*d->kbtf))))
			hm_oom();
		d->kbtf[d->nr_kbtf++] = lay;
	}
	closedir(dh);
}

void data_slab_free(struct hm_data *d)
{
	for (size_t i = 0; i < d->nr_kbtf; i++)
		hm_layout_close(d->kbtf[i]);
	free(d->kbtf);
	d->kbtf = NULL;
	d->nr_kbtf = 0;
	hm_slab_close(d->slab);
	d->slab = NULL;
}

/* A cache of a module (xfs_inode, xfs_ili): its type in that module's DWARF or BTF. */
static const struct hm_type *module_cache_type(struct hm_data *d, const struct hm_slab_obj *so)
{
	const struct hm_type *t = NULL;

	if (d->kbtf_base && !d->kbtf_done)
		open_module_btf(d);
	for (size_t i = 0; i < d->nr_kbtf && !t; i++)
		t = hm_slab_type(d->kbtf[i], so->cache, so->object_size);

	for (struct data_mod *m = d->mod_list; m && !t; m = m->next) {
		if (!m->kernel || m == d->kimg.mod)
			continue;
		data_mod_open(d, m);
		if (m->lay && m->lay != d->slab_lay)
			t = hm_slab_type(m->lay, so->cache, so->object_size);
	}
	return t;
}

/* The cache's type, once per cache; a cache naming none is remembered with the number of
 * module files seen then, and tried again when there are more. */
static const struct hm_type *cache_type(struct hm_data *d, const struct hm_slab_obj *so)
{
	void *v = hm_map64_get(&d->slab_types, so->cache_addr + 1);
	uint64_t mods = 0;
	const struct hm_type *t;

	if (v && !((uintptr_t)v & 1))
		return v;
	if (so->merged && v)
		return NULL;
	if (v && (uintptr_t)v >> 1 == (mods = module_types(d)))
		return NULL;
	t = so->merged ? NULL : hm_slab_type(d->slab_lay, so->cache, so->object_size);
	if (!t && !so->merged)
		t = module_cache_type(d, so);
	if (!t)
		mods = module_types(d);
	/* a type pointer is even; a miss is stored as (modules << 1) | 1 */
	hm_map64_put(&d->slab_types, so->cache_addr + 1,
		     t ? (void *)t : (void *)(uintptr_t)(mods << 1 | 1));
	return t;
}

int data_slab_object(struct hm_data *d, uint64_t addr, uint64_t *base, uint32_t *object_size)
{
	struct hm_slab_obj so;

	if (!d->slab || !addr || hm_slab_lookup(d->slab, addr, &so) != 0)
		return -1;
	*base = so.base;
	*object_size = so.object_size;
	return 0;
}

/* clear_page zeroes a page just allocated, which no slab holds while it runs: a slab
 * there at report time took the page later. */
static int clears_page(const struct data_image *code, uint64_t ip)
{
	struct hm_ti_frame f = {0};

	if (!code || !code->mod->ti || !code->mod->ti->has_code)
		return 0;
	data_code_frame(code->mod->ti, &f, ip);
	return f.func && !strncmp(f.func, "clear_page", 10);
}

int data_slab_name(struct hm_data *d, const struct data_image *code, uint64_t ip,
		   uint64_t addr, struct hm_data_obj *out)
{
	struct hm_slab_obj so;
	const struct hm_type *t;

	if (!d->slab || !addr || hm_slab_lookup(d->slab, addr, &so) != 0 ||
	    !(t = cache_type(d, &so)) || clears_page(code, ip))
		return -1;
	memset(out, 0, sizeof(*out));
	out->method = HM_M_HEAP;
	out->object = data_type_label(d, t);
	out->type = t;
	out->base = so.base;
	out->offset = so.offset;
	out->prefix = data_bare_name(d, t);
	out->field = data_field(d, out->prefix, t, so.offset);
	out->module = code ? code->mod->path : "[kernel.kallsyms]";
	out->whole = 1;
	d->st.kernel_slab++;
	return 0;
}

const char *hm_data_slab_damage(const struct hm_data *d)
{
	return d ? d->slab_damage : NULL;
}
