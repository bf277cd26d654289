/*
 * validate.h - the schema check that turns a YAML tree into the IR.
 */
#ifndef OMNIBOX_VALIDATE_H
#define OMNIBOX_VALIDATE_H

#include "ir.h"
#include "yaml_tree.h"

/*
 * Validate DOC against spec/schema.md and build the policy (owned by A).
 * Every problem is reported to D; returns NULL when any was an error.
 */
/* An unknown top-level key is an error, not ignored. */
#define VALIDATE_STRICT_TOPLEVEL 1u

struct policy *validate_document(struct arena *a, struct diag *d, const struct ydoc *doc,
				 const char *name, unsigned flags);

/* The candidate closest to WORD, when it is close enough to be a typo; else NULL. */
const char *validate_suggest(const char *word, const char *const *candidates);

#endif
