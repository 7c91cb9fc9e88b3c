/* Two structs with the same members in different orders, compiled with -g -c for
 * tests/unit/test_whatif.c: `--order order_a=<order_b's order>` must reproduce the
 * offsets, size and alignment the compiler gave order_b. holder_a embeds order_a by
 * value, so an edit of order_a moves holder_a's later members too. */
struct inner {
	int p;
	short q;
};

struct order_a {
	char c;
	long l;
	short s;
	int i;
	char d[3];
	double x __attribute__((aligned(16)));
	struct inner in;
	unsigned char tail;
	void *ptr;
	struct inner pair[2];
};

struct order_b {
	unsigned char tail;
	double x __attribute__((aligned(16)));
	char d[3];
	struct inner in;
	short s;
	void *ptr;
	char c;
	struct inner pair[2];
	int i;
	long l;
};

struct holder_a {
	int id;
	struct order_a a;
	long after;
	struct order_a arr[2];
	char last;
};

struct order_a a_var;
struct order_b b_var;
struct holder_a h_var;
