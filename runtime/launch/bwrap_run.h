/*
 * bwrap_run.h - bwrap running, for omnibox-run's Linux launch
 * (launch_bwrap.c, its only user): started as soon as its own arguments
 * are known, ended when the launch does not go on, and run: omnibox-init
 * handed the rest of its arguments (handover.h), the signals forwarded,
 * the seccomp refusals served, until bwrap's end.
 */
#ifndef OMNIBOX_BWRAP_RUN_H
#define OMNIBOX_BWRAP_RUN_H

#include <stdbool.h>
#include <stddef.h>

#include "compiler/base/textbuf.h"
#include "runtime/launch/launch_bwrap.h"

/* The signals omnibox-run forwards held pending (HOLD), or taken again. */
void bwrap_signals_hold(bool hold);

/*
 * bwrap started, its arguments NUL (bwrap's own: --args), omnibox-init to be
 * handed the rest on its ready socket, with an empty environment (the
 * agent's comes with the rest).  It is given the descriptors the launch
 * knows before the resolve, and with RESOLVED those the plan holds too,
 * which arguments of its own may name.  This process is the subreaper of
 * what the sandbox leaves.  0, or -1 with ERR.
 */
int bwrap_spawn(struct bwrap_launch *l, const struct textbuf *nul, bool resolved, char *err,
		size_t errlen);

/* A bwrap started whose omnibox-init has not been handed its arguments
 * ended, its child too: nothing of the agent's ran. */
void bwrap_end(struct bwrap_launch *l);

/*
 * The run: bwrap started if it is not yet (or linux_landlock's omnibox-init),
 * omnibox-init handed its arguments, the egress proxy's word passed on, the
 * terminal relayed, until bwrap ends.  *STATUS: the command's exit status,
 * or LAUNCH_EXIT_SETUP when nothing of it ran (said on stderr).  0, or -1
 * with ERR when the launch could not go on (the sandbox ended).
 */
int bwrap_run(struct bwrap_launch *l, int *status, char *err, size_t errlen);

#endif
