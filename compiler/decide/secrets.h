/*
 * secrets.h - what the sandbox can see, and the host files a credential
 * is read from: one answer for the compiler, the resolver and the proxy.
 *
 * The files omnibox-run reads secrets from (credential sources, the
 * databricks_cli configuration, the aws_sigv4 shared credentials file,
 * git_ssh's keys) must never be visible in the sandbox.  The compiler asks
 * about symbolic paths ({CWD}, {HOME}, absolute), the resolver asks again
 * about the canonical paths of this machine with the grants it made
 * canonical; both get the same decision, which is also the one --query
 * gives for the dotfile rules.
 */
#ifndef OMNIBOX_SECRETS_H
#define OMNIBOX_SECRETS_H

#include <stdbool.h>
#include <stddef.h>

#include "../ir.h"

/* aws_sigv4 {profile: NAME}: this file below the home directory (AWS_SHARED_CREDENTIALS_FILE
 * and ~/.aws/config are not read). */
#define CRED_AWS_CREDENTIALS ".aws/credentials"
/* databricks_cli: this file below the home directory, unless DATABRICKS_CONFIG_FILE names one. */
#define CRED_DATABRICKS_CONFIG ".databrickscfg"
#define CRED_DATABRICKS_CONFIG_ENV "DATABRICKS_CONFIG_FILE"

/* At most this many host files per credential (aws_sigv4's three sources). */
#define CRED_HOST_FILES_MAX 3
/* At most this many sources per credential (its source, or aws_sigv4's three). */
#define CRED_SOURCES_MAX 3

/*
 * Is NAME (lower case) a header the proxy itself sets, strips or acts on,
 * so that a secret cannot travel in it (https_bearer's `header`)?  The
 * compiler refuses such a policy; the proxy's table parser refuses such a
 * table.
 */
bool cred_header_reserved(const char *name);

/* One host file omnibox-run reads a secret from. */
struct cred_host_file {
	struct ir_path path; /* PATH_HOME, PATH_ABSOLUTE, or PATH_LAUNCH (a relative
			      * DATABRICKS_CONFIG_FILE); loc: where the policy asks for it */
	const char *what;    /* "credential file", "databricks_cli configuration", ... */
	bool socket;	     /* a unix_socket source: connected to, not opened */
};

/*
 * The sources of CR that are set, in order: its `source`, or aws_sigv4's
 * access_key_id, secret_access_key and session_token.  Fills OUT, returns
 * the count (0 for databricks_cli and an aws_sigv4 profile).
 */
size_t cred_sources(const struct credential *cr, struct cred_source out[CRED_SOURCES_MAX]);

/*
 * Every host file omnibox-run reads for CR: file and unix_socket sources,
 * the databricks_cli configuration (DATABRICKS_CONFIG, the value of
 * DATABRICKS_CONFIG_FILE where the proxy runs, when set and not empty;
 * the compiler passes NULL), the shared credentials file of an aws_sigv4
 * profile.  Strings come from A; fills OUT, returns the count.
 */
size_t cred_host_files(struct arena *a, const struct credential *cr, const char *databricks_config,
		       struct cred_host_file out[CRED_HOST_FILES_MAX]);

/*
 * The dotfile that hides PATH in the sandbox of SB, or NULL.  WS spells
 * the workspace as PATH and the grants of SB do ("{CWD}" for symbolic
 * paths, the canonical workspace for canonical ones).  The roots the scan
 * walks are the workspace and each granted directory outside it (a copy
 * is a root of its own); a grant that names a hidden path opts in to
 * exactly that path.  The string (a prefix of PATH) is from A.
 */
const char *sandbox_hidden_dotfile(struct arena *a, const struct sandbox *sb, const char *ws,
				   const char *path);

/* How the sandbox comes to see a path. */
struct exposure {
	const struct ir_path *grant; /* the deepest grant that holds it; NULL: the workspace */
	const char
	    *dotfile; /* a dotfile on its way that stays visible (a prefix of the path), or NULL */
	bool allowed; /* DOTFILE is named by cwd_allow_hidden (else the scan stops above it) */
	bool file_mask; /* hidden, but by a mask on the file itself, which the host
			 * replacing the file (token rotation) undoes while the sandbox runs */
};

/*
 * Can the sandbox of SB read or write PATH (spelled as WS and the grants
 * are)?  True when a grant or the workspace holds it and neither
 * mask_paths nor the dotfile rules hide it; then E says how.
 */
bool sandbox_exposes(struct arena *a, const struct sandbox *sb, const char *ws, const char *path,
		     struct exposure *e);

#endif
