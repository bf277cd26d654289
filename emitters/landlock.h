/*
 * landlock.h - the linux_landlock backend's command line: omnibox-init
 * started directly, with no bwrap, no mount and no namespace, confined by
 * one Landlock ruleset given as descriptors (--ll-fs FD RIGHTS), TCP
 * connect to the egress proxy's port alone (--ll-net-connect), the seccomp
 * filter's variant for this backend and the limits.
 *
 * One builder for both forms: --emit=landlock writes it from the policy
 * alone, with placeholders ({FD} for a descriptor omnibox-run opens on the
 * path named above it, {PORT}, {SECCOMP_FD}, ...), and omnibox-run builds
 * the argv it executes from the rules the resolver opened
 * (runtime/resolve/landlock_open.h).  The text is one argument a line, each
 * rule under a comment naming its path, rights and why; what the backend
 * cannot enforce exactly is listed first (compiler/decide/llbackend.h).
 */
#ifndef OMNIBOX_EMIT_LANDLOCK_H
#define OMNIBOX_EMIT_LANDLOCK_H

#include <stdbool.h>
#include <stddef.h>

#include "../compiler/base/textbuf.h"
#include "../compiler/policy.h"

/* A rule as the launch opened it. */
struct landlock_arg_rule {
	const char *path;
	int fd;
	unsigned long long rights; /* enum ll_access bits */
	const char *why;
};

struct landlock_context {
	bool resolved; /* the rules below come from the resolver; else symbolic */
	const struct landlock_arg_rule *rules;
	size_t n_rules;
	const char *const *approx; /* the plan's approximations (resolved only) */
	size_t n_approx;
	const char *init;	    /* omnibox-init's path, or NULL: "{INIT}" */
	int seccomp_fd, ready_fd;   /* -1: "{SECCOMP_FD}", "{READY_FD}" */
	bool tty;		    /* the sandbox has a terminal of its own */
	const char *proxy_port;	    /* egress: the proxy's loopback port, or NULL: "{PORT}" */
	const char *exec_path;	    /* NULL: "{EXEC}" */
	const char *const *command; /* NULL: "{COMMAND}" */
	size_t n_command;
};

/*
 * P's omnibox-init command line for C: the text (comments and one
 * argument a line, escaped) into TEXT, and when NUL is not NULL the same
 * arguments NUL-separated (the argv, omnibox-init's path first).
 */
void landlock_build(const struct policy *p, const struct landlock_context *c,
		    struct textbuf *text, struct textbuf *nul);

#endif
