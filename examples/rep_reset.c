/* A request loop the way servers write it: each thread owns a calloc'd session_t, counts
 * its requests through a typed pointer, and clears the request part of the session before
 * each request with memset, which gcc -O2 turns into one `rep stosq` over path, len and
 * flags. Sampled by the timer inside the rep stos, the access goes on over the rest of the
 * request (rcx quadwords left): the report credits each member it covers, named from the
 * session_t that the counting stores typed, not as an unknown address in [heap].
 *
 * usage: rep_reset [ITERATIONS]   (default 3000000) */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pin.h"

struct request {
	char path[1000];
	long len;
	int flags;
};

typedef struct {
	unsigned long requests;
	unsigned long bytes;
	struct request req;
} session_t;

static unsigned long iterations = 3000000UL;

static __attribute__((noinline)) void clear_request(session_t *s)
{
	memset(&s->req, 0, sizeof(s->req));
}

static __attribute__((noinline)) void serve(session_t *s, unsigned long i)
{
	clear_request(s);
	s->req.path[i % 64] = '/';
	s->req.len = (long)(i % 1000);
	s->requests++;
	s->bytes += (unsigned long)s->req.len;
}

static void *work(void *p)
{
	for (unsigned long i = 0; i < iterations; i++)
		serve(p, i);
	return NULL;
}

int main(int argc, char **argv)
{
	session_t *s;
	pthread_t t[2];

	if (argc > 1)
		iterations = strtoul(argv[1], NULL, 0);
	s = calloc(2, sizeof(*s));
	if (!s)
		return 1;
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, work, &s[i]);
	for (int i = 0; i < 2; i++)
		pin(t[i], i);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("%lu %lu requests\n", s[0].requests, s[1].requests);
	free(s);
	return 0;
}
