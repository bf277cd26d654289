/*
 * unsandboxed.h - sandbox type none: the policy's explicit opt-out.
 *
 * The command runs as is, but still in its workspace (chosen as for every
 * launch: launch_workspace()) and with the environment allow-list, which
 * applies to every launch path.  No scratch dir: the command is exec'd in
 * place, and nothing would remove one.
 */
#ifndef OMNIBOX_UNSANDBOXED_H
#define OMNIBOX_UNSANDBOXED_H

#include <stddef.h>

#include "compiler/policy.h"
#include "runtime/launch/launch.h"

/*
 * Run O's command (or P's terminal) in the workspace WS, unsandboxed, in
 * place of this process; unless O->quiet, say so first.  With O->dry_run,
 * describe it on stdout and return 0.  Otherwise returns only on failure:
 * -1 with a message in ERR (nothing ran).
 */
int unsandboxed_exec(struct arena *a, const struct launch_options *o, const struct policy *p,
		     const char *ws, char *err, size_t errlen);

#endif
