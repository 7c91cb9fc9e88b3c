/* Skid pattern "plain": a load followed by arithmetic (`mov net_stats(%rip),%rax` then
 * `add %rax,%rdx`): the sample lands on the add, and the access is the load before it.
 * The reader sums one counter while the writer bumps its neighbour on the same line.
 *
 * usage: skid_plain [ITERATIONS]   (default 5000000 per thread) */
#define _GNU_SOURCE
#include "skid.h"

struct net_stats {
	unsigned long rx_packets;	/* read by the reader */
	unsigned long tx_packets;	/* written by the writer */
};

struct net_stats net_stats;

static void *reader(void *arg)
{
	unsigned long sum = 0;

	(void)arg;
	skid_begin(0);
	for (unsigned long i = 0; i < iterations; i++) {
		line_stolen(&net_stats);
		sum += READ_ONCE(net_stats.rx_packets);
	}
	return (void *)sum;
}

static void *writer(void *arg)
{
	(void)arg;
	skid_begin(1);
	for (unsigned long i = 0; i < iterations; i++) {
		line_stolen(&net_stats);
		WRITE_ONCE(net_stats.tx_packets, i);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	skid_run(argc, argv, reader, writer);
	printf("net_stats=%p rx=%lu tx=%lu\n", (void *)&net_stats, net_stats.rx_packets,
	       net_stats.tx_packets);
	return 0;
}
