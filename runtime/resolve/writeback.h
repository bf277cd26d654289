/*
 * writeback.h - write_files that editors can save.
 *
 * An editor saves by writing a new file beside the old one and renaming it
 * over the old name.  A write_files entry bound onto itself is a mount
 * point, and rename over a mount point fails (EBUSY).  So the resolver
 * binds, at the file's directory, a private directory made in the scratch
 * dir: it holds a copy of each granted file of that directory (and, where
 * the policy shows that directory, its other entries bound read-only or
 * recreated as links).  Inside, the file is an ordinary directory entry:
 * written in place, replaced by rename, it is the copy that changes.
 *
 * omnibox-run then copies each granted name back to the host file, through
 * the descriptor the resolver opened at launch (never by path again), when
 * a write to it is closed or a file is renamed onto it, and once more when
 * the sandbox has exited.  Only the granted names travel: a new file made
 * in the private directory stays there and goes with the scratch dir.  The
 * host file keeps its inode, owner and mode; its contents become the
 * copy's.  What is copied back must be a regular file of at most
 * WRITEBACK_MAX_BYTES: a link, a FIFO or a larger file planted under the
 * name is not written back (and said so).
 */
#ifndef OMNIBOX_WRITEBACK_H
#define OMNIBOX_WRITEBACK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

/* The directory of the scratch dir that holds the private directories. */
#define WRITEBACK_DIR ".omnibox-wf"

/* Larger files are not copied (a sparse one would fill the host's disk). */
#define WRITEBACK_MAX_BYTES (64LL << 20)

struct writeback {
	const char *path;   /* the host file, canonical */
	const char *name;   /* its name, in the private directory */
	int host_fd;	    /* O_PATH on the host file, opened by the resolver */
	int dir_fd;	    /* O_RDONLY|O_DIRECTORY on the private directory */
	struct stat synced; /* the copy as the host file last matched it */
};

/*
 * Copy the regular file open at HOST_FD (O_PATH is enough) to NAME in the
 * directory DIR_FD, mode and times kept; fills W->synced.  Returns 0, or -1
 * with a message in ERR.
 */
int writeback_copy_in(struct writeback *w, char *err, size_t errlen);

/*
 * Bring the host file of W up to date with its copy, if the copy changed
 * since it was last synced.  Returns 1 when the host file was written, 0
 * when there was nothing to do (unchanged, or removed inside), -1 with a
 * message in ERR when the copy cannot be written back.
 */
int writeback_sync(struct writeback *w, char *err, size_t errlen);

#endif
