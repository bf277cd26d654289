/*
 * copy.c - the private copy behind a copy_on_write grant (copy.h).
 */
#include "runtime/resolve/copy.h"
#include "runtime/resolve/perm.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Deeper trees are refused: each level holds a descriptor. */
#define COPY_MAX_DEPTH 128

struct copy {
	struct perm_ids ids; /* the sandbox's: what it could read in place */
	size_t entries;
	char *err;
	size_t errlen;
	char path[PATH_MAX]; /* below the source, for messages */
};

static int
copy_fail(struct copy *c, int errnum, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(c->err, c->errlen, "copy_on_write: %s: ", c->path[0] ? c->path : ".");
	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < c->errlen)
		vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	if (errnum) {
		size_t len = strlen(c->err);

		snprintf(c->err + len, c->errlen - len, ": %s", strerror(errnum));
	}
	return -1;
}

static int
copy_times(int fd, const struct stat *st)
{
	struct timespec ts[2] = {st->st_atim, st->st_mtim};

	return futimens(fd, ts);
}

static int
copy_file(struct copy *c, int src, const struct stat *st, int dst_dirfd, const char *name)
{
	int out = openat(dst_dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			 0600);
	off_t left = st->st_size;

	if (out < 0)
		return copy_fail(c, errno, "cannot create the copy");
	while (left > 0) {
		ssize_t n = copy_file_range(src, NULL, out, NULL, (size_t)left, 0);

		if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL)) {
			char buf[65536];

			n = read(src, buf, sizeof(buf));
			if (n > 0 && write(out, buf, (size_t)n) != n)
				n = -1;
		}
		if (n < 0) {
			int e = errno;

			close(out);
			return copy_fail(c, e, "cannot copy");
		}
		if (n == 0)
			break; /* it shrank meanwhile: the copy is what there was */
		left -= n;
	}
	if (fchmod(out, st->st_mode & 07777 & ~(mode_t)(S_ISUID | S_ISGID)) < 0 ||
	    copy_times(out, st) < 0) {
		int e = errno;

		close(out);
		return copy_fail(c, e, "cannot set the copy's mode");
	}
	return close(out) < 0 ? copy_fail(c, errno, "cannot write the copy") : 0;
}

/*
 * A file the sandbox could not read in place, or a directory it could not
 * list and search: the copy holds its name only, empty and mode 000.  The
 * copy is the caller's (root's too), and the sandbox gets the owner's bits:
 * its mode alone would open what the host's owner and mode kept closed.
 */
static int
copy_closed(struct copy *c, const struct stat *st, int dst_dirfd, const char *name)
{
	struct timespec ts[2] = {st->st_atim, st->st_mtim};
	int out;

	if (S_ISDIR(st->st_mode)) {
		if (mkdirat(dst_dirfd, name, 0) < 0)
			return copy_fail(c, errno, "cannot make the copy");
		if (utimensat(dst_dirfd, name, ts, AT_SYMLINK_NOFOLLOW) < 0)
			return copy_fail(c, errno, "cannot set the copy's times");
		return 0;
	}
	out = openat(dst_dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0);
	if (out < 0)
		return copy_fail(c, errno, "cannot create the copy");
	if (fchmod(out, 0) < 0 || futimens(out, ts) < 0) {
		int e = errno;

		close(out);
		return copy_fail(c, e, "cannot set the copy's mode");
	}
	return close(out) < 0 ? copy_fail(c, errno, "cannot write the copy") : 0;
}

static int copy_at(struct copy *c, int src, const struct stat *st, int dst_dirfd,
		   const char *name, unsigned depth);

static int
copy_dir(struct copy *c, int src, const struct stat *st, int dst_dirfd, const char *name,
	 unsigned depth)
{
	size_t plen = strlen(c->path);
	int dfd, out, rc = 0;
	DIR *d;
	struct dirent *e;

	if (depth > COPY_MAX_DEPTH)
		return copy_fail(c, 0, "deeper than %d levels", COPY_MAX_DEPTH);
	if (mkdirat(dst_dirfd, name, 0700) < 0)
		return copy_fail(c, errno, "cannot make the copy");
	out = openat(dst_dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	dfd = openat(src, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (out < 0 || dfd < 0 || !(d = fdopendir(dfd))) {
		int err = errno;

		if (out >= 0)
			close(out);
		if (dfd >= 0)
			close(dfd);
		return copy_fail(c, err, "cannot list");
	}
	while (rc == 0 && (errno = 0, e = readdir(d))) {
		struct stat cst;
		int child;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (++c->entries > COPY_MAX_ENTRIES) {
			rc = copy_fail(c, 0, "more than %d entries; copy_on_write is for trees "
					     "of source size",
				       COPY_MAX_ENTRIES);
			break;
		}
		snprintf(c->path + plen, sizeof(c->path) - plen, "%s%s", plen ? "/" : "",
			 e->d_name);
		child = openat(dirfd(d), e->d_name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (child < 0 || fstat(child, &cst) < 0) {
			rc = copy_fail(c, errno, "cannot open");
			if (child >= 0)
				close(child);
			break;
		}
		rc = copy_at(c, child, &cst, out, e->d_name, depth + 1);
		close(child);
		c->path[plen] = '\0';
	}
	if (rc == 0 && errno)
		rc = copy_fail(c, errno, "cannot list");
	closedir(d);
	if (rc == 0 && (fchmod(out, st->st_mode & 07777) < 0 || copy_times(out, st) < 0))
		rc = copy_fail(c, errno, "cannot set the copy's mode");
	close(out);
	return rc;
}

static int
copy_at(struct copy *c, int src, const struct stat *st, int dst_dirfd, const char *name,
	unsigned depth)
{
	if (S_ISDIR(st->st_mode))
		return perm_sandbox_may(&c->ids, st, R_OK | X_OK)
			   ? copy_dir(c, src, st, dst_dirfd, name, depth)
			   : copy_closed(c, st, dst_dirfd, name);
	if (S_ISLNK(st->st_mode)) {
		char target[PATH_MAX];
		ssize_t n = readlinkat(src, "", target, sizeof(target) - 1);

		if (n < 0)
			return copy_fail(c, errno, "cannot read the link");
		target[n] = '\0';
		return symlinkat(target, dst_dirfd, name) < 0
			   ? copy_fail(c, errno, "cannot copy the link")
			   : 0;
	}
	if (S_ISREG(st->st_mode)) {
		char proc[64];
		int fd, rc;

		if (!perm_sandbox_may(&c->ids, st, R_OK))
			return copy_closed(c, st, dst_dirfd, name);
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", src);
		fd = open(proc, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (fd < 0)
			return copy_fail(c, errno, "cannot read");
		rc = copy_file(c, fd, st, dst_dirfd, name);
		close(fd);
		return rc;
	}
	return 0; /* devices, FIFOs, sockets: not copied */
}

int
copy_tree(int src_fd, int dst_dirfd, const char *name, char *err, size_t errlen)
{
	struct copy c = {.err = err, .errlen = errlen};
	struct stat st;
	int rc;

	if (fstat(src_fd, &st) < 0)
		return copy_fail(&c, errno, "cannot stat");
	if (perm_ids_self(&c.ids) < 0)
		return copy_fail(&c, errno, "cannot read the user's groups");
	rc = copy_at(&c, src_fd, &st, dst_dirfd, name, 0);
	perm_ids_release(&c.ids);
	return rc;
}
