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

/*
 * Raise this process's soft RLIMIT_NOFILE to its hard limit, as far as it
 * goes (best effort: nothing is reported).
 */
void rlimit_raise_nofile(void);

struct limits;

/*
 * Apply the policy's limits to this process as rlimits (rlimit_set()):
 * memory as RLIMIT_DATA, cpu_time as RLIMIT_CPU, open_files as
 * RLIMIT_NOFILE, processes as RLIMIT_NPROC (per user: approximate).  Where
 * omnibox-init is not there to do it (macOS), the launch calls this in its
 * child before the exec.  Returns 0, or -1 with errno and *WHAT naming the
 * setting ("limits.memory", ...).
 */
int launch_set_rlimits(const struct limits *l, const char **what);

#endif
