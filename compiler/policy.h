/*
 * policy.h - compiling an agent YAML into the IR (ir.h), and selecting a
 * terminal's effective policy.
 */
#ifndef OMNIBOX_POLICY_H
#define OMNIBOX_POLICY_H

#include "ir.h"
#include "validate.h"

/*
 * Parse and validate LEN bytes of agent YAML named NAME.  Diagnostics go to
 * D.  Returns the policy (owned by A) or NULL when there were errors.
 */
struct policy *policy_compile(struct arena *a, struct diag *d, const char *name, const char *text,
			      size_t len);

/* POLICY_STRICT_TOPLEVEL: an unknown top-level key is an error, not ignored. */
#define POLICY_STRICT_TOPLEVEL VALIDATE_STRICT_TOPLEVEL
struct policy *policy_compile_flags(struct arena *a, struct diag *d, const char *name,
				    const char *text, size_t len, unsigned flags);

/*
 * The effective policy of terminal NAME: its own os_env, or the agent's
 * when it inherits.  Returns NULL (with a diagnostic) when there is no
 * such terminal.
 */
struct policy *policy_select_terminal(struct arena *a, struct diag *d, const struct policy *p,
				      const char *name);

#endif
