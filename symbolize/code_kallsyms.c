/* A kallsyms file given with --kallsyms against the recording: kallsyms carries no
 * build-id, but two facts of the recorded kernel can be checked. The kernel map perf (and
 * hitmap record) writes is _text.._etext, so another build almost always has another text
 * size; and each module map says where that module's code was loaded, which a file taken
 * on another boot (or after a reload) places elsewhere. KASLR alone moves _text, which the
 * reader allows for (ksyms_shift), so the text's address is not compared. */
#include "symbolize/code_int.h"

#include <stdlib.h>
#include <string.h>

#include "core/oom.h"

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
