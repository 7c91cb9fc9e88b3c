/* Internals shared by the perfdata_*.c files (and kslab.c, a section hitmap adds to
 * perf.data); not part of the API. */
#ifndef HM_PERFDATA_INT_H
#define HM_PERFDATA_INT_H

#include <stdint.h>
#include <string.h>

#include "core/arena.h"
#include "core/hash.h"
#include "core/perfdata.h"

#define HM_PERF_MAGIC 0x32454c4946524550ULL	/* "PERFILE2" read as a little-endian u64 */
#define HM_PERF_MAGIC_SWAPPED 0x50455246494c4532ULL
#define HM_PERF_MAGIC_V1 0x454c494646524550ULL	/* "PERFFILE" */
#define HM_PERF_FILE_HEADER_SIZE 104
#define HM_PERF_FILE_HEADER_OLD 72		/* before the adds_features bitmap */
#define HM_PERF_PIPE_HEADER_SIZE 16
#define HM_PERF_NAME_ALIGN 64			/* perf pads feature strings to this */
#define HM_PD_SIZE_MAX 65536			/* a record's header.size is a u16 */
#define HM_PD_REC_MAX (HM_PD_SIZE_MAX + 16)	/* pd->rec: a u16-sized record and 8 zero bytes */
#define HM_PERF_BUILD_ID_HDR 36			/* header, pid, 24-byte build-id field */
#define HM_PERF_MISC_BUILD_ID_SIZE (1 << 15)	/* the build-id record's size byte is valid */

/* Kernel 6.8; older uapi headers lack it, newer ones have it as an enum constant. */
#define HM_PERF_SAMPLE_BRANCH_COUNTERS (1ULL << 19)

/* Bounds-checked little-endian reads; any overrun sets bad and yields zeros. */
struct hm_pcur {
	const uint8_t *p;
	size_t len, off;
	int bad;
};

static inline void hm_pcur_init(struct hm_pcur *c, const void *p, size_t len)
{
	c->p = p;
	c->len = len;
	c->off = 0;
	c->bad = 0;
}

static inline const void *hm_pcur_take(struct hm_pcur *c, uint64_t n)
{
	const void *r;

	if (c->bad || n > c->len - c->off) {
		c->bad = 1;
		return NULL;
	}
	r = c->p + c->off;
	c->off += n;
	return r;
}

static inline uint64_t hm_pcur_u64(struct hm_pcur *c)
{
	const void *p = hm_pcur_take(c, 8);
	uint64_t v = 0;

	if (p)
		memcpy(&v, p, 8);
	return v;
}

static inline uint32_t hm_pcur_u32(struct hm_pcur *c)
{
	const void *p = hm_pcur_take(c, 4);
	uint32_t v = 0;

	if (p)
		memcpy(&v, p, 4);
	return v;
}

static inline size_t hm_pcur_left(const struct hm_pcur *c)
{
	return c->bad ? 0 : c->len - c->off;
}

/* Growable byte buffer for building records and feature sections. */
struct hm_pbuf {
	uint8_t *p;
	size_t len, cap;
};

void hm_pbuf_put(struct hm_pbuf *b, const void *src, size_t n);
void hm_pbuf_zero(struct hm_pbuf *b, size_t n);
void hm_pbuf_u16(struct hm_pbuf *b, uint16_t v);
void hm_pbuf_u32(struct hm_pbuf *b, uint32_t v);
void hm_pbuf_u64(struct hm_pbuf *b, uint64_t v);
/* perf's feature string: u32 padded length, then the string NUL-padded to NAME_ALIGN. */
void hm_pbuf_str(struct hm_pbuf *b, const char *s);
void hm_pbuf_free(struct hm_pbuf *b);

/* An EVENT_DESC or EVENT_UPDATE name waiting for its attr (pipe mode sends it first). */
struct hm_pd_desc {
	const char *name;
	const uint64_t *ids;
	uint32_t nr_ids, index;
};

struct hm_perfdata {
	const char *name;
	int fd, own_fd;
	int pipe;			/* stream layout: 16-byte header, header records inline */
	/* Memory source (file mode, and pipe-mode files): the whole file. */
	const uint8_t *mem;
	size_t mem_len;
	int mem_mapped;			/* munmap, else free */
	uint64_t dropped;		/* mapped pages before this offset were released */
	uint8_t *win;			/* a mapped file's records, read (perfdata_read.c: */
	uint64_t win_off;		/* win_get): file offset of win[0] */
	size_t win_len;
	/* Stream source (a pipe): a window of the stream. */
	uint8_t *buf;
	size_t buf_len, buf_cap;
	uint64_t buf_off;		/* stream offset of buf[0] */
	int eof;
	uint64_t pos, end;		/* next record; end of the data section */
	uint64_t data_off;		/* start of the data section (file mode) */
	int seek;			/* hm_perfdata_next_at: a small window will do */
	int index_state;		/* hm_perfdata_index: 0 not looked, 1 valid, -1 none */
	uint64_t *index, nr_index;
	int index_pays;			/* reading its records costs less than the file */
	const uint8_t *index_of;	/* by attr: 1 where its samples are listed */
	int tolerant_tail;		/* data size was 0: a cut-off last record ends the read */
	int pending;			/* rec holds a record read ahead at open, not yet returned */
	uint64_t *rec;			/* aligned copy of the current record: HM_PD_REC_MAX */
	struct hm_arena arena;
	struct hm_perf_attr **attrs;
	uint32_t nr_attrs, cap_attrs;
	int id_pos, is_pos;		/* u64 index of the sample id from the start / end */
	struct hm_map64 id2attr;
	uint64_t last_id;		/* the last id found in id2attr, and its event */
	const struct hm_perf_attr *last_attr;
	struct hm_pd_desc *descs;
	uint32_t nr_descs, cap_descs;
	struct hm_perf_features feat;
	uint32_t cap_build_ids;
	struct hm_perfdata_stats stats;
	uint64_t rec_off;		/* offset of the record in rec */
	int (*want)(const struct hm_perf_attr *a, void *arg);	/* hm_perfdata_want_samples */
	void *want_arg;
	int want_none;			/* hm_perfdata_want_no_samples */
	char warning[512];
};

/* perfdata_read.c */
/* Adds an attr from its on-disk bytes (len available) and nr_ids u64 ids (unaligned). */
int hm_pd_add_attr(struct hm_perfdata *pd, const uint8_t *p, size_t len, const void *ids,
		   uint32_t nr_ids, uint64_t off, struct hm_err *err);
/* "NAME: corrupt WHAT at byte OFF: ..." as HM_EXIT_INPUT; returns -1. */
int hm_pd_corrupt(struct hm_perfdata *pd, uint64_t off, const char *what, struct hm_err *err);
/* The file ends at byte have, before what why says was needed. */
int hm_pd_truncated(struct hm_perfdata *pd, uint64_t have, const char *why, struct hm_err *err);
/* perfdata_header.c: a mapped file's header of hsize bytes, its attrs and features; sets
 * pos and end to the data section. */
int hm_pd_read_file_header(struct hm_perfdata *pd, uint64_t hsize, struct hm_err *err);
void hm_pd_warn(struct hm_perfdata *pd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Copies an on-disk perf_event_attr of avail bytes; returns its size or 0 if it is invalid. */
uint32_t hm_pd_attr_copy(const uint8_t *p, size_t avail, struct perf_event_attr *out);

/* perfdata_records.c: 1 when the sample record rec (size bytes, not yet copied) is of an
 * event hm_perfdata_want_samples refuses: counted as skipped, never copied or decoded. */
int hm_pd_skip_unwanted(struct hm_perfdata *pd, const uint8_t *rec, uint16_t size);
/* perfdata_records.c: one decoded record from pd->rec; 1 an event for the caller, 0 handled
 * internally (or skipped), negative on error. */
int hm_pd_dispatch(struct hm_perfdata *pd, struct hm_perf_event *ev, struct hm_err *err);
/* Bytes that follow the current record outside its header.size (AUXTRACE, TRACING_DATA). */
uint64_t hm_pd_extra_bytes(const struct hm_perfdata *pd);

/* perfdata_feat.c */
void hm_pd_feat_what(int f, char *buf, size_t len);	/* "the HOSTNAME feature section" */
int hm_pd_feat_parse(struct hm_perfdata *pd, int feat, const uint8_t *p, size_t len,
		     uint64_t off, struct hm_err *err);
int hm_pd_build_id_add(struct hm_perfdata *pd, const uint8_t *p, size_t len, int old_layout);
void hm_pd_desc_add(struct hm_perfdata *pd, const char *name, const uint64_t *ids,
		    uint32_t nr_ids, uint32_t index);
void hm_pd_apply_names(struct hm_perfdata *pd);
/* Builds feature f's section body; returns 0 when feat lacks it. */
int hm_pd_feat_build(int f, const struct hm_perf_features *feat, const struct hm_perf_attr *attrs,
		     uint32_t nr_attrs, uint32_t attr_size, struct hm_pbuf *b);

/* A record read by hm_perfdata_next_at comes with the bytes after it up to this many
 * (its window, not perfdata_read.c's 1 MB: the index's records are sparse in the file);
 * perfdata_index.c counts those reads. */
#define HM_PD_SEEK_WIN (4u << 10)

/* perfdata_index.c: the writer's side of the record index */
struct hm_pd_index;
/* Lists the samples of the attrs marked in of (NULL: none). */
struct hm_pd_index *hm_pd_index_new(const struct hm_perf_attr *attrs, uint32_t nr,
				    const uint8_t *of);
void hm_pd_index_free(struct hm_pd_index *x);
/* The record rec (size bytes) is about to be appended at file offset off; attr: its
 * event's index when the caller knows it, else -1 (read from a sample's id). */
void hm_pd_index_note(struct hm_pd_index *x, uint64_t off, const void *rec, size_t size,
		      int attr);
/* Forgets the records at end and after (a write failed: the file was cut back). */
void hm_pd_index_cut(struct hm_pd_index *x, uint64_t end);
/* The section's body; 0 when there is no index to write. */
int hm_pd_index_build(const struct hm_pd_index *x, uint64_t data_off, uint64_t data_size,
		      struct hm_pbuf *b);

/* perfdata_sample.c */
int hm_pd_id_pos(uint64_t sample_type);
int hm_pd_is_pos(uint64_t sample_type);
/* Decode a whole SAMPLE record / a trailer; 0, -1 (the record is too short or malformed),
 * -2 (sample_type bits unknown here) or -3 (bytes left after the fields). */
int hm_pd_decode_sample(const struct hm_perf_attr *a, const uint8_t *rec, size_t size,
			struct hm_perf_sample *s);
size_t hm_pd_sid_size(const struct perf_event_attr *a);
void hm_pd_decode_sid(const struct perf_event_attr *a, const uint8_t *p, struct hm_perf_sample_id *sid);
/* Encoders used by the writer. */
void hm_pd_encode_sample(const struct perf_event_attr *a, const struct hm_perf_sample *s,
			 uint64_t id, struct hm_pbuf *b);
void hm_pd_encode_sid(const struct perf_event_attr *a, const struct hm_perf_sample_id *sid,
		      uint64_t id, struct hm_pbuf *b);

#endif
