/*
 * egress_table.h - the egress proxy's compiled table (--emit=egress-table).
 *
 * What omnibox-proxy needs from a policy, and nothing else: the egress
 * rules, egress_allow_private_destinations, env_passthrough (the names a
 * `command` source runs with) and every credential_proxy binding with the
 * *reference* to its secret (an environment variable's name, a file or
 * socket path with "~" kept, a command), never a secret value.  Line
 * oriented, deterministic, one record per line:
 *
 *   omnibox-egress-table 1                      first line, always
 *   # ...                                       comments, blank lines: ignored
 *   policy "agent.yaml"                         the policy's base name
 *   terminal "NAME"                             only for --terminal=NAME
 *   private-destinations refused|allowed
 *   passthrough "NAME"                          one per env_passthrough entry
 *   rule LINE "RULE"                            in the policy's own rule syntax
 *   credential LINE TYPE                        a credential_proxy entry, up to "end"
 *     target LINE HOST PORT SCHEME              bearer basic token header sigv4
 *     source KIND "VALUE"                       env file command unix_socket
 *     placeholder "NAME"                        a sandbox variable holding the placeholder
 *     username "U"   header "h"   refresh SECONDS
 *     region "R"   service "S"   aws-profile "P"
 *     aws-key-id KIND "V"   aws-secret KIND "V"   aws-token KIND "V"
 *     profile "P"   default-profile "P"          databricks_cli
 *   end
 *
 * LINE is the YAML line the entry came from.  Strings are in double quotes;
 * inside them a backslash escapes '\\' and '"', and \xHH stands for a
 * control byte (0x01-0x1f, 0x7f); every other byte is itself.  The rules are
 * read back with the same grammar the compiler uses (grammar/egress.h), and
 * the table parser (runtime/egress/table.h) rebuilds the parts of a policy
 * cred_prepare() and the proxy read, so that emitting the parsed table
 * gives the same bytes.
 */
#ifndef OMNIBOX_EGRESS_TABLE_H
#define OMNIBOX_EGRESS_TABLE_H

#include "emit.h"

#define EGRESS_TABLE_MAGIC "omnibox-egress-table"
#define EGRESS_TABLE_VERSION 1

int emit_egress_table(const struct policy *p, enum target t, struct diag *d, struct textbuf *out);

#endif
