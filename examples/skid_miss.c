/* Where timer samples land after an access that waits for memory, on this VM where a
 * contended line costs nothing (docs/decode.md, Skid): each pattern reads or writes a
 * random entry of a 256 MiB table (a cache miss every time), then touches a hot
 * variable, in a function of its own so that its samples stay apart:
 *   load_store   v = table[j]; then a thread-local store    (issue 15's shape)
 *   load_load    v = table[j]; then a load of a hot global (conf.limit)
 *   store_load   table[j] = i; then a load of a hot global
 *   load_alu     v = table[j]; then arithmetic              (the plain case)
 *   store_alu    table[j] = i; then arithmetic
 * Single-threaded: the misses come from the table's size, not from another CPU.
 *
 * usage: skid_miss [ITERATIONS]   (default 20000000 per pattern) */
#include <stdio.h>
#include <stdlib.h>

#define READ_ONCE(x) (*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))
#define ENTRIES (1ul << 25)

struct table_conf {
	unsigned long limit;		/* hot: read by load_load and store_load */
	unsigned long resizes;
};

static unsigned long table[ENTRIES];
static __thread unsigned long last_seen;
struct table_conf conf = {.limit = ENTRIES};

/* A random entry: the multiplicative hash spreads i over the table. */
static inline unsigned long *entry(unsigned long i)
{
	return &table[(i * 0x9e3779b97f4a7c15ul) >> 39];
}

/* Holds p in a register before and after the access, as code that uses the entry again
 * would: otherwise gcc may load into the pointer's own register (mov (%rax),%rax), and
 * no sampled register holds the address any more, or put a lea between the two accesses.
 */
#define KEEP(p) __asm__ volatile("" : "+r"(p))

__attribute__((noinline)) static unsigned long load_store(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		unsigned long *e = entry(i);

		KEEP(e);
		WRITE_ONCE(last_seen, READ_ONCE(*e));
		KEEP(e);
	}
	return last_seen;
}

__attribute__((noinline)) static unsigned long load_load(unsigned long n)
{
	unsigned long sum = 0;

	for (unsigned long i = 0; i < n; i++) {
		unsigned long *e = entry(i);

		KEEP(e);
		sum += READ_ONCE(*e) < READ_ONCE(conf.limit);
		KEEP(e);
	}
	return sum;
}

__attribute__((noinline)) static unsigned long store_load(unsigned long n)
{
	unsigned long sum = 0;

	for (unsigned long i = 0; i < n; i++) {
		unsigned long *e = entry(i);

		KEEP(e);
		WRITE_ONCE(*e, i);
		sum += READ_ONCE(conf.limit);
		KEEP(e);
	}
	return sum;
}

__attribute__((noinline)) static unsigned long load_alu(unsigned long n)
{
	unsigned long sum = 0;

	for (unsigned long i = 0; i < n; i++) {
		unsigned long *e = entry(i);

		KEEP(e);
		sum += READ_ONCE(*e);
		KEEP(e);
	}
	return sum;
}

__attribute__((noinline)) static unsigned long store_alu(unsigned long n)
{
	unsigned long sum = 0;

	for (unsigned long i = 0; i < n; i++) {
		unsigned long *e = entry(i);

		KEEP(e);
		WRITE_ONCE(*e, i);
		sum += i;
		KEEP(e);
	}
	return sum;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 20000000ul;

	for (unsigned long i = 0; i < ENTRIES; i++)
		table[i] = i;
	printf("%lu %lu %lu %lu %lu\n", load_store(n), load_load(n), store_load(n), load_alu(n),
	       store_alu(n));
	return 0;
}
