/* Records for what existed before recording started, as perf synthesizes them: COMM and
 * MMAP2 from /proc/PID, and the kernel's text mapping. */
#ifndef HM_SYNTH_H
#define HM_SYNTH_H

#include <sys/types.h>

#include "core/perfdata.h"

/* Called with each mapped file's path, for the BUILD_ID feature. */
typedef void (*hm_synth_note_fn)(void *ctx, const char *file);

/* COMM for every thread and MMAP2 for every file-backed, [heap] and [stack] mapping. */
int hm_synth_process(struct hm_perfdata_writer *w, pid_t pid, hm_synth_note_fn note, void *ctx,
		     struct hm_err *err);
/* Every process in /proc (for -a); processes that exit meanwhile are skipped. */
int hm_synth_all(struct hm_perfdata_writer *w, hm_synth_note_fn note, void *ctx,
		 struct hm_err *err);
/* MMAP of [kernel.kallsyms]_text at _text from /proc/kallsyms (pid -1, as perf), then one
 * MMAP per loaded module from /proc/modules, named by its file under /lib/modules/RELEASE
 * ("[name]" when none is found; note gets the path, for its build-id). */
int hm_synth_kernel(struct hm_perfdata_writer *w, hm_synth_note_fn note, void *ctx,
		    struct hm_err *err);

#endif
