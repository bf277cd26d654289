/*
 * choose.h - which Linux backend runs a policy: bubblewrap where namespaces
 * can be made, linux_landlock where they cannot, and never less than the
 * policy asks without the user having written so.
 *
 *   type linux_bwrap      bwrap (where it cannot start: refused, with why)
 *   type linux_landlock   Landlock, seccomp and no_new_privs, wherever;
 *                         the approximations --explain lists are accepted
 *   auto (or absent)      bwrap where this process can make namespaces;
 *                         where it cannot, linux_landlock when it enforces
 *                         every setting of the policy exactly
 *                         (compiler/decide/llbackend.h) and this kernel's
 *                         Landlock is new enough, said in one line; else
 *                         refused with the settings it cannot enforce and
 *                         how to accept them
 */
#ifndef OMNIBOX_CHOOSE_H
#define OMNIBOX_CHOOSE_H

#include <stdbool.h>
#include <stddef.h>

#include "compiler/policy.h"

/*
 * 0 when this process can make the namespaces bwrap needs (a user and a
 * mount namespace for a user other than root, a mount namespace for root,
 * with a mount in it), else the errno of the first refusal.  Forks a child
 * that says what it found as it ends, and returns while the kernel still
 * tears its namespace down: launch_probe_reap() reaps it (any later call
 * does too).
 */
int launch_namespaces_refused(void);

/* Reap the last probe's child, if not yet: it has ended, or is ending. */
void launch_probe_reap(void);

/*
 * The backend for P: *LANDLOCK set when linux_landlock runs it.  Returns 0,
 * or -1 with what to tell the user in ERR (a refusal: nothing runs).
 * Unless QUIET, says in one line why linux_landlock runs under auto, and
 * how many settings it approximates when it was written.
 */
int launch_choose_linux(const struct policy *p, bool quiet, bool *landlock, char *err,
			size_t errlen);

#endif
