/*
 * sbpl_check.h - read and check a Seatbelt profile on a machine without
 * Seatbelt (spec/darwin.md, "Checking profiles without a Mac").
 *
 * The reader understands the subset of SBPL that omnibox writes, and is
 * strict about it: balanced forms, (version 1) first, (deny default) before
 * any other rule, operations from Seatbelt's list, filters that fit their
 * operation (paths for file operations, addresses for network ones, the
 * target for signal and process-info), absolute canonical paths, anchored
 * regular expressions that compile, and network filters naming only
 * localhost or "*" with a valid port.  String expressions (literals,
 * (param "NAME"), (string-append ...)) are evaluated against the given
 * parameters, so a profile is checked as sandbox-exec would see it.
 *
 * What the reader builds is what sbpl_eval.h evaluates.
 */
#ifndef OMNIBOX_TESTS_SBPL_CHECK_H
#define OMNIBOX_TESTS_SBPL_CHECK_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>

#include "compiler/base/arena.h"

struct sbpl_param_value {
	const char *name, *value;
};

enum sbpl_filter_kind {
	SBPL_F_LITERAL,
	SBPL_F_SUBPATH,
	SBPL_F_REGEX,
	SBPL_F_VNODE,
	SBPL_F_ALL,
	SBPL_F_ANY,
	SBPL_F_NOT,
	SBPL_F_LOCAL,	    /* (local ip|tcp|udp "HOST:PORT") */
	SBPL_F_REMOTE,	    /* (remote ip|tcp|udp "HOST:PORT") */
	SBPL_F_REMOTE_UNIX, /* (remote unix-socket (path-literal PATH)) */
	SBPL_F_TARGET_SELF, /* (target self) */
};

struct sbpl_filter {
	enum sbpl_filter_kind kind;
	const char *s; /* the evaluated string: path, regex source, address, vnode type */
	regex_t re;    /* SBPL_F_REGEX */
	struct sbpl_filter **kids;
	size_t n_kids, cap_kids;
};

struct sbpl_rule {
	bool allow;
	unsigned line;
	const char **ops;
	size_t n_ops, cap_ops;
	struct sbpl_filter **filters; /* any of them; none: always */
	size_t n_filters, cap_filters;
};

struct sbpl_profile {
	struct arena *arena;
	bool default_allow;
	struct sbpl_rule *rules; /* in profile order, (deny default) left out */
	size_t n_rules, cap_rules;
	struct sbpl_filter **regexes; /* to regfree */
	size_t n_regexes, cap_regexes;
};

/*
 * Read TEXT (LEN bytes) with the parameters PARAMS (N of them).  Returns
 * the profile, or NULL with "line N: what is wrong" in ERR.  Free it with
 * sbpl_profile_free().
 */
struct sbpl_profile *sbpl_profile_load(const char *text, size_t len,
				       const struct sbpl_param_value *params, size_t n, char *err,
				       size_t errlen);

void sbpl_profile_free(struct sbpl_profile *p);

/* Load and free: 0 when TEXT is a valid profile, -1 with the reason in ERR. */
int sbpl_check(const char *text, size_t len, const struct sbpl_param_value *params, size_t n,
	       char *err, size_t errlen);

/* Is NAME one of Seatbelt's operations? */
bool sbpl_known_operation(const char *name);

/*
 * The line of the first deny rule (other than (deny default)) and of the
 * last allow rule, 0 when there is none: the profile's shape holds when
 * every deny follows every allow.
 */
void sbpl_profile_order(const struct sbpl_profile *p, unsigned *first_deny, unsigned *last_allow);

/*
 * Append the listing of P that tests/darwin/sbpl_check.scm prints for the
 * same profile: "version 1", then per rule "allow"/"deny", "op NAME" per
 * operation and "literal PATH", "subpath PATH", "regex RE", "local ADDR",
 * "remote ADDR", "unix-socket PATH", "vnode-type TYPE" per filter, in
 * order.  Returns the text (malloc'd).
 */
char *sbpl_profile_listing(const struct sbpl_profile *p);

#endif
