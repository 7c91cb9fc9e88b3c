/* Separate debug files with compressed sections, inflated once a run.
 *
 * Debian's -dbg and dbgsym packages (objcopy --compress-debug-sections) ship debug files
 * whose .debug_* sections are zlib-compressed. libdw inflates every one of them each time
 * the file is opened, and a run opens a module's debug file up to three times: for code
 * names (symbolize/code*.c), for layouts (layout_dwarf.c) and for type inference
 * (data_dwarf.c). For libc's debug file that was 3 x 45 ms of a 0.28 s report.
 *
 * hm_find_debuginfo is a Dwfl_Callbacks.find_debuginfo: it finds the file as
 * dwfl_standard_find_debuginfo does, and where the file has compressed sections it hands
 * out an in-memory copy (a memfd) written by libelf with those sections inflated. The
 * copy is made once per file (by device, inode, size and modification time) and shared:
 * every later open maps the same pages.
 *
 * dwfl_standard_find_debuginfo keeps its own handle on a file it finds by build-id and
 * ignores the descriptor a wrapper returns, so the file is first looked for here by the
 * module's build-id under /usr/lib/debug/.build-id/ (dwfl's global debug directory),
 * checked against the module's build-id, and only then by dwfl's search (debug links,
 * the directory beside the file, a sysroot's own debug directory: those files are
 * inflated by libdw at each open, as before). Where the copy cannot be made (no memfd, a
 * section libelf cannot inflate, extended section numbering) the file found is returned
 * as it is, and libdw inflates it as before: the answers are the same either way. */
#ifndef HM_DEBUGFILE_H
#define HM_DEBUGFILE_H

#include <elfutils/libdwfl.h>
#include <stdint.h>
#include <sys/stat.h>
#include "core/buildid.h"
#include "core/perfdata.h"

int hm_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, GElf_Addr base,
		      const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
		      char **debuginfo_file_name);

/* The module's debug file by its build-id under dir (dir/.build-id/xx/rest.debug), its
 * build-id checked: a descriptor as hm_debugfile_inflated gives it, with *name set to the
 * path (malloc'd, as dwfl wants it), or -1 when there is none or it is another build's. */
int hm_debugfile_find(Dwfl_Module *mod, const char *dir, char **name);

/* The debug file of build-id bits[0..n) under dir/.build-id/ (dir NULL: /usr/lib/debug),
 * its build-id checked, as it is (not inflated): a descriptor, or -1. */
int hm_debugfile_open_id(const unsigned char *bits, int n, const char *dir);

/* The descriptor to read the ELF file open on fd through: fd itself when none of its
 * sections is compressed, else a new descriptor of the inflated copy (fd is closed).
 * Safe to call from several threads. */
int hm_debugfile_inflated(int fd);

/* A build-id from a recording's table worth looking up (its size 2 to HM_BUILD_ID_MAX). */
struct hm_debugfile_id {
	unsigned char id[HM_BUILD_ID_MAX];
	int size;
};
/* Copies those of ids[0, n) into out (room for n); user_only leaves the kernel's out (their
 * files are typed another way). Returns how many. */
uint32_t hm_debugfile_ids(const struct hm_perf_build_id *ids, uint32_t n, int user_only,
			  struct hm_debugfile_id *out);

/* One file (device, inode, size and modification time). */
int hm_debugfile_same(const struct stat *a, const struct stat *b);

/* A debug file found by build-id: fd as hm_debugfile_open_id gives it (not inflated). */
struct hm_debugfile_found {
	int fd;
	struct stat st;
};
/* The debug files of ids[0, n) under dir/.build-id/ (dir NULL: /usr/lib/debug), each file
 * once however many ids name it, empty ones left out, the largest first (libc's before
 * ld.so's): *nr of them, malloc'd, the caller's to close and free; NULL when none. */
struct hm_debugfile_found *hm_debugfile_find_all(const struct hm_debugfile_id *ids, uint32_t n,
						 const char *dir, size_t *nr);

/* Starts making, on a thread of its own, the copies of the debug files (under
 * dir/.build-id/; dir NULL: /usr/lib/debug) of the n build-ids: a recording's table of the files its
 * samples hit (perf's HEADER_BUILD_ID), so that the first sample in one finds its copy
 * made or in the making; an opener waits for a copy in the making, not for the others.
 * NULL when there is nothing to do or no thread to be had. The ids are copied. */
struct hm_debugfile_prefetch *hm_debugfile_prefetch(const char *dir,
						    const struct hm_perf_build_id *ids, uint32_t n);
/* Waits for that thread and frees p; NULL is fine. */
void hm_debugfile_prefetch_end(struct hm_debugfile_prefetch *p);

/* Copies made and descriptors handed out so far (tests: a file inflated once). */
struct hm_debugfile_stats {
	unsigned copies, reused;
};
struct hm_debugfile_stats hm_debugfile_stats(void);

#endif
