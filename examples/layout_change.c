/* Struct changes a reviewer should see, one per type; build twice, with and without
 * -DVARIANT, and `hitmap diff` the two:
 *   struct reorder  members reordered (b first)
 *   struct flags    a bitfield widened and one added
 *   struct top      embeds struct mid embeds struct small, which grows (transitive)
 *   hot_counter     a global that gains a neighbour on its cache line */
#include <stdio.h>

struct reorder {
#ifdef VARIANT
	long b;
	int a;
	int c;
#else
	int a;
	long b;
	int c;
#endif
};

struct flags {
	unsigned int ready : 1;
	unsigned int busy : 1;
#ifdef VARIANT
	unsigned int mode : 5;
	unsigned int dirty : 1;
#else
	unsigned int mode : 3;
#endif
	unsigned short owner;
};

struct small {
	int x;
#ifdef VARIANT
	int y;
#endif
};

struct mid {
	struct small s;
	long v;
};

struct top {
	struct mid m[2];
	int nr;
};

/* Built with -fno-toplevel-reorder so these keep their order in .data. */
__attribute__((aligned(64))) long hot_counter = 1;
#ifdef VARIANT
long writer_flag = 1;
#endif
__attribute__((aligned(64))) long next_line = 1;

struct reorder r;
struct flags fl;
struct top t;

int main(void)
{
	hot_counter++;
#ifdef VARIANT
	writer_flag++;
#endif
	printf("%ld %ld %d %d %d\n", hot_counter, next_line, r.a, fl.mode, t.nr);
	return 0;
}
