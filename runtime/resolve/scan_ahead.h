/*
 * scan_ahead.h - a second thread that lists directories for the dotfile
 * scan before the scan reaches them.
 *
 * Listing a directory is kernel work (a file system's readdir), which one
 * thread does at a time; a recursive scan of a large workspace is mostly
 * that.  The scan (scan.c) lists its queue from the front; this thread
 * takes the directories queued last, from the back, so that the two meet
 * in the middle.  It opens each by its path below the root's descriptor,
 * through no symlink, reads its whole listing, and keeps it with the
 * directory's device and inode.
 *
 * Nothing the scan decides comes from here but a listing's bytes.  When
 * the scan reaches a directory it opens and checks it itself, as ever
 * (the inode its parent's listing gave, listed once), and takes the
 * listing kept only where its own descriptor is the same device and
 * inode: the same directory, listed a moment earlier, as a listing is
 * always a moment's.  Anything else (not listed yet, another directory
 * at that path now, a file system whose inode numbers may repeat, a
 * listing too large to keep) the scan lists itself.
 */
#ifndef OMNIBOX_SCAN_AHEAD_H
#define OMNIBOX_SCAN_AHEAD_H

#include <stdbool.h>
#include <stddef.h>

struct scan_ahead;

struct scan_memo;

/* The thread, started on another CPU than this one; NULL where there is
 * no other CPU to run it or it cannot start (the scan lists alone).  It
 * reads no directory whose listing MEMO keeps (NULL: none), which the
 * scan takes from there. */
struct scan_ahead *scan_ahead_start(const struct scan_memo *memo);

/*
 * The scan has queued the directory PATH (absolute) at index I of its
 * queue (indices only grow): below the root's descriptor ROOT_FD at
 * PATH + REL ("" for the root itself), or by PATH itself when ROOT_FD is
 * -1.  0, or -1 without memory (nothing is lost: the scan lists it).
 */
int scan_ahead_offer(struct scan_ahead *a, size_t i, int root_fd, const char *path, size_t rel);

/*
 * The scan is at index I: nothing at or before it is listed ahead any
 * more.  The listing of I when the thread has it and the directory was
 * then DEV:INO (malloc'd, *LEN bytes of getdents64() records, the whole
 * directory), else NULL.  A is NULL-safe.
 */
char *scan_ahead_take(struct scan_ahead *a, size_t i, unsigned long long dev,
		      unsigned long long ino, size_t *len);

/* For tests, which wait for the thread: 1 when the listing of I is kept,
 * -1 when the thread gave it up (or it was taken), 0 until then. */
int scan_ahead_state(struct scan_ahead *a, size_t i);

/* Stop the thread, wait for it, and free what it kept.  NULL-safe. */
void scan_ahead_stop(struct scan_ahead *a);

#endif
