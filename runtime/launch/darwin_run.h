/*
 * darwin_run.h - omnibox-run's macOS launch: the policy through
 * sandbox-exec (darwin.h), with its egress proxy and relay.
 *
 * With egress_rules, the proxy runs outside (omnibox-proxy, egress_proxy_start()) on a
 * Unix socket in the scratch dir, and omnibox-init runs inside, under the
 * profile: it starts the relay on 127.0.0.1:PORT, then the command.  The
 * Linux build links this into build/test-omnibox-run-darwin, whose tests
 * put a stand-in for sandbox-exec (OMNIBOX_TEST_SANDBOX_EXEC) in its place.
 */
#ifndef OMNIBOX_DARWIN_RUN_H
#define OMNIBOX_DARWIN_RUN_H

#include <stddef.h>

#include "compiler/policy.h"
#include "runtime/launch/launch.h"

/*
 * Launch P as O asks, started from LAUNCH_DIR, and wait for it (with
 * O->dry_run, describe it on stdout).  Returns 0 with the exit status
 * omnibox-run must exit with in *STATUS, or -1 with a message in ERR when
 * the launch could not be set up: nothing ran then, and what it made is
 * gone.
 */
int darwin_run(struct arena *a, const struct launch_options *o, const struct policy *p,
	       const char *launch_dir, int *status, char *err, size_t errlen);

#endif
