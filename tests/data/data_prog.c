/* Test program for tests/unit/test_data.c, built at test time with gcc -O2 -g. Each
 * noinline function is hot on one kind of object; the test finds the accesses by
 * decoding these functions and checks the names given to them. */
#include <stdio.h>
#include <stdlib.h>

struct item {
	long key;
	long count;
	double weight;
	int flags;
};

struct slot {
	int id;
	struct item it;
	long hits;
};

struct holder {
	long n;
	struct item *cur;
};

struct pair {
	int tag;
	struct item *left, *right;
};

struct frame_buf {
	long a;
	long b[4];
	int tag;
};

struct item items[16];		/* global array of structs (.bss) */
static struct slot table[8];	/* static array of structs with a nested struct */
__thread long tls_counter;
__thread struct item tls_item;

/* A malloc'd array of structs through a pointer parameter: the loop steps the
 * pointer, so the parameter's own register location ends before the accesses. */
__attribute__((noinline)) void heap_update(struct item *arr, int n)
{
	for (int i = 0; i < n; i++)
		arr[i].count += arr[i].key;
}

__attribute__((noinline)) void heap_one(struct item *it)
{
	it->weight = 2.5;
	it->flags |= 4;
}

/* The access goes through a scratch register copied from the parameter. */
__attribute__((noinline)) void heap_moved(struct item *it)
{
	__asm__ volatile("mov %0, %%rax\n\tmovq $7, 8(%%rax)" : : "r"(it) : "rax", "memory");
}

/* h->cur->count: the base register is loaded from a typed member. */
__attribute__((noinline)) void heap_chain(struct holder *h)
{
	h->cur->count++;
}

/* Inlined twice: each copy's parameter lives in the register the access uses. */
static inline void bump(struct item *x, long v)
{
	x->count += v;
	x->flags ^= (int)v;
}

__attribute__((noinline)) void heap_inlined(struct pair *p, long v)
{
	bump(p->left, v);
	bump(p->right, v + 1);
}

/* The pointer lives in the frame (as at -O0, or spilled) and is reloaded. */
__attribute__((noinline)) void heap_spilled(struct item *it)
{
	struct item *volatile p = it;

	p->flags = 1;
}

__attribute__((noinline)) void global_update(int i)
{
	static long calls;

	calls++;
	items[i & 15].count++;
	table[i & 7].it.weight += 1.0;
	table[i & 7].hits++;
}

__attribute__((noinline)) void global_first(void)
{
	items[2].weight = 0.5;
}

__attribute__((noinline)) long stack_work(int n)
{
	struct frame_buf fb;

	fb.a = n;
	for (int i = 0; i < 4; i++)
		fb.b[i] = n + i;
	fb.tag = n;
	__asm__ volatile("" : : "r"(&fb) : "memory");	/* fb lives in memory */
	return fb.b[2] + fb.a + fb.tag;
}

__attribute__((noinline)) void tls_update(void)
{
	tls_counter++;
	tls_item.count += 3;
}

/* Loops the backward walk must see through without DWARF, in the shape of the kernel's
 * filemap_read (tests/unit/test_btftype.c): the parameter kept in r13 across a call at the
 * top of a loop; r13 reused as the count of an inner loop, entered by a jump, while r15
 * holds the pointer; r13 put back before the jump back to the top. Written by hand: which
 * registers a compiler picks is nothing a test can rely on. Never called. */
__attribute__((naked, noinline)) long loop_shapes(struct item *it, long n)
{
	__asm__("push %r15\n\t"
		"push %r13\n\t"
		"push %rbx\n\t"
		"mov %rdi, %r13\n\t"
		"mov %rsi, %rbx\n"
		"1:\n\t"
		"call heap_one\n\t"
		"mov 0x18(%r13), %eax\n\t"	/* it->flags: at the target of the jump back */
		"mov %r13, %r15\n\t"
		"xor %r13d, %r13d\n\t"
		"jmp 3f\n"
		"2:\n\t"
		"mov 0x8(%r15), %rcx\n\t"	/* it->count: reached only by the inner jump back */
		"add $1, %r13\n"
		"3:\n\t"
		"cmp %rbx, %r13\n\t"
		"jb 2b\n\t"
		"mov %r15, %r13\n\t"
		"dec %rbx\n\t"
		"jne 1b\n\t"
		"pop %rbx\n\t"
		"pop %r13\n\t"
		"pop %r15\n\t"
		"ret\n\t");
}

/* Joins the walk must tell apart (tests/unit/test_btftype.c): it->flags after a forward
 * jump past code that leaves rbx alone (rbx is `it` on both paths: the base is exact);
 * then ->count after a jump past `rbx = other` (either object: approximate). By hand, as
 * loop_shapes. Never called. */
__attribute__((naked, noinline)) long join_shapes(struct item *it, struct item *other)
{
	__asm__("push %rbx\n\t"
		"mov %rdi, %rbx\n\t"
		"test %rsi, %rsi\n\t"
		"je 1f\n\t"
		"mov 0x8(%rsi), %rax\n"
		"1:\n\t"
		"mov 0x18(%rbx), %eax\n\t"	/* it->flags: exact */
		"test %rsi, %rsi\n\t"
		"jne 2f\n\t"
		"mov %rsi, %rbx\n"
		"2:\n\t"
		"mov 0x8(%rbx), %rcx\n\t"	/* it or other ->count: approximate */
		"pop %rbx\n\t"
		"ret\n\t");
}

/* Writes a count back through its parameter (local_by_ref's callee). */
__attribute__((noinline)) void take_count(long *n)
{
	*n += 1;
}

/* A local passed by address to a `long *` parameter, then read: a `long` local without
 * DWARF (tests/unit/test_kcore_report.c). By hand. Never called. */
__attribute__((naked, noinline)) long local_by_ref(void)
{
	__asm__("sub $0x18, %rsp\n\t"
		"movq $0, 0x8(%rsp)\n\t"
		"lea 0x8(%rsp), %rdi\n\t"
		"call take_count\n\t"
		"mov 0x8(%rsp), %rax\n\t"	/* the count */
		"add $0x18, %rsp\n\t"
		"ret\n\t");
}

/* A pointer parameter spilled to the frame across a call and loaded back, as -O2
 * kernel code keeps one (tests/unit/test_kcore_report.c: without DWARF, the slot is a
 * `struct item *` local by the register stored there). By hand. Never called. */
__attribute__((naked, noinline)) long spill_shapes(struct item *it)
{
	__asm__("sub $0x18, %rsp\n\t"
		"mov %rdi, 0x8(%rsp)\n\t"
		"call heap_one\n\t"
		"mov 0x8(%rsp), %rax\n\t"	/* the spilled it */
		"mov 0x8(%rax), %rax\n\t"
		"add $0x18, %rsp\n\t"
		"ret\n\t");
}

int main(int argc, char **argv)
{
	struct item *h = calloc(8, sizeof(*h));
	struct holder hd = {0, NULL};
	struct pair pr = {0, NULL, NULL};
	long r = 0;

	(void)argv;
	hd.cur = h;
	pr.left = &h[1];
	pr.right = &h[2];
	for (int i = 0; i < argc * 1000; i++) {
		heap_update(h, 8);
		heap_one(&h[i & 7]);
		heap_moved(&h[i & 7]);
		heap_chain(&hd);
		heap_spilled(&h[i & 7]);
		heap_inlined(&pr, i);
		global_update(i);
		global_first();
		r += stack_work(i);
		tls_update();
	}
	printf("%ld %ld %ld\n", r, tls_counter, h[1].count);
	free(h);
	return 0;
}
