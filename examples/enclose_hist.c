/* A histogram the way Phoenix's is written: each thread gets a calloc'd thread_arg_t with
 * its own counters, takes a plain `int *` to one of its arrays, and counts through that
 * pointer. The counting store is typed `int` by its register; its address lies inside the
 * thread_arg_t that next_chunk's loads (through a thread_arg_t *) type with base and size,
 * so a person, and the report, names it thread_arg_t.blue[5]. Pixel values are 0..15
 * (a dark image), so only the first 16 counters of each colour are hot; each thread has
 * its own, so nothing is shared but the image, which is only read.
 *
 * usage: enclose_hist [ITERATIONS]   (default 30000000 pixels per thread) */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "pin.h"

#define CHUNK 64	/* pixels handed out at a time (3 bytes each) */
#define IMAGE (3 * 4096)	/* bytes of the image, walked round and round */

typedef struct {
	long pos, len;			/* bytes handed out, and to hand out */
	const unsigned char *data;	/* RGB, 3 bytes per pixel, IMAGE bytes */
	int red[256];
	int green[256];
	int blue[256];
	long done;
} thread_arg_t;

/* The next chunk of this thread's part of the image, or NULL at its end. */
static __attribute__((noinline)) const unsigned char *next_chunk(thread_arg_t *arg, long *n)
{
	const unsigned char *c;

	if (arg->pos >= arg->len)
		return NULL;
	c = arg->data + arg->pos % IMAGE;	/* IMAGE is a multiple of 3 * CHUNK */
	*n = arg->len - arg->pos < 3 * CHUNK ? arg->len - arg->pos : 3 * CHUNK;
	arg->pos += *n;
	return c;
}

static void *calc_hist(void *p)
{
	thread_arg_t *arg = p;
	int *red = arg->red, *green = arg->green, *blue = arg->blue;
	const unsigned char *c;
	long n;

	while ((c = next_chunk(arg, &n))) {
		for (long i = 0; i + 2 < n; i += 3) {
			blue[c[i]]++;
			green[c[i + 1]]++;
			red[c[i + 2]]++;
		}
	}
	arg->done = 1;
	return NULL;
}

int main(int argc, char **argv)
{
	long pixels = argc > 1 ? strtol(argv[1], NULL, 0) : 30000000L;
	unsigned char *image = malloc(IMAGE);
	thread_arg_t *args = calloc(2, sizeof(*args));
	pthread_t t[2];

	if (!image || !args || pixels < 1)
		return 1;
	for (int i = 0; i < IMAGE; i++)
		image[i] = (unsigned char)((i * 7 + i / 3) & 15);
	for (int i = 0; i < 2; i++) {
		args[i].data = image;
		args[i].len = 3 * pixels;
		pthread_create(&t[i], NULL, calc_hist, &args[i]);
	}
	for (int i = 0; i < 2; i++)
		pin(t[i], i);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("blue[5] %d %d\n", args[0].blue[5], args[1].blue[5]);
	free(args);
	free(image);
	return 0;
}
