/* Modelled on XFS's struct xfs_imap: a small struct embedded in a hot per-object struct.
 * -DVARIANT adds a 4-byte field to the small struct, which shifts every member after the
 * embedding point, grows the outer struct and moves a hot counter onto the line that the
 * writer thread dirties. `hitmap diff` shows all of it. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct imap {
	long long im_blkno;
	int im_len;
	unsigned short im_boffset;
#ifdef VARIANT
	unsigned int im_pad;
#endif
};

struct holder {
	struct imap m;
	long long ino;
	char name[32];
	unsigned long lookups;		/* hot: read by the reader thread */
	unsigned long writes;		/* hot: written by the writer thread */
};

struct holder holders[4];
static unsigned long iterations = 100000000UL;

static void *reader(void *arg)
{
	volatile struct holder *h = &holders[1];
	unsigned long sum = 0;

	(void)arg;
	for (unsigned long i = 0; i < iterations; i++)
		sum += h->lookups + h->m.im_boffset;
	return (void *)sum;
}

static void *writer(void *arg)
{
	volatile struct holder *h = &holders[1];

	(void)arg;
	for (unsigned long i = 0; i < iterations; i++)
		h->writes++;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t r, w;

	if (argc > 1)
		iterations = strtoul(argv[1], NULL, 0);
	pthread_create(&r, NULL, reader, NULL);
	pthread_create(&w, NULL, writer, NULL);
	pthread_join(r, NULL);
	pthread_join(w, NULL);
	printf("writes=%lu size=%zu\n", holders[1].writes, sizeof(struct holder));
	return 0;
}
