/*
 * test_host.c - what a launch leaves on the host goes: the removal of a
 * scratch tree however deep, closed or linked the agent made it.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compiler/base/arena.h"
#include "runtime/resolve/host.h"

static char root[64];

static void
setup_root(void)
{
	snprintf(root, sizeof(root), "/tmp/omnibox-host-XXXXXX");
	cr_assert_not_null(mkdtemp(root));
}

static void
teardown_root(void)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "chmod -R u+rwx %s 2>/dev/null; rm -rf %s", root, root);
	if (system(cmd) != 0)
		cr_log_warn("could not remove %s", root);
}

#define assert_exists(path)                                                                        \
	do {                                                                                       \
		struct stat st_;                                                                   \
		cr_assert_eq(lstat((path), &st_), 0, "%s is gone: %s", (path), strerror(errno));   \
	} while (0)

#define assert_gone(path)                                                                          \
	do {                                                                                       \
		struct stat st_;                                                                   \
		cr_assert(lstat((path), &st_) < 0 && errno == ENOENT, "%s is still there",         \
			  (path));                                                                 \
	} while (0)

/* DEPTH nested directories "d" in DIR, one descriptor at a time; at the
 * bottom a file and, when LINK, a symlink to LINK.  Returns 0 or -1. */
static int
make_deep(int dir, int depth, const char *link)
{
	int fd = dup(dir), next, rc = 0;

	for (int i = 0; fd >= 0 && i < depth; i++) {
		if (mkdirat(fd, "d", 0755) < 0)
			rc = -1;
		next = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		close(fd);
		fd = next;
	}
	if (fd < 0)
		return -1;
	next = openat(fd, "bottom", O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	if (next < 0 || (link && symlinkat(link, fd, "out") < 0))
		rc = -1;
	if (next >= 0)
		close(next);
	close(fd);
	return rc;
}

/* A file outside the tree that a link inside it names. */
static void
make_outside(char *dir, size_t len, char *file, size_t flen)
{
	int fd;

	snprintf(dir, len, "%s/outside", root);
	snprintf(file, flen, "%s/keep", dir);
	cr_assert_eq(mkdir(dir, 0755), 0);
	fd = open(file, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	cr_assert_geq(fd, 0);
	close(fd);
}

TestSuite(host, .init = setup_root, .fini = teardown_root);

Test(host, a_tree_deeper_than_the_descriptor_limit_is_removed_whole)
{
	char tree[128], outside[128], keep[160];
	struct rlimit low = {24, 24};
	int dir;

	make_outside(outside, sizeof(outside), keep, sizeof(keep));
	snprintf(tree, sizeof(tree), "%s/tree", root);
	cr_assert_eq(mkdir(tree, 0700), 0);
	dir = open(tree, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_eq(make_deep(dir, 5000, outside), 0);
	close(dir);
	/* 5,000 levels, 24 descriptors: one per level would run out at once. */
	cr_assert_eq(setrlimit(RLIMIT_NOFILE, &low), 0);
	cr_assert_eq(rmtree(tree), 0);
	assert_gone(tree);
	assert_exists(keep);
}

Test(host, a_wide_tree_with_closed_directories_and_links_out_is_removed_not_followed)
{
	char tree[128], path[256], outside[128], keep[160];
	struct rlimit low = {16, 16};
	int dir;

	make_outside(outside, sizeof(outside), keep, sizeof(keep));
	snprintf(tree, sizeof(tree), "%s/tree", root);
	cr_assert_eq(mkdir(tree, 0700), 0);
	dir = open(tree, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (int i = 0; i < 300; i++) {
		snprintf(path, sizeof(path), "w%03d", i);
		cr_assert_eq(mkdirat(dir, path, 0755), 0);
		snprintf(path, sizeof(path), "w%03d/f", i);
		close(openat(dir, path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
		snprintf(path, sizeof(path), "f%03d", i);
		close(openat(dir, path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
	}
	cr_assert_eq(symlinkat(outside, dir, "dirlink"), 0);
	cr_assert_eq(symlinkat(keep, dir, "filelink"), 0);
	/* Closed directories, deep ones too: unreadable, unsearchable, read-only. */
	cr_assert_eq(mkdirat(dir, "closed", 0755), 0);
	cr_assert_eq(mkdirat(dir, "closed/inner", 0755), 0);
	close(openat(dir, "closed/inner/f", O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
	cr_assert_eq(fchmodat(dir, "closed/inner", 0, 0), 0);
	cr_assert_eq(fchmodat(dir, "closed", 0100, 0), 0);
	cr_assert_eq(mkdirat(dir, "ro", 0755), 0);
	cr_assert_eq(make_deep(dir, 200, outside), 0);
	cr_assert_eq(fchmodat(dir, "d/d/d", 0500, 0), 0);
	cr_assert_eq(fchmodat(dir, "ro", 0500, 0), 0);
	close(dir);
	cr_assert_eq(setrlimit(RLIMIT_NOFILE, &low), 0);
	cr_assert_eq(rmtree(tree), 0);
	assert_gone(tree);
	assert_exists(keep);
}

Test(host, the_scratch_dir_goes_with_a_deep_tree)
{
	struct arena *a = arena_new();
	struct host_entry e;
	struct rlimit low = {20, 20};
	char outside[128], keep[160];
	int dir;

	make_outside(outside, sizeof(outside), keep, sizeof(keep));
	cr_assert_eq(host_scratch_create(a, root, &e, NULL, NULL), 0);
	dir = open(e.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_eq(make_deep(dir, 3000, outside), 0);
	close(dir);
	cr_assert_eq(setrlimit(RLIMIT_NOFILE, &low), 0);
	cr_assert_eq(host_remove(&e, true, false), 0);
	assert_gone(e.path);
	assert_exists(keep);
	arena_free(a);
}

Test(host, a_scratch_name_that_holds_another_directory_stays)
{
	struct arena *a = arena_new();
	struct host_entry e;
	char away[128], mine[160];

	cr_assert_eq(host_scratch_create(a, root, &e, NULL, NULL), 0);
	snprintf(away, sizeof(away), "%s/away", root);
	cr_assert_eq(rename(e.path, away), 0);
	cr_assert_eq(mkdir(e.path, 0700), 0);
	snprintf(mine, sizeof(mine), "%s/mine", e.path);
	cr_assert_eq(mkdir(mine, 0700), 0);
	cr_assert_eq(host_remove(&e, true, false), 0);
	assert_exists(mine);
	assert_exists(away);
	arena_free(a);
}

Test(host, a_link_or_a_file_is_removed_as_a_name)
{
	char link[128], outside[128], keep[160];

	make_outside(outside, sizeof(outside), keep, sizeof(keep));
	snprintf(link, sizeof(link), "%s/link", root);
	cr_assert_eq(symlink(outside, link), 0);
	cr_assert_eq(rmtree(link), 0);
	assert_gone(link);
	assert_exists(keep);
	cr_assert_eq(rmtree(keep), 0);
	assert_gone(keep);
	cr_assert_eq(rmtree(keep), 0, "a missing name is already removed");
}
