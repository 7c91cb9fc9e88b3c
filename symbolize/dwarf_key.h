/* dwz (as Debian's and Fedora's debug packages ship DWARF) moves DIEs shared by several
 * files into one .gnu_debugaltlink file, whose offsets overlap the main file's. libdw
 * finds and opens that file itself and follows DW_FORM_GNU_ref_alt into it; a DIE kept
 * by offset must say which file it is in: the alt file's carry HM_DWARF_ALT_KEY. */
#ifndef HM_DWARF_KEY_H
#define HM_DWARF_KEY_H

#include <elfutils/libdw.h>
#include <stdint.h>

#define HM_DWARF_ALT_KEY (1ull << 63)

static inline uint64_t hm_dwarf_key(Dwarf *main, Dwarf_Die *die)
{
	uint64_t off = dwarf_dieoffset(die);

	return die->cu && dwarf_cu_getdwarf(die->cu) != main ? off | HM_DWARF_ALT_KEY : off;
}

static inline Dwarf_Die *hm_dwarf_die(Dwarf *main, uint64_t key, Dwarf_Die *out)
{
	Dwarf *dw = key & HM_DWARF_ALT_KEY ? dwarf_getalt(main) : main;

	return dw ? dwarf_offdie(dw, key & ~HM_DWARF_ALT_KEY, out) : NULL;
}

#endif
