/*
 * bwrap.h - the bubblewrap argument vector of a policy (spec/linux.md).
 *
 * One builder serves two callers.  `omnibox-compile --emit=bwrap` calls it
 * with a symbolic context: machine-specific values stay placeholders
 * ({CWD}, {HOME}, {SCRATCH}, ...) and what only the launch can know (the
 * dotfile scan, the command's directory) is described in comments, so the
 * text is identical on every machine.  omnibox-run (and --resolve) call it
 * with a resolved context: the policy's paths already made canonical and
 * absolute by the runtime, the scan done, file descriptors chosen.  Either
 * way the builder itself touches nothing outside its arguments.
 */
#ifndef OMNIBOX_BWRAP_H
#define OMNIBOX_BWRAP_H

#include <stdbool.h>
#include <stddef.h>

#include "../compiler/policy.h"
#include "../compiler/textbuf.h"

/* Where the sandbox's first process (omnibox-init) is mounted inside. */
#define BWRAP_INIT_PATH "/.omnibox/init"

struct bwrap_mask {
	const char *path;   /* canonical, absolute */
	bool is_dir;	    /* directory: empty read-only tmpfs; else /dev/null */
	const char *reason; /* for the comment: "dotfile", "mask_paths (line 9)" */
};

struct bwrap_bind {
	const char *path;
	bool writable;
};

struct bwrap_link {
	const char *path;   /* "/bin" */
	const char *target; /* "usr/bin" */
};

struct bwrap_context {
	bool resolved;	 /* the policy's paths are canonical and absolute */
	const char *cwd; /* the workspace */
	const char *home;
	const char *scratch; /* the private scratch dir */
	const char *init;    /* host path of omnibox-init */

	/* Resolved only. */
	const struct bwrap_mask *masks; /* dotfile hits and mask_paths, in order */
	size_t n_masks;
	const struct bwrap_bind *reexpose; /* grants inside a dotfile mask, bound again after it */
	size_t n_reexpose;
	const char *const *sockets; /* deny_unix_socket_paths that exist now */
	size_t n_sockets;
	const char *const *command_dirs; /* install dirs of the command outside system dirs */
	size_t n_command_dirs;
	const struct bwrap_link
	    *system_links; /* system dirs that are symlinks here (merged /usr) */
	size_t n_system_links;
	const char *const *root_dirs; /* top-level dirs of / when a grant is "/" */
	size_t n_root_dirs;
	int seccomp_fd;		      /* -1: none */
	int status_fd;		      /* --json-status-fd, -1: none */
	const char *const *init_args; /* options for omnibox-init (before "--") */
	size_t n_init_args;
	const char *const *command; /* the agent's command and arguments */
	size_t n_command;
};

/* A context of placeholders, for --emit=bwrap. */
void bwrap_context_symbolic(struct bwrap_context *c);

/*
 * Append the argument vector for P to TEXT (one argument per line, with
 * comments tracing each group to the YAML) and, when NUL is not NULL, to
 * NUL as NUL-separated arguments for `bwrap --args FD`.  Returns 0, or -1
 * after reporting to D why the policy has no bwrap form.
 */
int bwrap_build(const struct policy *p, const struct bwrap_context *c, struct diag *d,
		struct textbuf *text, struct textbuf *nul);

/* The system directories and /etc files every sandbox sees read-only. */
extern const char *const bwrap_system_dirs[];
extern const char *const bwrap_etc_files[];

/* Is PATH (canonical) inside one of the system directories above? */
bool bwrap_path_is_system(const char *path);

#endif
