/*
 * init_mounts.h - the mounts omnibox-init makes before it drops its
 * capabilities (init_mounts.c): /etc's system files and the masks.  Both
 * need CAP_SYS_ADMIN in the user namespace that owns the sandbox's mounts.
 */
#ifndef OMNIBOX_INIT_MASKS_H
#define OMNIBOX_INIT_MASKS_H

#include <stddef.h>

/*
 * The masks of the list on FD (bwrap_masks_list(), emitters/bwrap.h; FD
 * closed), each made in the directory the launch checked and then checked
 * in place at its path: /dev/null bound over each "f" entry, the tmpfs of
 * each "d" entry made read-only.  Needs CAP_SYS_ADMIN in the user namespace
 * that owns the sandbox's mounts.  0, or -1 with the message in ERR (empty
 * when there is none to give: a list that cannot be read or is not
 * omnibox-run's); then nothing may run.
 */
int init_place_masks(int fd, char *err, size_t errlen);

/*
 * Each of the N PATHS (absolute) of the host, found below ROOT (where bwrap
 * bound the host's root; its symlinks followed as the host would), cloned
 * read-only, nosuid and nodev onto the same path inside, its mount point
 * made; one the host lacks is skipped, as bwrap's --ro-bind-try would.
 * Then ROOT is unmounted and removed.  0, or -1 with the message in ERR;
 * then nothing may run.
 */
int init_mount_system(const char *root, const char *const *paths, size_t n, char *err,
		      size_t errlen);

#endif
