/*
 * table.h - reading the egress proxy's compiled table (emitters/egress_table.h).
 *
 * omnibox-proxy never compiles YAML: it reads the table --emit=egress-table
 * wrote.  egress_table_parse() rebuilds from it the parts of a policy the
 * proxy and cred_prepare() read (the rules, egress_allow_private,
 * env_passthrough, the credential_proxy entries), so both are used as they
 * are, and emit_egress_table() of the result gives the same bytes again.
 * The rules are read with the compiler's own grammar (egress_parse_rule()).
 */
#ifndef OMNIBOX_EGRESS_TABLE_PARSE_H
#define OMNIBOX_EGRESS_TABLE_PARSE_H

#include <stddef.h>

#include "compiler/ir.h"

/*
 * Parse the LEN bytes at TEXT, named NAME in messages.  Returns a policy
 * owned by A, or NULL with "NAME:LINE: why" in ERR (escaped) for the first
 * thing wrong: an unknown or repeated keyword, a malformed string, number,
 * host or name, a rule the grammar refuses, a credential entry that lacks
 * what its type needs, anything that looks like a placeholder.
 */
struct policy *egress_table_parse(struct arena *a, const char *name, const char *text, size_t len,
				  char *err, size_t errlen);

/*
 * The sandbox variables that receive a placeholder under SB's credentials,
 * in the order cred_prepare() gives them out, each once (AWS_SESSION_TOKEN
 * whenever some aws_sigv4 entry may read a token).  Returns how many; the
 * array, from A, goes to *NAMES.
 */
size_t egress_table_placeholder_names(struct arena *a, const struct sandbox *sb,
				      const char ***names);

#endif
