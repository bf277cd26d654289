/*
 * credentials.h - the credential proxy: real secrets outside, placeholders inside.
 *
 * cred_prepare() runs in omnibox-run before the sandbox starts.  It reads
 * each credential_proxy entry's real secret (environment, file, command or
 * Unix socket; databricks_cli profiles from ~/.databrickscfg; aws_sigv4
 * keys from their sources or a profile of ~/.aws/credentials: the files
 * are those cred_host_files() lists, compiler/secrets.h), makes a fresh
 * placeholder "oa_cred_" + 32 random [A-Za-z0-9] for entries that hand
 * one to the sandbox, and returns
 *
 *   - the proxy's table (struct proxy_cred: host, scheme, user, secret,
 *     placeholder), one row per bound host;
 *   - NAME=VALUE additions for the sandbox's environment (placeholders and
 *     file paths only);
 *   - files to write into the scratch dir (placeholders only).
 *
 * The helpers below are what the proxy applies to each request: find a
 * placeholder anywhere, and rewrite Authorization for a bound host.
 */
#ifndef OMNIBOX_CREDENTIALS_H
#define OMNIBOX_CREDENTIALS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "compiler/policy.h"
#include "runtime/egress/proxy.h"

#define CRED_PREFIX "oa_cred_"
#define CRED_PREFIX_LEN 8
#define CRED_RANDOM_LEN 32
#define CRED_PLACEHOLDER_LEN (CRED_PREFIX_LEN + CRED_RANDOM_LEN)
/* Longest secret accepted from a source. */
#define CRED_SECRET_MAX 16384
/* Seconds a `command` source may run. */
#define CRED_COMMAND_TIMEOUT 30
/* A `unix_socket` source: the whole exchange within 5 s, at most 64 KiB (more is an error). */
#define CRED_SOCKET_TIMEOUT 5
#define CRED_SOCKET_MAX (64u << 10)
/* File name of the databricks_cli configuration in the scratch dir. */
#define CRED_DATABRICKS_FILE "databrickscfg"

struct cred_file {
	const char *name;    /* inside the scratch dir, e.g. "databrickscfg" */
	const char *content; /* placeholders only */
	size_t len;
	unsigned mode; /* 0600 */
};

struct cred_runtime {
	struct proxy_cred *creds; /* for proxy_config.creds */
	size_t n_creds;
	char **env; /* "NAME=VALUE" to add to the sandbox's environment */
	size_t n_env;
	struct cred_file *files; /* to write with cred_write_files() */
	size_t n_files;
	size_t cap_creds, cap_env, cap_files;
};

/*
 * Resolve every credential of SB (allocating from A).
 *
 *   ENVIRON  the launching environment: `env` sources read it; `command`
 *            sources run under /bin/sh -c with only the names the sandbox
 *            allow-list passes (env_name_passes(): PATH, HOME, LANG, ...,
 *            env_passthrough), never the whole environment.
 *   HOME     expands "~" in `file` sources and finds ~/.databrickscfg.
 *   SCRATCH  the scratch dir as the sandbox sees it (for file paths in env).
 *
 * Secrets are trimmed of surrounding white space; an empty secret, one
 * with control bytes, a failing command or a missing databricks profile is
 * an error.  Returns 0, or -1 with a message naming the entry in ERR (and
 * nothing must run).  Call cred_runtime_wipe() when done with the secrets.
 */
int cred_prepare(struct arena *a, const struct sandbox *sb, char *const *environ, const char *home,
		 const char *scratch, struct cred_runtime *out, char *err, size_t errlen);

/*
 * Trim BUF/LEN of surrounding white space as every secret is: NULL with
 * the secret at BUF + *START, *OUT_LEN bytes; else why it is refused
 * (empty, or a control byte: a secret is one line).
 */
const char *cred_clean_secret(const char *buf, size_t len, size_t *start, size_t *out_len);

/*
 * Read the secret of a file or unix_socket source at PATH ("~" already
 * expanded), trimmed and checked as at launch.  Blocks: a file read, or a
 * socket within CRED_SOCKET_TIMEOUT.  Returns a malloc'd string (wipe it
 * before freeing), or NULL with a message naming PATH in ERR.
 */
char *cred_read_secret(enum cred_source_kind kind, const char *path, char *err, size_t errlen);

/* Zero the secrets in RT's memory (the arena still owns it). */
void cred_runtime_wipe(struct cred_runtime *rt);

/*
 * Write RT's files into DIR (mode as given, refusing to follow or replace
 * anything already there).  Returns 0, or -1 with a message in ERR.
 */
int cred_write_files(const struct cred_runtime *rt, const char *dir, char *err, size_t errlen);

/* Fill OUT[CRED_PLACEHOLDER_LEN] with a fresh placeholder (no NUL).  0, or -1 if getrandom fails.
 */
int cred_make_placeholder(char *out);

/*
 * Does S/LEN hold something that looks like a placeholder: "oa_cred_",
 * also with its underscores percent-encoded (%5F, any case)?
 */
bool cred_has_placeholder(const char *s, size_t len);

/* Base64 (RFC 4648, padded).  Encode writes 4*ceil(n/3) bytes; decode
 * returns the length, or -1 for anything but canonical padded base64. */
size_t cred_base64_encode(const void *in, size_t n, char *out);
ssize_t cred_base64_decode(const char *in, size_t n, unsigned char *out, size_t cap);

enum cred_auth {
	CRED_AUTH_KEEP,	   /* no placeholder: forward the header unchanged */
	CRED_AUTH_SWAPPED, /* the bound placeholder was replaced: send OUT */
	CRED_AUTH_REFUSE,  /* a placeholder that is not this host's: 403 */
};

/*
 * Look at one Authorization value VALUE/LEN sent to the host C is bound
 * to.  "Bearer P" and "token P" (any case) become the same scheme with the
 * secret; "Basic base64(user:P)" gets the secret as password, re-encoded.
 * Any other placeholder anywhere in the value is refused.  The new value
 * goes to OUT (CAP bytes, NUL-terminated); -1 means CAP was too small.
 */
int cred_rewrite_authorization(const struct proxy_cred *c, const char *value, size_t len, char *out,
			       size_t cap, enum cred_auth *verdict);

/*
 * The Authorization value the proxy adds for C when a request carries
 * none: "Bearer S", "token S" or "Basic base64(user:S)".  Returns the
 * length, or -1 when CAP is too small.
 */
ssize_t cred_authorization_value(const struct proxy_cred *c, char *out, size_t cap);

#endif
