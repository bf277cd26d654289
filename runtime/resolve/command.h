/*
 * launch_common.h - what the Linux and macOS launches share: the
 * environment allow-list applied to a real environment, the command's
 * lookup on PATH, and a script's interpreter.
 */
#ifndef OMNIBOX_LAUNCH_COMMON_H
#define OMNIBOX_LAUNCH_COMMON_H

#include <stdbool.h>

#include "compiler/policy.h"

/* The value of NAME in ENV (NAME=VALUE strings), or NULL. */
const char *env_lookup(char *const *env, const char *name);

/*
 * NAME looked up on the PATH of ENV as execvp would, but only in absolute
 * PATH entries: an empty or relative entry would make the command depend on
 * the directory omnibox-run was started in.  Returns an arena string or NULL.
 */
char *launch_find_in_path(struct arena *a, char *const *env, const char *name);

/*
 * The interpreter a "#!" script at SCRIPT names, with "#!/usr/bin/env NAME"
 * looked up on PATH.  *OUT is NULL when SCRIPT is no script.  Returns 0, or
 * -1 with a message in ERR when env's NAME is not on PATH.
 */
int launch_script_interpreter(struct arena *a, char *const *env, const char *script,
			      const char **out, char *err, size_t errlen);

struct launch_env {
	const char *scratch;   /* TMPDIR, TMP, TEMP and TEMPDIR */
	const char *pwd;       /* where the command starts */
	const char *proxy_url; /* egress: the relay's URL, or NULL */
	const char *ca_bundle; /* egress: the session CA bundle, or NULL */
	char *const *extra;    /* NAME=VALUE set after the allow-list (placeholders), or NULL */
	size_t n_extra;
};

/*
 * The command's environment: ENV filtered through the policy's allow-list
 * (envlist.h), then E's values, then the terminal's env and env_unset.
 * NULL-terminated, from A.
 */
char **launch_env_build(struct arena *a, const struct policy *p, char *const *env,
			const struct launch_env *e);

/*
 * Apply the policy's limits to this process as rlimits (rlimit_set()):
 * memory as RLIMIT_AS, cpu_time as RLIMIT_CPU, open_files as
 * RLIMIT_NOFILE, processes as RLIMIT_NPROC (per user: approximate).  Where
 * omnibox-init is not there to do it (macOS), the launch calls this in its
 * child before the exec.  Returns 0, or -1 with errno and *WHAT naming the
 * setting ("limits.memory", ...).
 */
int launch_set_rlimits(const struct limits *l, const char **what);

/*
 * For a cleanup process just forked from omnibox-run: its own process group
 * (a Ctrl-C is for the agent), terminal signals ignored, standard streams
 * on /dev/null, and every other descriptor closed but KEEP, which becomes
 * descriptor 3.  Returns 3.
 */
int launch_detach(int keep);

#endif
