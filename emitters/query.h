/*
 * query.h - "would this policy let the agent do X?", from the IR alone.
 *
 * A query is "ACCESS TARGET": read, write or exec and a path (relative to
 * the workspace, ~/..., or absolute), an HTTP method and a URL, or "tcp"
 * and HOST:PORT (a raw stream through a CONNECT tunnel).  The
 * answer on each target comes with the rule that decides it and its YAML
 * line.  Paths are compared as written: {CWD}, {HOME} and absolute paths
 * are separate spaces (only the machine knows where one lies in another),
 * and the dotfile scan is taken as complete: every dotfile a grant
 * exposes is assumed to exist.  This is the engine of --query and of the
 * checks --diff is held to.
 */
#ifndef OMNIBOX_QUERY_H
#define OMNIBOX_QUERY_H

#include <stdbool.h>
#include <stdint.h>

#include "../compiler/base/arena.h"
#include "emit.h"

enum query_access { QUERY_READ, QUERY_WRITE, QUERY_EXEC, QUERY_HTTP, QUERY_TCP };

struct query {
	const char *text; /* as written */
	enum query_access access;
	const char *path;   /* files: symbolic, "." and ".." applied: {CWD}/x, {HOME}/x, /x */
	unsigned method;    /* HTTP: one EGRESS_* bit */
	const char *method_name;
	bool tls;	    /* https (always, for tcp: it goes through CONNECT) */
	const char *host;   /* HTTP, tcp: lower-cased */
	unsigned port;	    /* as written, else 443 or 80; tcp: required */
	const char *target; /* path and query, "/" when none */
};

struct decision {
	bool allowed;
	bool enforced;	 /* false: the target cannot enforce what the policy says */
	bool own;	 /* allowed in the sandbox's own storage (scratch, its /tmp, a
			  * copy, the private home): nothing of the host's is written */
	const char *why; /* the rule that decides, in words */
	uint32_t line;	 /* its YAML line; 0 for a default */
};

/* Parse TEXT; 0, or -1 with a message in ERR. */
int query_parse(struct arena *a, const char *text, struct query *q, char *err, size_t errlen);

/* Decide Q for P on target T. */
void query_decide(struct arena *a, const struct policy *p, enum target t, const struct query *q,
		  struct decision *d);

#endif
