/* Skid pattern "load then store", the case of issue 15: an RCU-like reader loads the
 * global grace-period counter and stores it in its thread-local nesting word
 * (`mov rcu_state(%rip),%rax` then `mov %rax,%fs:...`), while the updater bumps its own
 * callback count on the same cache line: false sharing between gp_ctr's reader and
 * nr_callbacks' writer. The load waits for the line; the sample lands on the store.
 * -DPADDED (skid_load_store_padded) puts each field on a line of its own: the fix.
 * usage: skid_load_store [ITERATIONS]   (default 5000000 per thread) */
#define _GNU_SOURCE
#include "skid.h"

struct rcu_state {
	unsigned long gp_ctr SKID_ALIGNED;	/* read by every reader */
	unsigned long nr_callbacks SKID_ALIGNED; /* the updater's, written all the time */
};

struct rcu_state rcu_state;
static __thread unsigned long rcu_reader_ctr;

/* Out of line, as a library's read-side API is: the body is the load and the store. */
__attribute__((noinline)) void rcu_read_lock(void)
{
	WRITE_ONCE(rcu_reader_ctr, READ_ONCE(rcu_state.gp_ctr));
}

__attribute__((noinline)) void rcu_read_unlock(void)
{
	WRITE_ONCE(rcu_reader_ctr, 0);
}

static void *reader(void *arg)
{
	(void)arg;
	skid_begin(0);
	for (unsigned long i = 0; i < iterations; i++) {
		line_stolen(&rcu_state.gp_ctr);
		rcu_read_lock();
		rcu_read_unlock();
	}
	return NULL;
}

static void *updater(void *arg)
{
	(void)arg;
	skid_begin(1);
	for (unsigned long i = 0; i < iterations; i++) {
		line_stolen(&rcu_state.nr_callbacks);
		WRITE_ONCE(rcu_state.nr_callbacks, i);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	skid_run(argc, argv, reader, updater);
	printf("rcu_state=%p gp_ctr=%lu nr_callbacks=%lu\n", (void *)&rcu_state,
	       rcu_state.gp_ctr, rcu_state.nr_callbacks);
	return 0;
}
