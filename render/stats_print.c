#include "render/stats_print.h"

#include <string.h>

#include "symbolize/data.h"

#define TOP_UNRESOLVED 10

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static void row(FILE *out, const char *what, uint64_t n, uint64_t whole)
{
	fprintf(out, "  %-26s %10llu  %5.1f%%\n", what, (unsigned long long)n, pct(n, whole));
}

/* Timer samples by the instruction they were charged to (docs/decode.md, Skid). */
static void skid_print(FILE *out, const struct hm_resolve_stats *rs)
{
	uint64_t n = rs->samples;

	row(out, "timer: the insn at ip", rs->at_ip, n);
	row(out, "skid: the insn before ip", rs->skid, n);
	if (!rs->skid && !rs->skid_jump_target)
		return;
	row(out, "  after a load or RMW", rs->skid_load, n);
	row(out, "  after a store", rs->skid_store, n);
	row(out, "  ip's insn accesses too", rs->skid_over, n);
	row(out, "  address overwritten", rs->skid_lost, n);
	row(out, "  ip a jump target: unused", rs->skid_jump_target, n);
}

void hm_stats_print(FILE *out, struct hm_resolver *r)
{
	const struct hm_resolve_stats *rs = hm_resolver_stats(r);
	struct hm_data_stats ds;
	uint64_t named = 0;

	hm_data_stats(hm_resolver_data(r), TOP_UNRESOLVED, &ds);
	for (int m = HM_M_GLOBAL; m <= HM_M_HEAP; m++)
		named += ds.by_method[m];
	fprintf(out, "\nsamples: %llu (pmu %llu, timer %llu, watch %llu)\n",
		(unsigned long long)rs->samples, (unsigned long long)rs->by_source[HM_SRC_PMU],
		(unsigned long long)rs->by_source[HM_SRC_TIMER],
		(unsigned long long)rs->by_source[HM_SRC_WATCH]);
	fprintf(out, "  not a memory access        %10llu  %5.1f%%\n",
		(unsigned long long)rs->not_memory, pct(rs->not_memory, rs->samples));
	skid_print(out, rs);
	fprintf(out, "  code bytes unreadable      %10llu  %5.1f%%\n",
		(unsigned long long)rs->no_code, pct(rs->no_code, rs->samples));
	fprintf(out, "  registers missing          %10llu  %5.1f%%\n",
		(unsigned long long)rs->no_regs, pct(rs->no_regs, rs->samples));
	fprintf(out, "  watch: no insn before trap %10llu  %5.1f%%\n",
		(unsigned long long)rs->watch_no_insn, pct(rs->watch_no_insn, rs->samples));
	fprintf(out, "memory accesses looked up: %llu, named: %llu (%.1f%%)\n",
		(unsigned long long)ds.total, (unsigned long long)named, pct(named, ds.total));
	for (int m = 0; m < HM_M__COUNT; m++)
		fprintf(out, "  %-8s %10llu  %5.1f%%\n", hm_data_method_name((enum hm_method)m),
			(unsigned long long)ds.by_method[m], pct(ds.by_method[m], ds.total));
	if (rs->prim)	/* per sample; the report's samples.primitives in JSON */
		fprintf(out, "  made by string and copy primitives (memset, memcpy, copy_user, rep "
			"movs/stos): %llu, their buffer named: %llu\n", (unsigned long long)rs->prim,
			(unsigned long long)rs->prim_named);
	fprintf(out, "  to a member (type.field)  %10llu  %5.1f%%\n",
		(unsigned long long)rs->member, pct(rs->member, ds.total));
	if (rs->by_alloc)
		fprintf(out, "  named by allocation        %10llu  %5.1f%%  (as an element, "
			"T[k].field or p[k]: %llu)\n", (unsigned long long)rs->by_alloc,
			pct(rs->by_alloc, rs->addressed), (unsigned long long)rs->alloc_elem);
	fprintf(out, "  as the program names it    %10llu  %5.1f%%  (a variable or its field, "
		"type.field, or by allocation)\n", (unsigned long long)rs->person,
		pct(rs->person, rs->addressed));
	if (ds.enclosed)
		fprintf(out, "  named from the heap object enclosing them (typed by other "
			"samples): %llu\n", (unsigned long long)ds.enclosed);
	if (rs->wide)
		fprintf(out, "  wide accesses split into the members they cover: %llu, into %llu "
			"accesses\n", (unsigned long long)rs->wide, (unsigned long long)rs->wide_parts);
	if (rs->rep_sized)
		fprintf(out, "  rep string instructions sized by rcx: %llu\n",
			(unsigned long long)rs->rep_sized);
	if (ds.btf)
		fprintf(out, "  of heap and stack, typed through BTF (no DWARF): %llu\n",
			(unsigned long long)ds.btf);
	if (rs->spin)
		fprintf(out, "loads in a spin-wait loop (a pause loop: waiters on a lock or flag): %llu\n",
			(unsigned long long)rs->spin);
	if (rs->kernel) {
		fprintf(out, "kernel samples: %llu, code bytes unreadable: %llu, data named: %llu\n",
			(unsigned long long)rs->kernel, (unsigned long long)rs->kernel_no_code,
			(unsigned long long)rs->kernel_named);
		if (rs->kernel_patched)
			fprintf(out, "  in paravirt call sites the boot rewrote (not decoded from the "
				"vmlinux): %llu\n", (unsigned long long)rs->kernel_patched);
		if (rs->kernel_alternative)
			fprintf(out, "  in alternatives sites the boot may have rewritten (not decoded "
				"from the vmlinux): %llu\n", (unsigned long long)rs->kernel_alternative);
		if (rs->kernel_reloc)
			fprintf(out, "  in module code its loader relocates (not decoded from the "
				".ko): %llu\n", (unsigned long long)rs->kernel_reloc);
		if (ds.kmod_globals)
			fprintf(out, "  kernel modules' globals named (.data, .bss, .rodata, "
				"per-CPU): %llu\n", (unsigned long long)ds.kmod_globals);
		if (ds.ksym_globals)
			fprintf(out, "  kernel globals named by kallsyms symbol only (no vmlinux: "
				"untyped, symbol+offset): %llu\n", (unsigned long long)ds.ksym_globals);
		if (ds.kernel_heap) {
			/* the slab object is the whole allocation: the outermost container */
			uint64_t whole = ds.kernel_enclosed + ds.kernel_slab;

			if (whole > ds.kernel_heap)
				whole = ds.kernel_heap;
			fprintf(out, "  kernel heap data named: %llu; to a container (typed around "
				"them, or their slab object): %llu; to their pointer's type only: "
				"%llu\n", (unsigned long long)ds.kernel_heap, (unsigned long long)whole,
				(unsigned long long)(ds.kernel_heap - whole));
		}
		if (ds.slab_source)
			fprintf(out, "  kernel heap named by slab cache (the kmem_cache of the "
				"object's page; slab facts %s): %llu\n",
				strcmp(ds.slab_source, "kcore") ? "saved by record -k" : "read from kcore",
				(unsigned long long)ds.kernel_slab);
		else if (ds.slab_hint)
			fprintf(out, "  %s\n", ds.slab_hint);
		if (ds.kernel_stack_args)
			fprintf(out, "  kernel locals without DWARF, typed by the callee parameter "
				"their address is passed to or the pointer spilled there: %llu\n",
				(unsigned long long)ds.kernel_stack_args);
		if (ds.kernel_hint)
			fprintf(out, "  %s\n", ds.kernel_hint);
	}
	{
		struct hm_func_count fc[TOP_UNRESOLVED];
		size_t n = hm_resolver_top_noaddr(r, fc, TOP_UNRESOLVED);

		if (n)
			fprintf(out, "samples without a data address, by function ([k]: kernel):\n");
		for (size_t i = 0; i < n; i++)
			fprintf(out, "  %10llu  %s\n", (unsigned long long)fc[i].count, fc[i].func);
	}
	if (ds.nr_top)
		fprintf(out, "top unresolved instructions:\n");
	for (size_t i = 0; i < ds.nr_top; i++)
		fprintf(out, "  %#18llx %-8s %8llu  %s\n", (unsigned long long)ds.top[i].ip,
			hm_data_method_name(ds.top[i].method), (unsigned long long)ds.top[i].count,
			ds.top[i].module ? ds.top[i].module : "(unmapped)");
}
