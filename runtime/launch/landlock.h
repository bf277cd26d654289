/*
 * landlock.h - the second layer omnibox-init adds inside the sandbox.
 *
 * The mounts decide what the sandbox sees and what it may write; Landlock
 * makes the kernel say the same thing a second time, per process and
 * inherited by everything the agent starts: writes only below the paths
 * omnibox-init is given (the writable grants, the scratch dir, /tmp and a
 * few devices), so that a mount mistake alone cannot make the host
 * writable.  With the host's network shared, abstract Unix sockets and
 * signals are scoped to the sandbox too (ABI 6): X11, D-Bus or anything
 * else listening on '@...' outside cannot be reached.
 */
#ifndef OMNIBOX_LANDLOCK_H
#define OMNIBOX_LANDLOCK_H

#include <stdbool.h>
#include <stddef.h>

/* The ABI that writes need (it can allow renames across directories). */
#define LANDLOCK_ABI_FS 2
/* The ABI that scopes abstract Unix sockets and signals. */
#define LANDLOCK_ABI_SCOPE 6

/* The kernel's Landlock ABI version, 0 when it has none (or it is off). */
int landlock_abi(void);

/*
 * Restrict this process (and its future children): with ABI >= 2, writes
 * only below the N PATHS that exist (files: that file) and to the files
 * behind descriptors 1 and 2 when they are open for writing; with SCOPE
 * and ABI >= 6, abstract Unix sockets and signals only inside this domain.
 * What the kernel lacks is left out: the caller told the user before.
 * Returns 0, or -1 with a message in ERR when the kernel refused a rule
 * it should take: the launch must fail then.
 */
int landlock_restrict(const char *const *paths, size_t n, bool scope, char *err, size_t errlen);

#endif
