/*
 * scratch_tree.h - a test's tree under /tmp: paths in it, and its removal.
 * Shared by the scan's tests (test_scan.c, test_scan_memo.c).
 */
#ifndef OMNIBOX_TEST_SCRATCH_TREE_H
#define OMNIBOX_TEST_SCRATCH_TREE_H

#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

static int
scratch_rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

/* DIR and everything below it removed (no symlink followed). */
static inline void
scratch_remove(const char *dir)
{
	nftw(dir, scratch_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* BASE/REL, in one of four buffers used in turn. */
static inline const char *
scratch_at(const char *base, const char *rel)
{
	static char bufs[4][PATH_MAX];
	static int next;
	char *p = bufs[next++ % 4];

	snprintf(p, PATH_MAX, "%s/%s", base, rel);
	return p;
}

#endif
