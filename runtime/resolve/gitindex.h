/*
 * gitindex.h - what a repository's index vouches for, read by the launch.
 *
 * Once .git is visible to the sandbox, a dotfile the repository tracks
 * hides nothing: its content is in the objects the agent can already read.
 * So where .git is shown, a hidden name (.gitignore, .github/workflows/ci.yml)
 * whose current content is byte for byte the blob the index records is
 * shown too (docs/schema.md, "Dotfiles in a repository").  Anything else
 * stays hidden: untracked, ignored, changed since it was staged, a
 * symbolic link, or an index entry the agent forged, which cannot name the
 * hash of content it never saw.  The index's own stat data is never
 * trusted: every file is read and hashed.
 *
 * Only SHA-1 repositories are read; in a SHA-256 one (or with an index
 * this reader does not know) nothing is vouched for: the dotfiles stay
 * hidden, as without this rule.
 */
#ifndef OMNIBOX_GITINDEX_H
#define OMNIBOX_GITINDEX_H

#include <stdbool.h>
#include <stddef.h>

struct gitindex;

/*
 * The index of the repository whose work tree is TOP (absolute, canonical),
 * read from TOP/.git/index through the descriptor TOPFD (a directory):
 * never through a link, only from a .git that is a directory.  NULL when
 * there is none, or it is not one this reader takes.
 */
struct gitindex *gitindex_load(int topfd, const char *top);
void gitindex_free(struct gitindex *ix);

/* The work tree IX belongs to. */
const char *gitindex_top(const struct gitindex *ix);

/*
 * Does IX vouch for the entry NAME in the directory DIRFD, at PATH
 * (absolute, under the work tree), of type TYPE (DT_REG, DT_DIR, ...)?  A
 * regular file: stage 0, a regular mode, and the hash of what it holds now
 * is the recorded blob's.  A directory: the index records a file below it.
 */
bool gitindex_vouches(const struct gitindex *ix, const char *path, int dirfd, const char *name,
		      unsigned char type);

#endif
