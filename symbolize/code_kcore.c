/* The running kernel's code bytes from an ELF core file of its memory (/proc/kcore):
 * each PT_LOAD maps kernel virtual addresses (KASLR applied) to file offsets, read with
 * pread. The file is untrusted input: every segment must lie inside it. */
#include "symbolize/code_int.h"
#include "core/oom.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#define KCORE_FIX "give /proc/kcore of the running kernel (as root), or its vmlinux " \
		  "with --vmlinux"

static int kcore_fail(struct code_kcore *k, Elf *elf, struct hm_err *err, const char *path,
		      const char *why)
{
	if (elf)
		elf_end(elf);
	close(k->fd);
	free(k->segs);
	memset(k, 0, sizeof(*k));
	hm_err_set(err, HM_EXIT_INPUT, "%s: %s: %s", path, why, KCORE_FIX);
	return -EINVAL;
}

#define KCORE_MAX_NOTES (1u << 20)

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* VMCOREINFO (kernel/crash_core.c): "KEY=value" lines; OSRELEASE and, since 5.15,
 * BUILD-ID say which kernel the memory is of. */
static void kcore_vmcoreinfo(struct code_kcore *k, const char *text, size_t len)
{
	for (const char *p = text, *end = text + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (n > 10 && n - 10 < sizeof(k->release) && !memcmp(p, "OSRELEASE=", 10)) {
			memcpy(k->release, p + 10, n - 10);
			k->release[n - 10] = '\0';
		}
		if (n >= 9 + 2 * HM_BUILD_ID_MAX && !memcmp(p, "BUILD-ID=", 9)) {
			/* The note's text is not NUL-terminated: digits are read one by one,
			 * never with sscanf, which would look for the end of the string. */
			for (size_t i = 0; i < HM_BUILD_ID_MAX; i++) {
				int hi = hex_digit(p[9 + 2 * i]), lo = hex_digit(p[10 + 2 * i]);

				if (hi < 0 || lo < 0)
					break;
				k->build_id[i] = (uint8_t)(hi << 4 | lo);
				k->build_id_size = i + 1;
			}
		}
		p += n + 1;
	}
}

/* The PT_NOTE segment's VMCOREINFO note, if any (/proc/kcore has one with kdump's
 * CONFIG_CRASH_CORE); damaged notes are ignored, they only add a check. */
static void kcore_notes(struct code_kcore *k, const GElf_Phdr *ph, uint64_t size)
{
	size_t len = (size_t)ph->p_filesz, off = 0;
	uint8_t *buf;

	if (!len || len > KCORE_MAX_NOTES || ph->p_offset > size || len > size - ph->p_offset ||
	    !(buf = malloc(len)))
		return;
	if (pread(k->fd, buf, len, (off_t)ph->p_offset) == (ssize_t)len) {
		while (off + 12 <= len) {
			uint32_t nh[3];
			size_t name, desc;

			memcpy(nh, buf + off, sizeof(nh));
			name = off + 12;
			desc = name + ((nh[0] + 3ull) & ~3ull);
			if (desc > len || nh[1] > len - desc)
				break;
			if (nh[0] == 11 && !memcmp(buf + name, "VMCOREINFO", 11))
				kcore_vmcoreinfo(k, (const char *)buf + desc, nh[1]);
			off = desc + ((nh[1] + 3ull) & ~3ull);
		}
	}
	free(buf);
}

/* Bounds of every PT_LOAD against the file's size; 0 when none is usable. */
static int kcore_segments(struct code_kcore *k, Elf *elf, size_t nph, uint64_t size,
			  const char **why)
{
	if (!(k->segs = calloc(nph, sizeof(*k->segs))))
		hm_oom();
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph)) {
			*why = "unreadable program headers (truncated?)";
			return -1;
		}
		if (ph.p_type == PT_NOTE)
			kcore_notes(k, &ph, size);
		if (ph.p_type != PT_LOAD || !ph.p_filesz)
			continue;
		if (ph.p_offset > size || ph.p_filesz > size - ph.p_offset) {
			*why = "a PT_LOAD segment lies past the end of the file (truncated?)";
			return -1;
		}
		if (ph.p_vaddr + ph.p_filesz < ph.p_vaddr) {
			*why = "a PT_LOAD segment wraps around the address space";
			return -1;
		}
		k->segs[k->nr++] = (struct code_kseg){ph.p_vaddr, ph.p_offset, ph.p_filesz};
	}
	if (!k->nr) {
		*why = "no PT_LOAD segment with bytes in it";
		return -1;
	}
	return 0;
}

int code_kcore_open(struct code_kcore *k, const char *path, struct hm_err *err)
{
	const char *why = NULL;
	struct stat st;
	GElf_Ehdr eh;
	size_t nph = 0;
	Elf *elf;

	memset(k, 0, sizeof(*k));
	if ((k->fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		int e = errno;

		k->fd = 0;
		hm_err_set(err, e == ENOENT ? HM_EXIT_INPUT : HM_EXIT_ENV, "%s: %s: %s", path,
			   strerror(e), e == EACCES || e == EPERM
			   ? "reading the kernel's memory needs root and no kernel lockdown; or "
			     "install linux-image-RELEASE-dbg and pass --vmlinux" : KCORE_FIX);
		return -e;
	}
	elf_version(EV_CURRENT);
	/* ELF_C_READ, not mmap: /proc/kcore's size is the span of kernel memory. */
	if (fstat(k->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		kcore_fail(k, NULL, err, path, "not a regular file");
		return -ENODEV;	/* containers mask /proc/kcore with /dev/null */
	}
	if (!(elf = elf_begin(k->fd, ELF_C_READ, NULL)) || elf_kind(elf) != ELF_K_ELF)
		return kcore_fail(k, elf, err, path, "not an ELF file");
	if (gelf_getclass(elf) != ELFCLASS64 || !gelf_getehdr(elf, &eh))
		return kcore_fail(k, elf, err, path, "not a 64-bit ELF file, or its header is "
				  "truncated");
	if (eh.e_type != ET_CORE)
		return kcore_fail(k, elf, err, path, "not an ELF core file (a vmlinux goes to "
				  "--vmlinux)");
	if (elf_getphdrnum(elf, &nph) != 0 || !nph)
		return kcore_fail(k, elf, err, path, "no readable program headers (truncated?)");
	if (kcore_segments(k, elf, nph, (uint64_t)st.st_size, &why) != 0)
		return kcore_fail(k, elf, err, path, why);
	elf_end(elf);
	return 0;
}

size_t code_kcore_read(const struct code_kcore *k, uint64_t addr, uint8_t *buf, size_t len)
{
	for (size_t i = 0; i < k->nr; i++) {
		const struct code_kseg *s = &k->segs[i];
		uint64_t in = addr - s->vaddr;
		ssize_t got;

		if (addr < s->vaddr || in >= s->filesz)
			continue;
		/* Up to the segment's end: the next segment need not be adjacent in the file. */
		if (len > s->filesz - in)
			len = (size_t)(s->filesz - in);
		got = pread(k->fd, buf, len, (off_t)(s->offset + in));
		return got > 0 ? (size_t)got : 0;
	}
	return 0;
}

void code_kcore_close(struct code_kcore *k)
{
	if (k->nr)
		close(k->fd);
	free(k->segs);
	memset(k, 0, sizeof(*k));
}

/* A core file that says it is of another release than the recording's. */
int code_kcore_release(struct hm_code *c, struct hm_err *err)
{
	const char *have = c->k.kcore.release;

	if (c->release_live || !have[0] || !strcmp(have, c->release))
		return 0;
	return hm_err_set(err, HM_EXIT_INPUT, "%s: the memory of kernel %s, but the recording "
			  "is of %s: give the recording machine's /proc/kcore while it runs that "
			  "kernel, or its vmlinux with --vmlinux", c->kcore, have, c->release);
}

#define KCORE_LIVE "/proc/kcore"

/* Without a vmlinux: the named core file, else /proc/kcore when it is the recorded
 * kernel's memory - the same release and build, and kallsyms of the same boot. */
void code_kcore_setup(struct hm_code *c)
{
	struct code_kernel *k = &c->k;
	uint8_t id[HM_BUILD_ID_MAX];
	struct hm_err err = {0};
	struct utsname u;
	size_t n;
	int rc;

	if (k->kcore.nr && k->build_id_size && k->kcore.build_id_size &&
	    (k->build_id_size != k->kcore.build_id_size ||
	     memcmp(k->build_id, k->kcore.build_id, k->build_id_size))) {
		k->kcore_why = hm_arena_printf(&c->arena, "%s is of another build (build-id %s, "
					       "recorded %s)", c->kcore,
					       code_hex(&c->arena, k->kcore.build_id,
							k->kcore.build_id_size),
					       code_hex(&c->arena, k->build_id, k->build_id_size));
		return;
	}
	if (k->kcore.nr) {	/* --kcore FILE, opened by hm_code_open */
		k->kcore_path = c->kcore;
		return;
	}
	if (c->kcore)
		k->kcore_why = "--kcore '' asks for no core file";
	else if (!c->release_running)
		k->kcore_why = hm_arena_printf(&c->arena, KCORE_LIVE " is of the running kernel, "
					       "%s", uname(&u) == 0 ? u.release : "unknown");
	else if (!c->kallsyms_default)
		k->kcore_why = "kallsyms given from a file, so " KCORE_LIVE " may be of another "
			       "boot";
	else if (k->build_id_size && (n = code_live_build_id(id)) &&
		 (n != k->build_id_size || memcmp(id, k->build_id, n)))
		k->kcore_why = hm_arena_printf(&c->arena, KCORE_LIVE " is of another build "
					       "(build-id %s, recorded %s)",
					       code_hex(&c->arena, id, n),
					       code_hex(&c->arena, k->build_id, k->build_id_size));
	if (k->kcore_why)
		return;
	if ((rc = code_kcore_open(&k->kcore, KCORE_LIVE, &err)) == 0) {
		k->kcore_path = KCORE_LIVE;
		return;
	}
	if (rc == -EACCES || rc == -EPERM) {
		k->kcore_why = hm_arena_printf(&c->arena, KCORE_LIVE ": %s", strerror(-rc));
		k->kcore_root = 1;
	} else if (rc == -ENOENT || rc == -ENODEV) {
		k->kcore_why = "no " KCORE_LIVE " (a kernel without CONFIG_PROC_KCORE, or a "
			       "container masking it)";
	} else {
		k->kcore_why = hm_arena_strdup(&c->arena, err.msg);
	}
}
