/* Slab lookups over the running kernel's memory (/proc/kcore through hm_code, offsets
 * from its BTF, the KASLR bases from kallsyms), for the report in the guest and for the
 * snapshot `record -k` saves (core/kslab.h) so that a report elsewhere names slabs too. */
#include "symbolize/slab_kcore.h"

#include <stdlib.h>
#include <string.h>

#include "core/kslab.h"
#include "symbolize/code.h"
#include "symbolize/layout.h"

/* How this kernel marks a slab page (slab.h), from its BTF layout: PG_slab, else
 * PGTY_slab; -1 neither. */
static int64_t slab_mark(struct hm_layout *lay, enum hm_slab_mark *mark)
{
	int64_t v;

	*mark = HM_SLAB_PG_FLAG;
	if (!hm_layout_btf_enum(lay, "pageflags", "PG_slab", &v))
		return v;
	*mark = HM_SLAB_PAGE_TYPE;
	return hm_layout_btf_enum(lay, "pagetype", "PGTY_slab", &v) ? -1 : v;
}

static size_t kcore_mem(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return hm_code_read(ctx, 0, addr, 1, buf, len);
}

/* Reads the n kernel variables (unsigned long) names from kcore: 0, or -1 with *why. */
static int kvars(struct hm_code *code, const char *const *names, uint64_t *v, size_t n,
		 const char **why)
{
	struct hm_code_kernel img;
	uint64_t at[4];

	if (hm_code_kernel_image(code, &img) != 0 || !img.kcore) {
		*why = "kernel heap not named by slab cache: no kernel memory to read (/proc/kcore "
		       "of this boot, as root)";
		return -1;
	}
	if (n > 4 || hm_code_kernel_data(code, names, at, n) != 0) {
		*why = "kernel heap not named by slab cache: kallsyms lacks page_offset_base, "
		       "vmemmap_base, vmalloc_base or max_pfn (run as root)";
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		if (hm_code_read(code, 0, at[i], 1, (uint8_t *)&v[i], 8) != 8) {
			*why = "kernel heap not named by slab cache: page_offset_base, "
			       "vmemmap_base, vmalloc_base or max_pfn unreadable in kcore";
			return -1;
		}
	return 0;
}

int hm_slab_open_kcore(struct hm_code *code, struct hm_layout *lay, struct hm_slab **out,
		       uint64_t *max_pfn, const char **why)
{
	static const char *const vars[] = {"page_offset_base", "vmemmap_base", "vmalloc_base",
					   "max_pfn"};
	struct hm_slab_offs o;
	enum hm_slab_mark mark;
	const char *miss;
	uint64_t v[4];
	int64_t val = slab_mark(lay, &mark);

	*out = NULL;
	if (val < 0 || val > UINT32_MAX ||
	    hm_slab_offs_from(lay, mark, (uint32_t)val, &o, &miss) != 0) {
		*why = "kernel heap not named by slab cache: the kernel's BTF lacks struct page, "
		       "slab or kmem_cache, or marks slab pages neither by PG_slab (up to 6.9) "
		       "nor by PGTY_slab (6.12 on)";
		return -1;
	}
	if (kvars(code, vars, v, 4, why) != 0)
		return -1;
	if (v[0] < (1ull << 63) || v[1] < (1ull << 63) || v[2] <= v[0]) {
		*why = "kernel heap not named by slab cache: page_offset_base, vmemmap_base or "
		       "vmalloc_base read from kcore make no x86-64 direct map";
		return -1;
	}
	*out = hm_slab_open(&(struct hm_slab_bases){v[0], v[1], v[2]}, &o, kcore_mem, code);
	if (max_pfn)
		*max_pfn = v[3];
	return 0;
}

uint8_t *hm_slab_snapshot_live(size_t *len, const char **why)
{
	static const char btf_path[] = "/sys/kernel/btf/vmlinux";
	struct hm_code_opts co = {.vmlinux = ""};
	struct hm_code *code = NULL;
	struct hm_layout *lay = NULL;
	struct hm_slab *s = NULL;
	struct hm_kslab k = {0};
	struct hm_err err = {0};
	uint64_t max_pfn = 0;
	uint8_t *bytes = NULL;

	*why = NULL;
	if (hm_code_open(&co, &code, &err) != 0) {
		*why = "slab facts not saved: kernel code unreadable";
		return NULL;
	}
	if (hm_layout_open_btf(btf_path, &lay, &err) != 0)
		*why = "slab facts not saved: no " "/sys/kernel/btf/vmlinux (a kernel without "
		       "CONFIG_DEBUG_INFO_BTF)";
	else if (hm_slab_open_kcore(code, lay, &s, &max_pfn, why) == 0 &&
		 hm_slab_snapshot(s, max_pfn, &k) != 0)
		*why = "slab facts not saved: no slab page found through /proc/kcore";
	if (!*why)
		bytes = hm_kslab_encode(&k, len);
	hm_kslab_free(&k);
	hm_slab_close(s);
	if (lay)
		hm_layout_close(lay);
	hm_code_close(code);
	return bytes;
}
