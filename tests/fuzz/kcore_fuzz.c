/* libFuzzer target for the core-file reader: an ELF core file of kernel memory, as
 * `hitmap report --kcore FILE` reads it without a vmlinux (symbolize/code_kcore.c: the
 * headers, PT_LOAD bounds, the VMCOREINFO note; data_kcore.c: code bytes per function
 * for the data symbolizer). The input is the core file. At startup the target makes
 * the kernel around it, as tests/unit/kcore_util.h does: kallsyms listing the functions
 * of examples/bin/false_sharing's .text placed at KTEXT + KPAD (where seeds.sh puts its
 * bytes in the seed core files), and raw BTF with a FUNC prototype of each, whose
 * pointer parameters the data symbolizer types at function entries. Both live in
 * memfds. Per input: open (hm_code_open with kcore), the kernel image, reads at every
 * PT_LOAD's edges and at each function, lookups, and kernel samples at each function's
 * entry and inside it through hm_data (hm_data_set_kernel with kcore and BTF).
 * Built and run by `make fuzz` (tests/fuzz/README.md). */
#include <bpf/btf.h>
#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/code.h"
#include "symbolize/data.h"
#include "tests/fuzz/fuzz_util.h"

#define EXAMPLE "examples/bin/false_sharing"
#define KTEXT 0xffffffff81000000ull	/* seeds.sh: the same */
#define KPAD 0x1000ull
#define KHEAP 0xffff888012345000ull
#define RELEASE "6.1.0-fuzz"		/* seeds.sh writes it in VMCOREINFO */
#define MAX_FUNCS 64
#define MAX_PROBE_PH 16

static struct {
	int ready;
	char ksyms[64], btf[64];
	uint64_t func[MAX_FUNCS];
	size_t nr;
} G;

static int memfd_path(const char *name, const void *p, size_t n, char *path, size_t len)
{
	int fd = memfd_create(name, 0);

	if (fd < 0 || (n && write(fd, p, n) != (ssize_t)n))
		return -1;
	snprintf(path, len, "/proc/self/fd/%d", fd);
	return 0;
}

/* kallsyms from the example's function symbols, moved to KTEXT + KPAD; the names into
 * names (NUL-separated) for the BTF. */
static size_t write_kallsyms(char *names, size_t cap)
{
	char *text = NULL;
	size_t tlen = 0, nl = 0;
	FILE *f = open_memstream(&text, &tlen);
	int fd = open(EXAMPLE, O_RDONLY | O_CLOEXEC);
	Elf *elf = NULL;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh, tsh = {0};
	const char *name;
	size_t shstrndx;

	fprintf(f, "%016llx T _text\n", KTEXT);
	elf_version(EV_CURRENT);
	if (fd >= 0 && (elf = elf_begin(fd, ELF_C_READ, NULL)) &&
	    elf_getshdrstrndx(elf, &shstrndx) == 0) {
		while ((scn = elf_nextscn(elf, scn)))
			if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_PROGBITS &&
			    (name = elf_strptr(elf, shstrndx, sh.sh_name)) && !strcmp(name, ".text"))
				tsh = sh;
		while ((scn = elf_nextscn(elf, scn))) {
			Elf_Data *d;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB ||
			    !(d = elf_getdata(scn, NULL)))
				continue;
			for (size_t i = 0; i < sh.sh_size / sh.sh_entsize && G.nr < MAX_FUNCS; i++) {
				GElf_Sym s;

				if (!gelf_getsym(d, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
				    s.st_value < tsh.sh_addr || s.st_value >= tsh.sh_addr + tsh.sh_size ||
				    !(name = elf_strptr(elf, sh.sh_link, s.st_name)) || !*name ||
				    nl + strlen(name) + 1 > cap)
					continue;
				G.func[G.nr] = KTEXT + KPAD + s.st_value - tsh.sh_addr;
				fprintf(f, "%016llx T %s\n", (unsigned long long)G.func[G.nr++], name);
				memcpy(names + nl, name, strlen(name) + 1);
				nl += strlen(name) + 1;
			}
		}
	}
	fprintf(f, "%016llx T _etext\n", KTEXT + KPAD + tsh.sh_size);
	fclose(f);
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	if (memfd_path("hm-kallsyms", text, tlen, G.ksyms, sizeof(G.ksyms)))
		G.ksyms[0] = '\0';
	free(text);
	return nl;
}

/* struct obj { long a; long b; struct obj *next; }, and for each function
 * long NAME(struct obj *, struct obj *, long). */
static void write_btf(const char *names, size_t len)
{
	struct btf *b = btf__new_empty();
	const void *raw;
	uint32_t size;
	int lng, obj, ptr, proto;

	if (!b)
		return;
	lng = btf__add_int(b, "long", 8, BTF_INT_SIGNED);
	obj = btf__add_struct(b, "obj", 24);
	btf__add_field(b, "a", lng, 0, 0);
	btf__add_field(b, "b", lng, 64, 0);
	ptr = btf__add_ptr(b, obj);
	btf__add_field(b, "next", ptr, 128, 0);
	for (size_t at = 0; at < len; at += strlen(names + at) + 1) {
		proto = btf__add_func_proto(b, lng);
		btf__add_func_param(b, "p", ptr);
		btf__add_func_param(b, "q", ptr);
		btf__add_func_param(b, "n", lng);
		btf__add_func(b, names + at, BTF_FUNC_GLOBAL, proto);
	}
	if ((raw = btf__raw_data(b, &size)) &&
	    memfd_path("hm-btf", raw, size, G.btf, sizeof(G.btf)))
		G.btf[0] = '\0';
	btf__free(b);
}

static void setup(void)
{
	char names[4096];

	G.ready = 1;
	unsetenv("DEBUGINFOD_URLS");	/* no network */
	write_btf(names, write_kallsyms(names, sizeof(names)));
}

/* Reads at the edges of each PT_LOAD the input declares (the reader must bound them
 * by the file, not by the headers). */
static void probe_segments(struct hm_code *c, const uint8_t *data, size_t size)
{
	static const uint64_t at[] = { 0, 1, 15 };
	Elf64_Ehdr eh;
	uint8_t buf[64];

	if (size < sizeof(eh))
		return;
	memcpy(&eh, data, sizeof(eh));
	for (size_t i = 0; i < eh.e_phnum && i < MAX_PROBE_PH; i++) {
		Elf64_Phdr ph;
		uint64_t off = eh.e_phoff + i * sizeof(ph);

		if (eh.e_phoff > size || off > size - sizeof(ph))
			break;
		memcpy(&ph, data + off, sizeof(ph));
		for (size_t k = 0; k < sizeof(at) / sizeof(at[0]); k++) {
			hm_code_read(c, 0, ph.p_vaddr + at[k], 1, buf, sizeof(buf));
			hm_code_read(c, 0, ph.p_vaddr + ph.p_filesz - at[k] - 1, 1, buf,
				     sizeof(buf));
		}
		hm_code_read(c, 0, ph.p_vaddr + ph.p_filesz / 2, 1, buf, 1);
	}
}

/* Kernel samples at each function's entry and every third byte of its first 48, the argument registers
 * (interrupted kernel registers, perf's x86 order) pointing at the direct map. */
static void fuzz_data(struct hm_code *c, const char *path, const struct hm_code_kernel *img)
{
	struct hm_data_kernel k = {.kcore = img->kcore ? img->kcore : path, .code = c,
				   .btf = G.btf[0] ? G.btf : NULL};
	struct hm_data *d;
	struct hm_data_obj obj;
	struct hm_data_stats st;
	struct hm_err err;
	uint64_t regs[9];

	if (hm_data_open(&d, &err))
		return;
	hm_data_set_kernel(d, &k);
	for (size_t i = 0; i < G.nr; i++) {
		for (uint64_t in = 0; in < 48; in += 3) {
			struct hm_data_query q = {.pid = 0, .tid = 0, .ip = G.func[i] + in,
						  .regs_mask = 0x1ff, .regs = regs, .kernel = 1};

			for (int r = 0; r < 9; r++)
				regs[r] = KHEAP + 0x40 * r;
			regs[7] = 0xffffc90000003f00ull;
			regs[8] = q.ip;
			hm_data_resolve(d, &q, &obj);
		}
	}
	hm_data_stats(d, 4, &st);
	hm_data_close(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hm_code_opts o = {.vmlinux = "", .kernel_release = RELEASE};
	struct hm_code_kernel img;
	struct hm_code_loc loc;
	struct hm_code *c;
	struct hm_err err;
	const char *path, *const *names;
	uint8_t buf[128];

	if (!G.ready)
		setup();
	if (!G.ksyms[0] || !(path = hm_fuzz_file(data, size, NULL)))
		return 0;
	o.kallsyms = G.ksyms;
	o.kcore = path;
	if (hm_code_open(&o, &c, &err))
		return 0;
	if (hm_code_kernel_image(c, &img) == 0 && img.kcore) {
		probe_segments(c, data, size);
		hm_code_read(c, 0, KTEXT, 1, buf, sizeof(buf));
		hm_code_read(c, 0, UINT64_MAX - 2, 1, buf, sizeof(buf));
		for (size_t i = 0; i < G.nr; i++) {
			if (hm_code_lookup(c, 0, G.func[i] + 1, 1, &loc) == 0 && loc.func_start)
				hm_code_kernel_names(c, loc.func_start, &names);
			hm_code_read(c, 0, G.func[i], 1, buf, sizeof(buf));
		}
		fuzz_data(c, path, &img);
	}
	hm_code_close(c);
	return 0;
}
