/* Kernel code the boot rewrote: paravirt call sites and alternatives. The vmlinux's bytes
 * hold `call *pv_ops+N(%rip)` at each site listed in .parainstructions; at boot
 * apply_paravirt() patches every one of them (a direct call, the native instruction
 * such as `sti`, or nops), so none ever loads pv_ops. Decoding the file's bytes there
 * would make a phantom hot pv_ops line out of every sample in such a site. Each
 * .altinstructions entry names a site that apply_alternatives() replaced, or not,
 * depending on the recording CPU's features, which the recording does not carry: the
 * file's bytes there may not be what ran, so such a site is not decoded either (counted
 * apart). Static calls and jump labels patch calls, jumps and nops only, which access no
 * data whichever way they were patched, so they need nothing here. When the code bytes
 * come from kcore (the live text) nothing needs this. */
#include "symbolize/code_int.h"

#include <stdlib.h>
#include <string.h>
#include "core/oom.h"
#include "core/sort.h"

/* struct paravirt_patch_site { u8 *instr; u8 type; u8 len; } on x86-64 (padded to 16). */
#define PV_SITE_SIZE 16
/* struct alt_instr { s32 instr_offset; s32 repl_offset; u16 cpuid; u8 instrlen;
 * u8 replacementlen; } __packed, offsets relative to the field (Linux 5.9 to 6.x). */
#define ALT_SIZE 12

static int pv_cmp(const void *pa, const void *pb)
{
	const struct code_pvsite *a = pa, *b = pb;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

static Elf_Scn *section(Elf *elf, const char *want, GElf_Shdr *sh)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (gelf_getshdr(scn, sh) && sh->sh_type == SHT_PROGBITS &&
		    (name = elf_strptr(elf, shstrndx, sh->sh_name)) && !strcmp(name, want))
			return scn;
	}
	return NULL;
}

static Elf_Data *section_data(Elf *elf, const char *want, GElf_Shdr *sh)
{
	Elf_Scn *scn = section(elf, want, sh);
	Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;

	return d && d->d_buf ? d : NULL;
}

static void site_add(struct code_kernel *k, size_t *cap, uint64_t addr, uint8_t len,
		     uint8_t kind)
{
	if (k->nr_pv == *cap) {
		struct code_pvsite *p;

		*cap = *cap ? 2 * *cap : 1024;
		if (!(p = realloc(k->pv, *cap * sizeof(*p))))
			hm_oom();
		k->pv = p;
	}
	k->pv[k->nr_pv++] = (struct code_pvsite){.addr = addr, .len = len, .kind = kind};
}

static void pv_sites(struct code_kernel *k, size_t *cap)
{
	GElf_Shdr sh;
	Elf_Data *data = section_data(k->vmlinux->elf, ".parainstructions", &sh);
	size_t n = data ? data->d_size / PV_SITE_SIZE : 0;

	if (!n || data->d_size % PV_SITE_SIZE)
		return;
	for (size_t i = 0; i < n; i++) {
		const uint8_t *e = (const uint8_t *)data->d_buf + i * PV_SITE_SIZE;
		uint64_t addr;

		memcpy(&addr, e, sizeof(addr));
		site_add(k, cap, addr, e[9], HM_PATCH_PARAVIRT);
	}
}

/* Every entry must name a site in executable code and a replacement inside
 * .altinstr_replacement (or .altinstr_aux); else the layout is not the one above and
 * the table is not used (k->alt_skipped says so). */
static void alt_sites(struct code_kernel *k, size_t *cap)
{
	GElf_Shdr sh, rs, aux = {0};
	Elf_Data *data = section_data(k->vmlinux->elf, ".altinstructions", &sh);
	size_t n = data ? data->d_size / ALT_SIZE : 0, first = k->nr_pv;

	if (!n || !section(k->vmlinux->elf, ".altinstr_replacement", &rs))
		return;
	if (data->d_size % ALT_SIZE) {
		k->alt_skipped = 1;
		return;
	}
	section(k->vmlinux->elf, ".altinstr_aux", &aux);
	for (size_t i = 0; i < n; i++) {
		const uint8_t *e = (const uint8_t *)data->d_buf + i * ALT_SIZE;
		uint64_t at = sh.sh_addr + i * ALT_SIZE;
		int32_t io, ro;
		uint64_t repl;

		memcpy(&io, e, 4);
		memcpy(&ro, e + 4, 4);
		repl = at + 4 + (uint64_t)(int64_t)ro;
		if (!code_vmlinux_exec(k->vmlinux, at + (uint64_t)(int64_t)io) ||
		    !((repl - rs.sh_addr <= rs.sh_size) ||
		      (aux.sh_size && repl - aux.sh_addr <= aux.sh_size))) {
			k->nr_pv = first;	/* not this layout: drop what was added */
			k->alt_skipped = 1;
			return;
		}
		if (e[10])
			site_add(k, cap, at + (uint64_t)(int64_t)io, e[10], HM_PATCH_ALTERNATIVE);
	}
}

static void pv_load(struct code_kernel *k)
{
	size_t cap = 0;

	k->pv_loaded = 1;
	pv_sites(k, &cap);
	alt_sites(k, &cap);
	if (k->nr_pv)
		hm_sort(k->pv, k->nr_pv, sizeof(*k->pv), pv_cmp);
}

int hm_code_kernel_patched(struct hm_code *c, uint64_t ip)
{
	struct code_kernel *k = &c->k;
	struct hm_code_kernel img;
	uint64_t vaddr;
	size_t lo = 0, hi;
	int kind = 0;

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
	/* Sites may overlap (a paravirt call that is also an alternative): look back while
	 * one could still cover ip; paravirt wins, being rewritten at every boot. */
	for (size_t i = lo; i > 0 && vaddr - k->pv[i - 1].addr < 256; i--)
		if (vaddr - k->pv[i - 1].addr < k->pv[i - 1].len)
			kind = kind == HM_PATCH_PARAVIRT ? kind : k->pv[i - 1].kind;
	return kind;
}
