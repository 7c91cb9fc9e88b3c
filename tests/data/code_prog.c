/* Test program for tests/unit/test_code.c, built at test time with gcc -O2 -g. The
 * LINE:name markers are found by grep, so the test names lines without hard-coding them. */
#include <stdio.h>

struct counter {
	long hits;
	long misses;
};

struct counter counters[64];

static inline long scale(long v, int k)
{
	return v * k + (v >> 3);	/* LINE:scale */
}

__attribute__((noinline)) void hm_store(struct counter *c, long v, int k)
{
	c->hits += scale(v, k);		/* LINE:call */
	c->misses = v;			/* LINE:store */
}

int main(int argc, char **argv)
{
	(void)argv;
	for (int i = 0; i < argc * 1000; i++)
		hm_store(&counters[i & 63], i, argc);
	printf("%ld\n", counters[1].hits);
	return 0;
}
