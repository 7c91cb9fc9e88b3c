/* perf.data reader: the file and pipe layouts and the record loop (the file header, attrs
 * and feature sections: perfdata_header.c).
 * Every offset and size read from the file is checked against the bytes that exist before
 * it is used; records are copied to an aligned buffer so decoders never read past them. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/perfdata_int.h"

#define STREAM_BUF (256 * 1024)

static const char fix_cut[] = "re-record, or the recording was cut short";
static const char fix_bad[] = "the file is damaged; re-record";

int hm_pd_corrupt(struct hm_perfdata *pd, uint64_t off, const char *what, struct hm_err *err)
{
	return hm_err_set(err, HM_EXIT_INPUT, "%s: corrupt %s at byte %" PRIu64 ": %s", pd->name,
			  what, off, fix_bad);
}

int hm_pd_truncated(struct hm_perfdata *pd, uint64_t have, const char *why, struct hm_err *err)
{
	return hm_err_set(err, HM_EXIT_INPUT, "%s: truncated at byte %" PRIu64 " (%s): %s",
			  pd->name, have, why, fix_cut);
}

void hm_pd_warn(struct hm_perfdata *pd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	hm_msg_vappend(pd->warning, sizeof(pd->warning), fmt, ap);
	va_end(ap);
}

/* Stream source: buf holds bytes [buf_off, buf_off + buf_len) of the stream. */
static int stream_read(struct hm_perfdata *pd, struct hm_err *err)
{
	ssize_t n;

	do
		n = read(pd->fd, pd->buf + pd->buf_len, pd->buf_cap - pd->buf_len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return hm_err_set(err, HM_EXIT_INPUT, "%s: read failed at byte %" PRIu64
				  ": %s: check the file or the producing command", pd->name,
				  pd->buf_off + pd->buf_len, strerror(errno));
	if (n == 0)
		pd->eof = 1;
	pd->buf_len += (size_t)n;
	return 0;
}

/* Points *out at len (<= HM_PD_SIZE_MAX) bytes at off; 1 if they exist, 0 if the input ends first. */
static int src_get(struct hm_perfdata *pd, uint64_t off, size_t len, const uint8_t **out,
		   struct hm_err *err)
{
	if (pd->mem) {
		if (off > pd->mem_len || len > pd->mem_len - off)
			return 0;
		*out = pd->mem + off;
		return 1;
	}
	if (off < pd->buf_off)
		return 0;	/* streams only move forward */
	while (pd->buf_off + pd->buf_len < off) {	/* skip a payload we do not keep */
		pd->buf_off += pd->buf_len;
		pd->buf_len = 0;
		if (pd->eof)
			return 0;
		if (stream_read(pd, err) < 0)
			return -1;
	}
	if (off > pd->buf_off) {
		size_t drop = (size_t)(off - pd->buf_off);

		memmove(pd->buf, pd->buf + drop, pd->buf_len - drop);
		pd->buf_len -= drop;
		pd->buf_off = off;
	}
	while (pd->buf_len < len && !pd->eof)
		if (stream_read(pd, err) < 0)
			return -1;
	if (pd->buf_len < len)
		return 0;
	*out = pd->buf;
	return 1;
}

/* Bytes known to exist: the file size, or what the stream has delivered. */
static uint64_t src_size(const struct hm_perfdata *pd)
{
	return pd->mem ? pd->mem_len : pd->buf_off + pd->buf_len;
}

/* A file-mode header from a pipe: keep the whole stream in memory for random access. */
static int stream_slurp(struct hm_perfdata *pd, struct hm_err *err)
{
	while (!pd->eof) {
		if (pd->buf_len == pd->buf_cap) {
			uint8_t *nb = realloc(pd->buf, pd->buf_cap * 2);

			if (!nb)
				return hm_err_set(err, HM_EXIT_ENV, "%s: out of memory reading "
						  "stdin: pass the file by name instead", pd->name);
			pd->buf = nb;
			pd->buf_cap *= 2;
		}
		if (stream_read(pd, err) < 0)
			return -1;
	}
	pd->mem = pd->buf;
	pd->mem_len = pd->buf_len;
	pd->mem_mapped = 0;
	pd->buf = NULL;
	return 0;
}

static int next_record(struct hm_perfdata *pd, struct hm_err *err);
static int skip_extra(struct hm_perfdata *pd, uint64_t extra, struct hm_err *err);

/* Pipe mode: consume perf's header records (attrs, features, names) up to the first kernel
 * record, which is kept for hm_perfdata_next, so attrs and names are known after open. */
static int pipe_prologue(struct hm_perfdata *pd, struct hm_err *err)
{
	struct hm_perf_event scratch;
	struct perf_event_header h;
	int rc;

	while ((rc = next_record(pd, err)) > 0) {
		memcpy(&h, pd->rec, sizeof(h));
		if (h.type < HM_PERF_RECORD_HEADER_ATTR) {
			pd->pending = 1;
			return 0;
		}
		if (hm_pd_dispatch(pd, &scratch, err) < 0 ||
		    skip_extra(pd, hm_pd_extra_bytes(pd), err) < 0)
			return -1;
	}
	return rc;
}

static int read_start(struct hm_perfdata *pd, struct hm_err *err)
{
	const uint8_t *p;
	uint64_t magic, hsize;
	int rc = src_get(pd, 0, 16, &p, err);

	if (rc < 0)
		return -1;
	if (rc == 0)
		return hm_err_set(err, HM_EXIT_INPUT, "%s: truncated at byte %" PRIu64 " (a "
				  "perf.data header needs 16 bytes): not a recording, or it was cut "
				  "short; re-record", pd->name, src_size(pd));
	memcpy(&magic, p, 8);
	memcpy(&hsize, p + 8, 8);
	if (magic == HM_PERF_MAGIC_SWAPPED)
		return hm_err_set(err, HM_EXIT_INPUT, "%s: recorded on a machine of the other "
				  "byte order: convert it there with 'perf inject', or record here",
				  pd->name);
	if (magic == HM_PERF_MAGIC_V1)
		return hm_err_set(err, HM_EXIT_INPUT, "%s: perf.data version 1 (perf before 2.6.36)"
				  ": re-record with a newer perf", pd->name);
	if (magic != HM_PERF_MAGIC)
		return hm_err_set(err, HM_EXIT_INPUT, "%s: not a perf.data file (no PERFILE2 magic)"
				  ": pass a file written by 'perf record' or 'hitmap record'",
				  pd->name);
	if (hsize == HM_PERF_PIPE_HEADER_SIZE) {
		pd->pipe = 1;
		pd->pos = HM_PERF_PIPE_HEADER_SIZE;
		pd->end = pd->mem ? pd->mem_len : UINT64_MAX;
		return pipe_prologue(pd, err);
	}
	if (!pd->mem && stream_slurp(pd, err) < 0)
		return -1;
	return hm_pd_read_file_header(pd, hsize, err);
}

static int open_source(struct hm_perfdata *pd, struct hm_err *err)
{
	struct stat st;

	if (fstat(pd->fd, &st) < 0)
		return hm_err_set(err, HM_EXIT_INPUT, "%s: cannot stat: %s: check the path",
				  pd->name, strerror(errno));
	if (S_ISREG(st.st_mode) && st.st_size == 0)
		return hm_err_set(err, HM_EXIT_INPUT, "%s: empty file: the recorder wrote nothing; "
				  "re-record", pd->name);
	if (S_ISREG(st.st_mode) && lseek(pd->fd, 0, SEEK_CUR) == 0) {
		void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, pd->fd, 0);

		if (m != MAP_FAILED) {
			pd->mem = m;
			pd->mem_len = (size_t)st.st_size;
			pd->mem_mapped = 1;
			return 0;
		}
	}
	pd->buf_cap = STREAM_BUF;
	pd->buf = malloc(pd->buf_cap);
	if (!pd->buf)
		return hm_err_set(err, HM_EXIT_ENV, "%s: out of memory", pd->name);
	return 0;
}

int hm_perfdata_open_fd(int fd, const char *name, struct hm_perfdata **out, struct hm_err *err)
{
	struct hm_perfdata *pd = calloc(1, sizeof(*pd));

	*out = NULL;
	if (!pd)
		return hm_err_set(err, HM_EXIT_ENV, "%s: out of memory", name);
	hm_arena_init(&pd->arena);
	hm_map64_init(&pd->id2attr);
	pd->name = hm_arena_strdup(&pd->arena, name);
	pd->fd = fd;
	pd->id_pos = pd->is_pos = -1;
	pd->rec = malloc(HM_PD_REC_MAX);
	if (!pd->rec) {
		hm_perfdata_close(pd);
		return hm_err_set(err, HM_EXIT_ENV, "%s: out of memory", name);
	}
	if (open_source(pd, err) < 0 || read_start(pd, err) < 0) {
		hm_perfdata_close(pd);
		return -1;
	}
	*out = pd;
	return 0;
}

int hm_perfdata_open(const char *path, struct hm_perfdata **out, struct hm_err *err)
{
	int fd;

	*out = NULL;
	if (!strcmp(path, "-"))
		return hm_perfdata_open_fd(STDIN_FILENO, "stdin", out, err);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return hm_err_set(err, HM_EXIT_INPUT, "%s: cannot open: %s: check the path, or record "
				  "one with 'hitmap record'", path, strerror(errno));
	if (hm_perfdata_open_fd(fd, path, out, err) < 0) {
		close(fd);
		return -1;
	}
	(*out)->own_fd = 1;
	return 0;
}

/* The record at pos does not fit: a clean end, a warning, or an error. */
static int record_cut(struct hm_perfdata *pd, uint64_t need, struct hm_err *err)
{
	uint64_t have = src_size(pd);
	char why[160];

	if (pd->end != UINT64_MAX && pd->pos + need > pd->end && pd->end < have) {
		snprintf(why, sizeof(why), "record of %" PRIu64 " bytes running past the end of the "
			 "data section at byte %" PRIu64, need, pd->end);
		return hm_pd_corrupt(pd, pd->pos, why, err);
	}
	if (pd->tolerant_tail) {
		hm_pd_warn(pd, "the last record, at byte %" PRIu64 ", is cut off by the end of the "
			   "file: ignored", pd->pos);
		pd->pos = pd->end = have;
		return 0;
	}
	snprintf(why, sizeof(why), "the record at byte %" PRIu64 " needs %" PRIu64 " bytes",
		 pd->pos, need);
	return hm_pd_truncated(pd, have, why, err);
}

/* A mapped file's records are read through a window filled by pread rather than from
 * the mapping: in a VM a page fault costs more than copying the page, and walking a
 * 1 GB recording's records took 0.35 s mapped against 0.10 s read (the maps pass, then
 * again the samples' pass). The window is WIN_CAP bytes from the record it was filled
 * for; a record is at most 64 KB. Where pread fails, the mapping answers. */
#define WIN_CAP (1u << 20)

/* The bytes at off, as the window holds them: filled anew from off, cap bytes at most. */
static const uint8_t *win_fill(struct hm_perfdata *pd, uint64_t off, size_t cap)
{
	const uint8_t *mapped = pd->mem + off;
	size_t want = pd->mem_len - off < cap ? (size_t)(pd->mem_len - off) : cap, got = 0;

	if (!pd->win && !(pd->win = malloc(WIN_CAP)))
		return mapped;
	while (got < want) {
		ssize_t n = pread(pd->fd, pd->win + got, want - got, (off_t)(off + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	if (got < want) {	/* cut or unreadable: the mapping says what is there */
		pd->win_len = 0;
		return mapped;
	}
	pd->win_off = off;
	pd->win_len = got;
	return pd->win;
}

/* The record header at off: from the window, filled when it does not hold the header. */
static const uint8_t *win_get(struct hm_perfdata *pd, uint64_t off)
{
	if (off >= pd->win_off && off + 8 <= pd->win_off + pd->win_len)
		return pd->win + (off - pd->win_off);
	return win_fill(pd, off, pd->seek ? HM_PD_SEEK_WIN : WIN_CAP);
}

/* A mapped file is read once, front to back: the pages already read are handed back every
 * DROP_STEP bytes, so a 10 GB recording does not keep 10 GB resident (records are copied
 * out, and a page touched again is read back from the file). */
#define DROP_STEP (64u << 20)

static void drop_behind(struct hm_perfdata *pd)
{
	uint64_t end = pd->pos & ~(uint64_t)(DROP_STEP - 1);

	if (end > pd->dropped &&
	    madvise((void *)(pd->mem + pd->dropped), (size_t)(end - pd->dropped),
		    MADV_DONTNEED) == 0)
		pd->dropped = end;
}

static int skip_sample(struct hm_perfdata *pd, uint16_t misc)
{
	pd->stats.records[PERF_RECORD_SAMPLE]++;
	pd->stats.skipped++;
	pd->stats.skipped_kernel += (misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
	return 1;
}

/* Copies the next record into pd->rec: 1, or 0 at the end, or negative on error. A
 * sample the caller does not want is passed over without its copy. */
static int next_record(struct hm_perfdata *pd, struct hm_err *err)
{
	struct perf_event_header h;
	const uint8_t *p;
	int rc;

	for (;;) {
		if (pd->pos >= pd->end)
			return 0;
		rc = src_get(pd, pd->pos, sizeof(h), &p, err);
		if (rc < 0)
			return -1;
		if (rc == 0)
			return src_size(pd) == pd->pos ? 0 : record_cut(pd, sizeof(h), err);
		if (pd->mem_mapped)
			p = win_get(pd, pd->pos);
		memcpy(&h, p, sizeof(h));
		if (h.size < sizeof(h))
			return hm_pd_corrupt(pd, pd->pos, "record (size below its 8-byte header)",
					     err);
		if (pd->end != UINT64_MAX && h.size > pd->end - pd->pos)
			return record_cut(pd, h.size, err);
		if (pd->mem) {	/* p is the record already: only its end is checked */
			if (h.size > pd->mem_len - pd->pos)
				return record_cut(pd, h.size, err);
			if (pd->mem_mapped && pd->pos + h.size > pd->win_off + pd->win_len)
				p = win_fill(pd, pd->pos,
					     pd->seek ? HM_PD_SEEK_WIN + h.size : WIN_CAP);
		} else if ((rc = src_get(pd, pd->pos, h.size, &p, err)) <= 0) {
			return rc < 0 ? -1 : record_cut(pd, h.size, err);
		}
		if (h.type == PERF_RECORD_SAMPLE &&
		    (pd->want_none ? skip_sample(pd, h.misc)
				   : pd->want && hm_pd_skip_unwanted(pd, p, h.size))) {
			pd->pos += h.size;
			if (pd->mem_mapped && pd->pos - pd->dropped >= DROP_STEP)
				drop_behind(pd);
			continue;
		}
		memcpy(pd->rec, p, h.size);
		memset((uint8_t *)pd->rec + h.size, 0, 8);
		pd->rec_off = pd->pos;
		pd->pos += h.size;
		if (pd->mem_mapped && pd->pos - pd->dropped >= DROP_STEP)
			drop_behind(pd);
		return 1;
	}
}

/* A payload stored after the record (AUXTRACE, TRACING_DATA) must exist before we skip it. */
static int skip_extra(struct hm_perfdata *pd, uint64_t extra, struct hm_err *err)
{
	const uint8_t *p;
	int rc;

	if (!extra)
		return 0;
	if (extra > UINT64_MAX - pd->pos)
		return hm_pd_corrupt(pd, pd->rec_off, "record (payload size past 2^64)", err);
	if (pd->end != UINT64_MAX && extra > pd->end - pd->pos)
		return record_cut(pd, extra, err);
	rc = src_get(pd, pd->pos + extra - 1, 1, &p, err);
	if (rc <= 0)
		return rc < 0 ? -1 : record_cut(pd, extra, err);
	pd->pos += extra;
	return 0;
}

int hm_perfdata_next(struct hm_perfdata *pd, struct hm_perf_event *ev, struct hm_err *err)
{
	for (;;) {
		int rc = pd->pending ? 1 : next_record(pd, err);

		pd->pending = 0;
		if (rc <= 0)
			return rc;
		rc = hm_pd_dispatch(pd, ev, err);
		if (rc != 0)
			return rc;
		if (skip_extra(pd, hm_pd_extra_bytes(pd), err) < 0)
			return -1;
	}
}

int hm_perfdata_next_at(struct hm_perfdata *pd, uint64_t off, struct hm_perf_event *ev,
			struct hm_err *err)
{
	int rc;

	if (!pd->mem || pd->pipe || off < pd->data_off || off >= pd->end)
		return hm_err_set(err, HM_EXIT_INPUT, "%s: no record at byte %" PRIu64 " (outside "
				  "the data section): the record index is wrong; the file is "
				  "damaged", pd->name, off);
	pd->pending = 0;
	pd->pos = off;
	pd->seek = 1;
	rc = next_record(pd, err);
	pd->seek = 0;
	if (rc < 0)
		return -1;
	if (rc == 0 || pd->rec_off != off)	/* a sample the caller does not want */
		return hm_err_set(err, HM_EXIT_INPUT, "%s: the record index names byte %" PRIu64
				  ", where no record it lists starts: the file is damaged",
				  pd->name, off);
	rc = hm_pd_dispatch(pd, ev, err);
	if (rc < 0 || skip_extra(pd, hm_pd_extra_bytes(pd), err) < 0)
		return -1;
	return rc;
}

void hm_perfdata_want_samples(struct hm_perfdata *pd,
			      int (*want)(const struct hm_perf_attr *a, void *arg), void *arg)
{
	pd->want = want;
	pd->want_arg = arg;
}

void hm_perfdata_want_no_samples(struct hm_perfdata *pd)
{
	pd->want_none = 1;
}

void hm_perfdata_close(struct hm_perfdata *pd)
{
	if (!pd)
		return;
	if (pd->mem && pd->mem_mapped)
		munmap((void *)pd->mem, pd->mem_len);
	else
		free((void *)pd->mem);
	free(pd->buf);
	free(pd->win);
	free(pd->index);
	free(pd->rec);
	free(pd->attrs);
	free(pd->descs);
	free(pd->feat.build_ids);
	hm_map64_free(&pd->id2attr);
	if (pd->own_fd)
		close(pd->fd);
	hm_arena_free(&pd->arena);
	free(pd);
}

int hm_perfdata_is_pipe(const struct hm_perfdata *pd)
{
	return pd->pipe;
}

uint32_t hm_perfdata_nr_attrs(const struct hm_perfdata *pd)
{
	return pd->nr_attrs;
}

const struct hm_perf_attr *hm_perfdata_attr(const struct hm_perfdata *pd, uint32_t i)
{
	return i < pd->nr_attrs ? pd->attrs[i] : NULL;
}

const struct hm_perf_features *hm_perfdata_features(const struct hm_perfdata *pd)
{
	return &pd->feat;
}

const struct hm_perfdata_stats *hm_perfdata_stats(const struct hm_perfdata *pd)
{
	return &pd->stats;
}

const char *hm_perfdata_warning(const struct hm_perfdata *pd)
{
	return pd->warning[0] ? pd->warning : NULL;
}
