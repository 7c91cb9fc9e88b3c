/* resolve/skid.c, resolve.c: which instruction a timer sample is charged to, and its
 * address. The code is crafted (assembled here from the patterns of docs/decode.md, Skid)
 * and the samples are synthesized: a sampled ip with the registers a cpu-clock interrupt
 * would give there. What real timer samples do is measured in docs/decode.md and checked
 * on a committed recording by tests/e2e/skid.sh. */
#include <fcntl.h>
#include <gelf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "resolve/resolve.h"
#include "resolve/skid.h"
#include "symbolize/data.h"
#include "symbolize/decode.h"
#include "run_util.h"

#define PID 4242
#define BASE 0x555555554000ull	/* where the (position-independent) program is mapped */
#define A 0x7f0000001000ull	/* data addresses held in rdi and rsi */
#define B 0x7f0000002000ull

/* Each pattern is a function; the absolute symbol FUNC_ipoff is the offset of the
 * sampled ip in it (a label would be taken for a function by the symbolizer). */
static const char ASM[] =
	"	.text\n"
	"	.globl load_store, load_load, store_load, plain, lost, loop_head, after_call\n"
	"	.type load_store, @function\n"
	"load_store:\n"			/* issue 15: rcu_read_lock's load, then a TLS store */
	"	mov gp_ctr(%rip), %rax\n"
	".Lload_store_ip:\n"
	"	mov %rax, %fs:-8\n"
	"	ret\n"
	"	.size load_store, .-load_store\n"
	"	.set load_store_ipoff, .Lload_store_ip - load_store\n"
	"	.type load_load, @function\n"
	"load_load:\n"
	"	mov (%rdi), %rax\n"
	".Lload_load_ip:\n"
	"	mov 8(%rsi), %rdx\n"
	"	ret\n"
	"	.size load_load, .-load_load\n"
	"	.set load_load_ipoff, .Lload_load_ip - load_load\n"
	"	.type store_load, @function\n"
	"store_load:\n"
	"	mov %rax, 16(%rdi)\n"
	".Lstore_load_ip:\n"
	"	mov 8(%rsi), %rdx\n"
	"	ret\n"
	"	.size store_load, .-store_load\n"
	"	.set store_load_ipoff, .Lstore_load_ip - store_load\n"
	"	.type plain, @function\n"
	"plain:\n"
	"	lock addq $1, 24(%rdi)\n"
	".Lplain_ip:\n"
	"	add %rcx, %rax\n"
	"	ret\n"
	"	.size plain, .-plain\n"
	"	.set plain_ipoff, .Lplain_ip - plain\n"
	"	.type lost, @function\n"
	"lost:\n"				/* a list walk: the load overwrites its base */
	"	mov (%rdi), %rdi\n"
	".Llost_ip:\n"
	"	mov 8(%rdi), %rdx\n"
	"	ret\n"
	"	.size lost, .-lost\n"
	"	.set lost_ipoff, .Llost_ip - lost\n"
	"	.type loop_head, @function\n"
	"loop_head:\n"			/* a load before a loop whose head is a jump target */
	"	mov (%rdi), %rcx\n"
	".Lloop_head_ip:\n"
	"	add $1, %rax\n"
	"	cmp %rcx, %rax\n"
	"	jne .Lloop_head_ip\n"
	"	ret\n"
	"	.size loop_head, .-loop_head\n"
	"	.set loop_head_ipoff, .Lloop_head_ip - loop_head\n"
	"	.type after_call, @function\n"
	"after_call:\n"			/* the return address follows the callee's ret */
	"	call plain\n"
	".Lafter_call_ip:\n"
	"	mov 8(%rsi), %rdx\n"
	"	ret\n"
	"	.size after_call, .-after_call\n"
	"	.set after_call_ipoff, .Lafter_call_ip - after_call\n"
	"	.bss\n"
	"	.globl gp_ctr\n"
	"	.hidden gp_ctr\n"
	"	.type gp_ctr, @object\n"
	"	.size gp_ctr, 8\n"
	"	.align 64\n"
	"gp_ctr:	.zero 64\n"
	"	.section .note.GNU-stack,\"\",@progbits\n";

static struct {
	char dir[256], prog[512], other[512];
	GElf_Phdr loads[8];
	size_t nr_loads;
	struct hm_decoder *dec;
} P;

/* The address (file vaddr) of symbol name in P.prog. */
static uint64_t sym(const char *name)
{
	int fd = open(P.prog, O_RDONLY);
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	Elf_Scn *scn = NULL;
	uint64_t at = 0;

	assert_non_null(elf);
	while (!at && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB ||
		    !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;

			if (gelf_getsym(data, (int)i, &s) &&
			    !strcmp(elf_strptr(elf, sh.sh_link, s.st_name), name))
				at = s.st_value;
		}
	}
	elf_end(elf);
	close(fd);
	if (!at)
		fail_msg("no symbol %s in %s", name, P.prog);
	return at;
}

static int setup(void **state)
{
	const char *tmp = getenv("TMPDIR");
	char src[600];
	struct hm_err err = {0};
	FILE *f;
	int fd;
	Elf *elf;
	size_t nph = 0;

	(void)state;
	unsetenv("DEBUGINFOD_URLS");
	elf_version(EV_CURRENT);
	snprintf(P.dir, sizeof(P.dir), "%s/hm_skid_XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
	if (!mkdtemp(P.dir))
		return -1;
	snprintf(src, sizeof(src), "%s/skid.s", P.dir);
	snprintf(P.prog, sizeof(P.prog), "%s/skid.so", P.dir);
	snprintf(P.other, sizeof(P.other), "%s/other.so", P.dir);
	if (!(f = fopen(src, "w")) || fputs(ASM, f) < 0 || fclose(f) ||
	    run("gcc -shared -nostdlib -o %s %s", P.prog, src) ||
	    run("gcc -shared -nostdlib -o %s -x c /dev/null", P.other) ||
	    hm_decode_open(&P.dec, &err))
		return -1;
	if ((fd = open(P.prog, O_RDONLY)) < 0 || !(elf = elf_begin(fd, ELF_C_READ, NULL)))
		return -1;
	elf_getphdrnum(elf, &nph);
	for (size_t i = 0; i < nph && P.nr_loads < 8; i++)
		if (gelf_getphdr(elf, (int)i, &P.loads[P.nr_loads]) &&
		    P.loads[P.nr_loads].p_type == PT_LOAD)
			P.nr_loads++;
	elf_end(elf);
	close(fd);
	return P.nr_loads ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	hm_decode_close(P.dec);
	run("rm -rf %s", P.dir);
	return 0;
}

/* A resolver with P.prog's segments mapped at BASE, as MMAP2 records give them. */
static struct hm_resolver *open_resolver(void)
{
	struct hm_resolve_opts ro = {0};
	struct hm_resolver *r = NULL;
	struct hm_err err = {0};

	if (hm_resolver_open(&ro, &r, &err))
		fail_msg("hm_resolver_open: %s", err.msg);
	for (size_t i = 0; i < P.nr_loads; i++) {
		const GElf_Phdr *ph = &P.loads[i];
		uint64_t start = BASE + (ph->p_vaddr & ~0xfffull);
		uint64_t end = BASE + ((ph->p_vaddr + ph->p_memsz + 0xfff) & ~0xfffull);
		struct hm_perf_event ev = {.type = PERF_RECORD_MMAP2};

		ev.mmap = (struct hm_perf_mmap){.pid = PID, .tid = PID, .start = start,
						.len = end - start,
						.pgoff = ph->p_offset & ~0xfffull,
						.prot = (ph->p_flags & PF_X) ? PROT_EXEC | PROT_READ
									     : PROT_READ,
						.filename = P.prog};
		hm_resolver_track(r, &ev);
	}
	return r;
}

/* A user-space cpu-clock sample at function func's sampled ip, with rdi = A, rsi = B. */
static void sample(struct hm_resolver *r, const char *func, struct hm_access *a)
{
	char off[64];
	struct hm_perf_attr attr = {.attr = {.type = PERF_TYPE_SOFTWARE}};
	struct hm_perf_event ev = {.type = PERF_RECORD_SAMPLE, .misc = PERF_RECORD_MISC_USER};
	uint64_t regs[24] = {0}, mask = hm_decode_regs_mask();

	ev.attr = &attr;
	snprintf(off, sizeof(off), "%s_ipoff", func);
	ev.sample.ip = BASE + sym(func) + sym(off);
	ev.sample.pid = ev.sample.tid = PID;
	regs[__builtin_popcountll(mask & ((1ull << HM_REG_DI) - 1))] = A;
	regs[__builtin_popcountll(mask & ((1ull << HM_REG_SI) - 1))] = B;
	regs[__builtin_popcountll(mask & ((1ull << HM_REG_IP) - 1))] = ev.sample.ip;
	ev.sample.regs_user = (struct hm_perf_regs){PERF_SAMPLE_REGS_ABI_64, mask,
						    (uint32_t)__builtin_popcountll(mask), regs};
	hm_resolver_sample(r, &ev, a);
}

/* The sample in function label is charged to the instruction at want (its start, or
 * BASE + 0: the sampled ip itself), with address addr (0: none) and operation op. */
static void expect(struct hm_resolver *r, const char *label, uint64_t want, uint64_t addr,
		   int op)
{
	struct hm_access a;
	char off[64];

	snprintf(off, sizeof(off), "%s_ipoff", label);
	sample(r, label, &a);
	if (!want)
		want = BASE + sym(label) + sym(off);
	if (a.s.ip != want || a.s.addr != addr || a.s.op != op)
		fail_msg("%s: charged to ip %#llx addr %#llx op %d; want %s %#llx, addr %#llx, "
			 "op %d", label, (unsigned long long)a.s.ip, (unsigned long long)a.s.addr,
			 a.s.op, "insn", (unsigned long long)want, (unsigned long long)addr, op);
	assert_int_equal(a.s.size, 8);
}

/* Issue 15: the load of the contended global, not the thread-local store at ip. */
static void test_load_then_store_charges_the_load(void **state)
{
	struct hm_resolver *r = open_resolver();
	const struct hm_resolve_stats *st = hm_resolver_stats(r);
	struct hm_access a;

	(void)state;
	expect(r, "load_store", BASE + sym("load_store"), BASE + sym("gp_ctr"), HM_OP_LOAD);
	assert_int_equal(st->skid, 1);
	assert_int_equal(st->skid_load, 1);
	assert_int_equal(st->skid_over, 1);
	assert_int_equal(st->at_ip, 0);
	/* Named as the global it reads: the address came from the load's own rip. */
	sample(r, "load_store", &a);
	assert_int_equal(a.method, HM_M_GLOBAL);
	assert_string_equal(a.object, "gp_ctr");
	hm_resolver_close(r);
}

/* resolve.c, smemo: a repeat of a global's site takes the kept answer and is counted as
 * the first was; an MMAP record drops what was kept, so after another file is mapped
 * over the global's page the same sample is named by what is there now. (Anonymous
 * memory would not do: a module's .bss lies in anonymous pages.) */
static void test_kept_site_answer_repeats_until_a_mapping_changes(void **state)
{
	struct hm_resolver *r = open_resolver();
	const struct hm_resolve_stats *st = hm_resolver_stats(r);
	struct hm_perf_event ev = {.type = PERF_RECORD_MMAP2};
	struct hm_data_stats ds;
	struct hm_access a, b;
	uint64_t page = (BASE + sym("gp_ctr")) & ~0xfffull;

	(void)state;
	sample(r, "load_store", &a);
	sample(r, "load_store", &b);
	assert_int_equal(b.method, HM_M_GLOBAL);
	assert_string_equal(b.object, "gp_ctr");
	assert_ptr_equal(b.field, a.field);
	assert_ptr_equal(b.func, a.func);
	assert_int_equal(b.line, a.line);
	assert_int_equal(b.mapped, a.mapped);
	assert_int_equal(b.obj_base, a.obj_base);
	assert_int_equal(b.field_off, a.field_off);
	assert_int_equal(b.prim, a.prim);
	assert_int_equal(st->samples, 2);
	assert_int_equal(st->member, 0);	/* gp_ctr is no struct */
	hm_data_stats(hm_resolver_data(r), 0, &ds);
	assert_int_equal(ds.total, 2);
	assert_int_equal(ds.by_method[HM_M_GLOBAL], 2);
	ev.mmap = (struct hm_perf_mmap){.pid = PID, .tid = PID, .start = page, .len = 0x1000,
					.prot = PROT_READ, .filename = P.other};
	hm_resolver_track(r, &ev);
	sample(r, "load_store", &b);
	assert_int_equal(b.s.addr, a.s.addr);
	assert_true(!b.object || strcmp(b.object, "gp_ctr"));
	hm_data_stats(hm_resolver_data(r), 0, &ds);
	assert_int_equal(ds.by_method[HM_M_GLOBAL], 2);
	hm_resolver_close(r);
}

static void test_load_then_load_charges_the_first(void **state)
{
	struct hm_resolver *r = open_resolver();

	(void)state;
	expect(r, "load_load", BASE + sym("load_load"), A, HM_OP_LOAD);
	assert_int_equal(hm_resolver_stats(r)->skid_over, 1);
	hm_resolver_close(r);
}

/* A store that misses holds up retirement as a load does (measured, docs/decode.md). */
static void test_store_then_load_charges_the_store(void **state)
{
	struct hm_resolver *r = open_resolver();
	const struct hm_resolve_stats *st = hm_resolver_stats(r);

	(void)state;
	expect(r, "store_load", BASE + sym("store_load"), A + 16, HM_OP_STORE);
	assert_int_equal(st->skid_store, 1);
	assert_int_equal(st->skid_over, 1);
	hm_resolver_close(r);
}

/* The plain case: arithmetic at ip, the access before it (here an atomic RMW). */
static void test_access_then_arithmetic_charges_the_access(void **state)
{
	struct hm_resolver *r = open_resolver();
	const struct hm_resolve_stats *st = hm_resolver_stats(r);
	struct hm_access a;

	(void)state;
	expect(r, "plain", BASE + sym("plain"), A + 24, HM_OP_STORE);
	sample(r, "plain", &a);
	assert_true(a.locked);
	assert_int_equal(st->skid_load, 2);	/* RMW counts with loads: it reads */
	assert_int_equal(st->skid_over, 0);
	hm_resolver_close(r);
}

/* mov rdi, [rdi]: the registers at ip hold the loaded value, not the address. The sample
 * is the load's, with no address, rather than the next instruction's with its own. */
static void test_load_that_overwrote_its_base_is_charged_without_address(void **state)
{
	struct hm_resolver *r = open_resolver();
	const struct hm_resolve_stats *st = hm_resolver_stats(r);

	(void)state;
	expect(r, "lost", BASE + sym("lost"), 0, HM_OP_LOAD);
	assert_int_equal(st->skid_lost, 1);
	assert_int_equal(st->skid, 1);
	hm_resolver_close(r);
}

/* At a jump target the instruction that ran before ip is unknown: the load before the
 * loop is not charged for samples inside it. */
static void test_jump_target_does_not_charge_the_insn_before(void **state)
{
	struct hm_resolver *r = open_resolver();
	const struct hm_resolve_stats *st = hm_resolver_stats(r);
	struct hm_access a;

	(void)state;
	sample(r, "loop_head", &a);
	assert_int_equal(a.s.addr, 0);
	assert_int_equal(a.method, HM_M_NOADDR);
	assert_int_equal(st->skid_jump_target, 1);
	assert_int_equal(st->not_memory, 1);
	assert_int_equal(st->skid, 0);
	hm_resolver_close(r);
}

/* After a call the return address follows the callee's ret, not the call: the access
 * at ip is charged, with the registers before it. */
static void test_after_call_charges_the_insn_at_ip(void **state)
{
	struct hm_resolver *r = open_resolver();

	(void)state;
	expect(r, "after_call", 0, B + 8, HM_OP_LOAD);
	assert_int_equal(hm_resolver_stats(r)->at_ip, 1);
	assert_int_equal(hm_resolver_stats(r)->skid, 0);
	hm_resolver_close(r);
}

/* hm_skid_choose alone, on decoded bytes. */
static void decode(const uint8_t *b, size_t n, uint64_t at, struct hm_insn *in)
{
	assert_int_equal(hm_decode_insn(P.dec, b, n, at, in), 0);
}

static void test_choose_rules(void **state)
{
	static const uint8_t load[] = {0x48, 0x8b, 0x07};		/* mov rax, [rdi] */
	static const uint8_t store[] = {0x48, 0x89, 0x07};		/* mov [rdi], rax */
	static const uint8_t add[] = {0x48, 0x01, 0xc8};		/* add rax, rcx */
	static const uint8_t self[] = {0x48, 0x8b, 0x3f};		/* mov rdi, [rdi] */
	static const uint8_t push[] = {0x57};				/* push rdi */
	struct hm_insn l, s, x, o, p;
	struct hm_skid_pick k;

	(void)state;
	decode(load, 3, 0x1000, &l);
	decode(store, 3, 0x1003, &s);
	decode(add, 3, 0x1003, &x);
	decode(self, 3, 0x1000, &o);
	decode(push, 1, 0x1000, &p);
	k = hm_skid_choose(&s, &l, 0);
	assert_int_equal(k.rule, HM_SKID_BEFORE);
	assert_ptr_equal(k.in, &l);
	assert_true(k.over);
	k = hm_skid_choose(&x, &l, 1);			/* jump target: not the load */
	assert_int_equal(k.rule, HM_SKID_NONE);
	assert_true(k.jump_target);
	k = hm_skid_choose(&s, &l, 1);
	assert_int_equal(k.rule, HM_SKID_AT_IP);
	assert_ptr_equal(k.in, &s);
	k = hm_skid_choose(&s, &o, 0);
	assert_int_equal(k.rule, HM_SKID_LOST);
	assert_ptr_equal(k.in, &o);
	k = hm_skid_choose(&s, &p, 0);			/* a push's stack slot is no data */
	assert_int_equal(k.rule, HM_SKID_AT_IP);
	k = hm_skid_choose(&x, NULL, 0);
	assert_int_equal(k.rule, HM_SKID_NONE);
	k = hm_skid_choose(NULL, &s, 0);
	assert_int_equal(k.rule, HM_SKID_BEFORE);
	assert_false(k.over);
}

static void test_jumps_to(void **state)
{
	/* 0x10: mov rcx, [rdi]; 0x13: add rax, 1; cmp rax, rcx; jne 0x13; jmp qword [rax] */
	static const uint8_t code[] = {0x48, 0x8b, 0x0f, 0x48, 0x83, 0xc0, 0x01, 0x48, 0x39,
				       0xc8, 0x75, 0xf7, 0xff, 0x20};

	(void)state;
	assert_int_equal(hm_decode_jumps_to(P.dec, code, sizeof(code), 0x10, 0x13), 1);
	assert_int_equal(hm_decode_jumps_to(P.dec, code, sizeof(code), 0x10, 0x17), 0);
	assert_int_equal(hm_decode_jumps_to(P.dec, code, sizeof(code), 0x10, 0x10), 0);
	assert_int_equal(hm_decode_jumps_to(P.dec, code, 10, 0x10, 0x13), 0);	/* cut short */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_load_then_store_charges_the_load),
		cmocka_unit_test(test_kept_site_answer_repeats_until_a_mapping_changes),
		cmocka_unit_test(test_load_then_load_charges_the_first),
		cmocka_unit_test(test_store_then_load_charges_the_store),
		cmocka_unit_test(test_access_then_arithmetic_charges_the_access),
		cmocka_unit_test(test_load_that_overwrote_its_base_is_charged_without_address),
		cmocka_unit_test(test_jump_target_does_not_charge_the_insn_before),
		cmocka_unit_test(test_after_call_charges_the_insn_at_ip),
		cmocka_unit_test(test_choose_rules),
		cmocka_unit_test(test_jumps_to),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
