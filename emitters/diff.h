/*
 * diff.h - what a policy change widens and narrows, in words (--diff).
 *
 * Everything is decided from the two IRs: grants against the query engine
 * (query.h) on the old policy, egress rules by subsumption on their
 * compiled globs (egress_rules_cover()), the rest as sets and numbers.
 * Widenings of NEW over OLD are the narrowings of OLD over NEW, so the
 * diff of a pair in reverse lists the opposite change.
 */
#ifndef OMNIBOX_DIFF_H
#define OMNIBOX_DIFF_H

#include <stdbool.h>
#include <stdint.h>

#include "../compiler/base/arena.h"
#include "../compiler/base/textbuf.h"
#include "emit.h"

/* In order of danger: the first kinds open the most. */
enum diff_kind {
	DIFF_SANDBOX,
	DIFF_NETWORK,
	DIFF_CREDENTIAL,
	DIFF_WRITE,
	DIFF_UNPROTECT,
	DIFF_UNMASK,
	DIFF_READ,
	DIFF_DOTFILE,
	DIFF_EGRESS,
	DIFF_PRIVATE, /* egress to private destinations (decided at connect time) */
	DIFF_SOCKET,  /* deny_unix_socket_paths */
	DIFF_GIT_SSH,
	DIFF_ENV,
	DIFF_LIMIT,
	DIFF_TERMINAL,
};

struct diff_item {
	enum diff_kind kind;
	unsigned targets;     /* TARGET_BIT()s where it changes what is enforced */
	const char *what;     /* in words */
	uint32_t line;	      /* in the policy that has the access (0: a default) */
	const char *terminal; /* NULL: the agent's own os_env */
};

struct diff_list {
	struct diff_item *v;
	size_t n, cap;
};

/* What NEW widens over OLD, and what it narrows. */
void diff_policies(struct arena *a, const struct policy *old, const struct policy *new,
		   struct diff_list *widened, struct diff_list *narrowed);

/* Is KIND one a query can witness (files, network, egress)? */
bool diff_kind_is_access(enum diff_kind kind);

/* Print both lists as "text", "json" or "markdown" to OUT. */
void diff_format(const struct diff_list *widened, const struct diff_list *narrowed,
		 const char *format, const char *old_name, const char *new_name,
		 struct textbuf *out);

#endif
