/*
 * host.c - the scratch dir and placeholders: made and removed by descriptor.
 */
#include "runtime/resolve/host.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/random.h>
#endif

#ifndef O_PATH
#define O_PATH O_RDONLY
#endif

static int rm_tree(int dirfd, const char *name, const struct stat *expect);

static int
entry_stat(struct host_entry *e)
{
	struct stat st;

	if (fstatat(e->dirfd, e->name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -1;
	e->dev = st.st_dev;
	e->ino = st.st_ino;
	return 0;
}

int
host_scratch_create(struct arena *a, const char *parent, struct host_entry *out,
		    int (*before)(void *arg, int dirfd, const char *name), void *arg)
{
	static const char chars[] =
	    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	int dirfd = open(parent, O_PATH | O_DIRECTORY | O_CLOEXEC), err;

	memset(out, 0, sizeof(*out));
	out->dirfd = -1;
	if (dirfd < 0)
		return -1;
	for (int tries = 0; tries < 100; tries++) {
		unsigned char r[6];
		char name[sizeof("omnibox-XXXXXX")];

#if defined(__linux__)
		if (getrandom(r, sizeof(r), 0) != sizeof(r))
#endif
			for (size_t i = 0; i < sizeof(r); i++)
				r[i] = (unsigned char)(rand() ^ getpid() ^ tries);
		memcpy(name, "omnibox-", 8);
		for (size_t i = 0; i < 6; i++)
			name[8 + i] = chars[r[i] % (sizeof(chars) - 1)];
		name[14] = '\0';
		if (before && before(arg, dirfd, name) < 0)
			break;
		if (mkdirat(dirfd, name, 0700) < 0) {
			if (errno == EEXIST)
				continue;
			break;
		}
		out->dirfd = dirfd;
		out->name = arena_strdup(a, name);
		out->path = arena_printf(a, "%s%s%s", parent,
					 parent[strlen(parent) - 1] == '/' ? "" : "/", name);
		out->is_dir = true;
		if (entry_stat(out) < 0) {
			err = errno;
			unlinkat(dirfd, name, AT_REMOVEDIR);
			close(dirfd);
			errno = err;
			return -1;
		}
		return 0;
	}
	err = errno;
	close(dirfd);
	errno = err;
	return -1;
}

int
host_placeholder_make(struct arena *a, int dirfd, const char *name, const char *path, bool is_dir,
		      struct host_entry *out)
{
	memset(out, 0, sizeof(*out));
	out->dirfd = -1;
	if (is_dir) {
		if (mkdirat(dirfd, name, 0) < 0)
			return -1;
	} else {
		int fd =
		    openat(dirfd, name, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0);

		if (fd < 0)
			return -1;
		close(fd);
	}
	out->dirfd = dirfd;
	out->name = arena_strdup(a, name);
	out->path = arena_strdup(a, path);
	out->is_dir = is_dir;
	return entry_stat(out);
}

int
host_placeholder_file(struct arena *a, int dirfd, const char *name, const char *path,
		      const char *text, struct host_entry *out)
{
	size_t len = strlen(text);
	int fd, err;

	memset(out, 0, sizeof(*out));
	out->dirfd = -1;
	fd = openat(dirfd, name, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if ((len && write(fd, text, len) != (ssize_t)len) || fchmod(fd, 0444) < 0) {
		err = errno ? errno : EIO;
		close(fd);
		unlinkat(dirfd, name, 0);
		errno = err;
		return -1;
	}
	close(fd);
	out->dirfd = dirfd;
	out->name = arena_strdup(a, name);
	out->path = arena_strdup(a, path);
	out->size = (off_t)len;
	return entry_stat(out);
}

int
host_remove(struct host_entry *e, bool tree, bool keep)
{
	struct stat st;
	int rc = 0;

	if (e->dirfd < 0)
		return 0;
	/* Only the inode made here: a name the agent reused is the agent's. */
	if (fstatat(e->dirfd, e->name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_dev == e->dev &&
	    st.st_ino == e->ino) {
		if (tree)
			rc = S_ISDIR(st.st_mode) ? rm_tree(e->dirfd, e->name, &st) : -ENOTDIR;
		else if (e->is_dir)
			rc = unlinkat(e->dirfd, e->name, AT_REMOVEDIR) < 0 ? -errno : 0;
		else if (S_ISREG(st.st_mode) && st.st_size == e->size)
			rc = unlinkat(e->dirfd, e->name, 0) < 0 ? -errno : 0;
	}
	if (!keep) {
		close(e->dirfd);
		e->dirfd = -1;
	}
	return rc;
}

/*
 * The removal of a tree holds at most RM_WINDOW directory streams, however
 * deep the tree: the agent chooses its depth, and one descriptor per level
 * would run out (RLIMIT_NOFILE) and leave the rest on the host.  Below that
 * many levels the shallowest stream is closed; climbing back to it, the
 * directory is reopened through ".." of its child, and used only if it is
 * still the inode that was left (its device and inode number are kept for
 * every level: memory, not descriptors).
 */
#define RM_WINDOW 32

struct rm_id {
	dev_t dev;
	ino_t ino;
};

struct rm_walk {
	int top_dirfd;
	const char *top_name;
	struct rm_id *ids; /* levels 0 .. n-1, the top first */
	size_t cap, n;
	size_t lo;			     /* levels lo .. n-1 are open in win */
	DIR *win[RM_WINDOW];		     /* level i at i % RM_WINDOW */
	char child[RM_WINDOW][NAME_MAX + 1]; /* what each open level is removing */
};

/* Make the directory NAME in DIRFD searchable and readable: the agent may
 * have closed it.  Never through a symlink put in its place: chmod goes
 * through a descriptor on that very directory. */
static int
rm_unlock(int dirfd, const char *name)
{
#if defined(__linux__)
	char proc[64];
	int p = openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), rc;

	if (p < 0)
		return -1;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", p);
	rc = chmod(proc, 0700);
	close(p);
	return rc;
#else
	return fchmodat(dirfd, name, 0700, AT_SYMLINK_NOFOLLOW);
#endif
}

/* The directory NAME in DIRFD, opened without following a symlink and made
 * writable by its owner, so that what it holds can go.  -1 with errno. */
static int
rm_open_dir(int dirfd, const char *name, struct stat *st)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0 && errno == EACCES && rm_unlock(dirfd, name) == 0)
		fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, st) < 0) {
		int err = errno;

		close(fd);
		errno = err;
		return -1;
	}
	if ((st->st_mode & 0700) != 0700)
		fchmod(fd, 0700);
	return fd;
}

/* Close the shallowest open level but the current one.  -1 if none is. */
static int
rm_shed(struct rm_walk *w)
{
	if (w->lo + 1 >= w->n)
		return -1;
	closedir(w->win[w->lo % RM_WINDOW]);
	w->win[w->lo % RM_WINDOW] = NULL;
	w->lo++;
	return 0;
}

/* rm_open_dir(), closing shallower levels while descriptors run out. */
static int
rm_open_shed(struct rm_walk *w, int dirfd, const char *name, struct stat *st)
{
	int fd;

	while ((fd = rm_open_dir(dirfd, name, st)) < 0 && (errno == EMFILE || errno == ENFILE) &&
	       rm_shed(w) == 0)
		;
	return fd;
}

/* Make FD, the directory of ST, the new deepest level.  Takes FD. */
static int
rm_descend(struct rm_walk *w, int fd, const struct stat *st)
{
	DIR *d;

	if (w->n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 64;
		struct rm_id *ids = realloc(w->ids, cap * sizeof(*ids));

		if (!ids) {
			close(fd);
			return -ENOMEM;
		}
		w->ids = ids;
		w->cap = cap;
	}
	if (w->n - w->lo == RM_WINDOW)
		rm_shed(w);
	d = fdopendir(fd);
	if (!d) {
		int err = errno;

		close(fd);
		return -err;
	}
	w->ids[w->n] = (struct rm_id){st->st_dev, st->st_ino};
	w->win[w->n % RM_WINDOW] = d;
	w->child[w->n % RM_WINDOW][0] = '\0';
	w->n++;
	return 0;
}

/* Remove the entry E of the deepest level, or descend into it. */
static int
rm_entry(struct rm_walk *w, const struct dirent *e)
{
	size_t cur = w->n - 1;
	int dfd = dirfd(w->win[cur % RM_WINDOW]), fd;
	struct stat st;

	if (e->d_type != DT_DIR) {
		if (unlinkat(dfd, e->d_name, 0) == 0 || errno == ENOENT)
			return 0;
		if (errno != EISDIR && errno != EPERM)
			return -errno;
	}
	if (unlinkat(dfd, e->d_name, AT_REMOVEDIR) == 0 || errno == ENOENT)
		return 0;
	if (errno != ENOTEMPTY && errno != EEXIST)
		return -errno;
	fd = rm_open_shed(w, dfd, e->d_name, &st);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (st.st_dev != w->ids[cur].dev) {
		/* A mount point: what is mounted there is not the tree's. */
		close(fd);
		return -EXDEV;
	}
	snprintf(w->child[cur % RM_WINDOW], NAME_MAX + 1, "%s", e->d_name);
	return rm_descend(w, fd, &st);
}

/* The deepest level is empty: close it and remove it from its parent. */
static int
rm_ascend(struct rm_walk *w)
{
	size_t cur = w->n - 1;
	DIR *d = w->win[cur % RM_WINDOW];
	struct stat st;

	if (cur == 0) {
		closedir(d);
		w->n = 0;
		/* Only the inode that was emptied: a name the agent reused is its own. */
		if (fstatat(w->top_dirfd, w->top_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return errno == ENOENT ? 0 : -errno;
		if (st.st_dev != w->ids[0].dev || st.st_ino != w->ids[0].ino)
			return -ESTALE;
		if (unlinkat(w->top_dirfd, w->top_name, AT_REMOVEDIR) < 0 && errno != ENOENT)
			return -errno;
		return 0;
	}
	if (w->lo == cur) {
		/* The parent's stream was closed: reopen it, only if ".." is still
		 * the directory this one was found in.  Its fresh listing meets
		 * this one again, empty, and removes it then. */
		int fd = openat(dirfd(d), "..", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		DIR *p;

		if (fd < 0)
			return -errno;
		if (fstat(fd, &st) < 0 || st.st_dev != w->ids[cur - 1].dev ||
		    st.st_ino != w->ids[cur - 1].ino) {
			close(fd);
			return -ESTALE;
		}
		p = fdopendir(fd);
		if (!p) {
			int err = errno;

			close(fd);
			return -err;
		}
		w->win[(cur - 1) % RM_WINDOW] = p;
		w->child[(cur - 1) % RM_WINDOW][0] = '\0';
		w->lo = cur - 1;
	}
	closedir(d);
	w->win[cur % RM_WINDOW] = NULL;
	w->n--;
	d = w->win[(cur - 1) % RM_WINDOW];
	if (w->child[(cur - 1) % RM_WINDOW][0] &&
	    unlinkat(dirfd(d), w->child[(cur - 1) % RM_WINDOW], AT_REMOVEDIR) < 0 &&
	    errno != ENOENT)
		return -errno;
	return 0;
}

/* Remove the directory NAME in DIRFD, only while it is the inode of EXPECT. */
static int
rm_tree(int dirfd, const char *name, const struct stat *expect)
{
	struct rm_walk *w = calloc(1, sizeof(*w));
	struct stat st;
	int fd, rc;

	if (!w)
		return -ENOMEM;
	w->top_dirfd = dirfd;
	w->top_name = name;
	fd = rm_open_dir(dirfd, name, &st);
	if (fd < 0)
		rc = errno == ENOENT ? 0 : -errno;
	else if (st.st_dev != expect->st_dev || st.st_ino != expect->st_ino) {
		close(fd);
		rc = -ESTALE;
	} else
		rc = rm_descend(w, fd, &st);
	while (rc == 0 && w->n > 0) {
		struct dirent *e;

		errno = 0;
		e = readdir(w->win[(w->n - 1) % RM_WINDOW]);
		if (e)
			rc = strcmp(e->d_name, ".") && strcmp(e->d_name, "..") ? rm_entry(w, e) : 0;
		else if (errno)
			rc = -errno;
		else
			rc = rm_ascend(w);
	}
	for (size_t i = w->lo; i < w->n; i++)
		closedir(w->win[i % RM_WINDOW]);
	free(w->ids);
	free(w);
	return rc;
}

int
rmtree_at(int dirfd, const char *name)
{
	struct stat st;

	if (unlinkat(dirfd, name, 0) == 0 || errno == ENOENT)
		return 0;
	if (errno != EISDIR && errno != EPERM)
		return -errno;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode))
		return -EPERM;
	return rm_tree(dirfd, name, &st);
}

int
rmtree(const char *path)
{
	return rmtree_at(AT_FDCWD, path);
}
