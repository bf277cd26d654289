/*
 * walk.h - opening a path so that nothing the agent wrote can steer it.
 *
 * The sandboxed agent can write symlinks anywhere in its writable roots
 * (the workspace when it is writable, write_paths, the scratch dir) and
 * they outlive the launch.  A path the next launch opens must not be
 * redirected by them: walk_open() goes one component at a time from "/",
 * each opened relative to its parent's descriptor without following a
 * symlink (openat2 with RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS).  Whole
 * paths are not handed to RESOLVE_BENEATH: it would refuse an absolute
 * link that stays inside the root and could not say which link it was.  A symlink found inside a
 * writable root is followed only when its target stays inside that root; anywhere else (set up by
 * the user or the system) it is followed as the kernel would.  ".." written in the path itself is
 * applied as written, before the walk.
 *
 * What the walk returns is a descriptor (O_PATH on Linux) on the object
 * and its canonical path, read back from the kernel: the launch mounts the
 * descriptor, so the object checked is the object mounted.
 */
#ifndef OMNIBOX_WALK_H
#define OMNIBOX_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "compiler/base/arena.h"

struct walk_result {
	int fd;		   /* on the object (O_PATH|O_CLOEXEC on Linux); -1 when missing */
	const char *path;  /* canonical; when missing, the canonical existing part + the rest */
	bool exists;	   /* the whole path exists */
	bool is_dir;	   /* it exists and is a directory */
	bool through_link; /* a symlink was followed on the way */

	/* When missing: the first component that does not exist, and (with
	 * WALK_PARENT) a descriptor on its directory, -1 when that is no
	 * directory.  When it exists, with WALK_PARENT: a descriptor on the
	 * directory that holds it (-1 for "/"). */
	const char *missing;
	int parent_fd;

	/* When a symlink inside a writable root points out of it (EXDEV). */
	const char *bad_link;	/* the symlink's path */
	const char *bad_target; /* its target, as written */
	const char *bad_root;	/* the writable root it leaves */
};

/* Keep a descriptor on the directory that holds the path (or, when missing,
 * its first missing component). */
#define WALK_PARENT 1u
/* No descriptor wanted: close it (the result's fd is -1). */
#define WALK_NO_FD 2u
/* ".." where the kernel applies it, after the links before it: for paths the
 * kernel itself will resolve (a program, a script's interpreter), not for
 * the policy's own paths, whose ".." applies as written. */
#define WALK_PHYSICAL 4u

/*
 * Open the absolute PATH, with ROOTS (N_ROOTS canonical directories) as
 * the writable roots.  Returns 0 with *OUT filled (a missing path is not
 * an error), or -1 with errno: EXDEV when a symlink inside a writable root
 * leads out of it (the bad_* fields say which), ELOOP after 40 symlinks,
 * EAGAIN when the object moved while it was opened, EINVAL for a relative
 * PATH, or what a system call said (EACCES, ...).  Strings belong to A;
 * descriptors to the caller.
 */
int walk_open(struct arena *a, const char *path, const char *const *roots, size_t n_roots,
	      unsigned flags, struct walk_result *out);

/* PATH (absolute) with "." and empty components dropped and ".." applied. */
char *walk_lexical(struct arena *a, const char *path);

/*
 * The canonical form of the absolute PATH: symlinks followed where it
 * exists, the rest appended.  An arena string, or NULL with errno.
 */
char *walk_canonical(struct arena *a, const char *path);

/* The path the kernel gives for FD, or NULL where it cannot tell. */
char *walk_fd_path(struct arena *a, int fd);

#endif
