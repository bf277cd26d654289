/*
 * explain.h - --explain: per target, what each setting becomes.
 */
#ifndef OMNIBOX_EXPLAIN_H
#define OMNIBOX_EXPLAIN_H

#include <stdbool.h>

#include "emit.h"

/*
 * Append the table of P on T to OUT: a line per setting (enforced, and by
 * what; approximated, and how it differs; or not enforced, and why), then a
 * summary.  *ALL_ENFORCED says whether nothing was left unenforced (or the
 * policy has no form there).
 */
int explain_target(const struct policy *p, enum target t, struct textbuf *out,
		   bool *all_enforced);

/*
 * The omnibox extensions P uses (compiler/decide/omnigent.h), a line each
 * with what Omnigent does with it, or a line saying there are none.
 */
void explain_extensions(const struct policy *p, struct textbuf *out);

#endif
