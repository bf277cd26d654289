/*
 * sbpl_eval.h - "is this operation allowed?" for a profile read by
 * sbpl_check.h, under either of the two ways Seatbelt could resolve a
 * conflict between rules.  omnibox's profiles must answer every query the
 * same way under both.
 */
#ifndef OMNIBOX_TESTS_SBPL_EVAL_H
#define OMNIBOX_TESTS_SBPL_EVAL_H

#include <stdbool.h>

#include "sbpl_check.h"

enum sbpl_reading {
	SBPL_LAST_MATCH_WINS, /* the last rule that matches decides */
	SBPL_DENY_WINS,	      /* any matching deny decides; else any matching allow */
};

struct sbpl_query {
	const char *op;	   /* a concrete operation: "file-read-data", "network-outbound", ... */
	const char *path;  /* file operations: the canonical path */
	const char *vnode; /* its vnode type; NULL: "REGULAR-FILE" */
	const char *local; /* network: "localhost:8080", "10.0.0.2:443" */
	const char *remote;
	const char *unix_socket; /* network-outbound to a Unix socket: its path */
	bool target_self;	 /* signal, process-info: aimed at the process itself */
};

/* The decision for Q under READING: true when allowed. */
bool sbpl_allowed(const struct sbpl_profile *p, const struct sbpl_query *q,
		  enum sbpl_reading reading);

/* Does rule operation RULE_OP cover the concrete operation OP? */
bool sbpl_op_covers(const char *rule_op, const char *op);

#endif
