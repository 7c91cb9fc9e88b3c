/* perf.data writer. File layout: header, ids, attrs, data, feature table, features. The
 * header goes out first with data size 0 and is rewritten by every sync, so a writer that is
 * killed leaves a file whose header covers whole records only. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/perfdata_int.h"

#define FLUSH_AT (64 * 1024)

struct hm_perfdata_writer {
	char *path;
	int fd, own_fd, pipe;
	struct hm_perf_attr *attrs;
	uint64_t *ids;			/* every attr's ids, in attr order */
	uint32_t nr_attrs, attr_size;	/* attr_size: bytes of perf_event_attr on disk */
	uint64_t attrs_off, data_off, data_size;
	uint64_t on_disk;		/* data bytes known written: what the header claims */
	struct hm_pbuf out;		/* records not yet written */
	struct hm_pbuf rec;		/* the record being built */
	struct hm_pd_index *index;	/* hm_perfdata_index_samples, or NULL */
};

struct file_header {
	uint64_t magic, size, attr_size;
	uint64_t attrs_off, attrs_size, data_off, data_size, types_off, types_size;
	uint64_t features[4];
};

static int io_error(struct hm_perfdata_writer *w, const char *what, struct hm_err *err)
{
	return hm_err_set(err, HM_EXIT_ENV, "%s: cannot %s: %s: check free space and permissions",
			  w->path, what, strerror(errno));
}

static int write_all(struct hm_perfdata_writer *w, const void *p, size_t n, struct hm_err *err)
{
	const uint8_t *c = p;

	while (n) {
		ssize_t r = write(w->fd, c, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return io_error(w, "write", err);
		c += r;
		n -= (size_t)r;
	}
	return 0;
}

static int write_header(struct hm_perfdata_writer *w, const uint64_t feats[4], struct hm_err *err);

/* On a failed write (a full disk) the file is cut back to the last whole flush and the
 * header, whose block already exists, rewritten to match: the file stays readable. */
/* Bytes of whole records among the first `written` bytes of the buffer. */
static size_t whole_records(const struct hm_pbuf *b, size_t written)
{
	size_t at = 0;

	while (at + sizeof(struct perf_event_header) <= written) {
		struct perf_event_header h;

		memcpy(&h, b->p + at, sizeof(h));
		if (!h.size || at + h.size > written)
			break;
		at += h.size;
	}
	return at;
}

static int flush(struct hm_perfdata_writer *w, struct hm_err *err)
{
	off_t before = lseek(w->fd, 0, SEEK_CUR);
	int rc = write_all(w, w->out.p, w->out.len, err);

	if (rc == 0) {
		w->on_disk = w->data_size;
	} else if (!w->pipe && before >= 0) {
		off_t now = lseek(w->fd, 0, SEEK_CUR);
		size_t keep = whole_records(&w->out, now > before ? (size_t)(now - before) : 0);
		struct hm_err ignore;

		w->on_disk += keep;
		if (ftruncate(w->fd, (off_t)(w->data_off + w->on_disk)) == 0)
			lseek(w->fd, 0, SEEK_END);
		w->data_size = w->on_disk;
		hm_pd_index_cut(w->index, w->data_off + w->data_size);
		write_header(w, NULL, &ignore);
	}
	w->out.len = 0;
	return rc;
}

static int write_header(struct hm_perfdata_writer *w, const uint64_t feats[4], struct hm_err *err)
{
	struct file_header h = {
		.magic = HM_PERF_MAGIC,
		.size = sizeof(h),
		.attr_size = w->attr_size + 16ull,
		.attrs_off = w->attrs_off,
		.attrs_size = (w->attr_size + 16ull) * w->nr_attrs,
		.data_off = w->data_off,
		.data_size = w->on_disk,
	};

	if (feats)
		memcpy(h.features, feats, sizeof(h.features));
	if (pwrite(w->fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
		return io_error(w, "write the header", err);
	return 0;
}

/* perf before 6.3 rejects attrs longer than its own 128 bytes: write no more than needed. */
static uint32_t disk_attr_size(const struct hm_perf_attr *attrs, uint32_t nr)
{
	size_t full = sizeof(struct perf_event_attr), small = PERF_ATTR_SIZE_VER7;

	if (full <= small)
		return (uint32_t)full;
	for (uint32_t i = 0; i < nr; i++)
		for (size_t b = small; b < full; b++)
			if (((const uint8_t *)&attrs[i].attr)[b])
				return (uint32_t)full;
	return (uint32_t)small;
}

static void put_attr(struct hm_perfdata_writer *w, const struct hm_perf_attr *a)
{
	struct perf_event_attr copy = a->attr;

	copy.size = w->attr_size;
	hm_pbuf_put(&w->out, &copy, w->attr_size);
}

static void put_record_header(struct hm_pbuf *b, uint32_t type, uint16_t misc, size_t size)
{
	hm_pbuf_u32(b, type);
	hm_pbuf_u16(b, misc);
	hm_pbuf_u16(b, (uint16_t)size);
}

static void lay_out_file(struct hm_perfdata_writer *w)
{
	uint64_t at = sizeof(struct file_header), nr_ids = 0;

	hm_pbuf_zero(&w->out, sizeof(struct file_header));
	for (uint32_t i = 0; i < w->nr_attrs; i++) {
		hm_pbuf_put(&w->out, w->attrs[i].ids, (size_t)w->attrs[i].nr_ids * 8);
		nr_ids += w->attrs[i].nr_ids;
	}
	w->attrs_off = at + nr_ids * 8;
	for (uint32_t i = 0; i < w->nr_attrs; i++) {
		put_attr(w, &w->attrs[i]);
		hm_pbuf_u64(&w->out, at);
		hm_pbuf_u64(&w->out, (uint64_t)w->attrs[i].nr_ids * 8);
		at += (uint64_t)w->attrs[i].nr_ids * 8;
	}
	w->data_off = w->out.len;
}

static int lay_out_pipe(struct hm_perfdata_writer *w, struct hm_err *err)
{
	struct hm_pbuf desc = {0};

	hm_pbuf_u64(&w->out, HM_PERF_MAGIC);
	hm_pbuf_u64(&w->out, HM_PERF_PIPE_HEADER_SIZE);
	for (uint32_t i = 0; i < w->nr_attrs; i++) {
		size_t size = 8 + w->attr_size + (size_t)w->attrs[i].nr_ids * 8;

		if (size > UINT16_MAX)
			return hm_err_set(err, HM_EXIT_USAGE, "%s: event %u has %u ids, too many for "
					  "a pipe-mode attr record: write a file instead", w->path,
					  i, w->attrs[i].nr_ids);
		put_record_header(&w->out, HM_PERF_RECORD_HEADER_ATTR, 0, size);
		put_attr(w, &w->attrs[i]);
		hm_pbuf_put(&w->out, w->attrs[i].ids, (size_t)w->attrs[i].nr_ids * 8);
	}
	/* Names first, so a reader that names events as they arrive (perf) sees them. */
	hm_pd_feat_build(HM_PERF_FEAT_EVENT_DESC, NULL, w->attrs, w->nr_attrs, w->attr_size, &desc);
	put_record_header(&w->out, HM_PERF_RECORD_HEADER_FEATURE, 0, 16 + desc.len);
	hm_pbuf_u64(&w->out, HM_PERF_FEAT_EVENT_DESC);
	hm_pbuf_put(&w->out, desc.p, desc.len);
	hm_pbuf_free(&desc);
	w->data_off = w->out.len;
	return 0;
}

static int copy_attrs(struct hm_perfdata_writer *w, const struct hm_perf_attr *attrs,
		      uint32_t nr)
{
	uint64_t total = 0, *idp;

	for (uint32_t i = 0; i < nr; i++)
		total += attrs[i].nr_ids;
	w->attrs = calloc(nr ? nr : 1, sizeof(*w->attrs));
	w->ids = calloc(total ? total : 1, sizeof(*w->ids));
	if (!w->attrs || !w->ids)
		return -1;
	idp = w->ids;
	for (uint32_t i = 0; i < nr; i++) {
		w->attrs[i] = attrs[i];
		w->attrs[i].index = i;
		memcpy(idp, attrs[i].ids, (size_t)attrs[i].nr_ids * 8);
		w->attrs[i].ids = idp;
		idp += attrs[i].nr_ids;
	}
	w->nr_attrs = nr;
	w->attr_size = disk_attr_size(attrs, nr);
	return 0;
}

static int open_output(struct hm_perfdata_writer *w, const char *path, struct hm_err *err)
{
	if (!strcmp(path, "-")) {
		w->fd = STDOUT_FILENO;
		w->pipe = 1;
		return 0;
	}
	w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (w->fd < 0)
		return hm_err_set(err, HM_EXIT_ENV, "%s: cannot create: %s: check the directory "
				  "exists and is writable, or pass another -o", path,
				  strerror(errno));
	w->own_fd = 1;
	return 0;
}

int hm_perfdata_create(const char *path, const struct hm_perf_attr *attrs, uint32_t nr_attrs,
		       int flags, struct hm_perfdata_writer **out, struct hm_err *err)
{
	struct hm_perfdata_writer *w = calloc(1, sizeof(*w));
	int rc;

	*out = NULL;
	if (w)
		w->fd = -1;
	if (!w || !(w->path = strdup(path)) || copy_attrs(w, attrs, nr_attrs) < 0) {
		hm_perfdata_writer_close(w);
		return hm_err_set(err, HM_EXIT_ENV, "%s: out of memory", path);
	}
	if (!nr_attrs) {
		hm_perfdata_writer_close(w);
		return hm_err_set(err, HM_EXIT_USAGE, "%s: no events to record: pass at least one "
				  "event", path);
	}
	w->pipe = !!(flags & HM_PERFDATA_PIPE);
	if (open_output(w, path, err) < 0) {
		hm_perfdata_writer_close(w);
		return -1;
	}
	if (w->pipe) {
		rc = lay_out_pipe(w, err);
	} else {
		lay_out_file(w);
		rc = 0;
	}
	if (rc == 0)
		rc = flush(w, err);
	if (rc == 0 && !w->pipe)
		rc = write_header(w, NULL, err);
	if (rc < 0) {
		hm_perfdata_writer_close(w);
		return -1;
	}
	*out = w;
	return 0;
}

static void put_padded_str(struct hm_pbuf *b, const char *s)
{
	size_t n = strlen(s ? s : "");

	hm_pbuf_put(b, s ? s : "", n);
	hm_pbuf_zero(b, ((n + 8) & ~(size_t)7) - n);
}

static uint16_t put_mmap(const struct hm_perf_event *ev, struct hm_pbuf *b)
{
	const struct hm_perf_mmap *m = &ev->mmap;
	uint16_t misc = ev->misc & ~PERF_RECORD_MISC_MMAP_BUILD_ID;

	hm_pbuf_u32(b, m->pid);
	hm_pbuf_u32(b, m->tid);
	hm_pbuf_u64(b, m->start);
	hm_pbuf_u64(b, m->len);
	hm_pbuf_u64(b, m->pgoff);
	if (ev->type == PERF_RECORD_MMAP2 && m->build_id_size) {
		uint8_t id[24] = {0};

		id[0] = m->build_id_size > 20 ? 20 : m->build_id_size;
		memcpy(id + 4, m->build_id, id[0]);
		hm_pbuf_put(b, id, sizeof(id));
		misc |= PERF_RECORD_MISC_MMAP_BUILD_ID;
	} else if (ev->type == PERF_RECORD_MMAP2) {
		hm_pbuf_u32(b, m->maj);
		hm_pbuf_u32(b, m->min);
		hm_pbuf_u64(b, m->ino);
		hm_pbuf_u64(b, m->ino_generation);
	}
	if (ev->type == PERF_RECORD_MMAP2) {
		hm_pbuf_u32(b, m->prot);
		hm_pbuf_u32(b, m->flags);
	}
	put_padded_str(b, m->filename);
	if (m->extra_len)	/* 8-byte multiple: a sample_id trailer follows */
		hm_pbuf_put(b, m->extra, m->extra_len);
	return misc;
}

/* Encodes the body after the 8-byte header; returns the misc to write, or -1 for a type
 * the writer does not produce. */
static int put_body(const struct hm_perf_event *ev, const struct hm_perf_attr *a,
		    struct hm_pbuf *b)
{
	uint64_t first = a->nr_ids ? a->ids[0] : 0;

	switch (ev->type) {
	case PERF_RECORD_SAMPLE:
		hm_pd_encode_sample(&a->attr, &ev->sample, ev->sample.id ? ev->sample.id : first, b);
		return ev->misc;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return put_mmap(ev, b);
	case PERF_RECORD_COMM:
		hm_pbuf_u32(b, ev->comm.pid);
		hm_pbuf_u32(b, ev->comm.tid);
		put_padded_str(b, ev->comm.comm);
		return ev->misc;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		hm_pbuf_u32(b, ev->task.pid);
		hm_pbuf_u32(b, ev->task.ppid);
		hm_pbuf_u32(b, ev->task.tid);
		hm_pbuf_u32(b, ev->task.ptid);
		hm_pbuf_u64(b, ev->task.time);
		return ev->misc;
	case PERF_RECORD_LOST:
		hm_pbuf_u64(b, ev->lost.id ? ev->lost.id : first);
		/* fall through */
	case PERF_RECORD_LOST_SAMPLES:
		hm_pbuf_u64(b, ev->lost.lost);
		return ev->misc;
	default:
		return -1;
	}
}

int hm_perfdata_write(struct hm_perfdata_writer *w, const struct hm_perf_event *ev,
		      struct hm_err *err)
{
	uint32_t idx = ev->attr ? ev->attr->index : 0;
	const struct hm_perf_attr *a;
	struct perf_event_header h;
	int misc;

	if (idx >= w->nr_attrs)
		return hm_err_set(err, HM_EXIT_USAGE, "%s: event index %u out of range (%u events)",
				  w->path, idx, w->nr_attrs);
	a = &w->attrs[idx];
	w->rec.len = 0;
	hm_pbuf_zero(&w->rec, sizeof(h));
	misc = put_body(ev, a, &w->rec);
	if (misc < 0)
		return hm_err_set(err, HM_EXIT_USAGE, "%s: cannot write record type %u", w->path,
				  ev->type);
	if (ev->type != PERF_RECORD_SAMPLE)
		hm_pd_encode_sid(&a->attr, &ev->sid,
				 ev->sid.id ? ev->sid.id : (a->nr_ids ? a->ids[0] : 0), &w->rec);
	if (w->rec.len > UINT16_MAX)
		return hm_err_set(err, HM_EXIT_USAGE, "%s: a record of %zu bytes exceeds perf's "
				  "64 KiB limit: sample fewer registers or a smaller stack", w->path,
				  w->rec.len);
	h = (struct perf_event_header){ev->type, (uint16_t)misc, (uint16_t)w->rec.len};
	memcpy(w->rec.p, &h, sizeof(h));
	hm_pd_index_note(w->index, w->data_off + w->data_size, w->rec.p, w->rec.len, (int)idx);
	hm_pbuf_put(&w->out, w->rec.p, w->rec.len);
	w->data_size += w->rec.len;
	/* Every flush also records the size: a kill loses at most the unflushed buffer. */
	return w->out.len >= FLUSH_AT ? hm_perfdata_sync(w, err) : 0;
}

int hm_perfdata_write_raw(struct hm_perfdata_writer *w, const void *rec, size_t size,
			  struct hm_err *err)
{
	struct perf_event_header h;

	if (size < sizeof(h) || size > UINT16_MAX)
		return hm_err_set(err, HM_EXIT_USAGE, "%s: a raw record of %zu bytes is not a perf "
				  "record (8 to 65535 bytes)", w->path, size);
	memcpy(&h, rec, sizeof(h));
	if (h.size != size)
		return hm_err_set(err, HM_EXIT_USAGE, "%s: a raw record says %u bytes but %zu were "
				  "given", w->path, h.size, size);
	hm_pd_index_note(w->index, w->data_off + w->data_size, rec, size, -1);
	hm_pbuf_put(&w->out, rec, size);
	w->data_size += size;
	return w->out.len >= FLUSH_AT ? hm_perfdata_sync(w, err) : 0;
}

int hm_perfdata_sync(struct hm_perfdata_writer *w, struct hm_err *err)
{
	if (flush(w, err) < 0)
		return -1;
	return w->pipe ? 0 : write_header(w, NULL, err);
}

static const int written_feats[] = {
	HM_PERF_FEAT_BUILD_ID, HM_PERF_FEAT_HOSTNAME, HM_PERF_FEAT_OSRELEASE,
	HM_PERF_FEAT_VERSION, HM_PERF_FEAT_ARCH, HM_PERF_FEAT_NRCPUS, HM_PERF_FEAT_CPUDESC,
	HM_PERF_FEAT_CPUID, HM_PERF_FEAT_TOTAL_MEM, HM_PERF_FEAT_CMDLINE,
	HM_PERF_FEAT_EVENT_DESC, HM_PERF_FEAT_CPU_TOPOLOGY, HM_PERF_FEAT_NUMA_TOPOLOGY,
	HM_PERF_FEAT_HITMAP_INDEX,	/* the writer's own (build below), then */
	HM_PERF_FEAT_HITMAP_KSLAB,	/* the highest bit: its table entry comes last */
};
#define NR_WRITTEN (sizeof(written_feats) / sizeof(written_feats[0]))

/* Pipe mode: build-ids as HEADER_BUILD_ID records, the rest as HEADER_FEATURE records; a
 * feature over a record's 64 KiB (a huge command line) is left out. */
static int finish_pipe(struct hm_perfdata_writer *w, const struct hm_perf_features *ft,
		       struct hm_err *err)
{
	for (size_t i = 0; i < NR_WRITTEN; i++) {
		struct hm_pbuf b = {0};
		int f = written_feats[i];

		/* perf warns of a HEADER_FEATURE it does not know: the slab facts stay out */
		if (f == HM_PERF_FEAT_EVENT_DESC || f == HM_PERF_FEAT_HITMAP_KSLAB ||
		    !hm_pd_feat_build(f, ft, NULL, 0, 0, &b)) {
			hm_pbuf_free(&b);
			continue;
		}
		if (f != HM_PERF_FEAT_BUILD_ID && b.len + 16 <= UINT16_MAX) {
			put_record_header(&w->out, HM_PERF_RECORD_HEADER_FEATURE, 0, 16 + b.len);
			hm_pbuf_u64(&w->out, (uint64_t)f);
		}
		if (f == HM_PERF_FEAT_BUILD_ID || b.len + 16 <= UINT16_MAX)
			hm_pbuf_put(&w->out, b.p, b.len);
		hm_pbuf_free(&b);
	}
	return flush(w, err);
}

/* Feature f's body from ft, or from the writer for its index. */
static int feat_build(const struct hm_perfdata_writer *w, int f, const struct hm_perf_features *ft,
		      struct hm_pbuf *b)
{
	if (f == HM_PERF_FEAT_HITMAP_INDEX)
		return w->index ? hm_pd_index_build(w->index, w->data_off, w->data_size, b) : 0;
	return hm_pd_feat_build(f, ft, w->attrs, w->nr_attrs, w->attr_size, b);
}

static int finish_file(struct hm_perfdata_writer *w, const struct hm_perf_features *ft,
		       struct hm_err *err)
{
	struct hm_pbuf body = {0}, table = {0};
	uint64_t feats[4] = {0}, at, nr = 0;
	int rc;

	for (size_t i = 0; i < NR_WRITTEN; i++)
		nr += feat_build(w, written_feats[i], ft, &body) > 0;
	body.len = 0;
	at = w->data_off + w->data_size + nr * 16;
	for (size_t i = 0; i < NR_WRITTEN; i++) {
		int f = written_feats[i];
		size_t before = body.len;

		if (!feat_build(w, f, ft, &body))
			continue;
		feats[f / 64] |= 1ull << (f % 64);
		hm_pbuf_u64(&table, at + before);
		hm_pbuf_u64(&table, body.len - before);
	}
	hm_pbuf_put(&w->out, table.p, table.len);
	hm_pbuf_put(&w->out, body.p, body.len);
	hm_pbuf_free(&table);
	hm_pbuf_free(&body);
	rc = flush(w, err);
	return rc < 0 ? rc : write_header(w, feats, err);
}

int hm_perfdata_finish(struct hm_perfdata_writer *w, const struct hm_perf_features *feat,
		       struct hm_err *err)
{
	static const struct hm_perf_features none;
	const struct hm_perf_features *ft = feat ? feat : &none;

	if (flush(w, err) < 0)
		return -1;
	return w->pipe ? finish_pipe(w, ft, err) : finish_file(w, ft, err);
}

void hm_perfdata_writer_close(struct hm_perfdata_writer *w)
{
	if (!w)
		return;
	if (w->own_fd && w->fd >= 0)
		close(w->fd);
	hm_pbuf_free(&w->out);
	hm_pbuf_free(&w->rec);
	hm_pd_index_free(w->index);
	free(w->attrs);
	free(w->ids);
	free(w->path);
	free(w);
}

void hm_perfdata_index_samples(struct hm_perfdata_writer *w, const uint8_t *of)
{
	if (w->pipe || w->data_size)	/* an index must see every record */
		return;
	hm_pd_index_free(w->index);
	w->index = hm_pd_index_new(w->attrs, w->nr_attrs, of);
}

const struct hm_perf_attr *hm_perfdata_writer_attr(const struct hm_perfdata_writer *w,
						   uint32_t i)
{
	return i < w->nr_attrs ? &w->attrs[i] : NULL;
}

uint64_t hm_perfdata_written(const struct hm_perfdata_writer *w)
{
	return w->data_size;
}
