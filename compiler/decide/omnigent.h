/*
 * omnigent.h - what a policy uses that Omnigent does not read the same way.
 *
 * omnibox reads Omnigent's agent files and adds keys and values of its own
 * (docs/schema.md, "Omnigent key → omnibox").  A team that keeps one policy
 * for both must know which of its lines the other side rejects or reads
 * differently: --explain lists them from here.  Pure.
 */
#ifndef OMNIBOX_DECIDE_OMNIGENT_H
#define OMNIBOX_DECIDE_OMNIGENT_H

#include "../ir.h"

struct omnigent_ext {
	const char *setting;  /* "credential_proxy type aws_sigv4" */
	const char *omnigent; /* what Omnigent does with it: "rejects the type" */
	struct loc loc;
};

typedef void (*omnigent_ext_fn)(void *arg, const struct omnigent_ext *e);

/*
 * Call FN for each omnibox extension that P uses, in the agent's os_env and
 * in every terminal's own, in the order of the file.
 */
void omnigent_extensions(const struct policy *p, omnigent_ext_fn fn, void *arg);

#endif
