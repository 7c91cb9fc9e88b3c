/* Skid pattern "load then load": a consumer loads the ring's head, on the line the
 * producer writes (`mov ring(%rip),%rax`), then the ring's size from a read-mostly
 * global on a line of its own (`mov ring_size(%rip),%rdx`). The first load waits for
 * the line; the sample lands on the second. False sharing: head is read by the
 * consumer, tail written by the producer.
 *
 * usage: skid_load_load [ITERATIONS]   (default 5000000 per thread) */
#define _GNU_SOURCE
#include "skid.h"

struct ring {
	unsigned long head;		/* read by the consumer */
	unsigned long tail;		/* the producer's, written all the time */
};

struct ring ring;
unsigned long ring_size __attribute__((aligned(64))) = 4096;	/* read-mostly */

static void *consumer(void *arg)
{
	unsigned long slots = 0;

	(void)arg;
	skid_begin(0);
	for (unsigned long i = 0; i < iterations; i++) {
		line_stolen(&ring);
		slots += READ_ONCE(ring.head) & (READ_ONCE(ring_size) - 1);
	}
	return (void *)slots;
}

static void *producer(void *arg)
{
	(void)arg;
	skid_begin(1);
	for (unsigned long i = 0; i < iterations; i++) {
		line_stolen(&ring);
		WRITE_ONCE(ring.tail, i);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	skid_run(argc, argv, consumer, producer);
	printf("ring=%p head=%lu tail=%lu\n", (void *)&ring, ring.head, ring.tail);
	return 0;
}
