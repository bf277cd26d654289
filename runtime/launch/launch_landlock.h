/*
 * launch_landlock.h - what the linux_landlock launch does that bwrap's
 * does not (launch_bwrap.h runs both, one step at a time): no namespace can
 * be made, so omnibox-init is started directly and Landlock is the whole
 * confinement.
 *
 *   landlock_rules_open()     after launch_resolve(): the plan's rules
 *                             (runtime/resolve/landlock_open.h), then
 *                             omnibox-init's argv (emitters/landlock.h)
 *   landlock_relay_listen()   egress: the proxy's loopback port, bound
 *   landlock_relay_start()    the relay from it to the proxy's socket, in a
 *                             process of omnibox-run's (outside the sandbox)
 *   landlock_launch_reap()    after the run: any process of the sandbox's
 *                             that outlived omnibox-init, killed
 */
#ifndef OMNIBOX_LAUNCH_LANDLOCK_H
#define OMNIBOX_LAUNCH_LANDLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "compiler/base/arena.h"
#include "emitters/landlock.h"
#include "runtime/launch/metadata.h"
#include "runtime/resolve/landlock_open.h"
#include "runtime/resolve/resolve.h"

struct landlock_launch {
	struct landlock_rules r; /* the plan's rules, with their descriptors */
	struct metadata_rules meta; /* the same, for chmod and utimensat (metadata.h) */
	int relay_fd; /* egress: the listener on the proxy's loopback port, or -1 */
	pid_t relay_pid;
};

void landlock_launch_init(struct landlock_launch *ll);

/* A listener on 127.0.0.1:PORT for a free PORT (20000-59999) into LL and *PORT. */
int landlock_relay_listen(struct landlock_launch *ll, unsigned *port, char *err, size_t errlen);

/* The relay from LL's listener to the proxy's SOCKET, in a child process. */
int landlock_relay_start(struct landlock_launch *ll, const char *socket, char *err,
			 size_t errlen);

/* omnibox-run's children now (its helpers, before the sandbox starts), from A. */
size_t landlock_children(struct arena *a, pid_t **out);

/*
 * After the run, omnibox-run being the subreaper: every child of its own but
 * the N_KEEP KEEP pids (its helpers), killed and reaped until none is
 * left; then the relay stopped.  Returns how many were killed.
 */
size_t landlock_launch_reap(struct landlock_launch *ll, const pid_t *keep, size_t n_keep);

/* Every descriptor LL holds, closed. */
void landlock_launch_close(struct landlock_launch *ll);

#endif
