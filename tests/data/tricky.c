/* Layouts that trip layout engines: compiled with -g -c and compared against pahole. */
#include <stdint.h>

struct bits_across {		/* bitfields that cross storage units */
	unsigned int a : 3;
	unsigned int b : 30;
	unsigned char c : 4;
	unsigned long long d : 40;
	unsigned short e : 9;
	int f;
};

struct bits_hole {		/* a bit hole, then a byte hole */
	char tag;
	unsigned int x : 5;
	unsigned int : 3;
	unsigned int y : 2;
	long l;
};

struct anon_nest {		/* nested anonymous unions and structs */
	int kind;
	union {
		struct {
			short lo;
			short hi;
		};
		int both;
		union {
			char raw[6];
			double d;
		};
	};
	char tail;
};

struct __attribute__((packed)) packed_s {
	char c;
	int i;
	short s;
	long long ll;
};

struct aligned64 {
	int counter;
	int other __attribute__((aligned(64)));
	char pad_tail;
} __attribute__((aligned(64)));

struct flex {
	uint32_t len;
	uint16_t flags;
	char data[];
};

struct zero_size {
	int before;
	char nothing[0];
	struct {} empty;
	int after;
};

struct inner_pt {
	char c;
	long v;
};

struct outer_arr {
	struct inner_pt pts[3];
	char name[13];
	struct inner_pt *next;
	union {
		int as_int;
		float as_float;
	} u;
};

typedef struct {
	uint8_t b;
	uint64_t q;
} typedef_anon_t;

struct uses_typedef {
	typedef_anon_t t;
	int arr2[2][3];
	void (*fn)(int);
};

union top_union {
	char c;
	long long big;
	struct inner_pt pt;
};

struct many_lines {
	char a[60];
	int straddle_me;	/* 60..64: fits; next crosses */
	char b[62];
	int crosses;		/* at 126, packed below to force a split */
} __attribute__((packed));

struct holder_of_sub {
	struct sub {
		int x;
		char y;
	} s;
	char after;
	struct bits_hole bh;
};

struct bits_across ba;
struct bits_hole bh;
struct anon_nest an;
struct packed_s ps;
struct aligned64 al;
struct flex *fl;
struct zero_size zs;
struct outer_arr oa;
struct uses_typedef ut;
union top_union tu;
struct many_lines ml;
struct holder_of_sub hs;
