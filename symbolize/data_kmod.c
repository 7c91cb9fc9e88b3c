/* A kernel module's globals (its .data, .bss, .rodata: loop_ctl_mutex, xfsstats), named
 * as the person who wrote the module knows them.
 *
 * Host: the recording holds each module's section load addresses (core/ksections.h), so
 * an address in one of its sections is that section plus an offset; the module's debug
 * file (the -dbg xfs.ko, or the build-id cache's copy: code_kmod.c finds it) says which
 * variable lies there, typed by its DWARF (loop_ctl_mutex.owner.counter).
 * Guest (kcore, no vmlinux): kallsyms lists module data symbols (d, b, r with [loop]),
 * each ending at the next; they have no types, so a name comes typed only when the heap
 * path typed the object starting at the symbol (data_kmod_relabel). The kernel's own
 * data symbols alike (tk_core, jiffies_64): a vmlinux names them first, typed. */
#include "symbolize/data_int.h"

#include <string.h>
#include "symbolize/code.h"

/* The address of section name in libdwfl's layout of the module's file; 0 if none. */
static uint64_t layout_addr(Elf *elf, const char *name, int *found)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	*found = 0;
	if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_ALLOC) &&
		    (n = elf_strptr(elf, shstrndx, sh.sh_name)) && !strcmp(n, name)) {
			*found = 1;
			return sh.sh_addr;
		}
	}
	return 0;
}

static const char *bracket(struct hm_data *d, const char *module)
{
	return hm_arena_printf(&d->arena, "[%s]", module);
}

/* The variable at offset off of section sec of the module file at path, named into out
 * as if it lay at runtime address at. */
static int kmod_var(struct hm_data *d, const char *path, const char *sec, uint64_t off,
		    uint64_t at, struct hm_data_obj *out)
{
	uint64_t va;
	struct data_mod *m;
	struct data_image img;
	int found;

	m = data_mod_get(d, path);
	m->kernel = 1;
	data_mod_open(d, m);
	if (!m->ti)
		return -1;
	va = layout_addr(hm_ti_elf(m->ti), sec, &found) + off;
	if (!found)
		return -1;
	img = (struct data_image){0, 0, at - va, m};
	if (data_global(d, &img, at, out) != 0)
		return -1;
	d->st.kmod_globals++;
	return 0;
}

int data_kmod_global(struct hm_data *d, uint64_t addr, struct hm_data_obj *out)
{
	const char *path, *sec;
	uint64_t off;

	if (!d->files || hm_code_kernel_datasec(d->files, addr, &path, &sec, &off) != 0)
		return -1;
	return kmod_var(d, path, sec, off, addr, out);
}

/* The module label of a global named by a kallsyms symbol of module (NULL: the kernel's
 * own), counted for --stats. */
static const char *symbol_module(struct hm_data *d, const char *module)
{
	if (!module) {
		d->st.ksym_globals++;
		return "[kernel.kallsyms]";
	}
	d->st.kmod_globals++;
	return data_intern(d, bracket(d, module));
}

/* A global known by its kallsyms symbol only (no type): name + offset. module NULL: the
 * kernel's own (the guest names tk_core so without a vmlinux). */
static void by_symbol(struct hm_data *d, const char *name, const char *module, uint64_t offset,
		      struct hm_data_obj *out)
{
	memset(out, 0, sizeof(*out));
	out->method = HM_M_GLOBAL;
	out->object = out->prefix = data_intern(d, name);
	out->offset = offset;
	out->field = data_field(d, out->object, NULL, out->offset);
	out->module = symbol_module(d, module);
}

/* Per-CPU: the module's .data..percpu was placed at a per-CPU offset (x86-64: %gs:off
 * reads CPU n's copy at __per_cpu_offset[n] + off), named per CPU by the resolver as the
 * kernel's own per-CPU variables are. */
int data_kmod_percpu(struct hm_data *d, uint64_t off, uint64_t addr, struct hm_data_obj *out)
{
	const char *path, *name, *module;
	uint64_t in, start;

	if (d->files && hm_code_kernel_percpusec(d->files, off, &path, &in) == 0 &&
	    kmod_var(d, path, ".data..percpu", in, off, out) == 0) {
		out->base = addr ? addr - out->offset : 0;
		return 0;
	}
	/* the guest: kallsyms lists a module's per-CPU symbols at their offsets */
	if (!d->files || hm_code_kernel_datasym(d->files, off, &name, &start, &module) != 0 ||
	    start >= (1ull << 32))
		return -1;
	by_symbol(d, name, module, off - start, out);
	out->base = addr ? addr - out->offset : 0;
	return 0;
}

int data_kmod_symbol(struct hm_data *d, uint64_t addr, struct hm_data_obj *out)
{
	const char *name, *module;
	uint64_t start;

	if (!d->files || hm_code_kernel_datasym(d->files, addr, &name, &start, &module) != 0)
		return -1;
	by_symbol(d, name, module, addr - start, out);
	out->base = start;
	return 0;
}

void data_kmod_relabel(struct hm_data *d, uint64_t addr, struct hm_data_obj *out)
{
	const char *name, *module;
	uint64_t start;

	if (!out->type || !out->base || !d->files ||
	    hm_code_kernel_datasym(d->files, out->base, &name, &start, &module) != 0 ||
	    start != out->base || addr - start != out->offset)
		return;
	out->method = HM_M_GLOBAL;
	out->object = out->prefix = data_intern(d, name);
	out->field = data_field(d, out->object, out->type, out->offset);
	out->module = symbol_module(d, module);
}
