/*
 * why_answer.h - omnibox-run --why: whether the command may read and write
 * a path (or GET a URL), and which rule decides.
 */
#ifndef OMNIBOX_WHY_ANSWER_H
#define OMNIBOX_WHY_ANSWER_H

#include "compiler/policy.h"
#include "runtime/resolve/resolve.h"

/*
 * The policy's answer for WHAT, on stdout: a path from the launch PLAN
 * resolved on this machine (why.h), when there is one; a URL, or any query
 * without a plan, from the IR P (query.h).  A question that cannot be
 * parsed is said on stderr.  Returns 0, or 2 when one could not be.
 */
int why_answer(struct arena *a, const struct policy *p, const struct launch_plan *plan,
	       const char *what);

#endif
