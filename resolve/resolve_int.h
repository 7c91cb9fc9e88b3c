/* resolve.c's resolver, shared with resolve_addr.c (which instruction a sample is
 * charged to and the address it touched). Not for use outside analyzer/resolve*.c. */
#ifndef HM_RESOLVE_INT_H
#define HM_RESOLVE_INT_H

#include "resolve/resolve.h"
#include "core/hash.h"
#include "symbolize/code.h"
#include "symbolize/data.h"
#include "symbolize/decode.h"

#define MAX_FUNC_BYTES 65536	/* watch: the function prefix decoded up to the trap */

struct hm_resolver {
	struct hm_code *code;
	struct hm_decoder *dec;
	struct hm_data *data;
	struct hm_resolve_stats st;
	uint8_t *fbuf;
	struct hm_arena names;		/* "type.member" field names, interned */
	struct hm_hash by_name;
	struct hm_map64 tfields;	/* type_field's results by (field, type) */
	struct hm_hash noaddr;		/* function -> struct hm_func_count */
	struct hm_map64 noaddr_ptr;	/* the same, by the name's pointer (count_noaddr) */
	struct hm_map64 prim_ptr;	/* hm_primitive_func's answer by the name's pointer */
	struct hm_hash unreadable;	/* modules that could not be opened */
	const char *osrelease;		/* the recording's kernel release, or NULL */
	const char *kernel_btf;		/* the option, or NULL */
	uint8_t *kslab;			/* the recording's slab facts (core/kslab.h), or NULL */
	const char *input;		/* the recording's name, for messages */
	size_t kslab_len;
	int kernel_set;			/* hm_data_set_kernel done */
	uint64_t kdisk_bias;		/* KASLR when kernel code is the vmlinux's bytes */
	struct hm_data_obj obj;		/* what named the last sample's data (parts) */
	struct dent **dslots;		/* decode cache, open addressing */
	size_t dcap, dlen;
	struct smemo *smemo;		/* sites whose whole answer repeats (resolve.c) */
	uint64_t smemo_gen;		/* its entries of another generation are empty */
	uint32_t *smemo_single;		/* the last sample's entry's `single`, or NULL */
	struct cmemo *cmemo;		/* code sites by (pid, ip), of smemo_gen (resolve.c) */
	struct mmemo *mmemo;		/* is_member's answers by (field, type) (resolve.c) */
};

/* Decoded instructions per (address space, ip): a sample's instruction and the one
 * before it depend on the code bytes alone, and a recording hits few distinct ips, so
 * each is decoded once (capstone was 89% of the time per sample). Only what the code
 * decides is kept: "no code here" can change as a pipe's MMAP records arrive. */
struct dent {
	uint64_t ip;
	uint32_t space;			/* pid; UINT32_MAX for the kernel */
	int8_t at, before;		/* 0 not tried, 1 decoded, -1 not an instruction */
	int8_t target;			/* a direct jump lands on ip: 0 not tried, 1 yes, -1 no */
	int8_t spin;			/* a pause loop around ip: 0 not tried, 1 yes, -1 no */
	/* timer_pick's answer, kept once the instruction at ip decoded (the choice is
	 * then a function of ip alone: resolve/skid.h): 0 not kept, else rule + 1 */
	int8_t pick;
	uint8_t pick_over, pick_jump;
	struct hm_insn in_at, in_before;
};

/* resolve.c: a variable's member path as the report names fields, by its struct type
 * ("stats[1].ops" -> "worker_stats.ops"); interned. */
const char *type_field(struct hm_resolver *r, const struct hm_access *a);

/* resolve_wide.c: a's accesses, one per member it covers of obj (what named it), into
 * out[0..n); 1 when it is not split (out untouched). */
size_t resolve_split(struct hm_resolver *r, const struct hm_access *a,
		     const struct hm_data_obj *obj, struct hm_access *out, size_t max);

/* resolve_addr.c */
const struct hm_memop *data_operand(const struct hm_insn *in);
void apply_operand(struct hm_access *a, const struct hm_insn *in, const struct hm_memop *op);
/* The instruction at s's ip, decoded once per (space, ip); 0 on success. */
int decode_at(struct hm_resolver *r, const struct hm_sample *s, struct hm_insn *in);
/* Timer: the instruction the sample is charged to (*before: the one before ip) and its
 * exact address when the registers give it; NULL when it touched no memory. */
const struct hm_memop *timer_addr(struct hm_resolver *r, const struct hm_perf_event *ev,
				  struct hm_access *a, struct hm_insn *in, int *before);
/* Watch: the accessing instruction (the one ending at the trap's ip) and its address. */
const struct hm_memop *watch_site(struct hm_resolver *r, const struct hm_perf_event *ev,
				  struct hm_access *a, struct hm_insn *in);
#endif
