/* The one sample type: every collector's output, every analyzer's input (DESIGN.md). */
#ifndef HM_SAMPLE_H
#define HM_SAMPLE_H

#include <stdint.h>

enum hm_op { HM_OP_UNKNOWN = 0, HM_OP_LOAD = 1, HM_OP_STORE = 2 };
enum hm_source { HM_SRC_PMU = 0, HM_SRC_TIMER = 1, HM_SRC_WATCH = 2 };

struct hm_sample {
	uint64_t time, ip, addr;	/* addr: data virtual address, 0 if unknown */
	uint64_t phys;			/* physical address, 0 if not sampled */
	uint32_t pid, tid, cpu;
	uint32_t size;			/* bytes accessed, 0 if unknown */
	uint32_t weight;		/* latency in cycles or period */
	uint64_t data_src;		/* union perf_mem_data_src, raw */
	uint8_t op;			/* enum hm_op */
	uint8_t source;			/* enum hm_source */
	uint8_t kernel;			/* ip in kernel space */
};

#endif
