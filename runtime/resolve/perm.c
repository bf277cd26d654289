/*
 * perm.c - what the sandbox's user may do with a file (perm.h).
 */
#include "runtime/resolve/perm.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

int
perm_ids_self(struct perm_ids *ids)
{
	int n = getgroups(0, NULL);

	ids->uid = geteuid();
	ids->gid = getegid();
	ids->groups = NULL;
	ids->n_groups = 0;
	if (n < 0)
		return -1;
	ids->groups = calloc((size_t)n + 1, sizeof(*ids->groups));
	if (!ids->groups)
		return -1;
	n = getgroups(n, ids->groups);
	if (n < 0) {
		int err = errno;

		perm_ids_release(ids);
		errno = err;
		return -1;
	}
	ids->n_groups = (size_t)n;
	return 0;
}

void
perm_ids_release(struct perm_ids *ids)
{
	free(ids->groups);
	ids->groups = NULL;
	ids->n_groups = 0;
}

static bool
perm_in_group(const struct perm_ids *ids, gid_t gid)
{
	if (ids->gid == gid)
		return true;
	for (size_t i = 0; i < ids->n_groups; i++)
		if (ids->groups[i] == gid)
			return true;
	return false;
}

bool
perm_sandbox_may(const struct perm_ids *ids, const struct stat *st, int want)
{
	unsigned bits;

	if (st->st_uid == ids->uid)
		bits = (st->st_mode >> 6) & 7;
	else if (perm_in_group(ids, st->st_gid))
		bits = (st->st_mode >> 3) & 7;
	else
		bits = st->st_mode & 7;
	/* R_OK, W_OK and X_OK are 4, 2 and 1: the bits of a class. */
	return ((unsigned)want & 7 & ~bits) == 0;
}
