/*
 * darwin_launch.h - omnibox-run on macOS: the Seatbelt launch.
 *
 * The launch is `/usr/bin/sandbox-exec -f PROFILE -D NAME=VALUE... --
 * [RELAY...] COMMAND [ARG...]`: sandbox-exec by absolute path (never looked
 * up on PATH), the profile in a file of mode 0600 inside a private 0700
 * directory (never -p, which would show it in ps), the environment rebuilt
 * from the same allow-list as on Linux, the same scratch dir, the same exit
 * status rules (the command's own; 128+N after signal N; 125 when the
 * launch itself fails, in which case nothing ran).
 *
 * Everything here compiles and is tested on Linux; only the exec of
 * /usr/bin/sandbox-exec needs a Mac.  With egress_rules the egress proxy
 * (outside) and the loopback relay (inside) come from their own module:
 * this one takes the relay's port, the proxy's socket path and the relay's
 * command line as inputs.
 */
#ifndef OMNIBOX_DARWIN_LAUNCH_H
#define OMNIBOX_DARWIN_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "compiler/policy.h"
#include "emitters/sbpl.h"
#include "runtime/resolve/resolve.h"

#define DARWIN_SANDBOX_EXEC "/usr/bin/sandbox-exec"
#define DARWIN_EXIT_SETUP 125
#define DARWIN_PROFILE_NAME "profile.sb"

struct darwin_launch_plan {
	struct launch_plan facts; /* the resolver's (resolve.h), for target darwin */
	struct sbpl_context ctx;
	struct sbpl_params params;
	struct textbuf profile; /* the concrete profile; darwin_launch_plan_free() */
	char **argv;		/* after darwin_launch_argv(): sandbox-exec's, NULL-terminated */
	size_t argc;
};

/*
 * RQ resolved for macOS (launch_resolve() into F) and the facts as the
 * Seatbelt builder's context C.  Returns 0, or -1 with the error in D as
 * launch_resolve() reports it.
 */
int darwin_launch_context(struct arena *a, const struct launch_request *rq, struct launch_plan *f,
			  struct sbpl_context *c, struct diag *d);

/*
 * RQ resolved for macOS (launch_resolve(), whatever RQ->target says) and
 * the concrete profile built from the facts.  With egress_rules RQ must
 * name the relay's port, the proxy's socket and the relay's argv (unless
 * RQ->command_optional: --resolve).  Everything but PLAN->profile (freed
 * by darwin_launch_plan_free()) belongs to A.  Returns 0, or -1 with the
 * errors in D: the policy's located ones, or D->failure (diag_failure()):
 * nothing may run then.
 */
int darwin_launch_prepare(struct arena *a, const struct launch_request *rq,
			  struct darwin_launch_plan *plan, struct diag *d);

/*
 * Fill PLAN->argv: SANDBOX_EXEC (NULL: DARWIN_SANDBOX_EXEC; it must be an
 * absolute path) -f PROFILE_PATH, one -D NAME=VALUE per parameter, "--",
 * then the command (PLAN->facts.argv).  Returns 0, or -1 (EINVAL) for a relative SANDBOX_EXEC.
 */
int darwin_launch_argv(struct arena *a, struct darwin_launch_plan *plan, const char *sandbox_exec,
		       const char *profile_path);

void darwin_launch_plan_free(struct darwin_launch_plan *plan);

/*
 * Write TEXT into a new private directory under PARENT: the directory is
 * made by mkdtemp (0700) and checked to be ours and not a symlink; the file
 * DARWIN_PROFILE_NAME is created inside it with O_CREAT|O_EXCL|O_NOFOLLOW
 * and mode 0600 whatever the umask.  *DIR and *PATH are arena strings.
 * Returns 0 or -errno (nothing is left behind on failure).
 */
int darwin_profile_write(struct arena *a, const char *parent, const char *text, size_t len,
			 const char **dir, const char **path);

/* Remove what darwin_profile_write() made.  Returns 0 or -errno. */
int darwin_profile_remove(const char *dir, const char *path);

/*
 * Run PLAN->argv with PLAN->env in PLAN->start_dir and wait: signals that
 * omnibox-run receives are forwarded to it.  The policy's limits are set
 * in the child before the exec (launch_set_rlimits()), so sandbox-exec,
 * the relay and the agent all run under them.  Returns the command's exit
 * status, 128+N when signal N killed it, DARWIN_EXIT_SETUP (with a message
 * on stderr) when a limit could not be set or argv[0] could not be
 * executed: the command never ran then.
 */
int darwin_launch_run(const struct darwin_launch_plan *plan);

/* The per-user dyld cache dir when it exists (macOS only), else NULL. */
const char *darwin_dyld_cache_dir(struct arena *a);

/*
 * The whole launch, as omnibox-run on macOS performs it: a scratch dir under
 * TMPDIR (unless SCRATCH is one the caller made: it goes when the launch
 * ends, however omnibox-run ends),
 * darwin_launch_prepare(), the profile written, sandbox-exec (or
 * SANDBOX_EXEC when not NULL, for tests) run, then the profile and the
 * scratch dir removed.  With DRY_RUN the profile, the argv and the names of
 * the environment go to OUT instead and nothing runs.  Unless QUIET, what
 * the user should know before it runs (a grant that does not exist here,
 * the resolver's notes) goes to stderr first.  Returns the exit status
 * omnibox-run must exit with.
 */
int darwin_launch(const struct launch_request *rq, struct host_entry *scratch, const char *tmpdir,
		  const char *sandbox_exec, bool dry_run, bool quiet, FILE *out);

#endif
