/*
 * llbackend.h - what the linux_landlock backend makes of a policy, decided
 * once: each setting enforced, approximated or not enforced (and why), the
 * Landlock ABI the policy needs, and the fixed parts of the confinement
 * (system directories, devices, the environment's HOME and TMPDIR).
 *
 * The backend runs where no namespace can be made: omnibox-init is started
 * directly (no bwrap), with no_new_privs, a seccomp filter (the bwrap
 * backend's source plus the socket rules that replace the network
 * namespace) and one Landlock ruleset built from descriptors
 * (compiler/decide/landlock.h plans it, runtime/resolve/landlock_open.h
 * opens it).  There is no mount: nothing can be shown at another path, and
 * no PID namespace: the host's processes stay listed in /proc.
 *
 * Every tool asks here: --explain's linux_landlock column, omnibox-run's
 * choice of backend under `auto` (it runs this backend only when no
 * setting is approximated or not enforced), --emit=landlock, and the
 * launch itself.  Pure: it reads the policy and nothing else.
 */
#ifndef OMNIBOX_DECIDE_LLBACKEND_H
#define OMNIBOX_DECIDE_LLBACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../ir.h"

enum ll_status { LLB_ENFORCED, LLB_APPROXIMATED, LLB_NOT_ENFORCED };

/* The settings --explain lists (one row each), as the backend sees them. */
enum llb_kind {
	LLB_BACKEND,	      /* the sandbox row itself: processes, Unix sockets, ... */
	LLB_WORKSPACE,	      /* index unused */
	LLB_HOME,	      /* private, or held by a grant */
	LLB_WRITE_PATH,	      /* sandbox.write_paths.v[index] */
	LLB_COW_PATH,	      /* sandbox.cow_paths.v[index] */
	LLB_READ_PATH,	      /* sandbox.read_paths.v[index] */
	LLB_WRITE_FILE,	      /* sandbox.write_files.v[index] */
	LLB_MASK_PATH,	      /* sandbox.mask_paths.v[index] */
	LLB_DOTFILES,	      /* cwd_allow_hidden (all hidden or scanned) */
	LLB_PROTECTED,	      /* the protected paths */
	LLB_UNPROTECT,	      /* sandbox.unprotect_paths.v[index] */
	LLB_DENY_SOCKET,      /* sandbox.deny_unix_socket_paths.v[index] */
	LLB_EGRESS_DEFAULT,   /* egress_rules: default deny */
	LLB_EGRESS_TRANSPARENT, /* egress without client settings */
	LLB_EGRESS_RULE,      /* sandbox.egress[index] */
	LLB_PRIVATE_DEST,     /* private destinations */
	LLB_CREDENTIAL,	      /* sandbox.creds[index] */
	LLB_GIT_SSH,	      /* sandbox.git_ssh[index] */
	LLB_NETWORK_OFF,      /* allow_network: false, no egress_rules */
	LLB_NETWORK_ON,	      /* allow_network: true, no egress_rules */
	LLB_ENVIRONMENT,
	LLB_LIMIT_MEMORY,
	LLB_LIMIT_PROCESSES,
	LLB_LIMIT_CPU_TIME,
	LLB_LIMIT_CPU_RATE,
	LLB_LIMIT_OPEN_FILES,
	LLB_START_IN_SCRATCH,
	LLB_FORK,
	LLB_CREDENTIAL_PROFILES, /* sandbox.creds[index], databricks_cli: its profiles' hosts */
};

struct llb_verdict {
	enum ll_status status;
	const char *how; /* enforced: by what; otherwise how it differs and why (static text) */
};

/* What the backend makes of setting KIND (INDEX into its list) of P. */
struct llb_verdict llbackend_setting(const struct policy *p, enum llb_kind kind, size_t index);

/*
 * Every setting of P that --explain lists, in its order, through EACH with
 * the setting's words as --explain writes them ("write_paths ./out"), its
 * YAML line (0: a default) and the verdict; the rows with no kind of their
 * own ("sandbox type none", "credential databricks_cli", "terminal NAME")
 * too.  Returns how many are not enforced exactly (approximated or not
 * enforced).  With SETTINGS_ONLY, LLB_BACKEND (what holds for every
 * policy: the host's processes listed in /proc) is left out: `auto` asks
 * whether the policy's own settings are enforced exactly, and says the
 * backend's limits in its one line; so does --explain --strict for a
 * policy typed linux_landlock.
 */
typedef void llb_each_fn(void *arg, const char *setting, uint32_t line, struct llb_verdict v);
size_t llbackend_settings(const struct policy *p, bool settings_only, llb_each_fn *each,
			  void *arg);

/*
 * The same rows, in the same order, with the verdicts FN gives (CTX passed
 * on): one list of settings for every backend that judges them
 * (container.h for the OCI and Kubernetes forms).
 */
typedef struct llb_verdict llb_verdict_fn(const struct policy *p, enum llb_kind kind, size_t index,
					  const void *ctx);
size_t llb_settings_walk(const struct policy *p, bool settings_only, llb_verdict_fn *fn,
			 const void *ctx, llb_each_fn *each, void *arg);

/*
 * The Landlock ABI P needs on this backend, at least LLB_ABI_BASE, with the
 * reason for the highest need in *WHY (static text): e.g. "6 (signals and
 * abstract Unix sockets scoped to the sandbox)".
 */
#define LLB_ABI_BASE 6
int llbackend_abi(const struct policy *p, const char **why);

/*
 * Why P has no form on this backend at all (git_ssh, copy_on_write), with
 * *LOC where it says so; NULL when it has one.  refuse.h's refuse_target()
 * asks here for SANDBOX_LINUX_LANDLOCK.
 */
const char *llbackend_refuse(const struct policy *p, struct loc *loc);

/* Its two reasons, for the compiler's located errors of a policy typed
 * linux_landlock ("git_ssh needs ...", "write_paths: copy_on_write needs ..."). */
extern const char llbackend_why_git_ssh[];
extern const char llbackend_why_cow[];

/*
 * The fixed rules every launch of this backend adds beside the policy's
 * grants, each once, in this order: system directories and files read and
 * executed (the bwrap backend's read-only system binds: paths.h), devices
 * read and written (/dev/null, /dev/zero, /dev/full, /dev/random,
 * /dev/urandom, /dev/tty), /proc read.  Those missing at launch are left
 * out there.  Not /dev/pts: the host's, every terminal of the user's in
 * it (the launch gives the sandbox's own terminal a rule of its own).
 */
struct llb_fixed {
	const char *path;
	bool writable; /* devices: read and write files (no make, no remove) */
	const char *why;
};
size_t llbackend_fixed(const struct llb_fixed **out);

#endif
