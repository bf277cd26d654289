/*
 * refuse.h - what no launch runs, and grants too wide to take, decided once.
 *
 * A policy that cannot run where it is launched is refused by every tool
 * with the same words: omnibox-run on Linux and macOS, omnibox-run.exe,
 * omnibox-compile --emit for another target and --resolve.  A grant or a
 * symbolic link's target that would show the whole file system, a home
 * directory or the directories holding homes is named the same way by the
 * compiler's warnings and the resolver's refusals.  Pure.
 */
#ifndef OMNIBOX_DECIDE_REFUSE_H
#define OMNIBOX_DECIDE_REFUSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../base/arena.h"
#include "../ir.h"

/*
 * Why P cannot run with the sandbox BACKEND (SANDBOX_LINUX_BWRAP,
 * SANDBOX_LINUX_LANDLOCK, SANDBOX_DARWIN_SEATBELT or
 * SANDBOX_WINDOWS_JOBOBJECT; TARGET names it in the message), or NULL when
 * it can.  For SANDBOX_LINUX_LANDLOCK, what llbackend_refuse() refuses too
 * (git_ssh, copy_on_write).  *LOC: where the policy says it.  The
 * text is from A and names no file: the caller prefixes the location.
 */
const char *refuse_launch(struct arena *a, const struct policy *p, enum sandbox_type backend,
			  const char *target, struct loc *loc);

/* The same for the sandbox type alone: what has no form for the target at
 * all (the emitters refuse it too; os_env.fork only refuses a launch). */
const char *refuse_target(struct arena *a, const struct policy *p, enum sandbox_type backend,
			  const char *target, struct loc *loc);

/* The directories that hold users' homes, "/home" and its kind. */
extern const char *const refuse_home_parents[];

/*
 * What granting PATH (absolute, canonical or as written) would show, in
 * words ("the whole file system", "every user's home directory", "the whole
 * home directory", "a directory above the home directory"), or NULL when it
 * is not too wide.  HOME: the home directory as PATH spells it ("{HOME}" or
 * canonical).  DARWIN: also the system-wide macOS directories.
 */
const char *refuse_too_wide(const char *path, const char *home, bool darwin);

/*
 * May a symbolic link take a grant or the workspace WRITTEN to CANON (both
 * absolute; CANON the link followed) when the policy does not name CANON
 * itself?  Not to anything refuse_too_wide() names (HOME, DARWIN as there),
 * not into the system's trees, and not to a hidden path WRITTEN does not
 * hold (~/.ssh, ~/.aws): a link may have been planted by a sandbox of
 * another policy with write access to where it lies.
 */
bool refuse_link_target(const char *written, const char *canon, const char *home, bool darwin);

#endif
