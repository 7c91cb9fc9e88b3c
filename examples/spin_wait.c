/* A contended spinlock, written the way real code writes one: a test-and-test-and-set
 * lock in a typedef'd struct beside the data it guards, in a calloc'd block. Two threads
 * take it in turn; the waiter spins with `pause` on the lock word until the holder's
 * release store. Timer samples land on the waiter's loads (it spins for as long as the
 * holder works) and seldom on the holder's two stores, so without knowing that the loads
 * are a spin-wait the line reads as "read only". The answer: the lock word is truly
 * shared, contended, and no layout fixes it (tests/e2e/spin.sh).
 *
 * usage: spin_wait [ITERATIONS]   (default 1000000) */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "pin.h"

typedef struct {
	atomic_int locked;
	int owner;
} spinlock_t;

typedef struct {
	spinlock_t lock;
	long value;
	long work[6];
} counter_t;

static unsigned long iterations = 1000000UL;

static void spin_lock(spinlock_t *l, int self)
{
	while (atomic_exchange_explicit(&l->locked, 1, memory_order_acquire))
		while (atomic_load_explicit(&l->locked, memory_order_relaxed))
			__builtin_ia32_pause();
	l->owner = self;
}

static void spin_unlock(spinlock_t *l)
{
	atomic_store_explicit(&l->locked, 0, memory_order_release);
}

struct arg {
	counter_t *c;
	int self;
};

static void *work(void *p)
{
	struct arg *a = p;
	counter_t *c = a->c;

	for (unsigned long i = 0; i < iterations; i++) {
		spin_lock(&c->lock, a->self);
		for (int r = 0; r < 40; r++)	/* a critical section worth waiting for */
			for (int k = 0; k < 6; k++)
				c->work[k] += (long)(i ^ r) * k;
		c->value++;
		spin_unlock(&c->lock);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	counter_t *c = calloc(1, sizeof(*c));
	pthread_t t[2];
	struct arg args[2];

	if (argc > 1)
		iterations = strtoul(argv[1], NULL, 0);
	if (!c)
		return 1;
	for (int i = 0; i < 2; i++) {
		args[i] = (struct arg){c, i + 1};
		pthread_create(&t[i], NULL, work, &args[i]);
		pin(t[i], i);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("value %ld\n", c->value);
	free(c);
	return 0;
}
