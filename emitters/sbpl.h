/*
 * sbpl.h - the Seatbelt profile (SBPL) of a policy (spec/darwin.md).
 *
 * One builder serves every caller, as bwrap.h does for Linux.
 * `omnibox-compile --emit=sbpl` calls it with a symbolic context: every
 * machine-specific value is a parameter ((param "CWD"), (param "HOME"), ...),
 * so the text is identical on every machine and can be committed and
 * reviewed.  omnibox-run on macOS, and `omnibox-compile --resolve
 * --target=darwin`, call it with a resolved context: the policy's paths made
 * canonical and absolute (macOS spellings: /private/tmp, /private/var,
 * /private/etc), the command's directory known, the parameter values
 * concrete.  Either way the builder touches nothing outside its arguments.
 *
 * Shape of every profile: (version 1), (deny default), then every allow,
 * then every deny, so it means the same whether Seatbelt resolves a
 * conflict by "last match wins" or by "deny wins".  Exceptions to a deny
 * (cwd_allow_hidden, a grant that names a dotfile, ~/Library/Logs) are
 * written inside the deny's own filter (require-not), never as a later
 * allow.
 */
#ifndef OMNIBOX_SBPL_H
#define OMNIBOX_SBPL_H

#include <stdbool.h>
#include <stddef.h>

#include "../compiler/base/arena.h"
#include "../compiler/policy.h"
#include "../compiler/base/textbuf.h"
#include "../compiler/decide/paths.h"
#include "emit.h"

/*
 * The emitters of emit.c's table: --emit=sbpl (the profile) and
 * --emit=sbpl-params (its -D list), symbolic.
 */
int emit_sbpl(const struct policy *p, enum target t, struct diag *d, struct textbuf *out);
int emit_sbpl_params(const struct policy *p, enum target t, struct diag *d, struct textbuf *out);
/* emit_sbpl() into OUT and emit_sbpl_params() into PARAMS, from one build. */
int emit_sbpl_pair(const struct policy *p, enum target t, struct diag *d, struct textbuf *out,
		   struct textbuf *params);

/* sandbox-exec refuses larger profiles; omnibox refuses to write them. */
#define SBPL_MAX_SIZE (256u * 1024u)

/* The parameters a profile may reference, in the order they are listed. */
enum sbpl_param {
	SBPL_PARAM_CWD,	    /* the workspace, canonical */
	SBPL_PARAM_HOME,    /* the home directory, canonical */
	SBPL_PARAM_SCRATCH, /* the private scratch dir ($TMPDIR) */
	SBPL_PARAM_CWD_RE,  /* CWD escaped for a regex (sbpl_regex_escape) */
	SBPL_PARAM_HOME_RE,
	SBPL_PARAM_SCRATCH_RE,
	SBPL_PARAM_PORT, /* the loopback relay's port (egress only) */
	SBPL_PARAM_SOCK, /* the egress proxy's Unix socket (egress only) */
	SBPL_PARAM_COUNT,
};

/* "CWD", "HOME", ... */
const char *sbpl_param_name(enum sbpl_param p);

/* A hidden dotfile found by a scan, for the per-file enumeration mode. */
struct sbpl_hidden {
	const char *path; /* canonical, absolute */
	bool is_dir;
};

struct sbpl_context {
	bool resolved; /* the policy's paths are canonical, absolute macOS paths */
	/*
	 * Parameter values.  Symbolic: "{CWD}", "{HOME}", "{SCRATCH}", "{PORT}",
	 * "{SOCK}".  Resolved: canonical paths, the port in decimal.  A policy
	 * path that starts with CWD, HOME or SCRATCH is written relative to the
	 * parameter, so the profile text depends on the machine as little as
	 * possible.
	 */
	const char *cwd, *home, *scratch, *port, *proxy_socket;

	/* Resolved only. */
	const char *const *command_dirs; /* install dirs of the command (and relay) */
	size_t n_command_dirs;
	const char *dyld_cache_dir; /* the per-user dyld cache dir, or NULL */
	/* More protected paths the launch found (protect.h): the git entries
	 * of every repository in a writable root, and what the host's git
	 * configuration names there. */
	const char *const *protected;
	size_t n_protected;

	/*
	 * The alternate dotfile mode: deny each path of HIDDEN (a scan's hits)
	 * one by one, with rename denies on its ancestors, instead of the
	 * regular expressions that express the same set without a scan.  Used
	 * by the benchmark and by the tests that prove both forms equal.
	 */
	bool enumerate_hidden;
	const struct sbpl_hidden *hidden;
	size_t n_hidden;

	size_t max_size; /* 0: SBPL_MAX_SIZE; tests lower it */
};

/* A context of placeholders, for --emit=sbpl. */
void sbpl_context_symbolic(struct sbpl_context *c);

/*
 * The values of the parameters a built profile references.  value is the
 * context's (a placeholder like "{CWD}" when symbolic, "{CWD:regex}" for a
 * regex parameter).  The strings belong to the arena given to sbpl_build().
 */
struct sbpl_params {
	bool used[SBPL_PARAM_COUNT];
	const char *value[SBPL_PARAM_COUNT];
	/*
	 * Symbolic only: a path that climbs out of its base ("{CWD}/../libs")
	 * cannot be written relative to a parameter (Seatbelt compares
	 * canonical paths, so "/x/proj/../libs" would never match), so it gets a
	 * parameter of its own, named after its list and position
	 * (READ_PATHS_2, and READ_PATHS_2_RE when a regex needs it), whose
	 * value is the canonical path at launch.
	 */
	const char **extra_name, **extra_value;
	size_t n_extra, cap_extra;
};

/*
 * Append P's profile to PROFILE under context C and record in PARAMS (may
 * be NULL) the parameters it references with their values.  Scratch
 * memory comes from A.  A resolved context holds the resolver's facts
 * (runtime/resolve/resolve.h), already checked: command directories that
 * would widen the sandbox were refused there.  Returns 0, or -1 after
 * reporting to D (with the YAML location) why the policy has no Seatbelt
 * form here: a control byte in a path, or a profile over the size limit
 * (the message names the setting that made it large).  PROFILE is then to
 * be discarded.
 */
int sbpl_build(struct arena *a, const struct policy *p, const struct sbpl_context *c,
	       struct diag *d, struct textbuf *profile, struct sbpl_params *params);

/*
 * Append the parameter list: one "-D NAME=VALUE" per line, in the order of
 * enum sbpl_param, after a comment naming SOURCE.  Values are not quoted:
 * they are single argv elements.
 */
void sbpl_params_format(const struct sbpl_params *params, const char *source, struct textbuf *out);

/*
 * Append S as an SBPL string literal (quotes included): '\' and '"'
 * escaped.  Returns -1, appending nothing, when S holds a byte below 0x20
 * or 0x7F, which no profile may carry.
 */
int sbpl_put_string(struct textbuf *out, const char *s);

/* Append S with every regex metacharacter escaped by a backslash. */
void sbpl_regex_escape(struct textbuf *out, const char *s);

/* Can P be written for Seatbelt at all?  git_ssh and copy_on_write are Linux's only. */
bool sbpl_can_express(const struct policy *p);

#endif
