/*
 * host.h - what a launch makes on the host, and how it goes away.
 *
 * The scratch dir and the placeholders for missing mask_paths are made
 * through a descriptor on their directory, and removed through that same
 * descriptor, only while the name still holds the inode that was made:
 * never through a path, which the agent could have re-pointed by
 * replacing a parent with a symlink in the meantime.
 */
#ifndef OMNIBOX_HOST_H
#define OMNIBOX_HOST_H

#include <stdbool.h>
#include <sys/types.h>

#include "compiler/base/arena.h"

struct host_entry {
	int dirfd;	  /* its directory, held since it was made */
	const char *name; /* its name in that directory */
	const char *path; /* for messages */
	dev_t dev;
	ino_t ino;
	bool is_dir;
	off_t size; /* a file placeholder: what was written into it */
};

/*
 * A new private (0700) directory PARENT/omnibox-XXXXXX, made by mkdirat()
 * under a descriptor on PARENT.  BEFORE (or NULL) is called with ARG, that
 * descriptor and each name before a directory of that name is made: it
 * tells the name to whoever removes what is left (-1 with errno: nothing
 * is made).  Returns 0, or -1 with errno.
 */
int host_scratch_create(struct arena *a, const char *parent, struct host_entry *out,
			int (*before)(void *arg, int dirfd, const char *name), void *arg);

/* An empty placeholder NAME (a directory when IS_DIR) in DIRFD, which it keeps. */
int host_placeholder_make(struct arena *a, int dirfd, const char *name, const char *path,
			  bool is_dir, struct host_entry *out);

/*
 * A read-only (0444) placeholder file NAME in DIRFD holding TEXT, made with
 * O_EXCL and written through its own descriptor.  Returns 0, or -1 with
 * errno (nothing left behind).
 */
int host_placeholder_file(struct arena *a, int dirfd, const char *name, const char *path,
			  const char *text, struct host_entry *out);

/*
 * Remove E: a scratch dir with all it holds, a placeholder only while it is
 * still empty (a file: still holds as many bytes as it was made with).  Nothing happens when the name no longer holds E's inode.
 * Closes E's descriptor unless KEEP.  Returns 0 or -errno.
 */
int host_remove(struct host_entry *e, bool tree, bool keep);

/*
 * Remove the tree NAME in DIRFD (a file or link: just that name) without
 * following symlinks or entering mount points, making directories the agent
 * closed readable first.  Iterative, with a bounded number of descriptors
 * (a few dozen, and it sheds them down to two when they run out) however
 * deep the tree; a level whose descriptor was closed is reopened through
 * ".." only if it is still the directory that was left.  Stops at the first
 * error and returns it (-errno: -ESTALE when the tree moved meanwhile); a
 * caller racing a writer tries again.  Returns 0 or -errno.
 */
int rmtree_at(int dirfd, const char *name);

/* rmtree_at(AT_FDCWD, PATH), for trees nobody else writes (tests). */
int rmtree(const char *path);

#endif
