/* perf_event_attr for the collectors that work without a PMU: timer samples with the
 * registers an effective address needs, and debug-register watchpoints. */
#ifndef HM_EVENTS_H
#define HM_EVENTS_H

#include <linux/perf_event.h>
#include <stdint.h>

#include "core/err.h"

/* AX, BX, CX, DX, SI, DI, BP, SP, IP (bits 0-8) and R8-R15 (bits 16-23): every register
 * an x86-64 memory operand can use. Segment registers are selectors, not bases, so
 * fs/gs-relative operands are resolved by TLS offset at report time. */
#define HM_X86_EA_REGS 0xff01ffULL

/* Watchpoint access kinds (linux/hw_breakpoint.h values). */
enum { HM_BP_R = 1, HM_BP_W = 2, HM_BP_RW = 3 };

struct hm_watch {
	uint64_t addr;
	uint32_t len;		/* 1, 2, 4 or 8, aligned to itself */
	uint32_t type;		/* HM_BP_W or HM_BP_RW; x86 cannot trap reads alone */
	const char *label;	/* what the user asked for: "stats.ops", "0x601040/8" */
};

/* cpu-clock at hz samples per second, with user registers (and kernel registers with
 * kernel set). The event starts disabled. */
void hm_timer_attr(struct perf_event_attr *a, unsigned hz, int kernel);
/* A watchpoint that samples every access (period 1); starts disabled. */
void hm_watch_attr(struct perf_event_attr *a, const struct hm_watch *w, int kernel);
/* 0 if w can be a hardware watchpoint, else a reason ("length must be 1, 2, 4 or 8"). */
const char *hm_watch_check(const struct hm_watch *w);

/* Stores the self-test makes to its watched word. */
#define HM_WATCH_SELFTEST_STORES 16

/* Tries at most: a kernel that drops a trap now and then (this project's VM lost 15 of
 * 16 once, in an ASan suite, where every other run counted 16) is told from one that
 * never delivers them or always loses some. */
#define HM_WATCH_SELFTEST_TRIES 3

/* Arms a watchpoint on a variable of our own, stores to it HM_WATCH_SELFTEST_STORES
 * times, and checks that exactly that many traps were counted, trying again up to
 * HM_WATCH_SELFTEST_TRIES times. 0 when a try counted them all, with *lost the tries
 * before it that did not (0: the first was exact; the caller says it otherwise);
 * else HM_EXIT_ENV in err with the reason (the event cannot be opened, the count cannot
 * be read, no trap arrived, or traps were lost in every try) and the alternative. */
int hm_watch_selftest(struct hm_err *err, unsigned *lost);

#endif
