/* Skid pattern "store then load": a producer publishes its head, on the line the
 * consumer writes its tail to (`mov %rax,queue(%rip)`), then reads the queue's
 * capacity from a read-mostly global on a line of its own (`mov queue_cap(%rip),%rdx`).
 * The store waits for the line as a load would (measured, docs/decode.md); the sample
 * lands on the load. False sharing: head and tail written by different threads.
 *
 * usage: skid_store_load [ITERATIONS]   (default 5000000 per thread) */
#define _GNU_SOURCE
#include "skid.h"

struct queue {
	unsigned long head;		/* the producer's */
	unsigned long tail;		/* the consumer's */
};

struct queue queue;
unsigned long queue_cap __attribute__((aligned(64))) = 1024;	/* read-mostly */

static void *producer(void *arg)
{
	unsigned long full = 0;

	(void)arg;
	skid_begin(0);
	for (unsigned long i = 0; i < iterations; i++) {
		line_stolen(&queue);
		WRITE_ONCE(queue.head, i);
		full += i >= READ_ONCE(queue_cap);
	}
	return (void *)full;
}

static void *consumer(void *arg)
{
	(void)arg;
	skid_begin(1);
	for (unsigned long i = 0; i < iterations; i++) {
		line_stolen(&queue);
		WRITE_ONCE(queue.tail, i);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	skid_run(argc, argv, producer, consumer);
	printf("queue=%p head=%lu tail=%lu\n", (void *)&queue, queue.head, queue.tail);
	return 0;
}
