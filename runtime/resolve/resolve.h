/*
 * resolve.h - a policy meets this machine: the one resolver of every launch.
 *
 * The compiler's output is symbolic; this is where it meets the
 * filesystem, for omnibox-run on Linux and on macOS and for `omnibox-compile
 * --resolve`: the workspace and home made canonical, every path of the
 * policy opened (walk.h: no symlink the agent planted can redirect it), the
 * grants that would widen the sandbox to "/" or a home directory refused,
 * the dotfile scan run, missing mask_paths given placeholders, the command
 * located and made visible, the environment rebuilt from the allow-list.
 *
 * What comes out is facts: canonical paths and, on Linux, the descriptor
 * each mount is made from.  The emitters turn them into a bwrap argv
 * (bwrap.h) or a Seatbelt profile (sbpl.h); nothing is resolved twice.
 */
#ifndef OMNIBOX_RESOLVE_H
#define OMNIBOX_RESOLVE_H

#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <sys/types.h>

#include "compiler/base/diag.h"
#include "compiler/policy.h"
#include "emitters/bwrap.h"
#include "runtime/resolve/gitguard.h"
#include "runtime/resolve/host.h"
#include "runtime/resolve/writeback.h"

/* File names inside the scratch dir. */
#define LAUNCH_PROXY_SOCKET BWRAP_PROXY_SOCKET

enum launch_target { LAUNCH_LINUX, LAUNCH_DARWIN };

struct launch_request {
	const struct policy *policy; /* the effective policy (terminal selected) */
	enum launch_target target;
	const char *launch_dir; /* where the launch was started (absolute) */
	const char *cwd;	/* --cwd (absolute, or relative to launch_dir); or NULL */
	const char *home;	/* the home directory (absolute) */
	const char *scratch;	/* the private scratch dir (absolute; made by the caller,
				 * or a name of the form .../omnibox-XXXXXX when only described) */
	char *const *command;	/* the agent's argv; NULL: the terminal's command */
	size_t n_command;
	char *const *environ;	  /* the launching environment */
	bool create_placeholders; /* a real launch (not --dry-run / --resolve) */
	bool command_optional;	  /* --resolve without a command: print {COMMAND} */
	const char *policy_file;  /* the policy's path (protected when writable), or NULL */

	/* egress_rules: the relay's port inside the sandbox and the proxy's
	 * socket; NULL when not chosen yet (--dry-run, --resolve). */
	const char *proxy_port;
	const char *proxy_socket;
	char *const *extra_env; /* NAME=VALUE (credential placeholders) */
	size_t n_extra_env;

	/* Linux. */
	const char *init;	   /* host path of omnibox-init, or NULL: "{INIT}" */
	const char *bwrap;	   /* the bwrap that will run (found on PATH), or NULL */
	int seccomp_fd, status_fd; /* for the argv; -1 when not known */
	int ready_fd;		   /* omnibox-init's --ready-fd; -1 when not known */
	bool landlock_scope;	   /* scope abstract sockets and signals (network shared) */
	/* linux_landlock: no bwrap, no mount.  The private home is not masked
	 * in the scratch dir (HOME names it there instead of a mount at the
	 * home), and nothing is checked of a bwrap. */
	bool landlock;

	/* macOS: the relay's command line, before the command (egress only),
	 * and the per-user dyld cache dir (or NULL). */
	char *const *relay_argv;
	size_t n_relay_argv;
	const char *dyld_cache_dir;
};

struct launch_plan {
	enum launch_target target;
	struct policy *policy; /* a copy with canonical, absolute paths */
	const char *workspace, *home, *scratch;
	const char *start_dir; /* the workspace, or the scratch dir (start_in_scratch) */
	const char *exec_path; /* the command's canonical path */
	char **argv;	       /* the command (macOS: the relay's argv first), NULL-terminated */
	size_t argc;
	char **env;		   /* NAME=VALUE, NULL-terminated */
	const char **command_dirs; /* directories made visible for the command */
	size_t n_command_dirs;

	/* Linux: the bwrap context (grants with their descriptors, masks, ...). */
	struct bwrap_context ctx;
	/* linux_landlock: the rules omnibox-init gets, once opened
	 * (landlock_rules_open()); --why answers from them.  NULL: bwrap's. */
	const struct landlock_arg_rule *ll_rules;
	size_t n_ll_rules;
	int *fds; /* every mount source the plan holds open; launch_plan_close() */
	size_t n_fds, cap_fds;
	struct host_entry *placeholders; /* made for missing mask_paths */
	size_t n_placeholders;

	const char **roots; /* the writable roots, canonical */
	size_t n_roots;
	const char **notes; /* what the user should know (scan overflow, ...) */
	size_t n_notes;
	const char **skipped; /* grants that do not exist here: not mounted */
	size_t n_skipped;

	/* Linux: write_files copied back from their private directories
	 * (writeback.h); their descriptors close with launch_cleanup(). */
	struct writeback *writebacks;
	size_t n_writebacks;

	/* Every repository in the writable roots at launch, sorted by path, and
	 * the masked directories neither walk enters (gitguard.h). */
	struct gitguard_entry *gits;
	size_t n_gits;
	struct gitguard_prune git_prune;

	/* macOS: the protected paths of the repositories in the writable roots
	 * (the profile denies them; Linux binds them, ctx.protects). */
	const char **protected;
	size_t n_protected;
};

/*
 * Resolve RQ into PLAN (strings from A).  Returns 0, or -1 with one error
 * in D that says what to change: a located diagnostic (diag_error()) when
 * an entry of the policy is to blame, printed with its line and a caret by
 * diag_print() (D must be the one the policy was compiled with, so it holds
 * the source); otherwise D->failure (diag_failure()), a plain message the
 * caller words as its own.  Nothing may run then, and PLAN holds nothing.
 */
int launch_resolve(struct arena *a, const struct launch_request *rq, struct launch_plan *plan,
		   struct diag *d);

/*
 * The same in two steps, for a launch that starts bwrap between them.
 * launch_resolve_begin() resolves what bwrap's own arguments can depend
 * on, touching nothing in the workspace: the workspace's and the home's
 * canonical paths, the writable roots, omnibox-init opened and bwrap
 * checked (neither where the sandbox can write), the system's links; the
 * context (PLAN->ctx) holds them, and no grant, mask or command yet.
 * launch_resolve_finish() (R from the first, with the same RQ, which may
 * have gained its egress fields meanwhile) resolves the rest.  Errors and
 * what a failure leaves as for launch_resolve(); after a failed first step
 * there is no second.
 */
struct launch_resolving;
int launch_resolve_begin(struct arena *a, const struct launch_request *rq, struct launch_plan *plan,
			 struct diag *d, struct launch_resolving **r);
int launch_resolve_finish(struct launch_resolving *r);

/*
 * The workspace of RQ alone (canonical), by the same rules: --cwd, else
 * os_env.cwd, else the launch directory; a terminal's --cwd only inside its
 * own workspace, and only with allow_cwd_override unless it names it.  For
 * sandbox type none, which resolves nothing else.  NULL on failure, with
 * the error in D as for launch_resolve().
 */
const char *launch_workspace(struct arena *a, const struct launch_request *rq, struct diag *d);

/* Can the sandbox of PLAN write PATH (canonical) or where it lies? */
bool launch_plan_writable(const struct launch_plan *plan, const char *path);

/* Close the mount sources of PLAN (once bwrap has them).  Placeholders stay. */
void launch_plan_close(struct launch_plan *plan);

/*
 * After the run: set aside every repository the sandbox made in the
 * writable roots of PLAN (gitguard_quarantine()), saying so on OUT.
 */
int launch_quarantine(const struct launch_plan *plan, FILE *out);

/* Remove the placeholders PLAN made (host.h: only what is still ours); close
 * the write_files descriptors. */
void launch_cleanup(struct launch_plan *plan);

/*
 * The bwrap argument text of PLAN (or ARGV_TEXT, linux_landlock's
 * omnibox-init command line, when not NULL) followed by what else the launch sets:
 * the environment's names (values may be secrets), the scratch dir, grants
 * not mounted and notes.  For --dry-run and --resolve.
 */
void launch_describe(const struct launch_plan *plan, const char *argv_text, struct textbuf *out);

/*
 * omnibox-init for a program installed in EXE_DIR: beside it (the build
 * tree) or in EXE_DIR/../libexec/omnibox (an installation).  NULL if absent.
 */
char *launch_find_init(struct arena *a, const char *exe_dir);

#endif
