/*
 * sbpl_eval.c - evaluate access queries against a profile.
 *
 * Regular expressions run on the C library's POSIX engine, not on anything
 * of the emitter's, so a mistake in how omnibox writes a regex shows up as a
 * wrong answer here.
 */
#include "sbpl_eval.h"

#include <string.h>

bool
sbpl_op_covers(const char *rule_op, const char *op)
{
	size_t n = strlen(rule_op);

	if (!strcmp(rule_op, op))
		return true;
	/* "file-read*" covers "file-read-data"; "file*" covers every file operation. */
	return n && rule_op[n - 1] == '*' && !strncmp(rule_op, op, n - 1);
}

static bool
is_localhost(const char *host, size_t n)
{
	return (n == 9 && !strncmp(host, "localhost", 9)) ||
	       (n == 9 && !strncmp(host, "127.0.0.1", 9)) || (n == 3 && !strncmp(host, "::1", 3));
}

/* Filter address "localhost:P" or "*:P" against a query address "HOST:PORT". */
static bool
address_matches(const char *filter, const char *addr)
{
	const char *fc = strrchr(filter, ':'), *ac;

	if (!addr || !fc || !(ac = strrchr(addr, ':')))
		return false;
	if (!(fc - filter == 1 && filter[0] == '*') && !is_localhost(addr, (size_t)(ac - addr)))
		return false;
	return !strcmp(fc + 1, "*") || !strcmp(fc + 1, ac + 1);
}

static bool
filter_matches(const struct sbpl_filter *f, const struct sbpl_query *q)
{
	size_t n;

	switch (f->kind) {
	case SBPL_F_LITERAL:
		return q->path && !strcmp(q->path, f->s);
	case SBPL_F_SUBPATH:
		if (!q->path)
			return false;
		if (!strcmp(f->s, "/"))
			return q->path[0] == '/';
		n = strlen(f->s);
		return !strncmp(q->path, f->s, n) && (q->path[n] == '\0' || q->path[n] == '/');
	case SBPL_F_REGEX:
		return q->path && regexec(&f->re, q->path, 0, NULL, 0) == 0;
	case SBPL_F_VNODE:
		return q->path && !strcmp(q->vnode ? q->vnode : "REGULAR-FILE", f->s);
	case SBPL_F_ALL:
		for (size_t i = 0; i < f->n_kids; i++)
			if (!filter_matches(f->kids[i], q))
				return false;
		return true;
	case SBPL_F_ANY:
		for (size_t i = 0; i < f->n_kids; i++)
			if (filter_matches(f->kids[i], q))
				return true;
		return false;
	case SBPL_F_NOT:
		return !filter_matches(f->kids[0], q);
	case SBPL_F_LOCAL:
		return address_matches(f->s, q->local);
	case SBPL_F_REMOTE:
		return address_matches(f->s, q->remote);
	case SBPL_F_REMOTE_UNIX:
		return q->unix_socket && !strcmp(q->unix_socket, f->s);
	case SBPL_F_TARGET_SELF:
		return q->target_self;
	}
	return false;
}

static bool
rule_matches(const struct sbpl_rule *r, const struct sbpl_query *q)
{
	bool op = false;

	for (size_t i = 0; i < r->n_ops && !op; i++)
		op = sbpl_op_covers(r->ops[i], q->op);
	if (!op)
		return false;
	if (!r->n_filters)
		return true;
	/* Several filters in one rule: any of them. */
	for (size_t i = 0; i < r->n_filters; i++)
		if (filter_matches(r->filters[i], q))
			return true;
	return false;
}

bool
sbpl_allowed(const struct sbpl_profile *p, const struct sbpl_query *q, enum sbpl_reading reading)
{
	bool decision = p->default_allow, any_allow = false;

	for (size_t i = 0; i < p->n_rules; i++) {
		const struct sbpl_rule *r = &p->rules[i];

		if (!rule_matches(r, q))
			continue;
		if (reading == SBPL_LAST_MATCH_WINS) {
			decision = r->allow;
		} else if (!r->allow) {
			return false;
		} else {
			any_allow = true;
		}
	}
	return reading == SBPL_LAST_MATCH_WINS ? decision : (any_allow || p->default_allow);
}
