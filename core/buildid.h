/* GNU build-id of an ELF file, read from its notes with libc only (collectors record
 * build-ids without linking a symbolizer). */
#ifndef HM_BUILDID_H
#define HM_BUILDID_H

#include <stddef.h>
#include <stdint.h>

#define HM_BUILD_ID_MAX 20

/* Fills id (up to HM_BUILD_ID_MAX bytes) and returns its length, or 0 when the file has
 * none or is not a readable ELF file. */
size_t hm_buildid_read(const char *path, uint8_t id[HM_BUILD_ID_MAX]);
/* From a raw note area such as /sys/kernel/notes (the running kernel's build-id). */
size_t hm_buildid_notes(const uint8_t *notes, size_t len, uint8_t id[HM_BUILD_ID_MAX]);
/* Same from an ELF image in memory. */
size_t hm_buildid_parse(const uint8_t *elf, size_t len, uint8_t id[HM_BUILD_ID_MAX]);

#endif
