/* How the accesses were named in the end, after the allocation records named what the
 * types could not: the --stats line that says which share of the accesses carries a
 * name a person would write (docs/alloc.md, --stats). */
#include "resolve/resolve_int.h"

#include <string.h>

/* A name with nothing of the tool's own: not <padding>, <hole> or <calloc at ..>+0x8. */
static int plain(const char *field)
{
	return field && !strchr(field, '<');
}

void hm_resolver_count_names(struct hm_resolver *r, const struct hm_access *a, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct hm_access *x = &a[i];
		int person = 0;

		if (x->part || !x->s.addr || x->method == HM_M_NOADDR)
			continue;
		r->st.addressed++;
		if (x->alloc_site && x->field) {
			r->st.by_alloc++;
			r->st.alloc_elem += plain(x->field);
			person = 1;	/* its site and offset, at worst */
		} else if (x->method == HM_M_GLOBAL || x->method == HM_M_TLS ||
			   x->method == HM_M_STACK) {
			person = plain(x->field);	/* a variable, or its member */
		} else if (x->method == HM_M_HEAP) {
			person = plain(x->field) && x->type && hm_type_agg(x->type, NULL);
		}
		r->st.person += person;
	}
}
