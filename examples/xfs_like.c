/* Modelled on the XFS struct xfs_imap regression: a small struct embedded at the start of
 * a hot per-inode struct gains a 4-byte field. Everything after it shifts by 8 bytes
 * (alignment), and a counter that one thread only reads slides onto the cache line that
 * another thread writes. Build A has no sharing; build B (-DVARIANT) has false sharing
 * between inode_like.i_lookups (read) and inode_like.i_writes (written).
 *
 *   A: i_lookups at 56 (line 0), i_writes at 64 (line 1)
 *   B: i_lookups at 64 (line 1), i_writes at 72 (line 1)
 *
 * usage: xfs_like [ITERATIONS]   (default 200000000) */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "pin.h"

struct imap_like {
	long long im_blkno;
	int im_len;
	unsigned short im_boffset;
#ifdef VARIANT
	unsigned int im_gen;		/* the field the variant adds */
#endif
};

struct inode_like {
	struct imap_like i_imap;
	char i_name[40];
	unsigned long i_lookups;	/* hot: read by the lookup thread */
	unsigned long i_writes;		/* hot: written by the writer thread */
	unsigned long i_flags;
} __attribute__((aligned(64)));

struct inode_like inode;
static unsigned long iterations = 200000000UL;

static void *lookup(void *arg)
{
	volatile struct inode_like *ip = &inode;
	unsigned long sum = 0;

	(void)arg;
	/* i_lookups last: a timer sample lands just after the load that stalls, and an
	 * arithmetic instruction there lets the decoder name that load. */
	for (unsigned long i = 0; i < iterations; i++) {
		sum += ip->i_imap.im_boffset;
		sum += ip->i_lookups;
	}
	return (void *)sum;
}

static void *writer(void *arg)
{
	volatile struct inode_like *ip = &inode;

	(void)arg;
	for (unsigned long i = 0; i < iterations; i++)
		ip->i_writes++;
	return NULL;
}


int main(int argc, char **argv)
{
	pthread_t r, w;

	if (argc > 1)
		iterations = strtoul(argv[1], NULL, 0);
	pthread_create(&r, NULL, lookup, NULL);
	pthread_create(&w, NULL, writer, NULL);
	pin(r, 0);
	pin(w, 1);
	pthread_join(r, NULL);
	pthread_join(w, NULL);
	printf("writes=%lu size=%zu\n", inode.i_writes, sizeof(struct inode_like));
	return 0;
}
