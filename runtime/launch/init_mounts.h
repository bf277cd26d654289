/*
 * init_mounts.h - the mounts omnibox-init makes before it drops its
 * capabilities (init_mounts.c): the system's (/usr, /etc's files, /proc's
 * tunables, /dev) and the masks.  Both
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
 * A mount that omnibox-init makes in bwrap's stead: the host's PATH
 * (absolute) cloned read-only, nosuid and nodev onto the same path inside
 * as bwrap's --ro-bind-try would (KIND 't': one the host lacks is skipped)
 * or --ro-bind ('r': one it lacks fails the launch); the host's SRC so onto
 * PATH ('b', as --ro-bind SRC PATH); ('d') a /dev at PATH as bwrap's --dev
 * makes it: a tmpfs with the host's devices null, zero, full, random,
 * urandom and tty bound in (read-write, nosuid), the links to
 * /proc/self/fd, an empty shm, a new devpts instance with its ptmx, and,
 * where standard output is a terminal, that terminal as console; a grant
 * of the launch's descriptor SRC (decimal) onto PATH, read-only ('g', as
 * --ro-bind-fd) or keeping the host's flags ('w', as --bind-fd), cloned
 * from the host's root once it is found to be that descriptor's directory
 * or file there (device and inode) and checked at PATH after; or ('m') a
 * tmpfs on PATH as bwrap's --tmpfs.
 */
struct init_system {
	const char *path;
	char kind;
	const char *src; /* 'b', 'g', 'w' alone; else NULL */
};

/*
 * Each of the N mounts of V made, in order, from below ROOT (where bwrap
 * bound the host's root; symlinks followed as the host would), their
 * mount points made.  Then ROOT is unmounted and removed.  0, or -1 with
 * the message in ERR; then nothing may run.
 */
int init_mount_system(const char *root, const struct init_system *v, size_t n, char *err,
		      size_t errlen);

/* The directory PATH entered (no symlink followed), once every mount is
 * made, and PWD set to it (as bwrap's --chdir did): 0, or -1 with the
 * message in ERR. */
int init_chdir(const char *path, char *err, size_t errlen);

#endif
