/*
 * host.c - the scratch dir and placeholders: made and removed by descriptor.
 */
#include "runtime/resolve/host.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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
host_scratch_create(struct arena *a, const char *parent, struct host_entry *out)
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
			rc = rmtree_at(e->dirfd, e->name);
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

int
rmtree_at(int dirfd, const char *name)
{
	int fd, rc = 0;
	DIR *d;
	struct dirent *e;

	if (unlinkat(dirfd, name, 0) == 0 || errno == ENOENT)
		return 0;
	if (errno != EISDIR && errno != EPERM)
		return -errno;
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == EACCES) {
		/* The agent may have made a directory unreadable.  chmod it through
		 * a descriptor on that very directory: fchmodat() would follow a
		 * symlink put in its place. */
		int p = openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		if (p >= 0) {
			char proc[64];

			snprintf(proc, sizeof(proc), "/proc/self/fd/%d", p);
			chmod(proc, 0700);
			close(p);
		}
		fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0)
		return -errno;
	fchmod(fd, 0700);
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			int sub = rmtree_at(fd, e->d_name);

			if (sub < 0 && rc == 0)
				rc = sub;
		}
	closedir(d);
	if (unlinkat(dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT && rc == 0)
		rc = -errno;
	return rc;
}

int
rmtree(const char *path)
{
	return rmtree_at(AT_FDCWD, path);
}
