/*
 * copy.h - the private copy behind a copy_on_write grant.
 *
 * A write_paths entry {path, copy_on_write: true} is bound from a copy the
 * launch makes in the scratch dir, so the agent's writes land in the copy
 * and the host's tree stays as it was.  The copy is read through the
 * descriptor the resolver opened (never by path again), never follows a
 * symbolic link (links are copied as links), and keeps files, directories
 * and links only: devices, FIFOs and sockets are left out.
 */
#ifndef OMNIBOX_COPY_H
#define OMNIBOX_COPY_H

#include <stddef.h>

/* A tree larger than this many entries is refused, not copied in part. */
#define COPY_MAX_ENTRIES 200000

/*
 * Copy the file or directory open at SRC_FD (O_PATH is enough) to NAME in
 * the directory DST_DIRFD.  Modes and modification times are kept; owners
 * are the caller's.  A file the sandbox's user could not read in place, or a
 * directory it could not list and search (perm_sandbox_may()), is copied
 * as its name only: empty, mode 000, nothing of what it holds.  Returns 0,
 * or -1 with a message in ERR (and what was made so far left for the
 * scratch dir's removal).
 */
int copy_tree(int src_fd, int dst_dirfd, const char *name, char *err, size_t errlen);

#endif
