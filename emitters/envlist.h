/*
 * envlist.h - the environment allow-list (spec/linux.md, "Environment").
 *
 * The agent's environment is rebuilt from names, never inherited whole.
 * The emitter prints the list; the runtime applies the same functions to
 * the real environment, so what is reviewed is what runs.
 */
#ifndef OMNIBOX_ENVLIST_H
#define OMNIBOX_ENVLIST_H

#include <stdbool.h>

#include "../compiler/policy.h"

/* Passed from the launching environment when set (plus every LC_*). */
extern const char *const env_base_names[];
/* Set to the private scratch dir. */
extern const char *const env_scratch_names[];
/* Proxy variables set to the relay's URL when egress is active. */
extern const char *const env_proxy_names[];
/* CA bundle variables set to the session bundle when egress is active. */
extern const char *const env_ca_names[];
/* Names that change what programs load or run: only via env_passthrough. */
extern const char *const env_dangerous_names[];

/* File name of the CA bundle inside the scratch dir. */
#define ENV_CA_BUNDLE "omnibox-ca.pem"

/* The git_ssh broker's socket inside the scratch dir, and its helper inside the sandbox. */
#define ENV_GIT_SSH_SOCKET "omnibox-git-ssh.sock"
#define ENV_GIT_SSH_COMMAND "/.omnibox/init --git-ssh"
/* Names of the per-launch values omnibox-run adds (never in a profile). */
#define ENV_GIT_SSH_TOKEN "OMNIBOX_GIT_SSH_TOKEN"

/*
 * The variables the policy itself sets, with no secret and nothing that
 * changes per launch: git_ssh's helper and socket, aws_sigv4's region.
 * FN gets each NAME, VALUE (SCRATCH spells the scratch dir), the reason and
 * the YAML line.  The emitter prints them, the runtime sets them.
 */
void env_policy_vars(const struct sandbox *sb, const char *scratch,
		     void (*fn)(void *arg, const char *name, const char *value, const char *why,
				unsigned line),
		     void *arg);

/* Is NAME (NAME=VALUE form accepted: stops at '=') passed through from the host? */
bool env_name_passes(const struct sandbox *sb, const char *name);

#endif
