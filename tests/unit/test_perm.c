/*
 * test_perm.c - what the sandbox's user may do with a file, by owner and mode:
 * the one rule behind copy_on_write's copies and write_files' directories.
 */
#include <criterion/criterion.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/resolve/perm.h"

static gid_t groups[] = {20, 30};
static const struct perm_ids root = {.uid = 0, .gid = 0};
static const struct perm_ids user = {.uid = 1000, .gid = 1000, .groups = groups, .n_groups = 2};

static struct stat
file(uid_t uid, gid_t gid, mode_t mode)
{
	struct stat st = {.st_uid = uid, .st_gid = gid, .st_mode = S_IFREG | mode};

	return st;
}

Test(perm, root_without_capabilities_gets_only_the_others_bits_of_another_users_file)
{
	struct stat st = file(4321, 4321, 0600);

	cr_assert_not(perm_sandbox_may(&root, &st, R_OK));
	cr_assert_not(perm_sandbox_may(&root, &st, W_OK));
	st = file(4321, 4321, 0644);
	cr_assert(perm_sandbox_may(&root, &st, R_OK));
	cr_assert_not(perm_sandbox_may(&root, &st, W_OK));
}

Test(perm, the_owner_gets_the_owners_bits_even_when_others_get_more)
{
	struct stat st = file(1000, 1000, 0066);

	cr_assert_not(perm_sandbox_may(&user, &st, R_OK));
	st = file(1000, 1000, 0600);
	cr_assert(perm_sandbox_may(&user, &st, R_OK | W_OK));
	cr_assert_not(perm_sandbox_may(&user, &st, X_OK));
}

Test(perm, a_supplementary_group_gets_the_groups_bits_and_no_more)
{
	struct stat st = file(4321, 30, 0640);

	cr_assert(perm_sandbox_may(&user, &st, R_OK));
	cr_assert_not(perm_sandbox_may(&user, &st, W_OK));
	st = file(4321, 30, 0604);
	cr_assert_not(perm_sandbox_may(&user, &st, R_OK), "the group class decides alone");
}

Test(perm, a_directory_needs_every_bit_asked)
{
	struct stat st = file(4321, 4321, 0711);

	st.st_mode = S_IFDIR | 0711;
	cr_assert(perm_sandbox_may(&user, &st, X_OK));
	cr_assert_not(perm_sandbox_may(&user, &st, R_OK | X_OK));
}
