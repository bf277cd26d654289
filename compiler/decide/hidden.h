/*
 * hidden.h - the dotfile rule (spec/schema.md, cwd_allow_hidden), decided once.
 *
 * A name that starts with '.' is hidden from the sandbox unless
 * cwd_allow_hidden names it (or holds "*").  The dotfile scan applies the
 * rule to what exists at launch; the Seatbelt profile, the query engine,
 * --explain, the credential-file check and the resolver ask the same
 * functions, so none of them keeps a copy of its own.  Pure.
 */
#ifndef OMNIBOX_DECIDE_HIDDEN_H
#define OMNIBOX_DECIDE_HIDDEN_H

#include <stdbool.h>
#include <stddef.h>

#include "../ir.h"

/* Is NAME (LEN bytes, one component) hidden by the allow list ALLOW (N names,
 * "*" for every one)? */
bool hidden_name_in(const char *const *allow, size_t n, const char *name, size_t len);

/* Is NAME (LEN bytes, one component) hidden by the policy SB? */
bool hidden_name(const struct sandbox *sb, const char *name, size_t len);

/* Does PATH hold a component that starts with '.'? */
bool hidden_component(const char *path);

/*
 * The length of the part of REL (relative to a root the scan starts from:
 * "a/.b/c") that the dotfile scan of SB hides, through its last component
 * (REL + that length is "" or "/..."); 0 when nothing of it is hidden.  A
 * scan that is not recursive looks at the first component only.
 */
size_t hidden_prefix(const struct sandbox *sb, const char *rel);

#endif
