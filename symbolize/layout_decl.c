/* C declarations of member types, split into pahole's two columns. */
#include "symbolize/layout.h"

#include <string.h>

static const char *base_spelling(struct hm_arena *a, const struct hm_type *t)
{
	if (!t || t->kind == HM_T_VOID)
		return "void";
	if (t->kind == HM_T_FWD)
		return hm_arena_printf(a, "struct %s", t->name ? t->name : "(anonymous)");
	if ((t->kind == HM_T_STRUCT || t->kind == HM_T_UNION || t->kind == HM_T_CLASS ||
	     t->kind == HM_T_ENUM) && !t->name) {
		const char *kw = t->kind == HM_T_UNION ? "union" :
				 t->kind == HM_T_ENUM ? "enum" : "struct";
		return hm_arena_printf(a, "%s {...}", kw);
	}
	return hm_type_tag_name(a, t);
}

static const char *qual_word(enum hm_tkind k)
{
	switch (k) {
	case HM_T_CONST: return "const";
	case HM_T_VOLATILE: return "volatile";
	case HM_T_RESTRICT: return "restrict";
	default: return "_Atomic";
	}
}

static const char *params_str(struct hm_arena *a, const struct hm_type *fn, int depth);

/* Builds the declarator around inner and returns the base type spelling in *base. */
static const char *declarator(struct hm_arena *a, const struct hm_type *t, const char *inner,
			      const char **base, int depth)
{
	const struct hm_type *ref;

	if (depth > 64) {	/* a malformed file can make a cycle; stop spelling it */
		*base = "...";
		return inner;
	}
	if (!t) {
		*base = "void";
		return inner;
	}
	switch (t->kind) {
	case HM_T_PTR:
		ref = hm_type_strip_cv(t->ref);
		if (ref && (ref->kind == HM_T_ARRAY || ref->kind == HM_T_FUNC))
			inner = hm_arena_printf(a, "(*%s)", inner);
		else
			inner = hm_arena_printf(a, "*%s", inner);
		return declarator(a, t->ref, inner, base, depth + 1);
	case HM_T_ARRAY:
		inner = !t->flexible ? hm_arena_printf(a, "%s[%llu]", inner,
							       (unsigned long long)t->nelems)
					     : hm_arena_printf(a, "%s[]", inner);
		return declarator(a, t->ref, inner, base, depth + 1);
	case HM_T_FUNC:
		inner = hm_arena_printf(a, "%s%s", inner, params_str(a, t, depth + 1));
		return declarator(a, t->ref, inner, base, depth + 1);
	case HM_T_CONST:
	case HM_T_VOLATILE:
	case HM_T_RESTRICT:
	case HM_T_ATOMIC:
		ref = t->ref;
		if (ref && ref->kind == HM_T_PTR) {
			inner = hm_arena_printf(a, " %s %s", qual_word(t->kind), inner);
			return declarator(a, ref, inner, base, depth + 1);
		}
		inner = declarator(a, ref, inner, base, depth + 1);
		*base = hm_arena_printf(a, "%s %s", qual_word(t->kind), *base);
		return inner;
	default:
		*base = base_spelling(a, t);
		return inner;
	}
}

static void split(struct hm_arena *a, const char *base, const char *decl, const char **type_col,
		  const char **name_col)
{
	const char *tc = base;

	for (;;) {
		if (*decl == '*') {
			tc = hm_arena_printf(a, "%s *", tc);
			decl++;
		} else if (*decl == ' ' && strchr(decl + 1, ' ') &&
			   (!strncmp(decl, " const ", 7) || !strncmp(decl, " volatile ", 10) ||
			    !strncmp(decl, " restrict ", 10))) {
			const char *sp = strchr(decl + 1, ' ');

			tc = hm_arena_printf(a, "%s %.*s", tc, (int)(sp - decl - 1), decl + 1);
			decl = sp + 1;
		} else {
			break;
		}
	}
	*type_col = tc;
	*name_col = decl;
}

static void decl_at(struct hm_arena *a, const struct hm_type *t, const char *name,
		    const char **type_col, const char **name_col, int depth)
{
	const char *base = "void";
	const char *decl = declarator(a, t, name ? name : "", &base, depth);

	split(a, base, decl, type_col, name_col);
}

void hm_type_decl(struct hm_arena *a, const struct hm_type *t, const char *name,
		  const char **type_col, const char **name_col)
{
	decl_at(a, t, name, type_col, name_col, 0);
}

/* depth carries on through parameter types: a pointer-to-function parameter of its own
 * type would otherwise recurse without end in a corrupt file. */
static const char *params_str(struct hm_arena *a, const struct hm_type *fn, int depth)
{
	const char *s = "(";

	for (uint32_t i = 0; i < fn->nr_params; i++) {
		const char *tc, *nc;

		decl_at(a, fn->params[i], NULL, &tc, &nc, depth);
		s = hm_arena_printf(a, "%s%s%s%s%s", s, i ? ", " : "", tc, *nc ? " " : "", nc);
	}
	if (fn->variadic)
		s = hm_arena_printf(a, "%s%s...", s, fn->nr_params ? ", " : "");
	else if (!fn->nr_params)
		s = hm_arena_printf(a, "%svoid", s);
	return hm_arena_printf(a, "%s)", s);
}
