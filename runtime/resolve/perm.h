/*
 * perm.h - what the sandbox's user may do with a file, by its owner and mode.
 *
 * The sandbox runs with the caller's uid and gids and no capabilities: root
 * included, it gets what a file's owner, group and mode bits give those ids,
 * and nothing more.  What a launch makes for the sandbox from a host file
 * (the private copy of a copy_on_write tree, the private directory of a
 * write_files entry) must not give it more than that; this is the one rule
 * both ask.  The mode bits only: ACLs are not read.
 */
#ifndef OMNIBOX_PERM_H
#define OMNIBOX_PERM_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

struct perm_ids {
	uid_t uid;
	gid_t gid;
	gid_t *groups; /* the supplementary groups */
	size_t n_groups;
};

/*
 * The ids of this process: effective uid and gid and the supplementary
 * groups, which the sandbox keeps.  IDS->groups is allocated: release it with
 * perm_ids_release().  Returns 0, or -1 with errno.
 */
int perm_ids_self(struct perm_ids *ids);

void perm_ids_release(struct perm_ids *ids);

/*
 * Would IDS, without capabilities, be let do WANT (R_OK, W_OK and X_OK ORed
 * together) with the file of ST?  As the kernel does, one class decides
 * alone: the owner's bits when IDS owns it, else the group's when IDS is in
 * its group, else the others'.  Pure.
 */
bool perm_sandbox_may(const struct perm_ids *ids, const struct stat *st, int want);

#endif
