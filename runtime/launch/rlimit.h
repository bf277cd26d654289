/*
 * rlimit.h - the policy's limits as rlimits: one definition for
 * omnibox-init (Linux, inside the sandbox) and the macOS launch.
 */
#ifndef OMNIBOX_RLIMIT_H
#define OMNIBOX_RLIMIT_H

/*
 * Set RESOURCE's soft and hard limit to V, so the agent cannot raise it
 * again; for RLIMIT_CPU the hard limit is V + 1 (SIGXCPU at the limit,
 * SIGKILL a second later if that is caught).  V = 0 is refused (EINVAL).
 * Returns 0, or -1 with errno.
 */
int rlimit_set(int resource, unsigned long long v);

#endif
