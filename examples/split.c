/* A packed record whose 8-byte timestamp straddles a 64-byte line: every access touches
 * two lines (a split load/store). usage: split [ITERATIONS] */
#include <stdio.h>
#include <stdlib.h>

struct __attribute__((packed)) record {
	char tag[60];
	unsigned long stamp;	/* bytes 60..67: crosses the line at 64 */
	unsigned int seq;
};

struct record log_records[4] __attribute__((aligned(64)));
static unsigned long iterations = 100000000UL;

int main(int argc, char **argv)
{
	volatile struct record *r = &log_records[0];

	if (argc > 1)
		iterations = strtoul(argv[1], NULL, 0);
	for (unsigned long i = 0; i < iterations; i++)
		r->stamp += i;
	printf("%lu\n", (unsigned long)log_records[0].stamp);
	return 0;
}
