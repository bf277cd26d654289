/*
 * policy.c - compiling a policy file, selecting a terminal (policy.h).
 */
#include "policy.h"
#include "validate.h"
#include "yaml_tree.h"

#include <string.h>

struct policy *
policy_compile(struct arena *a, struct diag *d, const char *name, const char *text, size_t len)
{
	return policy_compile_flags(a, d, name, text, len, 0);
}

struct policy *
policy_compile_flags(struct arena *a, struct diag *d, const char *name, const char *text,
		     size_t len, unsigned flags)
{
	struct ydoc doc;

	if (ydoc_load(a, d, text, len, &doc) < 0)
		return NULL;
	return validate_document(a, d, &doc, name, flags);
}

struct policy *
policy_select_terminal(struct arena *a, struct diag *d, const struct policy *p, const char *name)
{
	struct loc none = {0, 0, 0};
	struct policy *eff;
	const char **names;

	for (size_t i = 0; i < p->n_terminals; i++) {
		const struct terminal *t = &p->terminals[i];

		if (strcmp(t->name, name))
			continue;
		eff = arena_alloc(a, sizeof(*eff));
		*eff = *p;
		if (!t->inherit)
			eff->os_env = *t->os_env;
		eff->has_os_env = p->has_os_env || !t->inherit;
		eff->terminal = t;
		return eff;
	}
	if (p->n_terminals == 0) {
		diag_error(d, none, "no terminal named '%s': the file defines no terminals", name);
		return NULL;
	}
	names = arena_alloc(a, (p->n_terminals + 1) * sizeof(*names));
	for (size_t i = 0; i < p->n_terminals; i++)
		names[i] = p->terminals[i].name;
	{
		const char *hint = validate_suggest(name, names);

		if (hint)
			diag_error(d, none, "no terminal named '%s' (did you mean '%s'?)", name,
				   hint);
		else
			diag_error(d, none, "no terminal named '%s'", name);
	}
	return NULL;
}
