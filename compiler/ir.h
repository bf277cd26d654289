/*
 * ir.h - the IR: one agent's sandbox policy, platform-neutral and
 * unresolved, as plain data.  validate.c builds it (policy_compile(),
 * policy.h); every emitter, decision and launcher reads it.
 *
 * Owned by one arena, never modified after validation.  Lists keep source
 * order; emitters sort where the order carries no meaning.  Every element
 * carries the location it came from so emitted text can point back at the
 * YAML (a loc with line 0 is a default, not written in the file).
 *
 * Paths are symbolic: absolute, or relative to the workspace ({CWD}) or the
 * home directory ({HOME}).  Nothing here depends on the machine.
 */
#ifndef OMNIBOX_IR_H
#define OMNIBOX_IR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../grammar/egress.h"
#include "base/arena.h"
#include "base/diag.h"
#include "base/loc.h"

enum sandbox_type {
	SANDBOX_AUTO, /* absent or "auto": the target platform's backend */
	SANDBOX_NONE, /* "none" or null: explicit opt-out */
	SANDBOX_LINUX_BWRAP,
	SANDBOX_DARWIN_SEATBELT,
	SANDBOX_WINDOWS_JOBOBJECT,
	SANDBOX_LINUX_LANDLOCK, /* Landlock, seccomp and no_new_privs, no namespace (llbackend.h) */
};

enum path_base {
	PATH_ABSOLUTE, /* rel is the absolute path without its leading '/' */
	PATH_CWD,      /* relative to the workspace */
	PATH_HOME,     /* relative to the home directory */
	PATH_LAUNCH,   /* relative to the launch directory (os_env.cwd only) */
};

struct ir_path {
	enum path_base base;
	const char *rel;      /* '/'-joined segments, no "." or empty ones; "" = the base itself */
	const char *symbolic; /* "{CWD}/src", "{HOME}/.gitconfig", "/opt/x" */
	const char *written;  /* as in the YAML */
	struct loc loc;
};

struct ir_pathlist {
	struct ir_path *v;
	size_t n, cap;
	bool present;	/* the key was written (even as an empty list) */
	struct loc loc; /* the key */
};

struct ir_str {
	const char *s;
	struct loc loc;
};

struct ir_strlist {
	struct ir_str *v;
	size_t n, cap;
	bool present;
	struct loc loc;
};

struct ir_bool {
	bool value;
	struct loc loc; /* line 0: the default */
};

struct ir_u64 {
	uint64_t value;
	bool present;
	struct loc loc;
};

enum scan_overflow { OVERFLOW_WARN, OVERFLOW_ERROR, OVERFLOW_UNLIMITED };

enum cred_type {
	CRED_HTTPS_BEARER,
	CRED_HTTPS_BASIC,
	CRED_GIT_HTTPS,
	CRED_GH_BASIC,
	CRED_DATABRICKS_CLI,
	CRED_AWS_SIGV4,
};

enum cred_source_kind {
	CRED_SOURCE_NONE,
	CRED_SOURCE_ENV,
	CRED_SOURCE_FILE,
	CRED_SOURCE_COMMAND,
	CRED_SOURCE_UNIX_SOCKET, /* connect, read to EOF (5 s, 64 KiB) */
};

/* Where one secret comes from: {env: NAME}, {file: PATH}, {command: CMD}, {unix_socket: PATH}. */
struct cred_source {
	enum cred_source_kind kind;
	struct ir_str value; /* the name, path or command as written */
};

/*
 * HEADER: the secret as the whole value of the header the credential names.
 * SIGV4: the request is signed again with the real AWS keys.
 */
enum cred_scheme {
	CRED_SCHEME_BEARER,
	CRED_SCHEME_BASIC,
	CRED_SCHEME_TOKEN,
	CRED_SCHEME_HEADER,
	CRED_SCHEME_SIGV4,
};

/* One host a credential is bound to, with the Authorization scheme used there. */
struct cred_target {
	const char *host; /* exact, lower-cased */
	unsigned port;	  /* 443 unless written */
	const char *path; /* as written after the host, or NULL; informational */
	enum cred_scheme scheme;
	struct loc loc;
};

struct credential {
	enum cred_type type;
	struct loc loc; /* the entry */
	enum cred_source_kind source_kind;
	struct ir_str source; /* env name, file path or command */
	struct cred_target *targets;
	size_t n_targets, cap_targets;
	struct ir_strlist env;	/* variables that receive the placeholder */
	bool env_list;		/* env was written as a list (an extension) */
	struct ir_str username; /* basic schemes; NULL s = default */
	struct ir_str
	    header; /* https_bearer: the header it travels in, lower case; NULL s = Authorization */
	struct ir_strlist profiles; /* databricks_cli */
	struct ir_str default_profile;
	struct ir_u64
	    refresh_interval; /* seconds; file and unix_socket sources; !present = never */
	/* aws_sigv4 */
	struct ir_str region, service; /* service defaults to "s3" (line 0) */
	struct ir_str aws_profile;     /* credential: {profile: NAME}; NULL s = the three sources */
	struct cred_source aws_key_id, aws_secret, aws_token; /* token: kind NONE when absent */
};

enum git_op { GIT_OP_FETCH = 1, GIT_OP_PUSH = 2 };

/* One `git_ssh` entry: a repository git may reach over SSH through the broker. */
struct git_ssh {
	struct loc loc;
	struct ir_str host;	  /* lower-cased DNS name or IPv4 literal */
	unsigned port;		  /* 22 unless written */
	struct ir_str username;	  /* "git" unless written */
	struct ir_str repository; /* safe '/'-joined segments, no leading '/' */
	unsigned operations;	  /* GIT_OP_* bits; fetch unless written */
	struct loc operations_loc;
	struct ir_path identity_file;	 /* rel NULL: ssh's default identities are not used */
	struct ir_path known_hosts_file; /* absolute or {HOME}; rel NULL: ~/.ssh/known_hosts */
	struct ir_strlist allowed_cidrs; /* "a.b.c.d/n", canonical */
	struct ir_bool allow_loopback;
};

/* The `limits` extension (spec/windows.md).  Zero / !present = no limit. */
struct limits {
	bool present;
	struct loc loc;
	struct ir_u64 memory; /* bytes */
	struct ir_u64 processes;
	struct ir_u64 cpu_time; /* seconds */
	struct ir_u64 cpu_rate; /* percent 1..100 */
	struct ir_u64 open_files;
};

struct sandbox {
	enum sandbox_type type;
	struct loc type_loc; /* line 0: not written */
	struct loc loc;	     /* the sandbox key, line 0 when absent */
	struct ir_pathlist write_paths, read_paths, write_files, mask_paths, deny_unix_socket_paths;
	struct ir_pathlist cow_paths; /* write_paths entries {path, copy_on_write: true} */
	struct ir_bool allow_network;
	struct egress_rule *egress;
	size_t n_egress, cap_egress;
	bool egress_present;
	struct loc egress_loc;
	struct ir_bool egress_allow_private;
	struct credential *creds;
	size_t n_creds, cap_creds;
	struct loc creds_loc;
	struct git_ssh *git_ssh;
	size_t n_git_ssh, cap_git_ssh;
	struct loc git_ssh_loc;
	struct ir_strlist cwd_allow_hidden; /* defaults to [".venv"]; "*" = every name */
	bool allow_all_hidden;		    /* cwd_allow_hidden lists "*" */
	struct ir_bool scan_recursive;
	struct ir_u64 scan_max_entries; /* defaults to 50000 */
	enum scan_overflow scan_overflow;
	struct loc scan_overflow_loc;
	struct ir_strlist env_passthrough;
	struct limits limits;
	struct ir_pathlist protect_paths;  /* added to the protected set (protect.h) */
	struct ir_strlist unprotect_paths; /* default entries taken out, by name */
};

struct os_env {
	struct loc loc;		 /* the os_env key; line 0 when absent */
	struct ir_str cwd;	 /* NULL s: the launch directory */
	struct ir_path cwd_path; /* cwd as a path; PATH_LAUNCH when relative (valid when cwd.s) */
	struct ir_bool start_in_scratch, fork;
	struct sandbox sandbox;
};

struct ir_kv {
	const char *key, *value;
	struct loc loc;
};

struct terminal {
	const char *name;
	struct loc loc;
	struct ir_str command; /* defaults to "bash" */
	struct ir_strlist args;
	bool inherit; /* os_env: inherit, or absent */
	struct loc os_env_loc;
	struct os_env *os_env; /* its own, when !inherit */
	struct ir_bool allow_sandbox_override, allow_cwd_override;
	struct ir_kv *env;
	size_t n_env, cap_env;
	struct ir_strlist env_unset;
};

struct policy {
	const char *source; /* the file's base name (outputs must not depend on where it was) */
	bool has_os_env;
	struct os_env os_env; /* the agent's, or a selected terminal's effective one */
	struct terminal *terminals;
	size_t n_terminals, cap_terminals;
	const struct terminal *terminal; /* set by policy_select_terminal() */
};

/* Is PATH equal to DIR or below it (both absolute, canonical)? */
bool path_within(const char *path, const char *dir);

/* The same for symbolic paths as the IR spells them ("{CWD}/x"): a ".."
 * right after DIR leaves it ("{CWD}/../x" is not below {CWD}). */
bool ir_within(const char *path, const char *dir);

/* REL with "." and empty segments dropped and ".." applied; a ".." above
 * the start is dropped when ABSOLUTE ("/.." is "/"), kept otherwise.  No
 * leading or trailing '/'.  From A. */
char *path_collapse(struct arena *a, const char *rel, bool absolute);

/* Is PATH within one of DIRS (NULL-terminated)? */
bool path_within_any(const char *path, const char *const *dirs);

const char *sandbox_type_name(enum sandbox_type t);
const char *cred_type_name(enum cred_type t);
const char *cred_scheme_name(enum cred_scheme s);
const char *scan_overflow_name(enum scan_overflow o);

/* The defaults the schema gives. */
#define POLICY_DEFAULT_SCAN_MAX 50000
#define POLICY_DEFAULT_ALLOW_HIDDEN ".venv"

#endif
