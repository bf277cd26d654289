/*
 * test_janitor.c - the cleanup process (janitor.h): what it is told, and
 * what it removes once omnibox-run's end of its socket is closed.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compiler/base/arena.h"
#include "runtime/launch/janitor.h"
#include "runtime/resolve/host.h"

static char root[64];
static int root_fd = -1;
static struct arena *a;

static void
setup(void)
{
	snprintf(root, sizeof(root), "/tmp/omnibox-janitor-XXXXXX");
	cr_assert_not_null(mkdtemp(root));
	root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(root_fd, 0);
	a = arena_new();
}

static void
teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	if (system(cmd) != 0)
		cr_log_warn("could not remove %s", root);
	close(root_fd);
	arena_free(a);
}

TestSuite(janitor, .init = setup, .fini = teardown);

/* omnibox-run's end closed: the janitor (this process's only child) ends. */
static void
end_and_wait(int fd)
{
	int status;

	close(fd);
	cr_assert_gt(waitpid(-1, &status, 0), 0);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static bool
exists(const char *name)
{
	struct stat st;

	return fstatat(root_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/*
 * The placeholder a launch made, removed by that launch, and one the next
 * launch made by the same name, to which the file system gave the freed
 * inode's number (here: the entry made to say so).  Told the launch removed
 * its own, the janitor leaves it; not told (the launch was killed), it
 * removes what it holds as its own.
 */
static void
placeholder_after_reuse(bool cleaned)
{
	struct host_entry mine;
	struct launch_plan plan = {0};
	int fd;

	cr_assert_eq(host_placeholder_file(a, root_fd, "config.worktree", "config.worktree", "",
					   &mine),
		     0);
	plan.placeholders = &mine;
	plan.n_placeholders = 1;
	fd = janitor_start(&(struct host_entry){.dirfd = -1}, &plan, NULL);
	cr_assert_geq(fd, 0);
	janitor_checked(fd, -1);
	if (cleaned)
		janitor_cleaned(fd);
	end_and_wait(fd);
	if (cleaned)
		cr_assert(exists("config.worktree"), "the janitor removed the next launch's one");
	else
		cr_assert_not(exists("config.worktree"), "the janitor left a killed launch's one");
}

Test(janitor, a_placeholder_the_launch_removed_itself_is_not_removed_again)
{
	placeholder_after_reuse(true);
}

Test(janitor, a_placeholder_of_a_launch_that_said_nothing_is_removed)
{
	placeholder_after_reuse(false);
}

/* The scratch dir named before it is made, omnibox-run gone before it said
 * the directory was made: the directory goes (it is empty). */
Test(janitor, a_scratch_dir_named_and_made_but_not_said_made_is_removed)
{
	int fd = janitor_start(&(struct host_entry){.dirfd = -1}, &(struct launch_plan){0}, NULL);

	cr_assert_geq(fd, 0);
	cr_assert_eq(janitor_scratch_name(fd, root_fd, "omnibox-abcdef"), 0);
	cr_assert_eq(mkdirat(root_fd, "omnibox-abcdef", 0700), 0);
	end_and_wait(fd);
	cr_assert_not(exists("omnibox-abcdef"));
}

/* Said made, then renamed at the end of the launch: the tree goes by its
 * new name; a directory by the old name that is not it stays. */
Test(janitor, a_scratch_dir_moved_at_the_end_is_removed_by_its_new_name)
{
	struct host_entry scratch;
	int fd = janitor_start(&(struct host_entry){.dirfd = -1}, &(struct launch_plan){0}, NULL);
	char gone[64];

	cr_assert_geq(fd, 0);
	cr_assert_eq(host_scratch_create(a, root, &scratch, NULL, NULL), 0);
	cr_assert_eq(janitor_scratch_name(fd, root_fd, scratch.name), 0);
	cr_assert_eq(janitor_scratch_made(fd, &scratch), 0);
	snprintf(gone, sizeof(gone), "%s/home", scratch.path);
	cr_assert_eq(mkdir(gone, 0700), 0);
	snprintf(gone, sizeof(gone), "%s/home/cache", scratch.path);
	cr_assert_eq(close(open(gone, O_CREAT | O_WRONLY | O_CLOEXEC, 0600)), 0);
	snprintf(gone, sizeof(gone), ".%s", scratch.name);
	janitor_checked(fd, -1);
	cr_assert_eq(janitor_scratch_moved(fd, gone), 0);
	cr_assert_eq(renameat(root_fd, scratch.name, root_fd, gone), 0);
	cr_assert_eq(mkdirat(root_fd, scratch.name, 0700), 0); /* another, by the old name */
	end_and_wait(fd);
	cr_assert_not(exists(gone));
	cr_assert(exists(scratch.name));
}
