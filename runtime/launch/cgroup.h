/*
 * cgroup.h - limits through a delegated cgroup v2, where one exists.
 *
 * rlimits are per process (RLIMIT_DATA) or per user (RLIMIT_NPROC); a cgroup
 * bounds the sandbox as a whole.  When omnibox-run's own cgroup v2 offers
 * the needed controllers to its children, the sandbox gets a child cgroup
 * with memory.max, pids.max and cpu.max; otherwise the caller keeps the
 * rlimits alone and says what that means.
 */
#ifndef OMNIBOX_CGROUP_H
#define OMNIBOX_CGROUP_H

#include <stddef.h>

#include "compiler/policy.h"

/*
 * Create a child cgroup holding the limits of L that cgroups enforce.
 * Returns its directory (from A), or NULL with the reason in WHY: no
 * cgroup v2, controllers not delegated, no permission.  Not an error.
 */
char *cgroup_create(struct arena *a, const struct limits *l, char *why, size_t whylen);

/* Move the calling process into cgroup DIR.  Returns 0 or -errno. */
int cgroup_enter(const char *dir);

/* Remove cgroup DIR once its processes are gone. */
void cgroup_remove(const char *dir);

#endif
