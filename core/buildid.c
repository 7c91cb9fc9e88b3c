#include "core/buildid.h"
#include "core/file.h"

#include <elf.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define NT_GNU_BUILD_ID_TYPE 3

/* Scans one note area [p, p+len) for the GNU build-id. */
size_t hm_buildid_notes(const uint8_t *p, size_t len, uint8_t id[HM_BUILD_ID_MAX])
{
	size_t off = 0;

	while (len - off >= 12) {
		uint32_t namesz, descsz, type;
		size_t name_pad, desc_pad;

		memcpy(&namesz, p + off, 4);
		memcpy(&descsz, p + off + 4, 4);
		memcpy(&type, p + off + 8, 4);
		name_pad = ((size_t)namesz + 3) & ~(size_t)3;
		desc_pad = ((size_t)descsz + 3) & ~(size_t)3;
		off += 12;
		if (name_pad > len - off || desc_pad > len - off - name_pad)
			return 0;
		if (type == NT_GNU_BUILD_ID_TYPE && namesz == 4 && !memcmp(p + off, "GNU", 4)) {
			size_t n = descsz < HM_BUILD_ID_MAX ? descsz : HM_BUILD_ID_MAX;

			memcpy(id, p + off + name_pad, n);
			return n;
		}
		off += name_pad + desc_pad;
	}
	return 0;
}

/* Offsets and sizes of the PT_NOTE segments (or SHT_NOTE sections) of a 64- or 32-bit
 * little-endian image; every one is bounds-checked against len. */
static size_t scan64(const uint8_t *elf, size_t len, uint8_t id[HM_BUILD_ID_MAX])
{
	Elf64_Ehdr eh;
	size_t n;

	memcpy(&eh, elf, sizeof(eh));
	for (unsigned i = 0; i < eh.e_phnum && eh.e_phentsize == sizeof(Elf64_Phdr); i++) {
		Elf64_Phdr ph;
		uint64_t at = eh.e_phoff + (uint64_t)i * sizeof(ph);

		if (at > len || sizeof(ph) > len - at)
			break;
		memcpy(&ph, elf + at, sizeof(ph));
		if (ph.p_type == PT_NOTE && ph.p_offset <= len && ph.p_filesz <= len - ph.p_offset &&
		    (n = hm_buildid_notes(elf + ph.p_offset, ph.p_filesz, id)))
			return n;
	}
	for (unsigned i = 0; i < eh.e_shnum && eh.e_shentsize == sizeof(Elf64_Shdr); i++) {
		Elf64_Shdr sh;
		uint64_t at = eh.e_shoff + (uint64_t)i * sizeof(sh);

		if (at > len || sizeof(sh) > len - at)
			break;
		memcpy(&sh, elf + at, sizeof(sh));
		if (sh.sh_type == SHT_NOTE && sh.sh_offset <= len && sh.sh_size <= len - sh.sh_offset &&
		    (n = hm_buildid_notes(elf + sh.sh_offset, sh.sh_size, id)))
			return n;
	}
	return 0;
}

static size_t scan32(const uint8_t *elf, size_t len, uint8_t id[HM_BUILD_ID_MAX])
{
	Elf32_Ehdr eh;
	size_t n;

	memcpy(&eh, elf, sizeof(eh));
	for (unsigned i = 0; i < eh.e_phnum && eh.e_phentsize == sizeof(Elf32_Phdr); i++) {
		Elf32_Phdr ph;
		uint64_t at = eh.e_phoff + (uint64_t)i * sizeof(ph);

		if (at > len || sizeof(ph) > len - at)
			break;
		memcpy(&ph, elf + at, sizeof(ph));
		if (ph.p_type == PT_NOTE && ph.p_offset <= len && ph.p_filesz <= len - ph.p_offset &&
		    (n = hm_buildid_notes(elf + ph.p_offset, ph.p_filesz, id)))
			return n;
	}
	return 0;
}

size_t hm_buildid_parse(const uint8_t *elf, size_t len, uint8_t id[HM_BUILD_ID_MAX])
{
	if (len < sizeof(Elf64_Ehdr) || memcmp(elf, ELFMAG, SELFMAG) != 0 ||
	    elf[EI_DATA] != ELFDATA2LSB)
		return 0;
	if (elf[EI_CLASS] == ELFCLASS64)
		return scan64(elf, len, id);
	if (elf[EI_CLASS] == ELFCLASS32)
		return scan32(elf, len, id);
	return 0;
}

size_t hm_buildid_read(const char *path, uint8_t id[HM_BUILD_ID_MAX])
{
	int fd = hm_file_open(path);
	struct stat st;
	void *map;
	size_t n = 0;

	if (fd < 0)
		return 0;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (map != MAP_FAILED) {
			n = hm_buildid_parse(map, (size_t)st.st_size, id);
			munmap(map, (size_t)st.st_size);
		}
	}
	close(fd);
	return n;
}
