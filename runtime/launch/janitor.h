/*
 * janitor.h - what a launch leaves on the host goes, however omnibox-run ends.
 *
 * One cleanup process for the Linux and the macOS launch: started before
 * the command, it holds nothing of omnibox-run's but the directories of
 * what it removes, and waits for the end of a socket.  When omnibox-run is
 * gone, by any way, it removes the scratch dir and the placeholders (by the
 * descriptors held since they were made) and the profile directory; and,
 * unless omnibox-run said first that its own check after the run is done,
 * it kills what is left in bwrap's process group and sets aside the
 * repositories the sandbox made (launch_quarantine()).
 */
#ifndef OMNIBOX_JANITOR_H
#define OMNIBOX_JANITOR_H

#include "runtime/resolve/host.h"
#include "runtime/resolve/resolve.h"

/*
 * Start it for SCRATCH (its dirfd may be -1: nothing to remove), PLAN and
 * EXTRA_DIR (a directory removed by path, or NULL).  Returns omnibox-run's
 * end of its socket: janitor_checked() once the check after the run is
 * done, close it at the end.  -1 with errno when it cannot start.
 */
int janitor_start(const struct host_entry *scratch, struct launch_plan *plan,
		  const char *extra_dir);

/*
 * A scratch dir made after the janitor started (it was given none, a
 * dirfd of -1): its NAME in the directory DIRFD, told before it is made,
 * and then the directory made (SCRATCH, once host_scratch_create() made
 * it).  Gone before it said the second, omnibox-run leaves an empty
 * directory of that name, which the janitor removes (only if it is a
 * directory of its user's, and empty).  0, or -1 with errno.
 */
#define JANITOR_NAME_MAX 64
int janitor_scratch_name(int fd, int dirfd, const char *name);
int janitor_scratch_made(int fd, const struct host_entry *scratch);

/*
 * The scratch dir is about to be renamed NAME in the same directory, at the
 * end of a launch: the janitor removes it by either name (the same device
 * and inode) once omnibox-run is gone, off the way of whoever waits for
 * omnibox-run.  0, or -1 with errno.
 */
int janitor_scratch_moved(int fd, const char *name);

/* Tell the janitor bwrap's process GROUP: if omnibox-run is gone before
 * it says the check is done, what is left in that group is killed first
 * (bwrap's child, which no death signal reaches until let go).  Safe in a
 * child between vfork and exec: it writes, nothing else. */
void janitor_sandbox(int fd, pid_t group);

/* Tell the janitor omnibox-run removed its placeholders itself: it leaves
 * them alone (what has their names by then is another launch's). */
void janitor_cleaned(int fd);

/* Let the janitor go, doing nothing, and close FD: another one, started
 * since, has the launch (omnibox-run's first, started before bwrap while
 * the plan was not resolved yet). */
void janitor_release(int fd);

/*
 * Tell the janitor the check after the run is done, and hand it MNT_NS (a
 * descriptor of the sandbox's mount namespace, or -1).  Held, it keeps
 * the sandbox's mounts from being torn down as omnibox-init exits, on the
 * way of whoever waits for omnibox-run; the janitor ends them, after
 * omnibox-run is gone.  Nothing of the sandbox runs by then: no process
 * is left in its PID namespace.
 */
void janitor_checked(int fd, int mnt_ns);

#endif
