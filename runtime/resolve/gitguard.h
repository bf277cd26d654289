/*
 * gitguard.h - the git repositories inside writable roots, before and
 * after a run.
 *
 * git on the host obeys what it finds in a repository: config, hooks,
 * commondir, alternates, a .git file's target, a nested repository that a
 * gitlink or a shell prompt makes it enter.  Before the run the launch
 * finds every entry named .git in the writable roots and protects each
 * one's git entries (protect.h); after the run, an entry named .git that
 * was not there before (a repository the sandbox made) is renamed to
 * .git-omnibox-quarantine-N, so the host's git does not enter it, and the
 * user is told.  Both walks are one function, with the same prunes, so
 * they see the same tree.
 */
#ifndef OMNIBOX_GITGUARD_H
#define OMNIBOX_GITGUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "compiler/base/arena.h"
#include "compiler/decide/protect.h"
#include "runtime/resolve/scan.h"

struct gitguard_entry {
	const char *path; /* canonical: ROOT/.../.git, or a directory git takes for a
			   * repository whatever its name (kind SCAN_GITDIR) */
	enum scan_kind kind;
	unsigned long long dev, ino; /* the entry's own */
};

/* The directories neither walk enters, each while it is the one seen at
 * launch: paths sorted, with their device and inode. */
struct gitguard_prune {
	const char **paths;
	unsigned long long (*ids)[2];
	size_t n;
};

/*
 * Every entry named .git below ROOTS (canonical directories), none
 * descended into, nor any directory in PRUNE (sorted, canonical: what the
 * sandbox cannot reach).  *OUT sorted by path, from A.  0, or -1 with a
 * message in ERR.
 */
int gitguard_find(struct arena *a, const char *const *roots, size_t n_roots,
		  const struct gitguard_prune *prune, struct gitguard_entry **out, size_t *n_out,
		  char *err, size_t errlen);

/*
 * The git directory the .git file behind FD names ("gitdir: X", X taken
 * relative to DIR, the directory the file is in), lexically resolved, or
 * NULL when the file says no such thing.  From A.
 */
const char *gitguard_gitfile_target(struct arena *a, int fd, const char *dir);

/* The common directory a commondir file behind FD names, relative to GITDIR. */
const char *gitguard_commondir(struct arena *a, int fd, const char *gitdir);

/* A path the host's git configuration names (protect_git_variable()). */
typedef void gitguard_path_fn(void *arg, const char *path, enum protect_git_var kind);

/*
 * Read the configuration FILES (N of them; a missing one is skipped) as
 * the host's git reads them for a repository whose work tree is WORKTREE
 * (NULL when it has none), includes followed (at most 10 deep), and call
 * FN for each path a variable names and for each file included, lexically
 * resolved: "~/" is HOME; a relative include is taken from the including
 * file's directory, any other relative path from WORKTREE (skipped without
 * one).  Files are opened by walk_open() with ROOTS as the writable roots.
 */
void gitguard_config_paths(struct arena *a, const char *const *files, size_t n,
			   const char *worktree, const char *home, const char *const *roots,
			   size_t n_roots, gitguard_path_fn *fn, void *arg);

/*
 * After a run: set aside every repository below ROOTS that is not in KNOWN
 * (N_KNOWN entries sorted by path, the same object at the same path): an
 * entry named .git is renamed to .git-omnibox-quarantine-XXXXXX beside it,
 * a directory git takes for a repository loses its HEAD (renamed the same
 * way), by descriptor, never following a link.  Directories the walk cannot
 * list are opened up (u+rx) first: what the sandbox made unreadable cannot
 * hide a repository.  A line for each to OUT (paths escaped).  Returns how
 * many were set aside, or -1 when the walk failed or something could not be
 * looked at or set aside (said on OUT).
 */
int gitguard_quarantine(const char *const *roots, size_t n_roots,
			const struct gitguard_prune *prune, const struct gitguard_entry *known,
			size_t n_known, FILE *out);

#endif
