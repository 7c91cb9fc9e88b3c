/* Separate debug files with compressed sections, inflated once a run (debugfile.h). */
#include "symbolize/debugfile.h"

#include <fcntl.h>
#include <gelf.h>
#include <libdeflate.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/buildid.h"
#include "core/file.h"
#include "core/oom.h"

struct copy {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	int fd;		/* the inflated copy; -1: the file is read as it is */
	int done;	/* fd is set: the copy is made or will not be */
};

#define ZLIB_RATIO_MAX 1032	/* zlib's deflate: at most this many bytes out per byte in */
#define HM_DEBUG_DIR "/usr/lib/debug"	/* dwfl's global debug directory */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t made = PTHREAD_COND_INITIALIZER;
static struct copy *copies;
static size_t ncopies, ccap;
static struct hm_debugfile_stats stats;

static int has_compressed(Elf *e)
{
	GElf_Shdr sh;

	for (Elf_Scn *s = NULL; (s = elf_nextscn(e, s));)
		if (gelf_getshdr(s, &sh) && (sh.sh_flags & SHF_COMPRESSED))
			return 1;
	return 0;
}

/* A zlib-compressed section's bytes, inflated into out: two threads share a
 * file's sections (libc's .debug_info is half its compressed bytes). */
struct zsec {
	Elf_Scn *scn;
	const unsigned char *src;
	size_t srclen;
	unsigned char *out;	/* where it inflates to: the copy's mapping, or a buffer */
	GElf_Chdr ch;
	int ok;
	Elf_Scn *oscn;		/* the copy's section */
};

struct zshare {
	struct zsec *z;
	size_t n;
	int half;	/* which of the two bins this thread inflates */
	const int *bin;
};

/* libdeflate, not zlib: the header gives the inflated size, so the whole-buffer
 * decompressor applies (libc's .debug_info: 25 ms against zlib's 39). */
static void *inflate_bin(void *arg)
{
	struct zshare *sh = arg;
	struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();

	for (size_t i = 0; i < sh->n; i++) {
		struct zsec *z = &sh->z[i];

		/* no room for a decompressor: ok stays 0, and no copy is made */
		if (sh->bin[i] == sh->half && d)
			z->ok = libdeflate_zlib_decompress(d, z->src, z->srclen, z->out,
							   (size_t)z->ch.ch_size, NULL) ==
				LIBDEFLATE_SUCCESS;
	}
	libdeflate_free_decompressor(d);
	return NULL;
}

/* The zlib sections of in, their payloads located; the count, or -1 on a header libelf
 * does not give. */
static long zsecs_of(Elf *in, struct zsec **out)
{
	size_t hdr = gelf_getclass(in) == ELFCLASS64 ? sizeof(Elf64_Chdr) : sizeof(Elf32_Chdr);
	struct zsec *z = NULL;
	size_t n = 0, cap = 0;
	GElf_Shdr sh;

	for (Elf_Scn *s = NULL; (s = elf_nextscn(in, s));) {
		Elf_Data *raw;
		GElf_Chdr ch;

		if (!gelf_getshdr(s, &sh) || !(sh.sh_flags & SHF_COMPRESSED))
			continue;
		if (!gelf_getchdr(s, &ch) || ch.ch_type != ELFCOMPRESS_ZLIB)
			continue;	/* libelf's elf_compress inflates it in copy_section */
		/* zlib inflates at most 1032 bytes from one: a larger size is a damaged header,
		 * and libdw, reading the file as it is, says so */
		if (!(raw = elf_rawdata(s, NULL)) || raw->d_size < hdr ||
		    ch.ch_size / ZLIB_RATIO_MAX > raw->d_size - hdr)
			goto bad;
		if (n == cap)
			z = hm_xrealloc(z, (cap = cap ? 2 * cap : 16) * sizeof(*z));
		z[n++] = (struct zsec){s, (const unsigned char *)raw->d_buf + hdr, raw->d_size - hdr,
				       NULL, ch, 0, NULL};
	}
	*out = z;
	return (long)n;
bad:
	free(z);
	return -1;
}

/* Inflates the n sections, the larger half of the bytes on a second thread. 0, or -1. */
static int inflate_all(struct zsec *z, size_t n)
{
	int *bin = calloc(n ? n : 1, sizeof(*bin)), ok = 1;
	size_t load[2] = {0, 0};
	struct zshare a = {z, n, 0, bin}, b = {z, n, 1, bin};
	pthread_t th;
	int threaded;

	if (!bin)
		hm_oom();
	for (size_t k = 0; k < n; k++) {	/* largest first into the lighter bin */
		size_t big = SIZE_MAX;

		for (size_t i = 0; i < n; i++)
			if (!z[i].ok && (big == SIZE_MAX || z[i].srclen > z[big].srclen))
				big = i;
		z[big].ok = -1;	/* placed */
		bin[big] = load[1] < load[0];
		load[bin[big]] += z[big].srclen;
	}
	threaded = n > 1 && pthread_create(&th, NULL, inflate_bin, &b) == 0;
	inflate_bin(&a);
	if (threaded)
		pthread_join(th, NULL);
	else
		inflate_bin(&b);
	for (size_t i = 0; i < n; i++)
		ok &= z[i].ok == 1;
	free(bin);
	return ok ? 0 : -1;
}

/* The section's bytes, inflated, as the new section o's data; its header updated. z is
 * the section when this file inflates it (its data's bytes come later: only its size
 * counts for the layout), else NULL (libelf inflates it). */
static int copy_section(Elf_Scn *s, Elf_Scn *o, const struct zsec *z)
{
	Elf_Data from, *d = &from, *od;
	GElf_Shdr sh;

	if (!gelf_getshdr(s, &sh))
		return -1;
	if (z) {
		from = (Elf_Data){.d_buf = NULL, .d_type = ELF_T_BYTE, .d_version = EV_CURRENT,
				  .d_size = z->ch.ch_size,
				  .d_align = z->ch.ch_addralign ? z->ch.ch_addralign : 1};
		sh.sh_flags &= ~(GElf_Xword)SHF_COMPRESSED;
		sh.sh_size = z->ch.ch_size;
		sh.sh_addralign = z->ch.ch_addralign;
	} else {
		if ((sh.sh_flags & SHF_COMPRESSED) &&
		    (elf_compress(s, 0, 0) < 0 || !gelf_getshdr(s, &sh)))
			return -1;
		d = elf_getdata(s, NULL);	/* NULL: a section without data */
	}
	if (d) {
		if (!(od = elf_newdata(o)))
			return -1;
		od->d_buf = d->d_buf;
		od->d_type = d->d_type;
		od->d_version = d->d_version;
		od->d_size = d->d_size;
		od->d_off = 0;
		od->d_align = d->d_align;
	}
	return gelf_update_shdr(o, &sh) ? 0 : -1;
}

/* A segment that starts where a section with contents started (a debug file's PT_NOTE
 * over .note.gnu.build-id) follows the section to its new place; the others keep their
 * offsets: a debug file's loadable segments are read for their addresses only. */
static int move_segments(Elf *in, Elf *out, const GElf_Off *was, size_t phnum)
{
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		GElf_Shdr sh;
		size_t k = 0;

		if (!gelf_getphdr(out, (int)i, &ph))
			return -1;
		for (Elf_Scn *s = NULL; (s = elf_nextscn(in, s)); k++) {
			if (was[k] != ph.p_offset || !ph.p_filesz || !gelf_getshdr(s, &sh) ||
			    sh.sh_type == SHT_NOBITS)
				continue;
			if (!gelf_getshdr(elf_getscn(out, elf_ndxscn(s)), &sh))
				return -1;
			ph.p_offset = sh.sh_offset;
			if (!gelf_update_phdr(out, (int)i, &ph))
				return -1;
			break;
		}
	}
	return 0;
}

/* The copy as libelf laid it out (size bytes), written through a mapping of ofd: the zlib
 * sections inflate straight into their places and the rest is copied in, so the inflated
 * bytes are written once (libelf writing them from buffers cost as much again: libc's
 * 10 MB, 15-20 ms). Only where the copy's headers are this machine's (64-bit, its byte
 * order), so that libelf's headers in memory are the file's bytes; a gap between
 * sections stays zero, libelf's fill byte. 1: written; 0: not such a file, or no mapping
 * (libelf writes it); -1: failed. */
static int write_mapped(Elf *out, int ofd, off_t size, struct zsec *z, long nz)
{
	const Elf64_Ehdr *eh = elf64_getehdr(out);
	const Elf64_Phdr *ph = elf64_getphdr(out);
	const unsigned char native = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB
									    : ELFDATA2MSB;
	unsigned char *map;
	size_t phnum, shnum;
	int rc = -1;

	if (!eh || eh->e_ident[EI_DATA] != native || elf_getphdrnum(out, &phnum) ||
	    elf_getshdrnum(out, &shnum) || (phnum && !ph) ||
	    eh->e_phoff + phnum * sizeof(*ph) > (uint64_t)size ||
	    eh->e_shoff + shnum * sizeof(Elf64_Shdr) > (uint64_t)size)
		return 0;
	if (ftruncate(ofd, size) ||
	    (map = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED, ofd, 0)) ==
		    MAP_FAILED)
		return 0;
	for (long i = 0; i < nz; i++) {
		const Elf64_Shdr *sh = elf64_getshdr(z[i].oscn);

		if (!sh || sh->sh_offset > (uint64_t)size ||
		    z[i].ch.ch_size > (uint64_t)size - sh->sh_offset)
			goto out;
		z[i].out = map + sh->sh_offset;
	}
	if (inflate_all(z, (size_t)nz))
		goto out;
	for (Elf_Scn *s = NULL; (s = elf_nextscn(out, s));) {
		const Elf64_Shdr *sh = elf64_getshdr(s);
		Elf_Data *d = NULL;

		if (!sh)
			goto out;
		while (sh->sh_type != SHT_NOBITS && (d = elf_getdata(s, d))) {
			if (!d->d_buf || !d->d_size)
				continue;	/* a zlib section: inflated in place */
			if (sh->sh_offset + (uint64_t)d->d_off + d->d_size > (uint64_t)size)
				goto out;
			memcpy(map + sh->sh_offset + d->d_off, d->d_buf, d->d_size);
		}
	}
	memcpy(map, eh, sizeof(*eh));
	if (phnum)
		memcpy(map + eh->e_phoff, ph, phnum * sizeof(*ph));
	for (size_t i = 0; i < shnum; i++) {
		const Elf64_Shdr *sh = elf64_getshdr(elf_getscn(out, i));

		if (!sh)
			goto out;
		memcpy(map + eh->e_shoff + i * sizeof(*sh), sh, sizeof(*sh));
	}
	rc = 1;
out:
	munmap(map, (size_t)size);
	return rc;
}

/* Inflates the zlib sections into buffers, gives them to libelf as their data, and lets
 * it write the copy (a 32-bit or foreign-order file); the buffers go once it has. 0 or
 * -1 (no room for a buffer: libdw inflates the file as it did). */
static int write_buffered(Elf *out, struct zsec *z, long nz)
{
	long i;
	int rc = -1;

	for (i = 0; i < nz; i++) {
		Elf_Data *d = elf_getdata(z[i].oscn, NULL);

		if (!d || !(z[i].out = malloc(z[i].ch.ch_size ? z[i].ch.ch_size : 1)))
			break;
		d->d_buf = z[i].out;
	}
	if (i == nz && !inflate_all(z, (size_t)nz) && elf_update(out, ELF_C_WRITE) >= 0)
		rc = 0;
	while (i-- > 0)
		free(z[i].out);
	return rc;
}

/* Writes in, its compressed sections inflated, to ofd, laid out by libelf. 0 or -1. */
static int write_inflated(Elf *in, int ofd)
{
	Elf *out = elf_begin(ofd, ELF_C_WRITE, NULL);
	struct zsec *z = NULL;
	long nz = 0, iz = 0;
	GElf_Off *was = NULL;
	GElf_Ehdr eh;
	GElf_Shdr sh;
	size_t phnum, shnum, shstrndx, k = 0;
	off_t size;
	int rc = -1, mapped = 0;

	if (!out || !gelf_getehdr(in, &eh) || elf_getphdrnum(in, &phnum) ||
	    elf_getshdrnum(in, &shnum) || elf_getshdrstrndx(in, &shstrndx) ||
	    shnum >= SHN_LORESERVE || shstrndx >= SHN_LORESERVE || phnum >= PN_XNUM)
		goto out;
	if (!gelf_newehdr(out, gelf_getclass(in)) || !gelf_update_ehdr(out, &eh) ||
	    (phnum && !gelf_newphdr(out, phnum)))
		goto out;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(in, (int)i, &ph) || !gelf_update_phdr(out, (int)i, &ph))
			goto out;
	}
	if (!(was = calloc(shnum ? shnum : 1, sizeof(*was))))
		hm_oom();
	if ((nz = zsecs_of(in, &z)) < 0)
		goto out;
	for (Elf_Scn *s = NULL; (s = elf_nextscn(in, s)); k++) {
		struct zsec *zs = iz < nz && z[iz].scn == s ? &z[iz++] : NULL;
		Elf_Scn *o = elf_newscn(out);

		if (!gelf_getshdr(s, &sh))
			goto out;
		was[k] = sh.sh_offset;
		if (zs)
			zs->oscn = o;
		if (copy_section(s, o, zs))
			goto out;
	}
	if ((size = elf_update(out, ELF_C_NULL)) < 0 || move_segments(in, out, was, phnum))
		goto out;
	if (gelf_getclass(out) == ELFCLASS64)
		mapped = write_mapped(out, ofd, size, z, nz);
	rc = mapped ? (mapped > 0 ? 0 : -1) : write_buffered(out, z, nz);
out:
	free(was);
	if (out)
		elf_end(out);
	free(z);
	return rc;
}

/* A memfd holding fd's file with its sections inflated; -1 when it has none compressed
 * or the copy cannot be made. */
static int make_copy(int fd)
{
	Elf *in;
	int mfd = -1;

	elf_version(EV_CURRENT);
	if (!(in = elf_begin(fd, ELF_C_READ_MMAP, NULL)))
		return -1;
	if (elf_kind(in) == ELF_K_ELF && has_compressed(in) &&
	    (mfd = memfd_create("hitmap-debuginfo", MFD_CLOEXEC)) >= 0 &&
	    write_inflated(in, mfd) < 0) {
		close(mfd);
		mfd = -1;
	}
	elf_end(in);
	return mfd;
}

static int same_file(const struct copy *c, const struct stat *st)
{
	return c->dev == st->st_dev && c->ino == st->st_ino && c->size == st->st_size &&
	       c->mtime.tv_sec == st->st_mtim.tv_sec && c->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

int hm_debugfile_inflated(int fd)
{
	struct stat st;
	size_t i;
	int out = fd, cfd;

	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode))
		return fd;
	pthread_mutex_lock(&lock);
	for (i = 0; i < ncopies && !same_file(&copies[i], &st); i++)
		;
	if (i == ncopies) {	/* the first open: inflated here, its other openers wait */
		if (ncopies == ccap)
			copies = hm_xrealloc(copies, (ccap = ccap ? 2 * ccap : 8) * sizeof(*copies));
		copies[ncopies++] = (struct copy){st.st_dev, st.st_ino, st.st_size, st.st_mtim, -1, 0};
		pthread_mutex_unlock(&lock);
		cfd = make_copy(fd);
		pthread_mutex_lock(&lock);
		copies[i].fd = cfd;
		copies[i].done = 1;
		stats.copies += cfd >= 0;
		pthread_cond_broadcast(&made);
	} else {
		while (!copies[i].done)
			pthread_cond_wait(&made, &lock);
		stats.reused += copies[i].fd >= 0;
	}
	if (copies[i].fd >= 0 && (cfd = fcntl(copies[i].fd, F_DUPFD_CLOEXEC, 0)) >= 0) {
		close(fd);
		out = cfd;
	}
	pthread_mutex_unlock(&lock);
	return out;
}

/* The debug file of build-id bits[0..n) under dir, checked, as it is: fd, or -1. name,
 * when not NULL, gets its path. */
static int open_by_id(const unsigned char *bits, int n, const char *dir, char **name)
{
	char path[4096], *p = path;
	uint8_t got[HM_BUILD_ID_MAX];
	int fd;

	if (n < 2 || n > HM_BUILD_ID_MAX || strlen(dir) > sizeof(path) - 2 * HM_BUILD_ID_MAX - 32)
		return -1;
	p += sprintf(p, "%s/.build-id/%02x/", dir, bits[0]);
	for (int i = 1; i < n; i++)
		p += sprintf(p, "%02x", bits[i]);
	strcpy(p, ".debug");
	if (hm_buildid_read(path, got) != (size_t)n || memcmp(got, bits, (size_t)n) ||
	    (fd = hm_file_open(path)) < 0)
		return -1;
	if (name && !(*name = strdup(path))) {
		close(fd);
		return -1;
	}
	return fd;
}

int hm_debugfile_open_id(const unsigned char *bits, int n, const char *dir)
{
	return open_by_id(bits, n, dir ? dir : HM_DEBUG_DIR, NULL);
}

int hm_debugfile_find(Dwfl_Module *mod, const char *dir, char **name)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	int n = dwfl_module_build_id(mod, &bits, &vaddr);

	return hm_debugfile_inflated(open_by_id(bits, n, dir, name));
}

int hm_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, GElf_Addr base,
		      const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
		      char **debuginfo_file_name)
{
	int fd = hm_debugfile_find(mod, HM_DEBUG_DIR, debuginfo_file_name);

	if (fd >= 0)
		return fd;
	return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
					    debuglink_file, debuglink_crc, debuginfo_file_name);
}

uint32_t hm_debugfile_ids(const struct hm_perf_build_id *ids, uint32_t n, int user_only,
			  struct hm_debugfile_id *out)
{
	uint32_t m = 0;

	for (uint32_t i = 0; i < n; i++) {
		if ((user_only && (ids[i].misc & PERF_RECORD_MISC_CPUMODE_MASK) !=
				      PERF_RECORD_MISC_USER) ||
		    ids[i].size < 2 || ids[i].size > sizeof(out->id))
			continue;
		memcpy(out[m].id, ids[i].id, ids[i].size);
		out[m++].size = ids[i].size;
	}
	return m;
}

int hm_debugfile_same(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

static int larger_first(const void *x, const void *y)
{
	const struct hm_debugfile_found *a = x, *b = y;

	if (a->st.st_size != b->st.st_size)
		return a->st.st_size < b->st.st_size ? 1 : -1;
	return a->fd - b->fd;
}

struct hm_debugfile_found *hm_debugfile_find_all(const struct hm_debugfile_id *ids, uint32_t n,
						 const char *dir, size_t *nr)
{
	struct hm_debugfile_found *f = calloc(n ? n : 1, sizeof(*f));
	size_t m = 0;

	*nr = 0;
	if (!f)
		return NULL;
	for (uint32_t i = 0; i < n; i++) {
		int fd = hm_debugfile_open_id(ids[i].id, ids[i].size, dir);
		int keep = fd >= 0 && fstat(fd, &f[m].st) == 0 && f[m].st.st_size > 0;

		for (size_t j = 0; keep && j < m; j++)
			keep = !hm_debugfile_same(&f[j].st, &f[m].st);	/* listed twice */
		if (keep)
			f[m++].fd = fd;
		else if (fd >= 0)
			close(fd);
	}
	if (!m) {
		free(f);
		return NULL;
	}
	qsort(f, m, sizeof(*f), larger_first);
	*nr = m;
	return f;
}

struct hm_debugfile_prefetch {
	pthread_t th;
	const char *dir;
	uint32_t n;
	struct hm_debugfile_id ids[];
};

/* The largest file first: the first samples' opener then inflates the small ones itself
 * (ld.so's, say) while this thread inflates libc's. */
static void *prefetch(void *arg)
{
	struct hm_debugfile_prefetch *p = arg;
	size_t m;
	struct hm_debugfile_found *f = hm_debugfile_find_all(p->ids, p->n, p->dir, &m);

	for (size_t i = 0; i < m; i++)
		close(hm_debugfile_inflated(f[i].fd));
	free(f);
	return NULL;
}

struct hm_debugfile_prefetch *hm_debugfile_prefetch(const char *dir,
						    const struct hm_perf_build_id *ids, uint32_t n)
{
	struct hm_debugfile_prefetch *p;

	if (!n || !(p = calloc(1, sizeof(*p) + n * sizeof(p->ids[0]))))
		return NULL;
	p->dir = dir ? dir : HM_DEBUG_DIR;
	p->n = hm_debugfile_ids(ids, n, 0, p->ids);
	if (!p->n || pthread_create(&p->th, NULL, prefetch, p)) {
		free(p);	/* no thread to be had: each file is inflated when first opened */
		return NULL;
	}
	return p;
}

void hm_debugfile_prefetch_end(struct hm_debugfile_prefetch *p)
{
	if (!p)
		return;
	pthread_join(p->th, NULL);
	free(p);
}

struct hm_debugfile_stats hm_debugfile_stats(void)
{
	struct hm_debugfile_stats s;

	pthread_mutex_lock(&lock);
	s = stats;
	pthread_mutex_unlock(&lock);
	return s;
}
