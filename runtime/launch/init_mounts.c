/*
 * init_mounts.c - the mounts omnibox-init makes (init_mounts.h).
 *
 * bwrap 0.8 reads its whole mount table again after each bind it makes, so
 * a bind there costs more the more mounts came before it.  omnibox-init
 * makes the many small ones instead, with the mount API, which reads no
 * table:
 *
 *   - /etc's system files, each cloned read-only (nosuid, nodev, as bwrap's
 *     --ro-bind-try) from the host's root, which bwrap bound for that alone
 *     and which is unmounted once they are in place;
 *   - the masks: a clone of /dev/null (read-only, nosuid, nodev) moved onto
 *     each masked file; a new read-only tmpfs on each directory hidden whole
 *     with nothing mounted below it, once the directory is checked to be the
 *     one the scan listed (device and inode); and each other directory's
 *     tmpfs (which bwrap mounted, so the grants inside it could get their
 *     mount points) made read-only.
 *     Every target is opened without following a symlink, in the directory
 *     whose identity the resolver recorded, and the mount goes onto that
 *     descriptor: the file checked is the file masked.  Then each mask is
 *     checked in place at its path.
 */
#include "runtime/launch/init_mounts.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "compiler/base/diag.h"

/* PATH, opened without following any symlink on the way (the resolver's
 * paths are canonical: a link there is a racer's). */
static int
open_exact(const char *path)
{
	struct open_how how = {.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
			       .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
	long fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));

	if (fd < 0 && errno == ENOSYS)
		fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	return (int)fd;
}

/* The whole of FD (closed) into *LIST (malloc'd), *LEN bytes.  0, or -1. */
static int
read_all(int fd, char **list, size_t *len)
{
	size_t cap = 0;

	*list = NULL;
	*len = 0;
	for (;;) {
		ssize_t n;

		if (*len == cap) {
			char *more = realloc(*list, cap = cap ? cap * 2 : 65536);

			if (!more) {
				free(*list);
				return -1;
			}
			*list = more;
		}
		n = read(fd, *list + *len, cap - *len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(*list);
			return -1;
		}
		if (n == 0)
			break;
		*len += (size_t)n;
	}
	close(fd);
	return 0;
}

/* The directory of PATH, opened exactly: a descriptor, *BASE its last name. */
static int
open_parent(const char *path, const char **base)
{
	const char *slash = strrchr(path, '/');
	char *dir;
	int dfd;

	if (!slash || !slash[1])
		return errno = EINVAL, -1;
	*base = slash + 1;
	dir = strndup(path, slash == path ? 1 : (size_t)(slash - path));
	if (!dir)
		return -1;
	dfd = open_exact(dir);
	free(dir);
	return dfd;
}

/* Is the directory of PATH the one with device DEV and inode INO? */
static bool
parent_is(const char *path, unsigned long long dev, unsigned long long ino)
{
	const char *base;
	int dfd = open_parent(path, &base);
	struct stat up;
	bool same = dfd >= 0 && fstat(dfd, &up) == 0 && (unsigned long long)up.st_dev == dev &&
		    (unsigned long long)up.st_ino == ino;

	if (dfd >= 0)
		close(dfd);
	return same;
}

/* Is the mask of KIND ('f' or 'd') at exactly PATH, read-only? */
static bool
mask_in_place(char kind, const char *path)
{
	int pfd = open_exact(path);
	struct stat st, up;
	struct statfs sf;
	bool ok = false;

	if (pfd >= 0 && fstat(pfd, &st) == 0 && fstatfs(pfd, &sf) == 0 &&
	    (sf.f_flags & ST_RDONLY)) {
		if (kind == 'f')
			ok = S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3);
		else
			/* A tmpfs mounted there, not an empty directory of the
			 * file system below it. */
			ok = S_ISDIR(st.st_mode) && fstatat(pfd, "..", &up, 0) == 0 &&
			     sf.f_type == TMPFS_MAGIC && st.st_dev != up.st_dev;
	}
	if (pfd >= 0)
		close(pfd);
	return ok;
}

/* An empty tmpfs, read-only, nosuid and nodev (bwrap's --tmpfs, then
 * --remount-ro), moved onto TARGET. */
static int
mount_tmpfs(int target)
{
	int fs = (int)syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC), mnt = -1, rc = -1, saved;

	if (fs >= 0 && syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "source", "tmpfs", 0) == 0 &&
	    syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "mode", "0755", 0) == 0 &&
	    syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0 &&
	    (mnt = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC,
				MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)) >= 0 &&
	    syscall(SYS_move_mount, mnt, "", target, "",
		    MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) == 0)
		rc = 0;
	saved = errno;
	if (mnt >= 0)
		close(mnt);
	if (fs >= 0)
		close(fs);
	errno = saved;
	return rc;
}

/* SET added to the attributes of the mount FD is on (or the detached tree FD is). */
static int
setattr_fd(int fd, unsigned long long set)
{
	struct mount_attr attr = {.attr_set = set};

	return (int)syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH, &attr, sizeof(attr));
}

/* /dev/null, read-only, nosuid and nodev, moved onto TARGET. */
static int
bind_null(int null_fd, int target)
{
	int tree = (int)syscall(SYS_open_tree, null_fd, "",
				AT_EMPTY_PATH | OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	int rc = -1, saved;

	if (tree < 0)
		return -1;
	if (setattr_fd(tree, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV) == 0 &&
	    syscall(SYS_move_mount, tree, "", target, "",
		    MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) == 0)
		rc = 0;
	saved = errno;
	close(tree);
	errno = saved;
	return rc;
}

/*
 * The mask of KIND at PATH (BASE in the directory DFD) made: /dev/null
 * onto a file that is neither a directory nor a symlink, or the tmpfs
 * mounted on a directory made read-only.  0, or -1 with the message in ERR.
 */
static int
make_mask(char kind, const char *path, int dfd, const char *base, int null_fd,
	  const unsigned long long self[2], char *err, size_t errlen)
{
	int t = openat(dfd, base, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	struct stat st, up;
	struct statfs sf;
	bool fits;
	int rc = -1;

	if (t < 0 || fstat(t, &st) < 0 || fstat(dfd, &up) < 0 || fstatfs(t, &sf) < 0) {
		rc = diag_fail(err, errlen, "cannot open %s to mask it: %s; nothing ran", path,
			       strerror(errno));
		goto out;
	}
	/* A directory's mask is the root of bwrap's tmpfs there: read-only
	 * applies to the mount the descriptor is on, so never to another. */
	fits = kind == 'f'   ? !S_ISDIR(st.st_mode) && !S_ISLNK(st.st_mode)
	       : kind == 't' ? S_ISDIR(st.st_mode) && (unsigned long long)st.st_dev == self[0] &&
				   (unsigned long long)st.st_ino == self[1]
			     : S_ISDIR(st.st_mode) && sf.f_type == TMPFS_MAGIC &&
				   st.st_dev != up.st_dev;
	if (!fits)
		rc = diag_fail(err, errlen,
			       "%s is not the %s the launch found (was it replaced while the "
			       "sandbox was set up?); nothing ran",
			       path, kind == 'f' ? "file" : "directory");
	else if ((kind == 'f'	  ? bind_null(null_fd, t)
		  : kind == 't' ? mount_tmpfs(t)
				: setattr_fd(t, MOUNT_ATTR_RDONLY)) < 0)
		rc = diag_fail(err, errlen, "cannot mask %s: %s%s; nothing ran", path,
			       strerror(errno),
			       errno == EPERM ? " (omnibox-init needs CAP_SYS_ADMIN for it)" : "");
	else
		rc = 0;
out:
	if (t >= 0)
		close(t);
	return rc;
}

/* One entry of the list: "KDEV:INO:PATH" or "K-:-:PATH", for "t" with
 * "DEV:INO:" of the directory itself before PATH; 0 or -1 with ERR. */
static int
place_one(const char *entry, int null_fd, char *err, size_t errlen)
{
	char kind = entry[0], *end;
	bool have_parent = entry[1] != '-';
	unsigned long long dev = 0, ino = 0, self[2] = {0, 0};
	const char *path, *base;
	struct stat up;
	int dfd, rc;

	if (have_parent) {
		dev = strtoull(entry + 1, &end, 10);
		ino = *end == ':' ? strtoull(end + 1, &end, 10) : 0;
		path = *end == ':' ? end + 1 : NULL;
	} else {
		path = strncmp(entry + 1, "-:-:", 4) ? NULL : entry + 5;
	}
	if (path && kind == 't') {
		self[0] = strtoull(path, &end, 10);
		self[1] = *end == ':' ? strtoull(end + 1, &end, 10) : 0;
		path = *end == ':' && self[1] ? end + 1 : NULL;
	}
	if (!path || (kind != 'f' && kind != 'd' && kind != 't') || path[0] != '/') {
		err[0] = '\0';
		return -1; /* not omnibox-run's list */
	}
	dfd = open_parent(path, &base);
	/* In the directory the resolver saw: a racer's rename of a parent could
	 * have put another one by that name. */
	if (dfd < 0 || (have_parent && (fstat(dfd, &up) < 0 || (unsigned long long)up.st_dev != dev ||
					(unsigned long long)up.st_ino != ino))) {
		if (dfd >= 0)
			close(dfd);
		return diag_fail(err, errlen,
				 "the directory of %s is not the one the launch checked (was it "
				 "renamed while the sandbox was set up?); nothing ran",
				 path);
	}
	rc = make_mask(kind, path, dfd, base, null_fd, self, err, errlen);
	close(dfd);
	if (rc < 0)
		return -1;
	/* And at its path: nothing moved the directory since. */
	if ((have_parent && !parent_is(path, dev, ino)) || !mask_in_place(kind == 'f' ? 'f' : 'd', path))
		return diag_fail(err, errlen,
				 "the mask of %s is not in place (was its path changed while the "
				 "sandbox was set up?); nothing ran",
				 path);
	return 0;
}

int
init_place_masks(int fd, char *err, size_t errlen)
{
	char *list;
	size_t len;
	int rc = 0, null_fd;

	err[0] = '\0';
	if (read_all(fd, &list, &len) < 0)
		return -1;
	null_fd = open_exact("/dev/null");
	if (null_fd < 0) {
		free(list);
		return diag_fail(err, errlen, "cannot open /dev/null: %s; nothing ran",
				 strerror(errno));
	}
	for (size_t off = 0; off < len && rc == 0;) {
		size_t elen = strnlen(list + off, len - off);

		if (elen == len - off) {
			rc = -1; /* no NUL: not ours */
			break;
		}
		rc = place_one(list + off, null_fd, err, errlen);
		off += elen + 1;
	}
	close(null_fd);
	free(list);
	return rc;
}

/* The directory PATH (absolute) inside the sandbox, made where missing
 * (mode 0755) and opened exactly. */
static int
make_dirs(const char *path)
{
	int fd = open_exact(path);
	char *up, *slash;

	if (fd >= 0 || errno != ENOENT)
		return fd;
	up = strdup(path);
	slash = up ? strrchr(up, '/') : NULL;
	if (!slash || slash == up) {
		free(up);
		return mkdir(path, 0755) < 0 && errno != EEXIST ? -1 : open_exact(path);
	}
	*slash = '\0';
	fd = make_dirs(up);
	free(up);
	if (fd < 0)
		return -1;
	close(fd);
	return mkdir(path, 0755) < 0 && errno != EEXIST ? -1 : open_exact(path);
}

/* The mount point PATH inside: a directory, or an empty file (IS_DIR false),
 * made where missing and opened exactly. */
static int
make_point(const char *path, bool is_dir)
{
	const char *base;
	int dfd, fd;
	char *dir;

	if (is_dir)
		return make_dirs(path);
	dfd = open_parent(path, &base);
	if (dfd < 0 && errno == ENOENT && (dir = strndup(path, (size_t)(base - 1 - path)))) {
		dfd = make_dirs(dir[0] ? dir : "/");
		free(dir);
	}
	if (dfd < 0)
		return -1;
	fd = openat(dfd, base, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0444);
	if (fd >= 0)
		close(fd);
	fd = openat(dfd, base, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	close(dfd);
	return fd;
}

/*
 * PATH of the host (relative to ROOT_FD, its symlinks followed as the host
 * would: an absolute target is the host's), cloned read-only onto the same
 * path inside.  0; 1 when the host has no PATH; -1 with errno.
 */
static int
clone_system(int root_fd, const char *path)
{
	struct open_how how = {.flags = O_PATH | O_CLOEXEC,
			       .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
	int src, dst = -1, tree = -1, rc = -1, saved, tries = 0;
	struct stat st;

	/* A ".." in a link (os-release -> ../usr/lib/os-release) is resolved
	 * in the root only while no rename or mount anywhere on the machine
	 * races it: the kernel says EAGAIN, to be tried again. */
	do
		src = (int)syscall(SYS_openat2, root_fd, path + 1, &how, sizeof(how));
	while (src < 0 && errno == EAGAIN && ++tries < 100000);
	if (src < 0)
		return errno == ENOENT ? 1 : -1;
	if (fstat(src, &st) == 0 && (dst = make_point(path, S_ISDIR(st.st_mode))) >= 0 &&
	    (tree = (int)syscall(SYS_open_tree, src, "",
				 AT_EMPTY_PATH | AT_RECURSIVE | OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC)) >= 0) {
		struct mount_attr attr = {
		    .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV};

		if (syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr,
			    sizeof(attr)) == 0 &&
		    syscall(SYS_move_mount, tree, "", dst, "",
			    MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) == 0)
			rc = 0;
	}
	saved = errno;
	if (tree >= 0)
		close(tree);
	if (dst >= 0)
		close(dst);
	close(src);
	errno = saved;
	return rc;
}

int
init_mount_system(const char *root, const char *const *paths, size_t n, char *err, size_t errlen)
{
	int root_fd = open_exact(root);

	if (root_fd < 0)
		return diag_fail(err, errlen, "--system-root %s: %s; nothing ran", root,
				 strerror(errno));
	for (size_t i = 0; i < n; i++) {
		if (paths[i][0] != '/' || clone_system(root_fd, paths[i]) >= 0)
			continue;
		close(root_fd);
		return diag_fail(err, errlen, "cannot mount the system's %s: %s%s; nothing ran",
				 paths[i], strerror(errno),
				 errno == EPERM ? " (omnibox-init needs CAP_SYS_ADMIN for it)" : "");
	}
	close(root_fd);
	/* The host's root goes before anything else can run: nothing of it is
	 * left in the sandbox's tree, not even the empty directory. */
	if (syscall(SYS_umount2, root, 2 /* MNT_DETACH: <sys/mount.h> clashes with <linux/mount.h> */) < 0 ||
	    rmdir(root) < 0)
		return diag_fail(err, errlen, "cannot unmount %s: %s; nothing ran", root,
				 strerror(errno));
	return 0;
}
