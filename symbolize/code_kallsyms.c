/* Kernel function names from kallsyms (--kallsyms, else /proc/kallsyms for this
 * machine's own kernel only): parsed, sorted, aliases kept, moved by the KASLR difference
 * of a later boot.
 *
 * A kallsyms file given with --kallsyms against the recording: kallsyms carries no
 * build-id, but two facts of the recorded kernel can be checked. The kernel map perf (and
 * hitmap record) writes is _text.._etext, so another build almost always has another text
 * size; and each module map says where that module's code was loaded, which a file taken
 * on another boot (or after a reload) places elsewhere. KASLR alone moves _text, which the
 * reader allows for (ksyms_shift), so the text's address is not compared. */
#include "symbolize/code_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/oom.h"
#include "core/sort.h"

/* The first recorded module whose name kallsyms lists but none of whose kallsyms
 * symbols fall inside its recorded map; NULL when every module agrees. */
static const struct code_kmod *module_moved(const struct code_kernel *k)
{
	unsigned char *seen, *inside;
	const struct code_kmod *bad = NULL;

	if (!k->nr_mods)
		return NULL;
	seen = calloc(k->nr_mods, 2);
	if (!seen)
		hm_oom();
	inside = seen + k->nr_mods;
	for (size_t i = 0; i < k->nr_ksyms; i++) {
		const struct code_ksym *s = &k->ksyms[i];

		if (!s->module)
			continue;
		for (size_t m = 0; m < k->nr_mods; m++) {
			if (strcmp(k->mods[m].name, s->module) != 0)
				continue;
			seen[m] = 1;
			inside[m] |= s->addr >= k->mods[m].start && s->addr < k->mods[m].end;
		}
	}
	for (size_t m = 0; m < k->nr_mods && !bad; m++)
		if (seen[m] && !inside[m])
			bad = &k->mods[m];
	free(seen);
	return bad;
}

const char *code_kallsyms_mismatch(struct hm_code *c)
{
	struct code_kernel *k = &c->k;
	const struct code_kmod *m;

	if (!k->ksyms_loaded)
		code_ksyms_load(c);
	if (k->ksyms_error)
		return k->ksyms_error;
	if (k->ref_len && k->ksyms_ref && k->ksyms_etext > k->ksyms_ref &&
	    k->ksyms_etext - k->ksyms_ref != k->ref_len)
		return hm_arena_printf(&c->arena, "--kallsyms %s: kernel text (%s.._etext) is "
				       "%llu bytes there but %llu in the recording (%s): another "
				       "kernel build", c->kallsyms, k->ref_name,
				       (unsigned long long)(k->ksyms_etext - k->ksyms_ref),
				       (unsigned long long)k->ref_len, c->release);
	if ((m = module_moved(k)))
		return hm_arena_printf(&c->arena, "--kallsyms %s: module %s was recorded at "
				       "0x%llx, but none of its symbols there lies inside it: a file "
				       "of another boot or module load", c->kallsyms, m->name,
				       (unsigned long long)m->start);
	return NULL;
}

static int ksym_rank(char type)
{
	return type == 'T' ? 0 : type == 't' ? 2 : 1;
}

static int ksym_cmp(const void *pa, const void *pb)
{
	const struct code_ksym *a = pa, *b = pb;
	int ua = 0, ub = 0;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	if (!a->name || !b->name)	/* an end marker loses to a function */
		return !a->name - !b->name;
	if (ksym_rank(a->type) != ksym_rank(b->type))
		return ksym_rank(a->type) - ksym_rank(b->type);
	while (a->name[ua] == '_')
		ua++;
	while (b->name[ub] == '_')
		ub++;
	return ua != ub ? ua - ub : strcmp(a->name, b->name);
}

static const char *intern(struct hm_code *c, struct hm_hash *h, const char *s)
{
	const char *v = hm_hash_get(h, s);

	if (!v) {
		char *dup = hm_arena_strdup(&c->arena, s);

		hm_hash_put(h, dup, dup);
		v = dup;
	}
	return v;
}

/* One line: "ffffffff81001000 T name" or "... t name\t[module]"; 0 if not text. */
static int ksym_parse(struct hm_code *c, struct hm_hash *mods, char *line,
		      struct code_ksym *out, uint64_t *ref)
{
	char *end, *name, *mod;
	uint64_t addr = strtoull(line, &end, 16);

	if (end == line || end[0] != ' ' || !end[1] || end[2] != ' ')
		return 0;
	name = end + 3;
	name[strcspn(name, "\n")] = '\0';
	if ((mod = strpbrk(name, "\t "))) {
		*mod++ = '\0';
		mod += strspn(mod, "\t [");
		mod[strcspn(mod, "]")] = '\0';
	}
	if (!mod && c->k.ref_name && strcmp(name, c->k.ref_name) == 0)
		*ref = addr;
	if (!mod && strcmp(name, "_etext") == 0)
		c->k.ksyms_etext = addr;
	/* data symbols, the kernel's own too: without a vmlinux (kcore) they name its
	 * globals (tk_core, jiffies_64), untyped; per-CPU ones are `A`, at their offsets */
	if (strchr("dDbBrR", end[1]) && (!mod || mod[0]))
		code_kdata_add(c, addr, end[1], name, mod ? intern(c, mods, mod) : NULL);
	if (!strchr("tTwW", end[1]))
		return 0;
	out->addr = addr;
	out->type = end[1];
	out->module = mod && mod[0] ? intern(c, mods, mod) : NULL;
	/* The end of the kernel's text and init text: nothing lies between them and the
	 * next function, so they end the previous symbol instead of naming code. */
	out->name = !mod && (strcmp(name, "_etext") == 0 || strcmp(name, "_einittext") == 0)
		? NULL : hm_arena_strdup(&c->arena, name);
	return 1;
}

/* Sorted, one symbol per address; the other names of an address (identical code
 * folded into one, weak and strong) kept aside for hm_code_kernel_names. */
static void ksyms_finish(struct hm_code *c, struct code_kernel *k)
{
	size_t out = 0;

	hm_sort(k->ksyms, k->nr_ksyms, sizeof(*k->ksyms), ksym_cmp);
	for (size_t i = 0, j; i < k->nr_ksyms; i = j) {
		struct code_alias *al;
		size_t n = 0;

		for (j = i + 1; j < k->nr_ksyms && k->ksyms[j].addr == k->ksyms[i].addr; j++)
			n += k->ksyms[j].name != NULL;
		k->ksyms[out++] = k->ksyms[i];
		if (!n || !k->ksyms[i].name)
			continue;
		al = hm_arena_alloc(&c->arena, sizeof(*al) + (n + 1) * sizeof(al->names[0]));
		for (size_t m = i; m < j; m++)
			if (k->ksyms[m].name)
				al->names[al->n++] = k->ksyms[m].name;
		hm_map64_put(&k->aliases, k->ksyms[i].addr + 1, al);
	}
	for (size_t i = 0; i < out; i++)	/* the last one: a page, for want of better */
		k->ksyms[i].end = i + 1 < out ? k->ksyms[i + 1].addr : k->ksyms[i].addr + 4096;
	k->nr_ksyms = out;
	code_kdata_finish(k);
}

void code_ksyms_load(struct hm_code *c)
{
	struct code_kernel *k = &c->k;
	struct hm_hash mods;
	size_t cap = 0, lcap = 0;
	uint64_t ref = 0;
	char *line = NULL;
	int nonzero = 0;
	FILE *f;

	k->ksyms_loaded = 1;
	if (c->kallsyms_default && !c->release_live && !c->release_running) {
		/* Another kernel's symbols would name every kernel sample, wrongly. */
		k->ksyms_error = hm_arena_printf(&c->arena, "recorded on kernel %s, not this "
						 "machine's: %s is not used, kernel functions stay "
						 "unnamed: pass --kallsyms FILE (the recording "
						 "machine's /proc/kallsyms) or --vmlinux FILE",
						 c->release, c->kallsyms);
		return;
	}
	if (!(f = fopen(c->kallsyms, "re"))) {
		k->ksyms_error = hm_arena_printf(&c->arena, "cannot read %s (%s): kernel addresses "
						 "stay unresolved: run as root on the recording "
						 "machine, or pass --vmlinux FILE", c->kallsyms,
						 strerror(errno));
		return;
	}
	hm_hash_init(&mods);
	while (getline(&line, &lcap, f) > 0) {
		struct code_ksym s;

		if (!ksym_parse(c, &mods, line, &s, &ref))
			continue;
		nonzero |= s.addr != 0;
		if (k->nr_ksyms == cap) {
			struct code_ksym *p;

			cap = cap ? 2 * cap : 4096;
			if (!(p = realloc(k->ksyms, cap * sizeof(*p))))
				hm_oom();
			k->ksyms = p;
		}
		k->ksyms[k->nr_ksyms++] = s;
	}
	free(line);
	fclose(f);
	hm_hash_free(&mods);
	if (k->nr_ksyms && !nonzero) {
		k->restricted = 1;
		k->nr_ksyms = 0;
		k->ksyms_error = hm_arena_printf(&c->arena, "%s lists every address as 0: run as "
						 "root or set kernel.kptr_restrict=0 (sysctl), or "
						 "pass --vmlinux FILE", c->kallsyms);
		return;
	}
	if (!k->nr_ksyms)
		k->ksyms_error = hm_arena_printf(&c->arena, "%s has no text symbols: give the "
						 "recording machine's /proc/kallsyms or --vmlinux "
						 "FILE", c->kallsyms);
	k->ksyms_ref = ref;
	/* kallsyms may come from a later boot than the recording: move its addresses by
	 * the difference of the two _text addresses. */
	if (k->has_ref && ref)
		k->ksyms_shift = (int64_t)(k->ref_addr - ref);
	ksyms_finish(c, k);
}
