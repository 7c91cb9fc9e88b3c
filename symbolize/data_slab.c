/* Kernel heap objects named by their slab cache (slab.h) in hm_data: the guest's report
 * reads struct page and kmem_cache from /proc/kcore with BTF's offsets; the object's
 * base from the slab makes the member exact (xfs_inode.i_vnode.i_rwsem.owner), where the
 * instruction's pointer type alone names the embedded struct (inode.i_rwsem.owner). A
 * cache that names no type (kmalloc-*) leaves the address to the instruction's typing.
 * The memory read is of report time: an object freed since the recording and its slot
 * reused by the same cache still has that cache's type, but a page freed and taken by
 * another cache names the new cache's object. */
#include "symbolize/data_int.h"

#include <bpf/btf.h>
#include <string.h>

#include "symbolize/code.h"
#include "symbolize/slab.h"

/* enum pageflags' PG_slab from raw BTF; -1 without it. */
static int pg_slab_bit(const char *btf_path)
{
	struct btf *btf = btf__parse(btf_path, NULL);
	int id = btf ? btf__find_by_name_kind(btf, "pageflags", BTF_KIND_ENUM) : -1;
	const struct btf_type *t = id > 0 ? btf__type_by_id(btf, (uint32_t)id) : NULL;
	const struct btf_enum *e = t ? btf_enum(t) : NULL;
	int bit = -1;

	for (uint16_t i = 0; e && i < btf_vlen(t); i++)
		if (!strcmp(btf__name_by_offset(btf, e[i].name_off), "PG_slab"))
			bit = e[i].val;
	btf__free(btf);
	return bit;
}

static size_t kcore_mem(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return hm_code_read(ctx, 0, addr, 1, buf, len);
}

void data_slab_kcore(struct hm_data *d, struct data_mod *m, struct hm_code *code,
		     const char *btf_path)
{
	static const char *const vars[] = {"page_offset_base", "vmemmap_base", "vmalloc_base"};
	uint64_t at[3], v[3];
	struct hm_slab_offs o;
	const char *why;
	int bit = pg_slab_bit(btf_path);

	if (bit < 0 || hm_slab_offs_from(m->lay, (uint32_t)bit, &o, &why) != 0) {
		d->slab_hint = "kernel heap not named by slab cache: the kernel's BTF lacks "
			       "struct page, slab or kmem_cache (or PG_slab)";
		return;
	}
	if (hm_code_kernel_data(code, vars, at, 3) != 0) {
		d->slab_hint = "kernel heap not named by slab cache: kallsyms lacks "
			       "page_offset_base, vmemmap_base or vmalloc_base (run as root)";
		return;
	}
	for (int i = 0; i < 3; i++)
		if (hm_code_read(code, 0, at[i], 1, (uint8_t *)&v[i], 8) != 8 || v[i] < (1ull << 63)) {
			d->slab_hint = "kernel heap not named by slab cache: page_offset_base, "
				       "vmemmap_base or vmalloc_base unreadable in kcore";
			return;
		}
	if (v[2] <= v[0])
		return;
	d->slab = hm_slab_open(&(struct hm_slab_bases){v[0], v[1], v[2]}, &o, kcore_mem, code);
	d->slab_lay = m->lay;
	d->slab_source = "kcore";
}

/* The cache's type, once per cache (NULL remembered as a cache naming none). */
static const struct hm_type *cache_type(struct hm_data *d, const struct hm_slab_obj *so)
{
	const struct hm_type *t = hm_map64_get(&d->slab_types, so->cache_addr + 1);
	static const struct hm_type none;

	if (t)
		return t == &none ? NULL : t;
	t = so->merged ? NULL : hm_slab_type(d->slab_lay, so->cache, so->object_size);
	hm_map64_put(&d->slab_types, so->cache_addr + 1, (void *)(t ? t : &none));
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
