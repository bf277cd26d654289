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
#include <limits.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <linux/stat.h> /* struct statx: not every C library has one (musl) */
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

/* statx(2) by its number: not every C library wraps it (musl). */
static int
statx_at(int dfd, const char *path, int flags, unsigned mask, struct statx *sx)
{
	return (int)syscall(SYS_statx, dfd, path, flags, mask, sx);
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

/* Is the mask of KIND ('f' or 'd') at BASE in the directory DFD (whose
 * status is UP) in place, read-only? */
static bool
mask_in_place(char kind, int dfd, const struct stat *up, const char *base)
{
	int pfd = openat(dfd, base, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	struct statfs sf;
	bool ok = false;

	if (pfd >= 0 && fstat(pfd, &st) == 0 && fstatfs(pfd, &sf) == 0 &&
	    (sf.f_flags & ST_RDONLY)) {
		if (kind == 'f')
			ok = S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3);
		else
			/* A tmpfs mounted there, not an empty directory of the
			 * file system below it. */
			ok = S_ISDIR(st.st_mode) && sf.f_type == TMPFS_MAGIC &&
			     st.st_dev != up->st_dev;
	}
	if (pfd >= 0)
		close(pfd);
	return ok;
}

/*
 * A new file system of TYPE with the options OPTS (NAME, VALUE pairs, a
 * NULL VALUE for a flag; a NULL NAME ends them) and the attributes ATTRS
 * (MOUNT_ATTR_*), moved onto NAME in DIR ("": onto DIR itself).  0, or -1
 * with errno.
 */
static int
new_mount(const char *type, const char *const *opts, unsigned attrs, int dir, const char *name)
{
	int fs = (int)syscall(SYS_fsopen, type, FSOPEN_CLOEXEC), mnt = -1, rc = -1, saved;
	bool ok = fs >= 0 && syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "source", type, 0) == 0;

	for (size_t i = 0; ok && opts[i]; i += 2)
		ok = syscall(SYS_fsconfig, fs, opts[i + 1] ? FSCONFIG_SET_STRING : FSCONFIG_SET_FLAG,
			     opts[i], opts[i + 1], 0) == 0;
	if (ok && syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0 &&
	    (mnt = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, attrs)) >= 0 &&
	    syscall(SYS_move_mount, mnt, "", dir, name,
		    MOVE_MOUNT_F_EMPTY_PATH | (*name ? 0 : MOVE_MOUNT_T_EMPTY_PATH)) == 0)
		rc = 0;
	saved = errno;
	if (mnt >= 0)
		close(mnt);
	if (fs >= 0)
		close(fs);
	errno = saved;
	return rc;
}

/* An empty tmpfs with the attributes ATTRS (MOUNT_ATTR_*), moved onto TARGET. */
static int
new_tmpfs(int target, unsigned attrs)
{
	return new_mount("tmpfs", (const char *const[]){"mode", "0755", NULL}, attrs, target, "");
}

/* SET added to the attributes of the mount FD is on (or the detached tree FD is). */
static int
setattr_fd(int fd, unsigned long long set)
{
	struct mount_attr attr = {.attr_set = set};

	return (int)syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH, &attr, sizeof(attr));
}

/*
 * The masks' /dev/null: NULL_FD, and where the kernel lets a detached
 * mount be cloned, TEMPLATE, one clone of it made read-only, nosuid and
 * nodev once, whose clones are all that already (else -1: each clone of
 * NULL_FD is made so itself).
 */
struct null_src {
	int null_fd, template;
	bool made; /* TEMPLATE tried */
};

/* NULL_FD's clone, read-only, nosuid and nodev: a detached tree, or -1. */
static int
null_clone(struct null_src *n)
{
	int tree;

	if (!n->made) {
		n->made = true;
		n->template = null_clone(n);
		if (n->template < 0)
			return -1;
	}
	if (n->template >= 0) {
		tree = (int)syscall(SYS_open_tree, n->template, "",
				    AT_EMPTY_PATH | OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
		if (tree >= 0 || errno != EINVAL)
			return tree;
		/* A kernel that clones no detached mount: one at a time. */
		close(n->template);
		n->template = -1;
	}
	tree = (int)syscall(SYS_open_tree, n->null_fd, "",
			    AT_EMPTY_PATH | OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (tree >= 0 && setattr_fd(tree, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV) < 0) {
		int saved = errno;

		close(tree);
		errno = saved;
		return -1;
	}
	return tree;
}

/* /dev/null, read-only, nosuid and nodev, moved onto TARGET; *MNT_ID the
 * new mount's (0: the kernel does not say).  0, or -1 with errno. */
static int
bind_null(struct null_src *n, int target, unsigned long long *mnt_id)
{
	int tree = null_clone(n), rc = -1, saved;
	struct statx sx;

	*mnt_id = 0;
	if (tree < 0)
		return -1;
	if (statx_at(tree, "", AT_EMPTY_PATH, STATX_MNT_ID, &sx) == 0 &&
	    (sx.stx_mask & STATX_MNT_ID))
		*mnt_id = sx.stx_mnt_id;
	if (syscall(SYS_move_mount, tree, "", target, "",
		    MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) == 0)
		rc = 0;
	saved = errno;
	close(tree);
	errno = saved;
	return rc;
}

/*
 * The mask of KIND at PATH (BASE in the directory DFD, whose status is UP)
 * made: /dev/null onto a file that is neither a directory nor a symlink,
 * a new tmpfs on the directory SELF ("t"), or the tmpfs mounted on a
 * directory made read-only ("d").  0, or -1 with the message in ERR.
 */
static int
make_mask(char kind, const char *path, int dfd, const struct stat *up, const char *base,
	  struct null_src *null, const unsigned long long self[2], unsigned long long *mnt_id,
	  char *err, size_t errlen)
{
	int t = openat(dfd, base, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	struct statfs sf;
	bool fits;
	int rc = -1;

	if (t < 0 || fstat(t, &st) < 0 || (kind == 'd' && fstatfs(t, &sf) < 0)) {
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
				   st.st_dev != up->st_dev;
	if (!fits)
		rc = diag_fail(err, errlen,
			       "%s is not the %s the launch found (was it replaced while the "
			       "sandbox was set up?); nothing ran",
			       path, kind == 'f' ? "file" : "directory");
	else if ((kind == 'f'	  ? bind_null(null, t, mnt_id)
		  : kind == 't' ? new_tmpfs(t, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)
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
 * "DEV:INO:" of the directory itself before PATH. */
struct mask_entry {
	char kind;
	bool have_parent; /* DEV:INO given: the directory the resolver checked */
	unsigned long long dev, ino, self[2];
	const char *path, *base;
	size_t dir_len; /* PATH's directory: its first DIR_LEN bytes */
};

/* ENTRY read into M: 0, or -1 when it is not omnibox-run's. */
static int
parse_entry(const char *entry, struct mask_entry *m)
{
	char *end;
	const char *path, *slash;

	*m = (struct mask_entry){.kind = entry[0], .have_parent = entry[1] != '-'};
	if (m->have_parent) {
		m->dev = strtoull(entry + 1, &end, 10);
		m->ino = *end == ':' ? strtoull(end + 1, &end, 10) : 0;
		path = *end == ':' ? end + 1 : NULL;
	} else {
		path = strncmp(entry + 1, "-:-:", 4) ? NULL : entry + 5;
	}
	if (path && m->kind == 't') {
		m->self[0] = strtoull(path, &end, 10);
		m->self[1] = *end == ':' ? strtoull(end + 1, &end, 10) : 0;
		path = *end == ':' && m->self[1] ? end + 1 : NULL;
	}
	if (!path || (m->kind != 'f' && m->kind != 'd' && m->kind != 't') || path[0] != '/')
		return -1;
	slash = strrchr(path, '/');
	if (!slash[1])
		return -1;
	m->path = path;
	m->base = slash + 1;
	m->dir_len = slash == path ? 1 : (size_t)(slash - path);
	return 0;
}

/*
 * The directory of a run of entries (the list gives a directory's masks
 * one after another): opened once, exactly, and checked against the
 * identity the resolver recorded; each mask goes on by this descriptor and
 * is checked in place through it, and the run ends with the directory
 * found again at its path, so each mask is in place at its own path.
 */
struct mask_dir {
	char *path; /* NULL: no run yet */
	int fd;
	struct stat st;
	const char *last; /* the run's last entry's path, to name */
};

/* Does the run D stand where it was: its path still that directory?  0, or
 * -1 with ERR, and D closed. */
static int
dir_end(struct mask_dir *d, char *err, size_t errlen)
{
	int fd, rc = 0;
	struct stat st;

	if (!d->path)
		return 0;
	fd = open_exact(d->path);
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_dev != d->st.st_dev || st.st_ino != d->st.st_ino)
		rc = diag_fail(err, errlen,
			       "the mask of %s is not in place (was its path changed while the "
			       "sandbox was set up?); nothing ran",
			       d->last);
	if (fd >= 0)
		close(fd);
	close(d->fd);
	free(d->path);
	d->path = NULL;
	return rc;
}

/* The run for M's directory in D, the last one ended first when M's is
 * another: 0, or -1 with ERR. */
static int
dir_for(struct mask_dir *d, const struct mask_entry *m, char *err, size_t errlen)
{
	bool same = d->path && strlen(d->path) == m->dir_len &&
		    !memcmp(d->path, m->path, m->dir_len);

	if (!same) {
		if (dir_end(d, err, errlen) < 0)
			return -1;
		d->path = strndup(m->path, m->dir_len);
		if (!d->path)
			return diag_fail(err, errlen, "out of memory; nothing ran");
		d->fd = open_exact(d->path);
		if (d->fd < 0 || fstat(d->fd, &d->st) < 0) {
			if (d->fd >= 0)
				close(d->fd);
			free(d->path);
			d->path = NULL;
			return diag_fail(err, errlen,
					 "the directory of %s is not the one the launch checked "
					 "(was it renamed while the sandbox was set up?); nothing ran",
					 m->path);
		}
	}
	d->last = m->path;
	/* In the directory the resolver saw: a racer's rename of a parent could
	 * have put another one by that name. */
	if (m->have_parent && ((unsigned long long)d->st.st_dev != m->dev ||
			       (unsigned long long)d->st.st_ino != m->ino))
		return diag_fail(err, errlen,
				 "the directory of %s is not the one the launch checked (was it "
				 "renamed while the sandbox was set up?); nothing ran",
				 m->path);
	return 0;
}

/* Is the /dev/null mount MNT_ID (0: not known) at BASE in DFD?  The
 * mount is read-only from its making, so its identity is the proof. */
static bool
null_in_place(int dfd, const char *base, unsigned long long mnt_id)
{
	struct statx sx;

	if (!mnt_id)
		return mask_in_place('f', dfd, NULL, base);
	return statx_at(dfd, base, AT_SYMLINK_NOFOLLOW, STATX_TYPE | STATX_MNT_ID, &sx) == 0 &&
	       (sx.stx_mask & STATX_MNT_ID) && sx.stx_mnt_id == mnt_id && S_ISCHR(sx.stx_mode) &&
	       sx.stx_rdev_major == 1 && sx.stx_rdev_minor == 3;
}

/* The mask of M made in its run D, and checked there: 0, or -1 with ERR. */
static int
place_one(struct mask_dir *d, const struct mask_entry *m, struct null_src *null, char *err,
	  size_t errlen)
{
	unsigned long long mnt_id = 0;

	if (dir_for(d, m, err, errlen) < 0 ||
	    make_mask(m->kind, m->path, d->fd, &d->st, m->base, null, m->self, &mnt_id, err,
		      errlen) < 0)
		return -1;
	if (m->kind == 'f' ? !null_in_place(d->fd, m->base, mnt_id)
			   : !mask_in_place('d', d->fd, &d->st, m->base))
		return diag_fail(err, errlen,
				 "the mask of %s is not in place (was its path changed while the "
				 "sandbox was set up?); nothing ran",
				 m->path);
	return 0;
}

int
init_place_masks(int fd, char *err, size_t errlen)
{
	struct mask_dir d = {NULL, -1, {0}, NULL};
	struct mask_entry m;
	char *list;
	size_t len;
	int rc = 0;
	struct null_src null = {-1, -1, false};

	err[0] = '\0';
	if (read_all(fd, &list, &len) < 0)
		return -1;
	null.null_fd = open_exact("/dev/null");
	if (null.null_fd < 0) {
		free(list);
		return diag_fail(err, errlen, "cannot open /dev/null: %s; nothing ran",
				 strerror(errno));
	}
	for (size_t off = 0; off < len && rc == 0;) {
		size_t elen = strnlen(list + off, len - off);

		if (elen == len - off || parse_entry(list + off, &m) < 0) {
			err[0] = '\0';
			rc = -1; /* not omnibox-run's list */
			break;
		}
		rc = place_one(&d, &m, &null, err, errlen);
		off += elen + 1;
	}
	/* The last run's directory, found again at its path. */
	if (rc == 0)
		rc = dir_end(&d, err, errlen);
	else if (d.path) {
		close(d.fd);
		free(d.path);
	}
	if (null.template >= 0)
		close(null.template);
	close(null.null_fd);
	free(list);
	return rc;
}

/* NAME in the directory DIR, opened without following a symlink. */
static int
open_below(int dir, const char *name)
{
	struct open_how how = {.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
			       .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
					  RESOLVE_NO_MAGICLINKS};

	return (int)syscall(SYS_openat2, dir, name, &how, sizeof(how));
}

/* The directory PATH (absolute) inside the sandbox, made where missing
 * (mode 0755) and opened exactly: each one made by name in its parent's
 * descriptor, none reached through a symlink (a grant's mount point may
 * lie in a directory the agent writes). */
static int
make_dirs(const char *path)
{
	int fd = open_exact(path), dir, saved;
	const char *base;
	char *up;

	if (fd >= 0 || errno != ENOENT)
		return fd;
	base = strrchr(path, '/');
	if (!base || !base[1])
		return errno = EINVAL, -1;
	up = strndup(path, base == path ? 1 : (size_t)(base - path));
	dir = up ? make_dirs(up) : -1;
	free(up);
	if (dir < 0)
		return -1;
	base++;
	fd = mkdirat(dir, base, 0755) < 0 && errno != EEXIST ? -1 : open_below(dir, base);
	saved = errno;
	close(dir);
	errno = saved;
	return fd;
}

/* The directory the last mount point was made in, kept for the next:
 * /etc's files share it. */
struct point_dir {
	char *path; /* NULL: none */
	int fd;
};

/*
 * The mount point PATH inside: a directory, or an empty file (IS_DIR
 * false), made where missing, in its directory (D's, when it is the
 * same; opened exactly, made where missing).  0 with *BASE its last name
 * in D->fd, or -1 with errno.
 */
static int
make_point(struct point_dir *d, const char *path, bool is_dir, const char **base)
{
	const char *slash = strrchr(path, '/');
	size_t len = slash == path ? 1 : (size_t)(slash - path);
	int r;

	if (!slash[1])
		return errno = EINVAL, -1;
	if (!d->path || strlen(d->path) != len || memcmp(d->path, path, len)) {
		if (d->path) {
			close(d->fd);
			free(d->path);
		}
		d->path = strndup(path, len);
		d->fd = d->path ? make_dirs(d->path) : -1;
		if (d->fd < 0) {
			int saved = d->path ? errno : ENOMEM;

			free(d->path);
			d->path = NULL;
			return errno = saved, -1;
		}
	}
	*base = slash + 1;
	r = is_dir ? mkdirat(d->fd, *base, 0755) : mknodat(d->fd, *base, S_IFREG | 0444, 0);
	return r < 0 && errno != EEXIST ? -1 : 0;
}

/*
 * FROM of the host (relative to ROOT_FD, its symlinks followed as the host
 * would: an absolute target is the host's), cloned read-only onto PATH
 * inside, its mount point made in D.  0; 1 when the host has no FROM; -1
 * with errno.
 */
static int
clone_system(int root_fd, struct point_dir *d, const char *from, const char *path)
{
	struct open_how how = {.flags = O_PATH | O_CLOEXEC,
			       .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
	int src, tree = -1, rc = -1, saved, tries = 0;
	const char *base;
	struct stat st;

	/* A source of its own (--system-bind: a file omnibox-run made in the
	 * scratch dir, by its canonical path) is followed through no link. */
	if (from != path)
		how.resolve |= RESOLVE_NO_SYMLINKS;

	/* A ".." in a link (os-release -> ../usr/lib/os-release) is resolved
	 * in the root only while no rename or mount anywhere on the machine
	 * races it: the kernel says EAGAIN, to be tried again. */
	do
		src = (int)syscall(SYS_openat2, root_fd, from + 1, &how, sizeof(how));
	while (src < 0 && errno == EAGAIN && ++tries < 100000);
	if (src < 0)
		return errno == ENOENT ? 1 : -1;
	/* The point is a name in D's directory, which nothing of the agent's
	 * can reach yet: moved onto without following a symlink there. */
	if (fstat(src, &st) == 0 && make_point(d, path, S_ISDIR(st.st_mode), &base) == 0 &&
	    (tree = (int)syscall(SYS_open_tree, src, "",
				 AT_EMPTY_PATH | AT_RECURSIVE | OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC)) >= 0) {
		struct mount_attr attr = {
		    .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV};

		if (syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr,
			    sizeof(attr)) == 0 &&
		    syscall(SYS_move_mount, tree, "", d->fd, base, MOVE_MOUNT_F_EMPTY_PATH) == 0)
			rc = 0;
	}
	saved = errno;
	if (tree >= 0)
		close(tree);
	close(src);
	errno = saved;
	return rc;
}

/* Is the object at PATH inside (opened exactly) the one WANT describes? */
static bool
is_at(const char *path, const struct stat *want)
{
	int fd = open_exact(path);
	struct stat st;
	bool same = fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == want->st_dev &&
		    st.st_ino == want->st_ino;

	if (fd >= 0)
		close(fd);
	return same;
}

/*
 * The grant of the launch's descriptor FD (the directory or file it opened
 * and checked, in the host's mount namespace, which no clone can come
 * from) onto PATH inside: found at FD's path below ROOT_FD (the host's
 * root; no symlink followed: the launch's paths are canonical) and checked
 * to be FD's own (device and inode, as bwrap's --bind-fd checks it), then
 * cloned with what is mounted below it, nosuid and nodev, read-only unless
 * RW (a writable one keeps the host's flags), its mount point made in D,
 * and found at PATH after.  FD is closed.  0, or -1 with ERR.
 */
static int
clone_grant(int root_fd, struct point_dir *d, int fd, const char *path, bool rw, char *err,
	    size_t errlen)
{
	struct open_how how = {.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
			       .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS |
					  RESOLVE_NO_MAGICLINKS};
	struct mount_attr attr = {.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
					      (rw ? 0 : MOUNT_ATTR_RDONLY)};
	char link[32], host[PATH_MAX];
	struct stat want, got;
	int src = -1, tree = -1, rc = -1, tries = 0;
	const char *base;
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, host, sizeof(host) - 1);
	if (n > 0 && host[0] == '/' && fstat(fd, &want) == 0) {
		host[n] = '\0';
		do
			src = (int)syscall(SYS_openat2, root_fd, host[1] ? host + 1 : ".", &how,
					   sizeof(how));
		while (src < 0 && errno == EAGAIN && ++tries < 100000);
	}
	if (src < 0 || fstat(src, &got) < 0 || got.st_dev != want.st_dev ||
	    got.st_ino != want.st_ino) {
		diag_fail(err, errlen,
			  "the grant of %s is not the one the launch checked (was it moved while "
			  "the sandbox was set up?); nothing ran",
			  path);
		goto out;
	}
	if (make_point(d, path, S_ISDIR(got.st_mode), &base) < 0 ||
	    (tree = (int)syscall(SYS_open_tree, src, "",
				 AT_EMPTY_PATH | AT_RECURSIVE | OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC)) <
		0 ||
	    syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr,
		    sizeof(attr)) < 0 ||
	    syscall(SYS_move_mount, tree, "", d->fd, base, MOVE_MOUNT_F_EMPTY_PATH) < 0) {
		diag_fail(err, errlen, "cannot mount %s: %s%s; nothing ran", path, strerror(errno),
			  errno == EPERM ? " (omnibox-init needs CAP_SYS_ADMIN for it)" : "");
		goto out;
	}
	if (!is_at(path, &want)) {
		diag_fail(err, errlen,
			  "the grant of %s is not in place (was its path changed while the "
			  "sandbox was set up?); nothing ran",
			  path);
		goto out;
	}
	rc = 0;
out:
	if (tree >= 0)
		close(tree);
	if (src >= 0)
		close(src);
	close(fd);
	return rc;
}

/* A new tmpfs (as bwrap's --tmpfs: mode 0755, nosuid, nodev) on the
 * directory PATH inside, made where missing in D.  0, or -1 with ERR. */
static int
mount_tmpfs(struct point_dir *d, const char *path, char *err, size_t errlen)
{
	const char *base;

	if (make_point(d, path, true, &base) < 0 ||
	    new_mount("tmpfs", (const char *const[]){"mode", "0755", NULL},
		      MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, d->fd, base) < 0)
		return diag_fail(err, errlen, "cannot mount a tmpfs on %s: %s; nothing ran", path,
				 strerror(errno));
	return 0;
}

/* The host's device NAME (below ROOT_FD's dev), opened exactly: a
 * character device, or -1 with errno. */
static int
host_device(int root_fd, const char *name)
{
	struct open_how how = {.flags = O_PATH | O_CLOEXEC,
			       .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS};
	char path[160];
	struct stat st;
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "dev/%s", name) >= sizeof(path))
		return errno = ENAMETOOLONG, -1;
	fd = (int)syscall(SYS_openat2, root_fd, path, &how, sizeof(how));
	if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISCHR(st.st_mode))) {
		close(fd);
		return errno = ENODEV, -1;
	}
	return fd;
}

/* The device SRC cloned onto a new empty file BASE in DFD, read-write and
 * nosuid, its device usable: bwrap's device binds. */
static int
bind_device(int src, int dfd, const char *base)
{
	struct mount_attr attr = {.attr_set = MOUNT_ATTR_NOSUID,
				  .attr_clr = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NODEV};
	int tree = -1, rc = -1, saved;

	if (mknodat(dfd, base, S_IFREG | 0444, 0) == 0 &&
	    (tree = (int)syscall(SYS_open_tree, src, "",
				 AT_EMPTY_PATH | OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC)) >= 0 &&
	    syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &attr, sizeof(attr)) == 0 &&
	    syscall(SYS_move_mount, tree, "", dfd, base, MOVE_MOUNT_F_EMPTY_PATH) == 0)
		rc = 0;
	saved = errno;
	if (tree >= 0)
		close(tree);
	errno = saved;
	return rc;
}

/* A new devpts instance (ptmx 0666, terminals 0620, nosuid, noexec) on pts in DEV. */
static int
mount_devpts(int dev)
{
	return new_mount("devpts",
			 (const char *const[]){"newinstance", NULL, "ptmxmode", "0666", "mode", "620",
					       NULL},
			 MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, dev, "pts");
}

/*
 * Where standard output is a terminal, that terminal (found where its
 * name says in the host's root, and checked to be the same device) bound
 * as console in DEV, as bwrap's --dev does.  0 (none is also 0: bwrap
 * makes none where it finds no name), or -1 with errno.
 */
static int
bind_console(int root_fd, int dev)
{
	char name[128];
	struct stat tty, st;
	ssize_t n;
	int src, rc;

	if (!isatty(1) || fstat(1, &tty) < 0)
		return 0;
	n = readlink("/proc/self/fd/1", name, sizeof(name) - 1);
	if (n <= 5 || (size_t)n >= sizeof(name) - 1 || strncmp(name, "/dev/", 5))
		return 0;
	name[n] = '\0';
	src = host_device(root_fd, name + 5);
	if (src < 0)
		return 0;
	rc = fstat(src, &st) == 0 && st.st_rdev == tty.st_rdev ? bind_device(src, dev, "console") : 0;
	close(src);
	return rc;
}

/* bwrap's --dev at PATH (struct init_system), from the host's devices below ROOT_FD. */
static int
make_dev(int root_fd, const char *path, char *err, size_t errlen)
{
	static const char *const nodes[] = {"null", "zero", "full", "random", "urandom", "tty"};
	static const char *const links[][2] = {
	    {"stdin", "/proc/self/fd/0"}, {"stdout", "/proc/self/fd/1"},
	    {"stderr", "/proc/self/fd/2"}, {"fd", "/proc/self/fd"},
	    {"core", "/proc/kcore"},	  {"ptmx", "pts/ptmx"}};
	int at = make_dirs(path), dev = -1, rc = -1;
	const char *what = "its tmpfs";

	if (at >= 0 && new_tmpfs(at, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV) == 0)
		dev = open_exact(path);
	for (size_t i = 0; dev >= 0 && i < sizeof(nodes) / sizeof(nodes[0]); i++) {
		int src = host_device(root_fd, nodes[i]);

		what = nodes[i];
		if (src < 0 || bind_device(src, dev, nodes[i]) < 0) {
			int saved = errno;

			if (src >= 0)
				close(src);
			errno = saved;
			goto out;
		}
		close(src);
	}
	what = "its links";
	for (size_t i = 0; dev >= 0 && i < sizeof(links) / sizeof(links[0]); i++)
		if (symlinkat(links[i][1], dev, links[i][0]) < 0)
			goto out;
	what = "pts";
	if (dev < 0 || mkdirat(dev, "shm", 0755) < 0 || mkdirat(dev, "pts", 0755) < 0 ||
	    mount_devpts(dev) < 0)
		goto out;
	what = "console";
	rc = bind_console(root_fd, dev);
out:
	if (rc < 0)
		diag_fail(err, errlen, "cannot make %s (%s): %s%s; nothing ran", path, what,
			  strerror(errno),
			  errno == EPERM ? " (omnibox-init needs CAP_SYS_ADMIN for it)" : "");
	if (dev >= 0)
		close(dev);
	if (at >= 0)
		close(at);
	return rc;
}

int
init_mount_system(const char *root, const struct init_system *v, size_t n, char *err,
		  size_t errlen)
{
	struct point_dir d = {NULL, -1};
	int root_fd = open_exact(root), rc = 0;

	if (root_fd < 0)
		return diag_fail(err, errlen, "--system-root %s: %s; nothing ran", root,
				 strerror(errno));
	for (size_t i = 0; i < n && rc == 0; i++) {
		int r;

		if (v[i].path[0] != '/' && strchr("gwm", v[i].kind)) {
			rc = diag_fail(err, errlen, "%s: not an absolute path; nothing ran",
				       v[i].path);
			continue;
		}
		if (v[i].path[0] != '/')
			continue;
		if (v[i].kind == 'd') {
			rc = make_dev(root_fd, v[i].path, err, errlen);
			/* Its tmpfs may cover the directory D holds: opened again. */
			if (d.path) {
				close(d.fd);
				free(d.path);
				d.path = NULL;
			}
			continue;
		}
		if (v[i].kind == 'g' || v[i].kind == 'w') {
			rc = clone_grant(root_fd, &d, atoi(v[i].src), v[i].path, v[i].kind == 'w',
					 err, errlen);
			continue;
		}
		if (v[i].kind == 'm') {
			rc = mount_tmpfs(&d, v[i].path, err, errlen);
			continue;
		}
		r = clone_system(root_fd, &d, v[i].src ? v[i].src : v[i].path, v[i].path);
		if (r == 1 && v[i].kind != 't')
			rc = diag_fail(err, errlen, "the host has no %s to mount; nothing ran",
				       v[i].src ? v[i].src : v[i].path);
		else if (r < 0)
			rc = diag_fail(err, errlen, "cannot mount the system's %s: %s%s; nothing ran",
				       v[i].path, strerror(errno),
				       errno == EPERM ? " (omnibox-init needs CAP_SYS_ADMIN for it)"
						      : "");
	}
	if (d.path) {
		close(d.fd);
		free(d.path);
	}
	close(root_fd);
	if (rc < 0)
		return -1;
	/* The host's root goes before anything else can run: nothing of it is
	 * left in the sandbox's tree, not even the empty directory. */
	if (syscall(SYS_umount2, root, 2 /* MNT_DETACH: <sys/mount.h> clashes with <linux/mount.h> */) < 0 ||
	    rmdir(root) < 0)
		return diag_fail(err, errlen, "cannot unmount %s: %s; nothing ran", root,
				 strerror(errno));
	return 0;
}

int
init_chdir(const char *path, char *err, size_t errlen)
{
	int fd = open_exact(path), rc = fd < 0 ? -1 : fchdir(fd);

	/* bwrap set PWD to the directory it entered; this is that one now. */
	if (rc == 0 && setenv("PWD", path, 1) < 0)
		rc = -1;
	if (rc < 0)
		diag_fail(err, errlen, "cannot enter %s: %s; nothing ran", path, strerror(errno));
	if (fd >= 0)
		close(fd);
	return rc;
}
