/*
 * scan_memo.h - the listings of a dotfile scan, kept from one launch to the
 * next, so that a directory that has not changed is not read again.
 *
 * An agent runs one command after another in the same workspace, and
 * between two of them most directories do not change.  Every change to a
 * directory's entries (a name made, removed or renamed) sets its status
 * change time (ctime) to the time of the change, which no process can set
 * back (utimensat() sets mtime, and ctime to now).  So a listing read while
 * the directory's ctime was C is the directory's listing whenever its ctime
 * is C again: the scan takes it from here instead of reading the directory.
 *
 * What is kept, and trusted:
 *   - only a listing of a directory on ext4, XFS or tmpfs, not encrypted
 *     (memo_eligible() says why), whose ctime was older than
 *     the scan's start by SCAN_MEMO_SETTLED_NS: a change after the listing
 *     could not have left ctime at C (the clock the kernel stamps with is
 *     coarse, but not by a second);
 *   - found by device, inode and ctime to the nanosecond, all three;
 *   - in a file of the user's cache directory where there is one
 *     ($XDG_CACHE_HOME/omnibox, or ~/.cache/omnibox reached through no
 *     symlink; nothing is made in a home without one), encrypted (ChaCha20:
 *     a sandbox granted the cache directory is not granted the other
 *     workspaces the listings name) and authenticated whole (SipHash-2-4)
 *     under a key that lives in the user's kernel keyring only.  A sandbox may be granted that
 * file, but not the key: the seccomp filter refuses add_key(), keyctl() and request_key(), and a
 *     user namespace has keyrings of its own.  A file that does not verify
 *     is ignored whole; an old one that does holds listings that were true
 *     at their ctimes, which the directories no longer have.  A scan that
 *     fails with listings from the memo is made again without it, and the
 *     file goes.
 *
 * Where no key can be had or kept (a seccomp filter of a container refusing
 * keyctl()), or no cache directory exists, there is no memo: the scan reads
 * every directory, as it always did.
 */
#ifndef OMNIBOX_SCAN_MEMO_H
#define OMNIBOX_SCAN_MEMO_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

/* How long a directory must have been unchanged, at the scan's start, for
 * its listing to be kept. */
#define SCAN_MEMO_SETTLED_NS 1000000000LL

/*
 * A listing kept is the directory's, less what no scan looks at but to
 * count it: each run of entries whose name starts with no '.' and is none
 * of HEAD, objects, refs and commondir, and that the listing says are not
 * directories (nor of an unknown type), is one record of this d_type, its
 * d_off the number of entries it stands for, its name empty.  A scan that
 * must see every name (a directory below one kept, or one that reports a
 * name not starting with '.') reads the directory itself.
 */
#define SCAN_MEMO_SKIPPED 0xff

struct scan_memo;

/*
 * The memo of a scan of ROOTS (N_ROOTS absolute paths) for PURPOSE (a
 * short name: each kind of scan keeps its own), with what the last such
 * scan kept; NULL when none can be kept here.  Its start is now.
 */
struct scan_memo *scan_memo_open(const char *purpose, const char *const *roots, size_t n_roots);

/*
 * The listing kept of the directory FD, whose status is ST (its device,
 * inode and ctime, all three), on a file system of type FS_TYPE (statfs's
 * f_type): *LEN bytes of getdents64() records, the whole directory, owned
 * by M; NULL when none, or when such a directory's listing is never taken
 * from a memo.  Safe to call from another thread while the scan runs: what
 * it reads does not change after scan_memo_open().  M may be NULL.
 */
const char *scan_memo_find(const struct scan_memo *m, int fd, const struct stat *st, long fs_type,
			   size_t *len);

/* Does M hold no listing (or is NULL)? */
bool scan_memo_empty(const struct scan_memo *m);

/*
 * Keep, for the next scan, BUF (LEN bytes of getdents64() records: the
 * whole listing of the directory FD, read after its status was seen to be
 * ST, on a file system of type FS_TYPE), when it qualifies (above), less
 * what SCAN_MEMO_SKIPPED leaves out; BUF may be the one scan_memo_find()
 * gave.  M may be NULL.  Not thread-safe: the scan's own thread only.
 */
void scan_memo_keep(struct scan_memo *m, int fd, const struct stat *st, long fs_type,
		    const char *buf, size_t len);

/* The memo file removed (a scan with it failed), and M freed.  NULL-safe. */
void scan_memo_drop(struct scan_memo *m);

/* With SAVE (the scan ended well), write what was kept when something new
 * was (replacing the file at once); free M.  NULL-safe. */
void scan_memo_close(struct scan_memo *m, bool save);

/* Does a file system of type FS_TYPE (statfs's f_type) give each directory
 * an inode number of its own for as long as it exists?  ext4, XFS, Btrfs,
 * tmpfs (overlayfs, FUSE and network file systems may not): what the
 * thread that lists ahead of the scan needs (scan_ahead.h); the memo
 * trusts fewer. */
bool scan_fs_exact(long fs_type);

#endif
