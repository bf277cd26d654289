/*
 * resolve.h - turning a policy into the exact launch on this machine.
 *
 * The compiler's output is symbolic; this is where it meets the
 * filesystem: the workspace and home are made canonical, every path of the
 * policy is resolved (symlinks followed, ".." collapsed), the dotfile scan
 * runs, missing mask_paths get placeholders, the command is located and
 * made visible, and the bwrap argument vector is built by the same builder
 * that --emit=bwrap uses.  omnibox-run executes the result;
 * `omnibox-compile --resolve` and `omnibox-run --dry-run` print it.
 */
#ifndef OMNIBOX_RESOLVE_H
#define OMNIBOX_RESOLVE_H

#include <stdbool.h>
#include <stddef.h>

#include "compiler/policy.h"
#include "emitters/bwrap.h"

struct launch_request {
	const struct policy *policy; /* the effective policy (terminal selected) */
	const char *launch_dir;	     /* where omnibox-run was started (absolute) */
	const char *cwd;	     /* --cwd: the workspace, overriding os_env.cwd; or NULL */
	const char *home;	     /* the home directory (absolute) */
	const char *scratch;	     /* the private scratch dir (absolute) */
	const char *init;	     /* host path of omnibox-init */
	char *const *command;	     /* the agent's argv; NULL: the terminal's command */
	size_t n_command;
	char *const *environ;	   /* the launching environment */
	bool create_placeholders;  /* a real launch (not --dry-run / --resolve) */
	bool command_optional;	   /* --resolve without a command: print {COMMAND} */
	int seccomp_fd, status_fd; /* for the argv; -1 when not known */

	/* egress_rules: the relay's port inside the sandbox and the proxy's
	 * socket; NULL when not chosen yet (--dry-run, --resolve). */
	const char *proxy_port;
	const char *proxy_socket;
	char *const *extra_env; /* NAME=VALUE (credential placeholders) */
	size_t n_extra_env;
};

/* File names inside the scratch dir. */
#define LAUNCH_PROXY_SOCKET "omnibox-proxy.sock"

struct launch_plan {
	struct policy *policy; /* the policy with canonical, absolute paths */
	struct bwrap_context ctx;
	const char *workspace;
	const char *exec_path; /* the command's canonical path */
	char **argv;	       /* the command, argv[0] as given */
	size_t argc;
	char **env;		   /* NAME=VALUE, NULL-terminated */
	const char **placeholders; /* created for missing mask_paths; remove after */
	size_t n_placeholders;
	const char **notes; /* things the user should know (scan overflow, ...) */
	size_t n_notes;
};

/*
 * Resolve RQ into PLAN (everything allocated from A).  Returns 0, or -1
 * with a message in ERR that says what to change; nothing must run then.
 */
int launch_resolve(struct arena *a, const struct launch_request *rq, struct launch_plan *plan,
		   char *err, size_t errlen);

/*
 * The canonical form of PATH: symlinks resolved for the part that exists,
 * "." and ".." collapsed in the rest.  PATH must be absolute.  Returns an
 * arena string, or NULL (with errno) when a component cannot be examined.
 */
char *resolve_canonical(struct arena *a, const char *path);

/*
 * The bwrap argument text of PLAN followed by what else the launch sets:
 * the environment's names (values may be secrets) and the scratch dir.
 * For --dry-run and --resolve.
 */
void launch_describe(const struct launch_plan *plan, struct textbuf *out);

/*
 * omnibox-init for a program installed in EXE_DIR: beside it (the build
 * tree) or in EXE_DIR/../libexec/omnibox (an installation).  NULL if absent.
 */
char *launch_find_init(struct arena *a, const char *exe_dir);

/* Remove what launch_resolve() created on the host (placeholders). */
void launch_cleanup(const struct launch_plan *plan);

/*
 * Remove the directory tree at PATH without following symlinks, making
 * unreadable directories readable first.  Returns 0 or -errno.
 */
int rmtree(const char *path);

#endif
