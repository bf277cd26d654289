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

/* Is NAME (NAME=VALUE form accepted: stops at '=') passed through from the host? */
bool env_name_passes(const struct sandbox *sb, const char *name);

#endif
