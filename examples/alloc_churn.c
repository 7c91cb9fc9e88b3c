/* An allocation-heavy loop: a request and its message buffer allocated, filled and
 * freed per request, as parsers and RPC servers do. bench/alloc.sh records it with and
 * without allocation tracking to measure what the malloc/free probes cost.
 *
 * usage: alloc_churn [REQUESTS]   (default 2000000) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct request {
	unsigned long id;
	size_t len;
	char *msg;
};

/* Not inlined, so that the compiler keeps every allocation. */
__attribute__((noinline)) static unsigned long serve(unsigned long id)
{
	struct request *r = malloc(sizeof(*r));
	unsigned long v;

	if (!r)
		exit(1);
	r->id = id;
	r->len = 32 + (id & 255);
	if (!(r->msg = malloc(r->len)))
		exit(1);
	memset(r->msg, (int)(id & 127), r->len);
	v = (unsigned char)r->msg[r->len / 2] + r->id;
	free(r->msg);
	free(r);
	return v;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 2000000UL;
	unsigned long sum = 0;

	for (unsigned long i = 0; i < n; i++)
		sum += serve(i);
	printf("%lu\n", sum);
	return 0;
}
