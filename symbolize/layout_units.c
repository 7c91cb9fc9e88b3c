/* DWARF unit headers checked against their length fields (symbolize/layout_dwarf.c). */
#include "symbolize/layout_int.h"

#include <elfutils/libdw.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Units of one section counted by their length fields alone; *at_nth is the offset of
 * the nth (0-based) when there is one. */
static uint64_t count_units(const Elf_Data *d, uint64_t nth, uint64_t *at_nth)
{
	size_t at = 0;
	uint64_t n = 0;

	while (d->d_size - at >= 4) {
		uint32_t len32;
		uint64_t len, hdr = 4;

		memcpy(&len32, (const uint8_t *)d->d_buf + at, 4);
		len = len32;
		if (len32 == 0xffffffff && d->d_size - at >= 12) {
			memcpy(&len, (const uint8_t *)d->d_buf + at + 4, 8);
			hdr = 12;
		}
		if (n++ == nth)
			*at_nth = at;
		if ((len32 >= 0xfffffff0 && hdr == 4) || len > d->d_size - at - hdr)
			break;	/* the rest is one broken unit */
		at += hdr + len;
	}
	return n;
}

/* The units of .debug_info and .debug_types (the sections dwarf_get_units walks, in that
 * order); UINT64_MAX when neither can be read. *at_nth: as count_units, in .debug_info. */
static uint64_t raw_units(Elf *elf, uint64_t nth, uint64_t *at_nth)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	uint64_t n = UINT64_MAX;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return UINT64_MAX;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		Elf_Data *d;
		int info;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		info = !strcmp(name, ".debug_info");
		if ((!info && strcmp(name, ".debug_types")) || !(d = elf_getdata(scn, NULL)) ||
		    !d->d_buf)
			continue;
		n = (n == UINT64_MAX ? 0 : n) + count_units(d, info ? nth : UINT64_MAX, at_nth);
	}
	return n;
}

/* libdw stops at the first unit header it refuses (version 0, an unknown unit type), and
 * every unit after it is lost to lookups too: "no types" would be a silent lie. Counts
 * the units it reaches against those the lengths delimit. */
int hm_dwarf_units_check(Dwarf *dw, char *why, size_t len)
{
	Dwarf_CU *cu = NULL, *next;
	uint64_t ok = 0, total, at = 0;
	int rc;

	while ((rc = dwarf_get_units(dw, cu, &next, NULL, NULL, NULL, NULL)) == 0) {
		ok++;
		cu = next;
	}
	if (rc > 0)
		return 0;
	total = raw_units(dwarf_getelf(dw), ok, &at);
	if (total == UINT64_MAX || total <= ok)
		total = ok + 1;	/* libdw refused one that the lengths did not delimit */
	snprintf(why, len, "%" PRIu64 " of %" PRIu64 " compilation units unreadable from "
		 ".debug_info offset 0x%" PRIx64 " (%s)", total - ok, total, at, dwarf_errmsg(-1));
	return ok ? 1 : 2;
}
