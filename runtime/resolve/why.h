/*
 * why.h - "may the command read or write this path?", from the launch itself.
 *
 * omnibox-run --why and omnibox-compile --resolve --query answer from the
 * mounts of the argument vector the launch passes (bwrap_mounts_build(),
 * recorded by the calls that write the arguments), the Landlock paths
 * omnibox-init is given, and the file's owner and mode on this machine:
 * not from a second model of the launch, so they cannot disagree with it.
 */
#ifndef OMNIBOX_WHY_H
#define OMNIBOX_WHY_H

#include "compiler/base/arena.h"
#include "emitters/query.h"
#include "runtime/resolve/resolve.h"

/*
 * PATH as a user types it (absolute, "~" or "~/...", or relative to the
 * workspace) made absolute and canonical for PLAN; from A.
 */
const char *launch_why_path(struct arena *a, const struct launch_plan *plan, const char *path);

/*
 * May the command of PLAN (a Linux launch) read (QUERY_READ) or write
 * (QUERY_WRITE: open an existing file for writing, make an entry in an
 * existing directory, or create a missing path) PATH, canonical?  *D says
 * so and which mount decides, in the words of the argument vector's
 * comments.
 */
void launch_why(struct arena *a, const struct launch_plan *plan, const char *path,
		enum query_access access, struct decision *d);

#endif
