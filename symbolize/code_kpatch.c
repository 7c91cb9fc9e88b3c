/* Kernel code the boot rewrote: paravirt call sites. The vmlinux's bytes hold
 * `call *pv_ops+N(%rip)` at each site listed in .parainstructions; at boot
 * apply_paravirt() patches every one of them (a direct call, the native instruction
 * such as `sti`, or nops), so none ever loads pv_ops. Decoding the file's bytes there
 * would make a phantom hot pv_ops line out of every sample in such a site. When the
 * code bytes come from kcore (the live text) nothing needs this. */
#include "symbolize/code_int.h"

#include <stdlib.h>
#include <string.h>
#include "core/sort.h"

/* struct paravirt_patch_site { u8 *instr; u8 type; u8 len; } on x86-64 (padded to 16). */
#define PV_SITE_SIZE 16

static int pv_cmp(const void *pa, const void *pb)
{
	const struct code_pvsite *a = pa, *b = pb;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

static Elf_Data *section_data(Elf *elf, const char *want)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_PROGBITS &&
		    (name = elf_strptr(elf, shstrndx, sh.sh_name)) && !strcmp(name, want))
			return elf_getdata(scn, NULL);
	}
	return NULL;
}

static void pv_load(struct code_kernel *k)
{
	Elf_Data *data = section_data(k->vmlinux->elf, ".parainstructions");
	size_t n = data && data->d_buf ? data->d_size / PV_SITE_SIZE : 0;

	k->pv_loaded = 1;
	if (!n || data->d_size % PV_SITE_SIZE || !(k->pv = calloc(n, sizeof(*k->pv))))
		return;
	for (size_t i = 0; i < n; i++) {
		const uint8_t *e = (const uint8_t *)data->d_buf + i * PV_SITE_SIZE;

		memcpy(&k->pv[i].addr, e, sizeof(k->pv[i].addr));
		k->pv[i].len = e[9];
	}
	hm_sort(k->pv, n, sizeof(*k->pv), pv_cmp);
	k->nr_pv = n;
}

int hm_code_kernel_patched(struct hm_code *c, uint64_t ip)
{
	struct code_kernel *k = &c->k;
	struct hm_code_kernel img;
	uint64_t vaddr;
	size_t lo = 0, hi;

	if (!k->loaded)
		hm_code_kernel_image(c, &img);	/* finds the vmlinux (or kcore) once */
	if (!k->vmlinux || !k->vmlinux->elf)
		return 0;	/* no code read from a vmlinux: nothing decoded from its bytes */
	vaddr = ip - (uint64_t)k->kaslr;
	if (!k->pv_loaded)
		pv_load(k);
	hi = k->nr_pv;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->pv[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && vaddr - k->pv[lo - 1].addr < k->pv[lo - 1].len;
}
