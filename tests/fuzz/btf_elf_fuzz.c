/* libFuzzer target for BTF in an ELF file, in the section variants a damaged or hostile
 * file holds: the input's first 3 bytes pick how its .BTF section is written, the rest
 * is the BTF itself. Random bytes rarely make an ELF file whose .BTF libbpf then reads;
 * here every input is one, so libbpf's btf__new sees each payload as hitmap hands it
 * over. Two entry points, as hitmap calls them:
 *   - hm_layout_open_btf on the file (`hitmap layout --btf`), then every type rendered
 *     and walked (layout_fuzz.h);
 *   - the data symbolizer (symbolize/data.c, data_btf.c): the file mapped as an
 *     executable without DWARF, one sample at each function's entry with the argument
 *     registers pointing at heap addresses, so that BTF's FUNC prototypes type them.
 * byte 0, bits 0-1: section type: PROGBITS, NOBITS, NOTE, PROGBITS with SHF_ALLOC
 *         bit 2: the section starts 1-7 bytes (byte 1 & 7) after an aligned offset
 *         bits 3-4: sh_size past the end of the file; the file cut inside the section;
 *                 sh_offset past the end of the file
 *         bit 5: a second .BTF section (an empty NOBITS one first)
 *         bit 6: one BTF header field, or the first type's vlen, set to a huge value
 *                 (field: byte 1 >> 3; value: byte 2)
 *         bit 7: the section's name offset past the end of .shstrtab
 * Built and run by `make fuzz` (tests/fuzz/README.md). */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/data.h"
#include "tests/fuzz/layout_fuzz.h"

#define BASE 0x400000ull
#define TEXT_OFF 0x200u
#define FUNC_SIZE 16u
#define NR_FUNCS 4
#define PAYLOAD_MAX (1u << 20)
#define HEAP 0x7f0000001000ull

static const char *const funcs[NR_FUNCS] = { "main", "count_ops", "count_errors",
					     "fill_orders" };
/* mov (%rdi),%rax; mov %rax,(%rsi); addq $1,0x8(%rdi); ret; int3 padding */
static const uint8_t code[FUNC_SIZE] = { 0x48, 0x8b, 0x07, 0x48, 0x89, 0x06, 0x48, 0x83,
					 0x47, 0x08, 0x01, 0xc3, 0xcc, 0xcc, 0xcc, 0xcc };
static const char shstr[] = "\0.text\0.symtab\0.strtab\0.shstrtab\0.BTF";
enum { N_TEXT = 1, N_SYMTAB = 7, N_STRTAB = 15, N_SHSTRTAB = 23, N_BTF = 33 };

struct image {
	uint8_t *b;
	size_t len, cap;
};

static size_t put(struct image *im, const void *p, size_t n, size_t align)
{
	size_t at = (im->len + align - 1) & ~(align - 1);

	if (at + n > im->cap) {
		size_t cap = (at + n) * 2;
		uint8_t *nb = realloc(im->b, cap);

		if (!nb)
			abort();
		memset(nb + im->cap, 0, cap - im->cap);
		im->b = nb;
		im->cap = cap;
	}
	if (p)
		memcpy(im->b + at, p, n);
	im->len = at + n;
	return at;
}

/* A huge value for one BTF header field (hdr_len, type_off, type_len, str_off, str_len)
 * or the first type's vlen, as bit 6 asks. */
static void patch_btf(uint8_t *btf, size_t len, uint8_t sel, uint8_t val)
{
	const uint32_t vals[8] = { 0xffffffffu, 0x80000000u, 0x7fffffffu, (uint32_t)len,
				   (uint32_t)len + 4, 0x10000u, 0, 0xfffffff0u };
	uint32_t v = vals[val & 7], field = (sel >> 3) % 6, hdr_len;

	if (field < 5 && len >= 4 + 4 * (field + 1)) {
		memcpy(btf + 4 + 4 * field, &v, 4);
	} else if (field == 5 && len >= 8) {
		memcpy(&hdr_len, btf + 4, 4);
		if (hdr_len <= len && len - hdr_len >= 8) {
			uint16_t vlen = 0xffff;

			memcpy(btf + hdr_len + 4, &vlen, 2);	/* info's low half */
		}
	}
}

static void shdr(Elf64_Shdr *s, uint32_t name, uint32_t type, uint64_t flags, uint64_t addr,
		 uint64_t off, uint64_t size, uint32_t link, uint64_t entsize)
{
	*s = (Elf64_Shdr){ .sh_name = name, .sh_type = type, .sh_flags = flags,
			   .sh_addr = addr, .sh_offset = off, .sh_size = size,
			   .sh_link = link, .sh_addralign = 1, .sh_entsize = entsize };
}

/* Where build put each part of the file. */
struct parts {
	size_t text, syms, syms_size, strs, strs_size, shs, shdrs, btf, btf_size, nsh;
};

/* .text with the functions, their symbols and names. */
static void write_text(struct image *im, struct parts *p)
{
	Elf64_Sym sym[NR_FUNCS + 1] = {{0}};
	char strtab[64] = "";
	size_t sl = 1;

	im->len = TEXT_OFF;	/* the ELF and program headers go before */
	p->text = put(im, NULL, 0, 16);
	for (int i = 0; i < NR_FUNCS; i++) {
		put(im, code, sizeof(code), 1);
		sym[i + 1] = (Elf64_Sym){ .st_name = (uint32_t)sl,
					  .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
					  .st_shndx = 1,
					  .st_value = BASE + p->text + i * FUNC_SIZE,
					  .st_size = FUNC_SIZE };
		memcpy(strtab + sl, funcs[i], strlen(funcs[i]) + 1);
		sl += strlen(funcs[i]) + 1;
	}
	p->syms = put(im, sym, sizeof(sym), 8);
	p->syms_size = sizeof(sym);
	p->strs = put(im, strtab, sl, 1);
	p->strs_size = sl;
	p->shs = put(im, shstr, sizeof(shstr), 1);
}

/* The section headers, .BTF's in the variant mode asks for. */
static void write_shdrs(struct image *im, struct parts *p, uint8_t mode, uint8_t sel)
{
	static const uint32_t types[4] = { SHT_PROGBITS, SHT_NOBITS, SHT_NOTE, SHT_PROGBITS };
	Elf64_Shdr sh[7], *b;

	memset(sh, 0, sizeof(sh));
	p->nsh = 6;
	shdr(&sh[1], N_TEXT, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, BASE + p->text, p->text,
	     NR_FUNCS * FUNC_SIZE, 0, 0);
	shdr(&sh[2], N_SYMTAB, SHT_SYMTAB, 0, 0, p->syms, p->syms_size, 3, sizeof(Elf64_Sym));
	sh[2].sh_info = 1;
	shdr(&sh[3], N_STRTAB, SHT_STRTAB, 0, 0, p->strs, p->strs_size, 0, 0);
	shdr(&sh[4], N_SHSTRTAB, SHT_STRTAB, 0, 0, p->shs, sizeof(shstr), 0, 0);
	if (mode & 0x20)	/* an empty NOBITS .BTF before the real one */
		shdr(&sh[p->nsh++ - 1], N_BTF, SHT_NOBITS, 0, 0, p->btf, 0x1000, 0, 0);
	b = &sh[p->nsh - 1];
	shdr(b, N_BTF, types[mode & 3], (mode & 3) == 3 ? SHF_ALLOC : 0,
	     (mode & 3) == 3 ? BASE + p->btf : 0, p->btf, p->btf_size, 0, 0);
	if (mode & 0x80)
		b->sh_name = sizeof(shstr) + 16;
	if (((mode >> 3) & 3) == 1)
		b->sh_size = p->btf_size + 1 + (sel & 0xf8) * 64ull;
	if (((mode >> 3) & 3) == 3)
		b->sh_offset = p->btf + p->btf_size + 4096;
	memcpy(im->b + p->shdrs, sh, p->nsh * sizeof(Elf64_Shdr));
}

/* The ELF header and one PT_LOAD over everything before .BTF. */
static void write_headers(struct image *im, const struct parts *p)
{
	Elf64_Ehdr eh = {0};
	Elf64_Phdr ph = { .p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_offset = 0,
			  .p_vaddr = BASE, .p_paddr = BASE, .p_filesz = p->btf,
			  .p_memsz = p->btf, .p_align = 0x1000 };

	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_EXEC;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_entry = BASE + p->text;
	eh.e_phoff = sizeof(eh);
	eh.e_shoff = p->shdrs;
	eh.e_ehsize = sizeof(eh);
	eh.e_phentsize = sizeof(ph);
	eh.e_phnum = 1;
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = (Elf64_Half)p->nsh;
	eh.e_shstrndx = 4;
	memcpy(im->b, &eh, sizeof(eh));
	memcpy(im->b + sizeof(eh), &ph, sizeof(ph));
}

/* The ELF file: headers, .text, its symbols, the section headers, then .BTF (last, so
 * that cutting the file cuts it). */
static void build(struct image *im, uint8_t mode, uint8_t sel, uint8_t val, const uint8_t *btf,
		  size_t n)
{
	struct parts p = {0};

	put(im, NULL, sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr), 1);
	write_text(im, &p);
	p.shdrs = put(im, NULL, 8 * sizeof(Elf64_Shdr), 8);	/* written below; room for 8 */
	if (mode & 4)
		im->len += (sel & 7) ? (sel & 7) : 1;
	p.btf = put(im, btf, n, 1);
	p.btf_size = n;
	if (mode & 0x40)
		patch_btf(im->b + p.btf, n, sel, val);
	write_shdrs(im, &p, mode, sel);
	write_headers(im, &p);
	if (((mode >> 3) & 3) == 2)	/* the file cut inside .BTF */
		im->len = p.btf + n / 2;
}

/* The file as the data symbolizer sees an executable without DWARF: a sample at each
 * function's entry, decoded from the file, its argument registers pointing at the heap. */
static void fuzz_data(const char *path)
{
	struct hm_data *d;
	struct hm_data_stats st;
	struct hm_data_obj obj;
	struct hm_err err;
	uint64_t regs[9];

	if (hm_data_open(&d, &err))
		return;
	hm_data_add_map(d, 1, BASE, 0x10000, 0, path);
	for (int i = 0; i < NR_FUNCS; i++) {
		uint64_t ip = BASE + TEXT_OFF + i * FUNC_SIZE;
		struct hm_data_query q = {.pid = 1, .tid = 1, .ip = ip, .regs_mask = 0x1ff,
					  .regs = regs};

		/* perf's x86 order: ax bx cx dx si di bp sp ip */
		for (int r = 0; r < 9; r++)
			regs[r] = HEAP + 0x40 * r;
		regs[7] = 0x7ffd0000f000ull;
		regs[8] = ip;
		hm_data_resolve(d, &q, &obj);
		q.ip = ip + 3;	/* past the first instruction: a walk back to the entry */
		regs[8] = q.ip;
		hm_data_resolve(d, &q, &obj);
	}
	hm_data_stats(d, 4, &st);
	(void)hm_data_damage(d);
	hm_data_close(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct image im = {0};
	struct hm_layout *lay;
	struct hm_err err;
	const char *path;

	if (size < 4 || size - 3 > PAYLOAD_MAX)
		return 0;
	build(&im, data[0], data[1], data[2], data + 3, size - 3);
	path = hm_fuzz_file(im.b, im.len, NULL);
	free(im.b);
	if (!path)
		return 0;
	if (hm_layout_open_btf(path, &lay, &err) == 0) {
		fuzz_layout(lay);
		hm_layout_close(lay);
	}
	fuzz_data(path);
	return 0;
}
