/* An allocation-heavy loop: a message buffer allocated, filled and freed per request,
 * as parsers and RPC servers do. bench/alloc.sh records it with and without
 * allocation tracking to measure what the malloc/free probes cost.
 *
 * usage: alloc_churn [REQUESTS]   (default 2000000) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 2000000UL;
	unsigned long sum = 0;

	for (unsigned long i = 0; i < n; i++) {
		size_t len = 32 + (i & 255);
		char *msg = malloc(len);

		if (!msg)
			return 1;
		memset(msg, (int)(i & 127), len);
		sum += (unsigned char)msg[len / 2];
		free(msg);
	}
	printf("%lu\n", sum);
	return 0;
}
