/* One hot kind of object per run, to check that every sampled address is named right:
 *   objects global N   a global array of structs:       stock[i].count
 *   objects heap N     a malloc'd array through a param: order.qty
 *   objects stack N    a struct on the stack:           totals.sum
 *   objects tls N      a __thread counter:              tls_hits
 * The loops keep their data in memory (volatile) so every iteration loads and stores. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct stock_item {
	long sku;
	long count;
	double price;
};

struct order {
	int id;
	int qty;
	long total;
};

struct totals {
	long sum;
	long max;
	int n;
};

struct stock_item stock[64];
__thread long tls_hits;

__attribute__((noinline)) void bump_stock(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		((volatile struct stock_item *)stock)[i & 63].count += 1;
}

__attribute__((noinline)) void fill_orders(volatile struct order *orders, int nr, unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		orders[i % nr].qty += 2;
}

__attribute__((noinline)) long sum_stack(unsigned long n)
{
	volatile struct totals t = {0, 0, 0};

	for (unsigned long i = 0; i < n; i++)
		t.sum += (long)i;
	return t.sum + t.max + t.n;
}

__attribute__((noinline)) void count_tls(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		tls_hits += 1;
		__asm__ volatile("" : : : "memory");	/* reload and store every time */
	}
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 2 ? strtoul(argv[2], NULL, 0) : 100000000UL;
	const char *mode = argc > 1 ? argv[1] : "global";

	if (!strcmp(mode, "global")) {
		bump_stock(n);
	} else if (!strcmp(mode, "heap")) {
		struct order *o = calloc(32, sizeof(*o));

		fill_orders(o, 32, n);
		printf("%d\n", o[3].qty);
		free(o);
	} else if (!strcmp(mode, "stack")) {
		printf("%ld\n", sum_stack(n));
	} else if (!strcmp(mode, "tls")) {
		count_tls(n);
	} else {
		fprintf(stderr, "usage: objects global|heap|stack|tls [N]\n");
		return 1;
	}
	printf("%ld %ld\n", stock[1].count, tls_hits);
	return 0;
}
